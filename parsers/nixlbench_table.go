package parsers

import (
	"strconv"
	"strings"
)

// nixlGuessColumns gives the header for rows seen without one, by width.
func nixlGuessColumns(n int) []string {
	switch n {
	case 6:
		return []string{"Block Size (B)", "Batch Size", "Avg Lat. (us)", "B/W (MiB/Sec)", "B/W (GiB/Sec)", "B/W (GB/Sec)"}
	case 10:
		return []string{"Block Size (B)", "Batch Size", "B/W (GB/Sec)", "Avg Lat. (us)", "Avg Prep (us)", "P99 Prep (us)", "Avg Post (us)", "P99 Post (us)", "Avg Tx (us)", "P99 Tx (us)"}
	case 12:
		return []string{"Block Size (B)", "Batch Size", "B/W (GB/Sec)", "Aggregate B/W (GB/Sec)", "Network Util (%)", "Avg Lat. (us)", "Avg Prep (us)", "P99 Prep (us)", "Avg Post (us)", "P99 Post (us)", "Avg Tx (us)", "P99 Tx (us)"}
	}
	return nil
}

// rowLine parses one result row; false when the line is not one.
func (p *nixlParser) rowLine(line string) bool {
	f := strings.Fields(line)
	cols := []string(nil)
	if p.cur != nil {
		cols = p.cur.cols
	}
	if cols == nil {
		cols = nixlGuessColumns(len(f))
	}
	if len(cols) < 3 || len(f) < len(cols) {
		return false
	}
	var s Sample
	for i, name := range cols {
		if !nixlCell(&s, name, f[i]) {
			return false
		}
	}
	r := p.run()
	if r.cols == nil {
		r.cols = cols
	}
	r.m.Samples = append(r.m.Samples, s)
	return true
}

// nixlCell stores one cell; GB/s is 10^9 bytes per second (→ bits/s).
func nixlCell(s *Sample, name, v string) bool {
	switch name {
	case "Block Size (B)":
		n, err := strconv.ParseInt(v, 10, 64)
		s.Bytes = n
		return err == nil && n >= 0
	case "Batch Size":
		n, err := strconv.ParseInt(v, 10, 64)
		s.Batch = n
		return err == nil && n >= 0
	}
	x, ok := ncclNum(v)
	if !ok {
		return ncclIsNA(v)
	}
	switch name {
	case "B/W (GB/Sec)":
		s.BWAvgBps = ncclBps(x)
	case "Aggregate B/W (GB/Sec)":
		s.AggregateBps = ncclBps(x)
	case "Network Util (%)":
		s.NetworkUtil = F(x)
	case "Avg Lat. (us)":
		s.LatAvgUS = F(x)
	}
	return true
}

// nixlExpectedRows is how many rows the configured sweep prints: block
// sizes and batch sizes both double from start to max. 0 when unknown.
func nixlExpectedRows(info map[string]string) int {
	blocks := nixlDoublings(info["start_block_size"], info["max_block_size"])
	batches := nixlDoublings(info["start_batch_size"], info["max_batch_size"])
	if blocks == 0 || batches == 0 {
		return 0
	}
	return blocks * batches
}

func nixlDoublings(start, max string) int {
	a, err1 := strconv.ParseInt(start, 10, 64)
	b, err2 := strconv.ParseInt(max, 10, 64)
	if err1 != nil || err2 != nil || a <= 0 || b < a {
		return 0
	}
	n := 0
	for x := a; x <= b && n < 64; x *= 2 {
		n++
	}
	return n
}
