package parsers

import (
	"strconv"
	"strings"
)

// commentLine handles the '#' lines: banner, device list, column header,
// footer.
func (p *ncclParser) commentLine(line string) {
	body := strings.TrimSpace(line[1:])
	switch {
	case body == "":
	case strings.HasPrefix(body, "Writing JSON output to "):
		ncclSetInfo(&p.newRunIfUsed().m, "json_output", strings.TrimSpace(body[len("Writing JSON output to "):]))
	case strings.HasPrefix(body, "nccl-tests version "), strings.HasPrefix(body, "rccl-tests version "),
		strings.HasPrefix(body, ncclProbe+" version "):
		p.versionLine(body)
	case strings.HasPrefix(body, "Collective test starting: "):
		r := p.startRun()
		r.m.Test = ncclTestName(body[len("Collective test starting: "):])
	case strings.HasPrefix(body, "Collective test concluded: "):
		if p.cur != nil && p.cur.m.Test == "" {
			p.cur.m.Test = ncclTestName(body[len("Collective test concluded: "):])
		}
	case strings.HasPrefix(body, "nThread "):
		p.bannerLine(body)
	case strings.HasPrefix(body, "Rank "):
		p.deviceLine(body)
	case strings.HasPrefix(body, "Out of bounds values"):
		p.outOfBounds(body)
	case strings.HasPrefix(body, "Avg bus bandwidth"):
		p.avgBusBW(body)
	case strings.HasPrefix(body, "skipping json output"):
		p.newRunIfUsed().warn(body)
	case strings.HasPrefix(body, "Reducing maxBytes"):
		p.run().warn(body)
		ncclSetInfo(&p.run().m, "max_bytes_reduced", ncclReducedMax(body))
	case strings.HasPrefix(body, "error:"):
		p.run().warn(body)
	case strings.HasPrefix(body, "size "):
		if lay := ncclParseLayout(strings.Fields(body)); lay != nil {
			r := p.run()
			if len(r.m.Samples) > 0 || r.footer {
				r = p.newRunIfUsed()
			}
			r.layout, r.header = lay, true
		}
	}
}

// ncclProbe is rdmabench's NCCL probe (cmd/rdmabench-nccl), which prints
// nccl-tests' table under a banner of its own: "# rdmabench-nccl version 1
// nccl-library=22809 …" and "# Collective test starting: all_reduce
// (rdmabench-nccl)".
const ncclProbe = "rdmabench-nccl"

// ncclTestName is the collective a banner names, without the probe's
// "(rdmabench-nccl)".
func ncclTestName(s string) string {
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "("+ncclProbe+")"))
}

// startRun opens a run at the first banner line of a new run: either the
// current run is still in its banner, or a new one begins.
func (p *ncclParser) startRun() *ncclRun {
	if c := p.cur; c != nil && !c.header && !c.footer && len(c.m.Samples) == 0 && !c.fail && !c.banner {
		return c
	}
	return p.newRunIfUsed()
}

// versionLine reads "nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809".
func (p *ncclParser) versionLine(body string) {
	r := p.startRun()
	f := strings.Fields(body)
	if f[0] == "rccl-tests" || f[0] == ncclProbe {
		r.m.Tool = f[0]
	}
	if len(f) >= 3 {
		r.m.Version = f[2]
	}
	for _, kv := range f[3:] {
		if k, v, ok := strings.Cut(kv, "="); ok {
			ncclSetInfo(&r.m, strings.ReplaceAll(k, "-", "_"), v)
		}
	}
}

// bannerLine reads "nThread 1 nGpus 4 minBytes 8 maxBytes … validation: 1 graph: 0".
func (p *ncclParser) bannerLine(body string) {
	r := p.cur
	if r == nil || r.banner || r.header || r.footer || len(r.m.Samples) > 0 || r.fail {
		if r != nil && r.banner && !r.header && len(r.m.Samples) == 0 {
			r.warn("banner printed twice before any table: several unrelated 1-process runs (nccl-tests built without MPI?)")
			return
		}
		r = p.startRun()
	}
	r.banner = true
	f := strings.Fields(body)
	names := map[string]string{"nThread": "nthreads", "nGpus": "ngpus", "minBytes": "min_bytes",
		"maxBytes": "max_bytes", "step:": "step", "validation:": "validation", "graph:": "graph"}
	for i := 0; i+1 < len(f); i++ {
		switch {
		case names[f[i]] != "":
			ncclSetInfo(&r.m, names[f[i]], f[i+1])
		case f[i] == "iters:":
			key := "iters"
			if i > 0 && f[i-1] == "warmup" {
				key = "warmup_iters"
			} else if i > 0 && f[i-1] == "agg" {
				key = "agg_iters"
			}
			ncclSetInfo(&r.m, key, f[i+1])
		}
	}
}

// deviceLine reads "Rank  0 Group  0 Pid 1498 on vm device  0 [0000:00:06] NVIDIA H200"
// (and the legacy form without Group); the highest rank gives Ranks.
func (p *ncclParser) deviceLine(body string) {
	f := strings.Fields(body)
	if len(f) < 2 {
		return
	}
	rank, err := strconv.Atoi(f[1])
	if err != nil || rank < 0 {
		return
	}
	r := p.run()
	if rank > r.maxRank {
		r.maxRank = rank
	}
	for i := 2; i+1 < len(f); i++ {
		if f[i] == "on" {
			r.hosts = ncclAddUnique(r.hosts, f[i+1])
		}
		if f[i] == "device" && i+3 < len(f) && strings.HasPrefix(f[i+2], "[") {
			r.gpus = ncclAddUnique(r.gpus, strings.Join(f[i+3:], " "))
			break
		}
	}
}

func ncclAddUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	if len(list) >= 16 {
		return list
	}
	return append(list, v)
}

// outOfBounds reads "Out of bounds values : 0 OK" (or "N FAILED").
func (p *ncclParser) outOfBounds(body string) {
	r := p.run()
	r.footer = true
	_, v, _ := strings.Cut(body, ":")
	f := strings.Fields(v)
	if len(f) == 0 {
		return
	}
	ncclSetInfo(&r.m, "out_of_bounds", f[0])
	if n, err := strconv.Atoi(f[0]); (err == nil && n > 0) || (len(f) > 1 && f[1] == "FAILED") {
		r.failWith(ClassDataError, "nccl-tests: out of bounds values: "+strings.TrimSpace(v), true)
	}
}

// avgBusBW reads "Avg bus bandwidth    : 81.8015 " (GB/s, optional OK/FAILED).
func (p *ncclParser) avgBusBW(body string) {
	r := p.run()
	r.footer = true
	_, v, _ := strings.Cut(body, ":")
	f := strings.Fields(v)
	if len(f) == 0 {
		return
	}
	if x, ok := ncclNum(f[0]); ok {
		r.m.AvgBusBWBps = ncclBps(x)
	}
	if len(f) > 1 && f[1] == "FAILED" {
		r.failWith(ClassToolError, "nccl-tests: Avg bus bandwidth "+f[0]+" GB/s FAILED the NCCL_TESTS_MIN_BW check (exit 7)", true)
	}
}
