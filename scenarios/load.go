package scenarios

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxFileSize bounds what Load reads: a scenario is a page of YAML, and a
// multi-megabyte file is a mistake (a log, a binary) rather than a plan.
const maxFileSize = 4 << 20

// Load reads a scenario file, decodes it strictly, applies the defaults and
// validates it. Any problem, including an unreadable file, comes back as an
// ErrorList (exit code 2) naming the file.
func Load(path string) (*Scenario, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return LoadBytes(path, data)
}

// LoadBytes is Load for a scenario already in memory (an embedded one, a
// test case); name is used in every error message.
func LoadBytes(name string, data []byte) (*Scenario, error) {
	s, err := Decode(name, data)
	if s == nil {
		return nil, err
	}
	ApplyDefaults(s)
	if all := merge(err, Validate(s)); all != nil {
		return nil, all
	}
	return s, nil
}

// merge joins decoding and validation problems. A validation problem at (or
// under) a path that already failed to decode is a consequence of that one
// (a count that is not a number is also not >= 1) and is dropped.
func merge(decodeErr, validateErr error) error {
	dec, _ := decodeErr.(ErrorList)
	val, _ := validateErr.(ErrorList)
	all := append(ErrorList{}, dec...)
	for _, e := range val {
		if !underAny(e.Path, dec) {
			all = append(all, e)
		}
	}
	if len(all) == 0 {
		return nil
	}
	sortErrors(all)
	return all
}

func underAny(path string, list ErrorList) bool {
	for _, e := range list {
		if under(path, e.Path) || under(path, e.covers) {
			return true
		}
	}
	return false
}

// under reports whether path is parent or below it.
func under(path, parent string) bool {
	return parent != "" && (path == parent || strings.HasPrefix(path, parent+".") || strings.HasPrefix(path, parent+"["))
}

func readFile(path string) ([]byte, error) {
	c := &collector{file: path}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.add(Pos{}, "", "check the path; rdmabench init lists the shipped scenarios", "no such file")
	case err != nil:
		c.add(Pos{}, "", "check the path; rdmabench init lists the shipped scenarios", "cannot read the scenario: %v", unwrapPathError(err))
	case st.IsDir():
		c.add(Pos{}, "", "give the .yaml files inside it: "+filepath.Join(path, "*.yaml"), "is a directory, not a scenario file")
	case st.Size() > maxFileSize:
		c.add(Pos{}, "", "a scenario is a short YAML file; check that the right file was given", "the file is %d bytes, more than the %d a scenario may have", st.Size(), maxFileSize)
	default:
		data, err := readBounded(path)
		if err == nil && len(data) > maxFileSize {
			c.add(Pos{}, "", "a scenario is a short YAML file; check that the right file was given", "the file holds more than the %d bytes a scenario may have", maxFileSize)
		} else if err == nil {
			return data, nil
		} else {
			c.add(Pos{}, "", "check the file's permissions", "cannot read the scenario: %v", unwrapPathError(err))
		}
	}
	return nil, c.err()
}

// readBounded reads at most maxFileSize+1 bytes: a device or a pipe
// (/dev/zero, <(yes)) has no size to check beforehand and must not be read
// into memory without end.
func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	return data, nil
}

// unwrapPathError drops the path from an *os.PathError (the error line
// already starts with it).
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
