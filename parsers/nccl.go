package parsers

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"os"
	"strings"
)

// ncclBps converts nccl-tests' and nixlbench's GB/s (10^9 bytes per second)
// to bits per second, the unit every Measurement uses. Both tools print at
// most 6 decimals, so the result is a whole number; rounding removes the
// float noise of the multiplication.
func ncclBps(gbps float64) *float64 { return F(math.Round(gbps * 8e9)) }

// ParseNCCL reads nccl-tests output (all_reduce_perf, alltoall_perf, …, and
// rccl-tests) and returns one Measurement per run found. It accepts both the
// text printed on stdout (any generation, with launcher prefixes and
// NCCL_DEBUG lines mixed in) and the file written by -J, telling them apart
// by the first non-blank byte. The error is only for read failures; a
// failed run is a Measurement with OK=false and an ErrorClass.
func ParseNCCL(r io.Reader) ([]Measurement, error) {
	hint := ncclSizeHint(r)
	br := bufio.NewReaderSize(r, 64*1024)
	if ncclLooksJSON(br) {
		data, err := io.ReadAll(br)
		if err != nil {
			return nil, err
		}
		return ParseNCCLJSON(data)
	}
	p := &ncclParser{}
	if err := ncclEachLineHint(br, hint, p.line); err != nil {
		return nil, err
	}
	return p.finish(), nil
}

// ncclSizeHint guesses how many bytes r holds (in-memory readers, files) so
// that the text is read into one buffer of the right size; 0 if unknown.
func ncclSizeHint(r io.Reader) int {
	switch v := r.(type) {
	case interface{ Len() int }:
		return v.Len()
	case interface{ Stat() (os.FileInfo, error) }:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() < 1<<31 {
			return int(fi.Size())
		}
	}
	return 0
}

// ncclLooksJSON peeks past leading blanks for the '{' that starts a -J file.
func ncclLooksJSON(br *bufio.Reader) bool {
	for n := 64; ; n *= 2 {
		buf, err := br.Peek(n)
		rest := bytes.TrimLeft(buf, " \t\r\n")
		if len(rest) > 0 {
			return rest[0] == '{'
		}
		if err != nil || n >= br.Size() {
			return false
		}
	}
}

// ParseNCCLText parses the text form of nccl-tests output. Each banner
// ("# nThread …") that follows a finished table starts a new Measurement;
// NCCL_DEBUG=INFO lines anywhere in the text become transport evidence
// attached to every Measurement.
func ParseNCCLText(r io.Reader) ([]Measurement, error) {
	p := &ncclParser{}
	if err := ncclEachLine(r, p.line); err != nil {
		return nil, err
	}
	return p.finish(), nil
}

// ncclEachLine reads all of r into one string and calls fn for each line
// (without its "\n"), so that lines are substrings, not copies: debug logs
// of hundreds of MB are mostly lines that are looked at once and dropped.
// Lines longer than maxLine are cut, as newLineScanner does.
func ncclEachLine(r io.Reader, fn func(string)) error {
	return ncclEachLineHint(r, ncclSizeHint(r), fn)
}

func ncclEachLineHint(r io.Reader, hint int, fn func(string)) error {
	var sb strings.Builder
	sb.Grow(hint + 512)
	if _, err := io.Copy(&sb, r); err != nil {
		return err
	}
	text := sb.String()
	for len(text) > 0 {
		i := strings.IndexByte(text, '\n')
		line := text
		if i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		if len(line) > maxLine {
			line = line[:maxLine]
		}
		fn(line)
	}
	return nil
}
