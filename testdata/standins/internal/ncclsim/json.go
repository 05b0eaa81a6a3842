package ncclsim

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

type jsonRow struct {
	size, count    int64
	dtype, redop   string
	oop, ip        placeResult
	check, checkIP bool
	iters          int
}

// writeJSON writes the -J document (JSON_FILE_VERSION 3), compact, keys in
// nccl-tests' order.
func (t *test) writeJSON(f *os.File, avg float64, okay string) {
	if f == nil {
		return
	}
	defer f.Close()
	var b strings.Builder
	b.WriteString(`{"version":3,"start_time":` + q(t.start.Format("2006-01-02 15:04:05")))
	b.WriteString(`,"args":` + mustJSON(t.p.args) + `,"env":` + mustJSON(os.Environ()) + `,"nccl_version":22807`)
	step := fmt.Sprintf(`"step_bytes":%d`, t.p.stepBytes)
	if t.p.stepFactor > 1 {
		step = fmt.Sprintf(`"step_factor":%d`, t.p.stepFactor)
	}
	fmt.Fprintf(&b, `,"config":{"nthreads":%d,"ngpus":%d,"minimum_bytes":%d,"maximum_bytes":%d,%s,"warmup_iters":%d,"iterations":%d,"aggregated_iterations":%d,"validation":%d,"graph":0,"blocking_collectives":0,"per_iter_timing":0,"per_iter_skip":0,"parallel_init":0,"devices":%s}`,
		t.p.nThreads, t.p.nGpus, t.p.minBytes, t.p.maxBytes, step, t.p.warmup, t.p.iters, t.p.agg, t.p.check, t.devicesJSON())
	b.WriteString(`,"results":[`)
	for i, r := range t.rows {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"size":%d,"count":%d,"type":%s,"redop":%s,"root":%s,"out_of_place":%s,"in_place":%s,"actual_iterations":%d,"experiment_name":""}`,
			r.size, r.count, q(r.dtype), q(r.redop), q(fmt.Sprintf("%6d", -1)), placeJSON(r.oop, r.check), placeJSON(r.ip, r.checkIP), r.iters)
	}
	oob := `"true"`
	if t.bad > 0 {
		oob = `"false"`
	}
	fmt.Fprintf(&b, `],"out_of_bounds":{"count":%d,"okay":%s},"average_bus_bandwidth":{"bandwidth":%f,"okay":%s},"errors":[],"end_time":%s}`,
		t.bad, oob, avg, q(okay), q(time.Now().Format("2006-01-02 15:04:05")))
	_, _ = f.WriteString(b.String())
}

func placeJSON(r placeResult, checked bool) string {
	wrong := "null"
	if checked {
		wrong = fmt.Sprint(r.wrong)
	}
	return fmt.Sprintf(`{"time":%f,"alg_bw":%f,"bus_bw":%f,"nwrong":%s}`, r.timeUS, r.algbw, r.busbw, wrong)
}

func (t *test) devicesJSON() string {
	var parts []string
	for r, d := range t.eng.devices() {
		parts = append(parts, fmt.Sprintf(`{"rank":%d,"group":0,"pid":%d,"hostname":%s,"device":%d,"device_hex":"0000:00:00","device_info":"rdmabench stand-in (host memory)"}`,
			r, d.pid, q(d.host), d.dev))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func q(s string) string { return mustJSON(s) }

func mustJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
