package parsers

import (
	"io"
	"strconv"
	"strings"
)

// ParseNVSHMEMPerf reads NVSHMEM's perftest output (perftest/device/…,
// perftest/host/…): its tables, one after a "#job_name" line and a header
// whose first column is size(B) —
//
//	#shmem_put_bw_uni
//	size(B)     scope     BW (GB/sec)
//	4           None      0.000342
//
// — or, under NVSHMEM_MACHINE_READABLE_OUTPUT=1, its
// "&&&& PERF job___subjob___size__N___var value ±unit" lines. One
// Measurement per job and scope (subjob), one Sample per size.
func ParseNVSHMEMPerf(r io.Reader) ([]Measurement, error) {
	p := &nvshmemParse{byKey: map[string]int{}}
	sc := newLineScanner(r)
	for sc.Scan() {
		p.line(strings.TrimSpace(stripLogPrefix(CleanLine(sc.Text()))))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(p.ms) == 0 {
		cls, msg := ClassNoResults, "no NVSHMEM perftest table (size(B) …) or &&&& PERF line"
		switch {
		case strings.Contains(p.lastErr, "requires exactly"): // "This test requires exactly two processes"
			cls, msg = ClassUsageError, p.lastErr
		case p.lastErr != "":
			cls, msg = ClassToolError, p.lastErr
		}
		m := failed("nvshmem_perftest", cls, msg)
		m.Warnings = p.warns
		return []Measurement{m}, nil
	}
	for i := range p.ms {
		p.ms[i].Warnings = p.warns
	}
	return p.ms, nil
}

type nvshmemParse struct {
	job     string
	header  []string // the current table's columns, normalized; nil outside a table
	ms      []Measurement
	byKey   map[string]int
	warns   []string
	lastErr string
}

func (p *nvshmemParse) line(t string) {
	switch {
	case t == "":
		p.header = nil
	case strings.HasPrefix(t, "&&&& PERF "):
		p.perfLine(strings.TrimPrefix(t, "&&&& PERF "))
	case strings.HasPrefix(t, "#"):
		p.job, p.header = strings.TrimSpace(strings.TrimPrefix(t, "#")), nil
	case strings.HasPrefix(t, "size(B)"):
		p.header = nvshmemHeader(t)
	case p.header != nil && t[0] >= '0' && t[0] <= '9':
		p.row(strings.Fields(t))
	case strings.Contains(t, "init failed for transport"), strings.HasPrefix(t, "WARN"):
		p.warns = append(p.warns, t)
		p.header = nil
	case strings.Contains(strings.ToLower(t), "error") || strings.Contains(t, "requires"):
		p.lastErr, p.header = t, nil
	default:
		p.header = nil
	}
}

// nvshmemHeader splits a header line into its columns, joining a name to
// its unit where a space parts them ("BW (GB/sec)" → "BW(GB/sec)").
func nvshmemHeader(t string) []string {
	var cols []string
	for _, f := range strings.Fields(t) {
		if strings.HasPrefix(f, "(") && len(cols) > 0 {
			cols[len(cols)-1] += f
			continue
		}
		cols = append(cols, f)
	}
	return cols
}

// measurement returns the Measurement of a job and scope, made on first use.
func (p *nvshmemParse) measurement(job, scope string) *Measurement {
	key := job + "\x00" + scope
	i, ok := p.byKey[key]
	if !ok {
		m := Measurement{Tool: "nvshmem_perftest", OK: true, Test: job, Samples: []Sample{}}
		if scope != "" {
			m.Info = map[string]string{"scope": scope}
		}
		p.ms = append(p.ms, m)
		i = len(p.ms) - 1
		p.byKey[key] = i
	}
	return &p.ms[i]
}

func (p *nvshmemParse) row(f []string) {
	if len(f) != len(p.header) {
		return
	}
	var s Sample
	scope := ""
	for i, col := range p.header {
		v := f[i]
		switch strings.ToLower(col) {
		case "size(b)":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return
			}
			s.Bytes = n
		case "count":
			s.Count, _ = strconv.ParseInt(v, 10, 64)
		case "type":
			s.DataType = v
		case "redop":
			s.RedOp = v
		case "scope":
			scope = v
		case "latency(us)":
			s.LatAvgUS = optFloat(v, 1)
		case "min_lat(us)":
			s.LatMinUS = optFloat(v, 1)
		case "max_lat(us)":
			s.LatMaxUS = optFloat(v, 1)
		case "algbw(gb/s)":
			s.AlgBWBps = optFloat(v, gbpsToBps)
		case "busbw(gb/s)":
			s.BusBWBps = optFloat(v, gbpsToBps)
		case "bw(gb/sec)", "bw(gb/s)":
			s.BWAvgBps = optFloat(v, gbpsToBps)
		}
	}
	m := p.measurement(orString(p.job, "nvshmem_perftest"), scope)
	m.Samples = append(m.Samples, s)
}

// perfLine reads "job___subjob___size__N___var value ±unit".
func (p *nvshmemParse) perfLine(t string) {
	f := strings.Fields(t)
	if len(f) != 3 {
		return
	}
	parts := strings.Split(f[0], "___")
	if len(parts) < 4 {
		return
	}
	n := len(parts)
	size, ok := strings.CutPrefix(parts[n-2], "size__")
	bytes, err := strconv.ParseInt(size, 10, 64)
	if !ok || err != nil {
		return
	}
	v, ok := finiteFloat(f[1])
	if !ok {
		return
	}
	unit := strings.TrimLeft(f[2], "+-")
	s := Sample{Bytes: bytes}
	switch strings.ToLower(unit) {
	case "gb/sec", "gb/s":
		s.BWAvgBps = F(v * gbpsToBps)
	case "us", "usec":
		s.LatAvgUS = F(v)
	default:
		return
	}
	m := p.measurement(parts[0], strings.Join(parts[1:n-2], "___"))
	if m.Info == nil {
		m.Info = map[string]string{}
	}
	m.Info["metric"] = parts[n-1] + " (" + unit + ")"
	m.Samples = append(m.Samples, s)
}

func orString(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
