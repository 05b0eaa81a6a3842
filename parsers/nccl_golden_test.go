package parsers

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The -update flag may be defined by another test file of this package;
// define it only when nobody did, and read it by name.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files from the parsers' current output")
	}
}

func ncclGoldenUpdate() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// ncclCaptureDir holds the real nccl-tests outputs this project recorded
// on a 4-GPU machine; ncclCaptureSets lists every recorded machine.
const ncclCaptureDir = "../testdata/parsers/nccl-tests/h200"

// ncclCaptureSets are the real captures by machine: folder name under
// testdata/parsers/nccl-tests (and its goldens) and how many files it has.
var ncclCaptureSets = []struct {
	name string
	want int
}{
	{"h200", 34},   // 4× H200: -g 2 and -g 4
	{"h200x2", 22}, // 2× H200: -g 2
}

// ncclCheckGolden compares v, as indented JSON, with the golden file, or
// rewrites the file under -update.
func ncclCheckGolden(t *testing.T, golden string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	got = append(got, '\n')
	if ncclGoldenUpdate() {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run `go test ./parsers -run %s -update` to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the parser's output; if the change is intended run with -update.\ngot:\n%s", golden, ncclFirstLines(string(got), 40))
	}
}

func ncclFirstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// TestNCCLGolden parses every real capture (text and -J JSON) and compares
// the measurements with their golden JSON.
func TestNCCLGolden(t *testing.T) {
	for _, set := range ncclCaptureSets {
		dir := filepath.Join("../testdata/parsers/nccl-tests", set.name)
		files, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no captures in %s: %v", dir, err)
		}
		n := 0
		for _, f := range files {
			ext := filepath.Ext(f)
			if ext != ".txt" && ext != ".json" {
				continue
			}
			n++
			t.Run(set.name+"/"+filepath.Base(f), func(t *testing.T) {
				ms := ncclParseFile(t, f, ParseNCCL)
				golden := filepath.Join("../testdata/parsers/golden/nccl-tests", set.name, filepath.Base(f)+".golden.json")
				ncclCheckGolden(t, golden, ms)
			})
		}
		if n != set.want {
			t.Errorf("%d captures found in %s, want the %d recorded", n, dir, set.want)
		}
	}
}

func ncclParseFile(t *testing.T, path string, parse func(r io.Reader) ([]Measurement, error)) []Measurement {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	ms, err := parse(fh)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return ms
}
