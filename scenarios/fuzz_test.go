package scenarios

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the loader and validator: nothing may
// panic, every failure is an ErrorList of positioned problems inside the
// file, and every success is a scenario that validates again unchanged.
func FuzzLoad(f *testing.F) {
	for _, pattern := range []string{"*.yaml", "testdata/valid/*.yaml", "testdata/broken/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := LoadBytes("fuzz.yaml", data)
		if err == nil {
			if s == nil || Validate(s) != nil {
				t.Fatalf("loaded scenario does not validate again")
			}
			return
		}
		var list ErrorList
		if !errors.As(err, &list) || len(list) == 0 {
			t.Fatalf("error %T %v is not a non-empty ErrorList", err, err)
		}
		// YAML breaks lines at \n, \r\n and a lone \r.
		lines := bytes.Count(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\n")) + bytes.Count(data, []byte("\r")) - bytes.Count(data, []byte("\r\n")) + 1
		for _, e := range list {
			if e.File != "fuzz.yaml" || e.Line < 1 || e.Line > lines || e.Col < 1 || e.Message == "" || e.Hint == "" {
				t.Fatalf("bad problem %+v (file has %d lines)", e, lines)
			}
		}
	})
}

// BenchmarkLoad measures loading (decode, defaults, validation) of the
// largest shipped scenario.
func BenchmarkLoad(b *testing.B) {
	data, err := os.ReadFile("pd-disagg.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := LoadBytes("pd-disagg.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadBroken measures the error path, including the search for
// the line of a syntax error.
func BenchmarkLoadBroken(b *testing.B) {
	data, err := os.ReadFile("testdata/broken/many-errors.yaml")
	if err != nil {
		b.Fatal(err)
	}
	syntax, err := os.ReadFile("testdata/broken/syntax-indentation.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = LoadBytes("many-errors.yaml", data)
		_, _ = LoadBytes("syntax-indentation.yaml", syntax)
	}
}
