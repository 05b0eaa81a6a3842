// Package judge turns what a leg measured into its verdict: statistics per
// message size, the best figure, efficiency against the line rate and the
// test's expectations. It is pure: repetitions, test and line rate in; the
// filled-in schema.Result out. The executor (package runner) calls it.
package judge

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/tool"
	"github.com/rdmabench/rdmabench/units"
)

// Outcome is what one repetition of a leg produced: its measurement, or
// the error that stopped it, with the provenance the result keeps.
type Outcome struct {
	M           parsers.Measurement // the parsed measurement (when OK)
	OK          bool
	Class       parsers.ErrorClass // why it failed (when !OK)
	Err         string
	Notes       []string // remarks for the result's reason
	Seconds     float64  // wall time of the repetition
	ToolSeconds float64  // first tool start to last tool end
	Raw         []string // raw output files, relative to the results folder
	Commands    []string // command lines, as run
	Interrupted bool     // ended by Ctrl-C or the run's deadline
}

// Fill folds the repetitions of a leg into its result and judges it:
// statistics of its headline metric (res.Metric, set by the runner from
// the tool table), best figure, efficiency against the line rate, verdict.
func Fill(res *schema.Result, test *scenarios.Test, lr *schema.LineRate, outs []Outcome) {
	var ok []parsers.Measurement
	var failed []string
	for i, o := range outs {
		rep := schema.Repetition{Index: i, OK: o.OK, Samples: o.M.Samples, Seconds: o.Seconds}
		if !o.OK {
			rep.ErrorClass, rep.Error = o.Class, o.Err
			failed = append(failed, fmt.Sprintf("repetition %d/%d: %s", i+1, len(outs), o.Err))
		} else {
			ok = append(ok, o.M)
		}
		res.Repetitions = append(res.Repetitions, rep)
		res.RawOutputs = append(res.RawOutputs, o.Raw...)
		res.Commands = appendNew(res.Commands, o.Commands...)
		res.Seconds += o.Seconds
		res.ToolSeconds += o.ToolSeconds
		res.Reason = JoinReason(res.Reason, strings.Join(uniqueNotes(o.Notes), "; "))
	}
	if len(ok) > 0 {
		res.Samples = averageSamples(ok)
		res.Stats = sizeStats(ok, res.Metric)
		res.Transport = ok[0].Transport
		res.Op = ok[0].Op
		res.Program, res.Libraries = measuredBy(ok[0])
		res.BestBps, res.BestBytes = best(res.Samples)
	}
	if lr != nil && lr.Source != schema.LineRateNone && lr.Bps > 0 {
		res.LineRate = lr
		if res.BestBps > 0 {
			eff := res.BestBps / lr.Bps * 100
			res.Efficiency = &eff
		}
	}
	if len(failed) > 0 {
		first := firstFailure(outs)
		res.Verdict, res.ErrorClass = schema.VerdictError, first.Class
		res.Reason = JoinReason(strings.Join(failed, "; "), res.Reason)
		return
	}
	judge(res, test, ok)
	if res.Transport != nil && res.Transport.Note != "" {
		// What the path's own evidence says a person should know (UCX
		// emulating an op in software): beside the verdict, not instead.
		res.Reason = JoinReason(res.Reason, res.Transport.Note)
	}
}

// libraryKeys are the banner facts of rdmabench's probes that name a
// library the serving image loaded, and the name a result gives each.
var libraryKeys = map[string]string{"nixl": "nixl", "ucx": "ucx", "nccl_version": "nccl", "nccl_path": "nccl-path",
	"nccl_found_by": "nccl-found-by", "torch": "torch", "torch_cuda": "torch-cuda", "python": "python", "nixl_path": "nixl-path",
	"deep_ep": "deep_ep", "deep_ep_api": "deep_ep-api", "deep_ep_path": "deep_ep-path", "nvshmem": "nvshmem"}

// measuredBy names the program behind a measurement when it is one of
// rdmabench's probes (its banner), with the library versions it reported.
func measuredBy(m parsers.Measurement) (string, map[string]string) {
	if !strings.HasPrefix(m.Tool, "rdmabench-") {
		return "", nil
	}
	libs := map[string]string{}
	for k, name := range libraryKeys {
		if v := m.Info[k]; v != "" {
			libs[name] = v
		}
	}
	return m.Tool, libs
}

func firstFailure(outs []Outcome) Outcome {
	for _, o := range outs {
		if !o.OK {
			return o
		}
	}
	return Outcome{}
}

// judge compares a measured result with the test's expectation.
func judge(res *schema.Result, test *scenarios.Test, ms []parsers.Measurement) {
	var rules, short []string
	if test != nil {
		rules, short = checkExpect(res, test.Expect, ms)
	}
	res.Expectation = strings.Join(rules, ", ")
	if len(short) > 0 {
		res.Verdict = schema.VerdictFail
		res.Reason = JoinReason(strings.Join(short, "; "), res.Reason)
		return
	}
	if oneRankCollective(res) {
		res.Verdict = schema.VerdictInvalid
		res.Reason = JoinReason(OneRankReason, res.Reason)
		return
	}
	res.Verdict = schema.VerdictPass
	if len(rules) == 0 {
		res.Reason = JoinReason("measured; no expectation set", res.Reason)
	}
}

// OneRankReason is why a collective of one rank is not a pass: it moved
// nothing between GPUs, whatever figure it printed.
const OneRankReason = "one rank: nothing crossed between GPUs (a collective of one rank copies within its GPU); " +
	"give the pool gpus: all, or 2 or more, or test two pools"

func oneRankCollective(res *schema.Result) bool {
	if spec, ok := tool.Lookup(res.Tool); ok && !spec.Collective {
		return false // one process by design (gpu_copy: one GPU reads another)
	}
	return res.NRanks == 1 && tool.IsCollective(tool.Family(res.Family))
}

// checkExpect returns the rules judged (in words) and the shortfalls.
func checkExpect(res *schema.Result, e scenarios.Expect, ms []parsers.Measurement) (rules, short []string) {
	add := func(rule string, met bool, why string) {
		rules = append(rules, rule)
		if !met {
			short = append(short, why)
		}
	}
	if p, ok := percent(e.MinLineRate); ok {
		rule := fmt.Sprintf(">= %g%% of line rate", p)
		switch {
		case res.LineRate == nil:
			rules = append(rules, rule+" (not judged: no line rate)")
			res.Reason = JoinReason(res.Reason, "minLineRate not judged: the line rate is unknown (set lineRate in the scenario)")
		case res.Efficiency == nil:
			add(rule, false, "no bandwidth measured to compare with the line rate")
		default:
			add(rule, *res.Efficiency >= p, fmt.Sprintf("best %s is %.1f%% of line rate %s, below %g%%",
				units.FormatRate(res.BestBps), *res.Efficiency, units.FormatRate(res.LineRate.Bps), p))
		}
	}
	if bps, ok := rate(e.MinBandwidth); ok {
		add(">= "+units.FormatRate(bps), res.BestBps >= bps,
			fmt.Sprintf("best %s below %s", units.FormatRate(res.BestBps), units.FormatRate(bps)))
	}
	if bps, ok := rate(e.MinBusBW); ok {
		got := avgBusBW(ms, res)
		add("bus bandwidth >= "+units.FormatByteRate(bps), got >= bps,
			fmt.Sprintf("average bus bandwidth %s below %s", units.FormatByteRate(got), units.FormatByteRate(bps)))
	}
	checkLatency(e, res, add)
	checkTransport(e, res, add)
	checkAffinity(e, res, add)
	if e.MinPings > 0 {
		got := pings(ms)
		add(fmt.Sprintf(">= %d pings", e.MinPings), got >= e.MinPings, fmt.Sprintf("%d pings completed, want %d", got, e.MinPings))
	}
	return rules, short
}

// checkLatency judges the smallest size: latency is a small-message figure.
func checkLatency(e scenarios.Expect, res *schema.Result, add func(string, bool, string)) {
	var small *parsers.Sample
	for i := range res.Samples {
		if small == nil || res.Samples[i].Bytes < small.Bytes {
			small = &res.Samples[i]
		}
	}
	for _, c := range []struct {
		name string
		lim  scenarios.Duration
		val  func(*parsers.Sample) *float64
	}{
		{"average latency", e.MaxLatency, func(s *parsers.Sample) *float64 { return s.LatAvgUS }},
		{"p99 latency", e.MaxP99Latency, func(s *parsers.Sample) *float64 { return s.LatP99US }},
	} {
		limUS, ok := micros(c.lim)
		if !ok {
			continue
		}
		rule := fmt.Sprintf("%s <= %gus", c.name, limUS)
		if small == nil || c.val(small) == nil {
			add(rule, false, c.name+" not measured")
			continue
		}
		v := *c.val(small)
		add(rule, v <= limUS, fmt.Sprintf("%s %.2fus at %s above %gus", c.name, v, units.FormatSize(small.Bytes), limUS))
	}
}

// checkTransport fails a test that must ride RDMA but fell back to TCP.
func checkTransport(e scenarios.Expect, res *schema.Result, add func(string, bool, string)) {
	if e.Transport == "" {
		return
	}
	rule := "transport " + e.Transport
	switch {
	case res.Transport == nil || res.Transport.Kind == parsers.TransportUnknown:
		rules := "transport not evidenced in the output"
		res.Reason = JoinReason(res.Reason, rules)
		add(rule+" (unverified)", true, "")
	case res.Transport.Kind != e.Transport:
		if res.Transport.Kind == parsers.TransportTCP {
			res.ErrorClass = parsers.ClassTCPFallback
		}
		add(rule, false, fmt.Sprintf("ran over %s (%s), want %s", res.Transport.Kind, res.Transport.Detail, e.Transport))
	default:
		add(rule, true, "")
	}
}

func avgBusBW(ms []parsers.Measurement, res *schema.Result) float64 {
	var sum float64
	var n int
	for _, m := range ms {
		if m.AvgBusBWBps != nil {
			sum += *m.AvgBusBWBps
			n++
		}
	}
	if n == 0 {
		return res.BestBps
	}
	return sum / float64(n)
}

func pings(ms []parsers.Measurement) int {
	least := -1
	for _, m := range ms {
		n := 0
		if m.Pings != nil {
			n = *m.Pings
		}
		if least < 0 || n < least {
			least = n
		}
	}
	return max(least, 0)
}

// percent, rate and micros read a scenario value, parsing it if the
// loader has not (values keep their raw text).
func percent(p scenarios.Percent) (float64, bool) {
	if !p.IsSet() {
		return 0, false
	}
	if p.Value == 0 && p.Parse() != nil {
		return 0, false
	}
	return p.Value, true
}

func rate(r scenarios.Rate) (float64, bool) {
	if !r.IsSet() || r.Raw == "auto" {
		return 0, false
	}
	if r.Bps == 0 && r.Parse() != nil {
		return 0, false
	}
	return r.Bps, r.Bps > 0
}

func micros(d scenarios.Duration) (float64, bool) {
	if !d.IsSet() {
		return 0, false
	}
	if d.Value == 0 && d.Parse() != nil {
		return 0, false
	}
	return float64(d.Value.Nanoseconds()) / 1e3, true
}

func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		dup := false
		for _, x := range list {
			if x == it {
				dup = true
				break
			}
		}
		if !dup {
			list = append(list, it)
		}
	}
	return list
}

func uniqueNotes(notes []string) []string { return appendNew(nil, notes...) }

// JoinReason appends a remark to a reason, "; "-separated.
func JoinReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
