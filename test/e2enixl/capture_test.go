package e2enixl

import (
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// record writes this run's real outputs to testdata/nixl/<name>/, which
// the parser and stand-in tests read (and CI replays).
var record = flag.Bool("record", false, "write the real outputs of this run to testdata/nixl")

// recordCapture keeps a run folder (rdmabench/), the raw pairs (raw/), the
// keys the tools wrote in etcd and what was left of them afterwards (as
// read from the etcd, where the lane could watch it), the side-by-side
// table and a note. A file with nothing observed in it is not written.
func recordCapture(t *testing.T, name, runDir string, raw []rawResult, keys, after []string, table, note string) {
	dst := filepath.Join(repoRoot, "testdata", "nixl", name)
	_ = os.RemoveAll(dst)
	err := filepath.WalkDir(runDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(runDir, path)
		return writeFile(filepath.Join(dst, "rdmabench", rel), mustRead(t, path))
	})
	if err != nil {
		t.Fatal(err)
	}
	var cmds strings.Builder
	for _, r := range raw {
		base := filepath.Join(dst, "raw", r.test)
		if err := writeFile(base+"-initiator.txt", []byte(r.initiator)); err != nil {
			t.Fatal(err)
		}
		if err := writeFile(base+"-target.txt", []byte(r.target)); err != nil {
			t.Fatal(err)
		}
		cmds.WriteString("# " + r.test + ": the initiator first; the target once it printed \"ETCD Runtime: Registered as rank 0\"\n")
		for _, c := range r.commands {
			cmds.WriteString(c + "\n")
		}
	}
	files := map[string]string{
		"raw/commands.txt":     cmds.String(),
		"etcd-keys-seen.txt":   strings.Join(keys, "\n"),
		"etcd-keys-after.txt":  strings.Join(after, "\n"),
		"rdmabench-vs-raw.txt": table,
	}
	for rel, text := range files {
		if text == "" {
			continue
		}
		if err := writeFile(filepath.Join(dst, rel), []byte(strings.TrimSuffix(text, "\n")+"\n")); err != nil {
			t.Fatal(err)
		}
	}
	meta, _ := json.MarshalIndent(map[string]string{"note": note, "recorded": time.Now().UTC().Format(time.RFC3339), "nixl_prefix": prefix}, "", "  ")
	if err := writeFile(filepath.Join(dst, "recorded.json"), append(meta, '\n')); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded into %s", dst)
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func mustRead(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
