package parsers

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// fuzzSeeds adds the project's captures and, when present, the shared
// corpus files of the given directories as seeds.
func fuzzSeeds(f *testing.F, dirs ...string) {
	for _, d := range dirs {
		for _, pattern := range []string{
			filepath.Join("..", "testdata", "parsers", d, "*"),
			filepath.Join("..", "testdata", "parsers", d, "*", "*"), // nccl-tests/h200/…
			filepath.Join("..", "..", "shared", "corpus", d, "*.txt"),
		} {
			files, _ := filepath.Glob(pattern)
			for _, file := range files {
				if b, err := os.ReadFile(file); err == nil && len(b) < 1<<16 {
					f.Add(b)
				}
			}
		}
	}
	f.Add([]byte(""))
	f.Add([]byte(" #bytes #iterations t_min[usec]\n 2 3 nan\n"))
}

// checkFuzz holds every parser to the same contract on any input: no
// panic, at least one measurement, JSON-encodable (no NaN), a failure has
// a class and a message, a success has no class.
func checkFuzz(t *testing.T, data []byte, parse func(io.Reader) ([]Measurement, error)) {
	ms, err := parse(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("error from an in-memory reader: %v", err)
	}
	if len(ms) == 0 {
		t.Fatal("no measurement")
	}
	if _, err := json.Marshal(ms); err != nil {
		t.Fatalf("not JSON-encodable: %v", err)
	}
	for _, m := range ms {
		if m.OK == (m.ErrorClass != ClassNone) || (!m.OK && m.Error == "") {
			t.Fatalf("ok=%v class=%q error=%q", m.OK, m.ErrorClass, m.Error)
		}
		if m.Samples == nil {
			t.Fatal("samples is null")
		}
	}
}

func FuzzParsePerftest(f *testing.F) {
	fuzzSeeds(f, "perftest")
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzz(t, data, ParsePerftest) })
}

func FuzzParsePerftestJSON(f *testing.F) {
	fuzzSeeds(f, "perftest")
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFuzz(t, data, func(r io.Reader) ([]Measurement, error) { return ParsePerftestJSON(r, PerftestGbits) })
	})
}

func FuzzParseRping(f *testing.F) {
	fuzzSeeds(f, "rping")
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzz(t, data, ParseRping) })
}

func FuzzParseUCXPerftest(f *testing.F) {
	fuzzSeeds(f, "ucx_perftest")
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzz(t, data, ParseUCXPerftest) })
}

func FuzzParseIperf3(f *testing.F) {
	fuzzSeeds(f, "iperf3")
	f.Fuzz(func(t *testing.T, data []byte) { checkFuzz(t, data, ParseIperf3) })
}

// FuzzDetect checks that whatever Detect names, Parse accepts.
func FuzzDetect(f *testing.F) {
	fuzzSeeds(f, "perftest", "rping", "ucx_perftest", "iperf3", "nixlbench", "nccl-tests")
	f.Fuzz(func(t *testing.T, data []byte) {
		tool, ok := Detect(data)
		if _, known := FamilyOf(tool); ok != known {
			t.Fatalf("Detect = %q, %v; FamilyOf says known=%v", tool, ok, known)
		}
	})
}
