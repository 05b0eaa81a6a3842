package runner

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/pathproof"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// legProof reads the port counters of a leg's endpoints' devices before
// the leg's first repetition and after its last (nothing of the leg runs
// at either moment), for tests that require RDMA on a named device.
type legProof struct {
	r      *run
	eps    []string
	env    map[string]string // the first command's environment (UCX's segment size)
	before map[string]pathproof.Counters
	errs   map[string]string
}

// newLegProof is nil when the leg is not proved: proof off, a test that
// does not require RDMA, or an endpoint without a known device.
func (r *run) newLegProof(job *plan.Job, legIdx int) *legProof {
	if r.cfg.NoPathProof || r.requires(job.Test, job.Tool) != "rdma" {
		return nil
	}
	var eps []string
	for _, pc := range job.Legs[legIdx].Commands {
		if slices.Contains(eps, pc.Endpoint) {
			continue
		}
		if d := proofDevice(r.endpoints[pc.Endpoint]); d == "" || d == "auto" {
			return nil
		}
		eps = append(eps, pc.Endpoint)
	}
	return &legProof{r: r, eps: eps, env: job.Legs[legIdx].Commands[0].Env, errs: map[string]string{}}
}

// proofDevice is the device whose counters prove an endpoint's path: its
// data interface's (when the scenario named another device, traffic that
// took that device's network did not cross the data network), else the
// device its tools were given.
func proofDevice(ep endpoint.Endpoint) string {
	if ep.DataDevice != "" {
		return ep.DataDevice
	}
	return ep.Device
}

// read reads every endpoint's counters, one short command each.
func (p *legProof) read(ctx context.Context) map[string]pathproof.Counters {
	out := map[string]pathproof.Counters{}
	for _, name := range p.eps {
		ep := p.r.endpoints[name]
		dev := proofDevice(ep)
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		raw, err := p.r.cfg.Backend.Exec(cctx, ep, []string{"sh", "-c", pathproof.Script(dev)})
		cancel()
		var c pathproof.Counters
		if err == nil {
			c, err = pathproof.Parse(string(raw))
		}
		if err != nil {
			p.errs[name] = fmt.Sprintf("reading %s counters: %v", dev, err)
			continue
		}
		out[name] = c
	}
	return out
}

func (p *legProof) start(ctx context.Context) {
	if p != nil {
		p.before = p.read(ctx)
	}
}

// finish reads the counters again and judges the result's path: invalid
// when some device carried (almost) none of the tool's traffic.
//
// discarded are attempts run again (parsers.ClassClock): their traffic
// crossed the devices too, so the rows the tool printed without figures
// count toward what it moved.
func (p *legProof) finish(ctx context.Context, res *report.Result, outs, discarded []judge.Outcome) {
	if p == nil || ctx.Err() != nil {
		return
	}
	after := p.read(ctx)
	var deltas []report.PathCounters
	for _, name := range p.eps {
		dev := proofDevice(p.r.endpoints[name])
		b, okb := p.before[name]
		a, oka := after[name]
		if e := p.errs[name]; e != "" || !okb || !oka {
			deltas = append(deltas, report.PathCounters{Endpoint: name, Device: dev, Error: orText(e, "counters not read")})
			continue
		}
		deltas = append(deltas, pathproof.Delta(name, dev, b, a))
	}
	proof := pathproof.Verify(deltas, p.expect(append(slices.Clip(outs), discarded...), res))
	if note := p.dataDeviceNote(); note != "" && proof.Invalid {
		proof.Detail += "; " + note
	}
	res.Path = &proof
	if proof.Invalid && (res.Verdict == report.VerdictPass || res.Verdict == report.VerdictFail) {
		res.Verdict = report.VerdictInvalid
		res.Reason = judge.JoinReason("path not proved: "+proof.Detail, res.Reason)
	}
}

// dataDeviceNote says which endpoints were told another device than their
// data interface's.
func (p *legProof) dataDeviceNote() string {
	var out []string
	for _, name := range p.eps {
		if ep := p.r.endpoints[name]; ep.DataDevice != "" {
			out = append(out, fmt.Sprintf("%s's data interface %s is on %s, the scenario named %s", name, orText(ep.Interface, "-"), ep.DataDevice, ep.Device))
		}
	}
	return strings.Join(out, "; ")
}

// unproved keeps a `transport: rdma` expectation from passing without a
// verified path: the counters of the data interface's device must agree
// with what the tool says it moved. A test that asks for RDMA by its
// expectation must not pass on the tool's word alone.
func (r *run) unproved(res *report.Result) {
	t := r.tests[res.Test]
	if t == nil || t.Expect.Transport != "rdma" || res.Verdict != report.VerdictPass || res.Path != nil && res.Path.Verified {
		return
	}
	why := "its path was not proved (no RDMA device known to read the counters of)"
	switch {
	case r.cfg.NoPathProof:
		why = "the path proof is off"
	case res.Path != nil:
		why = "the path was not proved: " + res.Path.Detail
	}
	res.Verdict = report.VerdictInvalid
	res.Reason = judge.JoinReason("transport: rdma expected, but "+why, res.Reason)
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// expect is what the tool says it moved over all repetitions: size ×
// iterations of each sample and of each row printed without figures (the
// test's iterations where the tool prints none), and the packets that takes at the path MTU (the tool's header,
// else the device's active MTU seen by preflight, else 4096).
func (p *legProof) expect(outs []judge.Outcome, res *report.Result) pathproof.Expect {
	var e pathproof.Expect
	iters := int64(0)
	if t := p.r.tests[res.Test]; t != nil {
		iters = int64(t.Args.Iterations)
	}
	for _, o := range outs {
		if !o.OK && o.Class != parsers.ClassClock {
			continue
		}
		mtu := mtuOf(o.M.Info["mtu"])
		if mtu == 0 {
			mtu = p.r.mtus[p.eps[0]]
		}
		if mtu == 0 {
			mtu = 4096
		}
		for _, s := range slices.Concat(o.M.Samples, o.M.Unmeasured) {
			n := tools.WireMessages(res.Tool, &o.M, &s, iters)
			if n <= 0 || s.Bytes <= 0 {
				return pathproof.Expect{} // the tool does not say what it moved
			}
			var seg int64 // UCX copying remote memory in segments, at this size
			if tr := o.M.Transport; tr != nil && tr.Source == "ucx" && tr.CopiesAt(s.Bytes) {
				seg = tools.UCXSegSize(p.env)
			}
			e.Bytes += s.Bytes * n
			e.Packets += pathproof.PacketsForSegments(s.Bytes, n, mtu, seg)
		}
	}
	return e
}

// mtuOf reads perftest's "4096[B]".
func mtuOf(s string) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(s), "[B]"))
	return n
}
