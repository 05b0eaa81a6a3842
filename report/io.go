package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Save writes r to path atomically (temp file + rename), so a crash never
// leaves a half-written report.json.
func Save(path string, r *Report) error {
	if r.SchemaVersion == "" {
		r.SchemaVersion = SchemaVersion
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".report-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
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
	if err := checkVersion(path, r.SchemaVersion); err != nil {
		return nil, err
	}
	upgrade(&r)
	return &r, nil
}
