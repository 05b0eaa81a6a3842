package scenarios

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/rdmabench/rdmabench/tool"
)

var (
	argKeys    = sortedKeys(yamlFields(reflect.TypeFor[Args]()))
	expectKeys = sortedKeys(yamlFields(reflect.TypeFor[Expect]()))
)

// meaningless reports the keys under section that the tool does not read:
// a silently ignored qps on rping would be a test that is not what it says.
func (v *validator) meaningless(path, section, tool string, owner any, keys, allowed []string) map[string]bool {
	bad := map[string]bool{}
	for _, k := range keys {
		p := path + "." + section + "." + k
		if v.written(p, owner, k) && !contains(allowed, k) {
			v.keyErrf(p, fmt.Sprintf("%s reads %s: %s", tool, section, strings.Join(allowed, ", ")), "%s means nothing for %s", k, tool)
			bad[k] = true
		}
	}
	return bad
}

func (v *validator) args(path string, t *Test) {
	bad := v.meaningless(path, "args", t.Tool, &t.Args, argKeys, toolArgs(t.Tool))
	ap := path + ".args"
	a := &t.Args
	has := func(k string) bool { return v.written(ap+"."+k, a, k) && !bad[k] }
	if has("sizes") {
		for i := range a.Sizes {
			p := fmt.Sprintf("%s.sizes[%d]", ap, i)
			if v.checkSize(p, &a.Sizes[i]) {
				v.toolSize(p, t.Tool, &a.Sizes[i])
			}
		}
		if a.Sweep && has("sweep") {
			v.errf(ap+".sweep", "sweep runs every size from 2 B to 8 MiB; keep either sweep or sizes", "sweep and sizes exclude each other")
		}
	}
	if a.Sweep && has("sweep") && has("duration") {
		v.errf(ap+".duration", "perftest runs -a only by iterations (\"Duration mode currently doesn't support running on all sizes\"); keep either sweep or duration",
			"sweep and duration exclude each other")
	}
	v.intArgs(ap, a, has)
	v.nixlArgs(ap, t, has)
	v.ncclArgs(ap, t, has)
	if t.Tool == ToolUCXPerftest {
		v.checkOneOf(ap+".test", a.Test, "ucx_perftest tests", UCXTests)
	}
	if has("transports") {
		for _, tl := range strings.Split(a.Transports, ",") {
			if strings.TrimSpace(tl) == "" {
				v.errf(ap+".transports", "a UCX_TLS list such as tcp, rc,sm,self or rc_x", "transports %q has an empty item", a.Transports)
				break
			}
		}
	}
	if has("duration") {
		v.checkDuration(ap+".duration", &a.Duration)
	}
	if has("connection") {
		v.checkOneOf(ap+".connection", a.ConnectionType, "connection types", Connections)
	}
	v.checkStrings(ap+".extra", a.Extra, "one command-line word per item")
}

// intArgs checks the whole-number arguments.
func (v *validator) intArgs(ap string, a *Args, has func(string) bool) {
	for _, c := range []struct {
		key      string
		val, min int
		hint     string
	}{
		{"qps", a.QPs, 1, "perftest -q: queue pairs per process, 1–16384"},
		{"iterations", a.Iterations, 1, "iterations per size, 1 or more"},
		{"count", a.Count, 1, "rping -C: pings to send, 1 or more"},
		{"stepFactor", a.StepFactor, 2, "nccl-tests -f: each size is the previous times this, 2 or more"},
		{"maxBatch", a.MaxBatch, 1, "nixlbench --max_batch_size, 1 or more"},
		{"streams", a.Streams, 1, "iperf3 -P: parallel streams, 1–128"},
	} {
		if has(c.key) {
			v.checkMin(ap+"."+c.key, c.val, c.min, c.hint)
		}
	}
	if has("qps") && a.QPs > 16384 {
		v.errf(ap+".qps", "perftest -q accepts at most 16384", "%d queue pairs is too many", a.QPs)
	}
	if has("streams") && a.Streams > 128 {
		v.errf(ap+".streams", "iperf3 -P accepts at most 128", "%d streams is too many", a.Streams)
	}
	if has("mtu") && !contains(MTUs, a.MTU) {
		v.errf(ap+".mtu", "perftest -m accepts 256, 512, 1024, 2048 or 4096", "%d is not an IB MTU", a.MTU)
	}
	if has("useCuda") && a.UseCUDA != nil && *a.UseCUDA < 0 {
		v.errf(ap+".useCuda", "the GPU index for --use_cuda, 0 or more", "GPU index %d is negative", *a.UseCUDA)
	}
}

func (v *validator) nixlArgs(ap string, t *Test, has func(string) bool) {
	if t.Tool != ToolNixlbench {
		return
	}
	a := &t.Args
	if has("backend") && has("backends") {
		v.errf(ap+".backends", "backend runs one NIXL backend, backends compares several; keep one of them", "backend and backends exclude each other")
	}
	if a.Backend != "" {
		v.checkOneOf(ap+".backend", a.Backend, "NIXL backends", NixlBackends)
	}
	seen := map[string]bool{}
	for i, b := range a.Backends {
		p := fmt.Sprintf("%s.backends[%d]", ap, i)
		if v.checkOneOf(p, b, "NIXL backends", NixlBackends) && seen[b] {
			v.errf(p, "each backend runs once per test", "backend %q is listed twice", b)
		}
		seen[b] = true
	}
	if has("backends") && len(a.Backends) == 0 {
		v.errf(ap+".backends", "list at least one: backends: [UCX, UCCL]", "backends is empty")
	}
	v.checkOneOf(ap+".op", a.Op, "NIXL ops", NixlOps)
	v.checkOneOf(ap+".runtime", a.Runtime, "nixlbench runtimes", NixlRuntimes)
	v.checkOneOf(ap+".initiatorSeg", a.InitiatorSeg, "segment types", NixlSegments)
	v.checkOneOf(ap+".targetSeg", a.TargetSeg, "segment types", NixlSegments)
	v.sizeRange(ap, a, has)
	v.nixlOwnFlags(ap, a)
	if a.PerRequest && has("perRequest") {
		if v.s.Serving == nil {
			v.errf(ap+".perRequest", "add a serving section (model: llama-3.1-70b, contextLengths: [8192]): its KV layout shapes the transfer",
				"perRequest needs the scenario's serving section")
		}
		for _, k := range []string{"sizes", "minSize", "maxSize", "maxBatch"} {
			if has(k) {
				v.errf(ap+"."+k, "perRequest takes the block size and the descriptors per transfer from the serving section; remove "+k,
					"%s and perRequest exclude each other", k)
			}
		}
	}
}

// nixlOwnedFlags are the nixlbench flags rdmabench sets on every command
// line: the run's etcd, and a group per leg whose keys it clears after the
// leg. Another value in extra would send the tool elsewhere or leave its
// keys behind.
var nixlOwnedFlags = []string{"etcd_endpoints", "benchmark_group", "runtime_type", "asio_address", "asio_port"}

// nixlbenchRefuses are the words nixlbench refuses anywhere in any
// argument, not only as flags (benchmark/nixlbench/src/utils/utils.cpp,
// parseConfig: "--fromenv is disabled for nixlbench").
var nixlbenchRefuses = []string{"flagfile", "fromenv"} // fromenv covers tryfromenv

// NixlRefusedWord is the word of nixlbenchRefuses that arg contains, or "".
func NixlRefusedWord(arg string) string {
	for _, w := range nixlbenchRefuses {
		if strings.Contains(arg, w) {
			return w
		}
	}
	return ""
}

// nixlOwnFlags refuses args.extra words that set a flag rdmabench owns
// (gflags spellings: --x=v, --x v, -x, dashes for underscores).
func (v *validator) nixlOwnFlags(ap string, a *Args) {
	for i, w := range a.Extra {
		if bad := NixlRefusedWord(w); bad != "" {
			v.errf(fmt.Sprintf("%s.extra[%d]", ap, i), "nixlbench refuses any argument containing "+bad+" (utils.cpp parseConfig: use its --config_file instead)",
				"%q contains %q", w, bad)
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if name == w {
			continue // not a flag
		}
		if flag := strings.ReplaceAll(name, "-", "_"); contains(nixlOwnedFlags, flag) {
			hint := "rdmabench sets --" + flag + " itself (the run's etcd, a group per leg that it cleans up, the initiator's address); remove it from extra"
			if flag == "runtime_type" {
				hint = "write args.runtime: ETCD or ASIO instead"
			}
			v.errf(fmt.Sprintf("%s.extra[%d]", ap, i), hint, "--%s cannot be set in extra", flag)
		}
	}
}

func (v *validator) ncclArgs(ap string, t *Test, has func(string) bool) {
	if !collective(t.Tool) {
		return
	}
	a := &t.Args
	if a.Collective == "" {
		v.errf(ap+".collective", "collectives are: "+strings.Join(Collectives, ", "), "%s needs args.collective", t.Tool)
	} else {
		v.checkOneOf(ap+".collective", a.Collective, "collectives", Collectives)
	}
	if has("dataType") {
		v.checkOneOf(ap+".dataType", a.DataType, "data types", dataTypes(t.Tool))
	}
	v.sizeRange(ap, a, has)
}

// sizeRange checks minSize and maxSize and their order.
func (v *validator) sizeRange(ap string, a *Args, has func(string) bool) {
	okMin := has("minSize") && v.checkSize(ap+".minSize", &a.MinSize)
	okMax := has("maxSize") && v.checkSize(ap+".maxSize", &a.MaxSize)
	if okMin && okMax && a.MinSize.Bytes > a.MaxSize.Bytes {
		v.errf(ap+".minSize", "minSize is the first size of the sweep, maxSize the last", "minSize %s is larger than maxSize %s", a.MinSize.Raw, a.MaxSize.Raw)
	}
}

func (v *validator) expect(path string, t *Test) {
	allowed := tool.ExpectKeys(t.Tool, t.Settings())
	what := t.Tool
	if t.Tool == ToolUCXPerftest {
		what += " " + t.Args.Test
	}
	bad := v.meaningless(path, "expect", what, &t.Expect, expectKeys, allowed)
	ep := path + ".expect"
	e := &t.Expect
	has := func(k string) bool { return v.written(ep+"."+k, e, k) && !bad[k] }
	if has("minLineRate") {
		v.checkPercent(ep+".minLineRate", &e.MinLineRate)
		if !v.s.LineRate.IsSet() {
			v.errf(ep+".minLineRate", "set lineRate: 400Gb/s (or lineRate: auto to read it from the NIC) at the top of the file",
				"a percent of line rate needs a lineRate")
		}
	}
	if has("minBandwidth") {
		v.checkRate(ep+".minBandwidth", &e.MinBandwidth, false)
	}
	if has("minBusBW") {
		v.checkRate(ep+".minBusBW", &e.MinBusBW, false)
	}
	for _, k := range []string{"maxLatency", "maxP99Latency"} {
		if has(k) {
			d := map[string]*Duration{"maxLatency": &e.MaxLatency, "maxP99Latency": &e.MaxP99Latency}[k]
			v.checkDuration(ep+"."+k, d)
		}
	}
	if has("transport") {
		v.checkOneOf(ep+".transport", e.Transport, "transports", Requirements)
	}
	if has("minPings") {
		v.checkMin(ep+".minPings", e.MinPings, 1, "rping: pings that must complete, 1 or more")
	}
	if has("lowPair") {
		v.lowPair(ep+".lowPair", t)
	}
}

// toolSize checks a size against what the tool itself accepts: rping -S
// and perftest -s exit at once on a size outside their range.
func (v *validator) toolSize(path, tool string, s *Size) {
	switch {
	case tool == ToolRping && (s.Bytes < 23 || s.Bytes > 65535):
		v.errf(path, "rping -S accepts 23 to 65535 bytes", "size %s is outside rping's range", s.Raw)
	case strings.HasPrefix(tool, "ib_") && s.Bytes > 1<<31-1:
		v.errf(path, "perftest -s accepts at most 2147483647 bytes (2GiB - 1)", "size %s is too large for perftest", s.Raw)
	}
}
