package schema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Save writes r to path atomically (temp file + rename), so a crash never
// leaves a half-written report.json; readable as report.html is (0644,
// not the temporary file's 0600).
func Save(path string, r *Report) error {
	if r.SchemaVersion == "" {
		r.SchemaVersion = Version
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err := encodeReport(w, r); err != nil {
		tmp.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// resultsKey is where the results sit in an indented report: top level,
// two spaces in. A string value cannot hold a raw newline, so this occurs
// nowhere else.
var resultsKey = []byte("\n  \"results\": null")

// encodeReport writes r as json.MarshalIndent(r, "", "  ") followed by a
// newline, byte for byte, but one result at a time: a 256-endpoint
// matrix's report.json is 158 MB, which marshalling whole held in memory
// twice over.
func encodeReport(w io.Writer, r *Report) error {
	shell := *r
	shell.Results = nil
	head, err := json.MarshalIndent(&shell, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	at := bytes.Index(head, resultsKey)
	if at < 0 {
		return errors.New("encode report: no results key") // the schema lost its field: a bug
	}
	at += len(resultsKey) - len("null")
	if _, err := w.Write(head[:at]); err != nil {
		return err
	}
	switch {
	case r.Results == nil:
		_, err = io.WriteString(w, "null")
	case len(r.Results) == 0:
		_, err = io.WriteString(w, "[]")
	default:
		err = encodeResults(w, r.Results)
	}
	if err != nil {
		return err
	}
	if _, err := w.Write(head[at+len("null"):]); err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n")
	return err
}

func encodeResults(w io.Writer, results []Result) error {
	if _, err := io.WriteString(w, "[\n"); err != nil {
		return err
	}
	for i := range results {
		b, err := json.MarshalIndent(&results[i], "    ", "  ")
		if err != nil {
			return fmt.Errorf("encode report: result %d: %w", i, err)
		}
		sep := ",\n"
		if i == len(results)-1 {
			sep = "\n"
		}
		if _, err := io.WriteString(w, "    "); err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "  ]")
	return err
}

// Load reads a report.json and checks its schema version; an older
// version it knows is upgraded in memory (legacy.go).
func Load(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: not a report.json: %w", path, err)
	}
	if err := CheckVersion(path, r.SchemaVersion); err != nil {
		return nil, err
	}
	Upgrade(&r)
	return &r, nil
}
