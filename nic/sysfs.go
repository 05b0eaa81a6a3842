package nic

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// sysfs reads files under a root and, when rec is set, copies every file
// and directory it reads into rec, so a recorded tree holds exactly what
// discovery needs (plain files and directories, no symlinks).
type sysfs struct {
	root string
	rec  string
}

func (s sysfs) path(rel string) string { return filepath.Join(s.root, rel) }

// read returns the trimmed content of a file, or "" and the error.
func (s sysfs) read(rel string) (string, error) {
	return s.readIf(rel, func(string) bool { return true })
}

// readIf is read that records the file only when keep says so (the empty
// entries of a 1024-entry GID table are not worth a file each).
func (s sysfs) readIf(rel string, keep func(string) bool) (string, error) {
	b, err := os.ReadFile(s.path(rel))
	if err != nil {
		return "", err
	}
	if s.rec != "" && keep(strings.TrimSpace(string(b))) {
		if err := s.save(rel, b); err != nil {
			return "", err
		}
	}
	return strings.TrimSpace(string(b)), nil
}

// str is read without the error, for optional attributes.
func (s sysfs) str(rel string) string {
	v, _ := s.read(rel)
	return v
}

// list returns the sorted entry names of a directory (symlinks included).
func (s sysfs) list(rel string) ([]string, error) {
	ents, err := os.ReadDir(s.path(rel))
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if s.rec != "" {
		if err := os.MkdirAll(filepath.Join(s.rec, rel), 0o755); err != nil {
			return nil, err
		}
	}
	return names, nil
}

func (s sysfs) exists(rel string) bool {
	_, err := os.Stat(s.path(rel))
	return err == nil
}

func (s sysfs) save(rel string, b []byte) error {
	dst := filepath.Join(s.rec, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
