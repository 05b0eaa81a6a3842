package parsers

import (
	"bufio"
	"bytes"
	"io"
	"math"
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
	br := bufio.NewReaderSize(r, 64*1024)
	if ncclLooksJSON(br) {
		data, err := io.ReadAll(br)
		if err != nil {
			return nil, err
		}
		return ParseNCCLJSON(data)
	}
	return ParseNCCLText(br)
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
	sc := newLineScanner(r)
	for sc.Scan() {
		p.line(string(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return p.finish(), nil
}
