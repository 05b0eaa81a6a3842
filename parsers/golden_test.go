package parsers

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/parsers/golden")

// goldenInputs are the captures the project made itself (see
// testdata/parsers/capture/capture.sh and perftest/gen.sh), by family.
func goldenInputs(t testing.TB) map[string][]string {
	root := filepath.Join("..", "testdata", "parsers")
	out := map[string][]string{}
	for _, fam := range []string{"perftest", "ucx_perftest", "iperf3"} {
		for _, ext := range []string{"*.txt", "*.json"} {
			files, err := filepath.Glob(filepath.Join(root, fam, ext))
			if err != nil {
				t.Fatal(err)
			}
			out[fam] = append(out[fam], files...)
		}
	}
	return out
}

// TestGolden detects the tool of every capture, parses it and compares the
// measurements with testdata/parsers/golden/<family>/<name>.json.
func TestGolden(t *testing.T) {
	n := 0
	for fam, files := range goldenInputs(t) {
		for _, in := range files {
			n++
			name := fam + "/" + filepath.Base(in)
			t.Run(name, func(t *testing.T) {
				data, err := os.ReadFile(in)
				if err != nil {
					t.Fatal(err)
				}
				tool, ok := Detect(data)
				if f, _ := FamilyOf(tool); !ok || string(f) != fam {
					t.Fatalf("Detect = %q, %v; want a %s tool", tool, ok, fam)
				}
				ms, err := Parse(tool, bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				got, err := json.MarshalIndent(ms, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, '\n')
				golden := filepath.Join("..", "testdata", "parsers", "golden", fam,
					strings.TrimSuffix(filepath.Base(in), filepath.Ext(in))+".json")
				if *update {
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
					t.Fatalf("%v (run go test ./parsers -run TestGolden -update)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from %s (go test ./parsers -run TestGolden -update, then review the diff):\n%s",
						in, golden, got)
				}
			})
		}
	}
	if n < 15 {
		t.Fatalf("only %d golden inputs found", n)
	}
}
