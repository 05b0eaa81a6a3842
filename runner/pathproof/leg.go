package pathproof

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// Run is what the proofs of a run's legs read: the backend that runs
// Script on the endpoints, the run's endpoints by name, and each one's
// active RDMA MTU seen by preflight (for the packets a tool that does not
// print its MTU sent).
type Run struct {
	Backend   backend.Backend
	Endpoints map[string]endpoint.Endpoint
	MTUs      map[string]int
	// ReadTimeout bounds each reading of an endpoint's counters (one
	// exec); below DefaultReadTimeout (0 included) it is that. The
	// runner passes --preflight-timeout: where starting a command in a
	// pod is slow (emulated nodes), this reading is as slow as
	// preflight's.
	ReadTimeout time.Duration
}

// DefaultReadTimeout is the least bound on one reading of an endpoint's
// counters.
const DefaultReadTimeout = 15 * time.Second

// readTimeout is ReadTimeout, at least DefaultReadTimeout.
func (r Run) readTimeout() time.Duration { return max(r.ReadTimeout, DefaultReadTimeout) }

// Leg reads the port counters of a leg's endpoints' devices before
// the leg's first repetition and after its last (nothing of the leg runs
// at either moment), for tests that require RDMA on a named device.
type Leg struct {
	r      Run
	test   *scenarios.Test // the leg's test: its iterations (nil: unknown)
	eps    []string
	env    map[string]string // the first command's environment (UCX's segment size)
	before map[string]Counters
	errs   map[string]string
}

// Leg is the proof of a leg of test, nil when the leg is not proved: an
// endpoint without a known device.
func (r Run) Leg(test *scenarios.Test, leg *plan.Leg) *Leg {
	if leg.OnRails() {
		if r.Endpoints = onRail(r.Endpoints, leg); r.Endpoints == nil {
			return nil
		}
	}
	var eps []string
	for _, pc := range leg.Commands {
		if slices.Contains(eps, pc.Endpoint) {
			continue
		}
		if d := proofDevice(r.Endpoints[pc.Endpoint]); d == "" || d == "auto" {
			return nil
		}
		eps = append(eps, pc.Endpoint)
	}
	return &Leg{r: r, test: test, eps: eps, env: leg.Commands[0].Env, errs: map[string]string{}}
}

// onRail is the leg's endpoints as seen on its rail (a multi-rail pod's
// i-th network: its device, port, interface and address), so that a rail
// leg is proved by that rail's counters; nil when one has no device there.
func onRail(all map[string]endpoint.Endpoint, leg *plan.Leg) map[string]endpoint.Endpoint {
	out := map[string]endpoint.Endpoint{}
	for _, pc := range leg.Commands {
		ep := all[pc.Endpoint]
		rail := leg.RailOn(pc.Endpoint)
		if rail >= len(ep.Rails) || ep.Rails[rail].Device == "" {
			return nil
		}
		r := ep.Rails[rail]
		ep.Device, ep.Port, ep.GIDIndex, ep.DataDevice = r.Device, r.Port, r.GIDIndex, ""
		ep.Interface, ep.Address, ep.Network = r.Interface, r.Address, r.Network
		out[pc.Endpoint] = ep
	}
	return out
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
func (p *Leg) read(ctx context.Context) map[string]Counters {
	out := map[string]Counters{}
	for _, name := range p.eps {
		ep := p.r.Endpoints[name]
		dev := proofDevice(ep)
		cctx, cancel := context.WithTimeout(ctx, p.r.readTimeout())
		raw, err := p.r.Backend.Exec(cctx, ep, []string{"sh", "-c", Script(dev)})
		cancel()
		var c Counters
		if err == nil {
			c, err = Parse(string(raw))
		}
		if err != nil {
			p.errs[name] = fmt.Sprintf("reading %s counters: %v", dev, err)
			continue
		}
		out[name] = c
	}
	return out
}

// Start reads the counters before the leg (nil: nothing to prove).
func (p *Leg) Start(ctx context.Context) {
	if p != nil {
		p.before = p.read(ctx)
	}
}

// Finish reads the counters again and judges the result's path: invalid
// when some device carried (almost) none of the tool's traffic.
//
// discarded are attempts run again (parsers.ClassClock): their traffic
// crossed the devices too, so the rows the tool printed without figures
// count toward what it moved.
func (p *Leg) Finish(ctx context.Context, res *schema.Result, outs, discarded []judge.Outcome) {
	if p == nil || ctx.Err() != nil {
		return
	}
	after := p.read(ctx)
	var deltas []schema.PathCounters
	for _, name := range p.eps {
		dev := proofDevice(p.r.Endpoints[name])
		b, okb := p.before[name]
		a, oka := after[name]
		if e := p.errs[name]; e != "" || !okb || !oka {
			deltas = append(deltas, schema.PathCounters{Endpoint: name, Device: dev, Error: orText(e, "counters not read")})
			continue
		}
		deltas = append(deltas, Delta(name, dev, b, a))
	}
	proof := Verify(deltas, p.expect(append(slices.Clip(outs), discarded...), res))
	if note := p.dataDeviceNote(); note != "" && proof.Invalid {
		proof.Detail += "; " + note
	}
	res.Path = &proof
	if proof.Invalid && (res.Verdict == schema.VerdictPass || res.Verdict == schema.VerdictFail) {
		res.Verdict = schema.VerdictInvalid
		res.Reason = judge.JoinReason("path not proved: "+proof.Detail, res.Reason)
	}
}

// dataDeviceNote says which endpoints were told another device than their
// data interface's.
func (p *Leg) dataDeviceNote() string {
	var out []string
	for _, name := range p.eps {
		if ep := p.r.Endpoints[name]; ep.DataDevice != "" {
			out = append(out, fmt.Sprintf("%s's data interface %s is on %s, the scenario named %s", name, orText(ep.Interface, "-"), ep.DataDevice, ep.Device))
		}
	}
	return strings.Join(out, "; ")
}

// Unproved keeps a `transport: rdma` expectation from passing without a
// verified path: the counters of the data interface's device must agree
// with what the tool says it moved. A test that asks for RDMA by its
// expectation must not pass on the tool's word alone. off: the path proof
// is off (--no-path-proof).
func Unproved(res *schema.Result, t *scenarios.Test, off bool) {
	if t == nil || t.Expect.Transport != "rdma" || res.Verdict != schema.VerdictPass || res.Path != nil && res.Path.Verified {
		return
	}
	why := "its path was not proved (no RDMA device known to read the counters of)"
	switch {
	case off:
		why = "the path proof is off"
	case res.Path != nil:
		why = "the path was not proved: " + res.Path.Detail
	}
	res.Verdict = schema.VerdictInvalid
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
func (p *Leg) expect(outs []judge.Outcome, res *schema.Result) Expect {
	var e Expect
	iters := int64(0)
	if t := p.test; t != nil {
		iters = int64(t.Args.Iterations)
	}
	pings := 0
	for _, o := range outs {
		if !o.OK && o.Class != parsers.ClassClock {
			continue
		}
		if o.M.Pings != nil {
			pings += *o.M.Pings
		}
		mtu := mtuOf(o.M.Info["mtu"])
		if mtu == 0 {
			mtu = p.r.MTUs[p.eps[0]]
		}
		if mtu == 0 {
			mtu = 4096
		}
		for _, s := range slices.Concat(o.M.Samples, o.M.Unmeasured) {
			n := tools.WireMessages(res.Tool, &o.M, &s, iters)
			if n <= 0 || s.Bytes <= 0 {
				return Expect{} // the tool does not say what it moved
			}
			var seg int64 // UCX copying remote memory in segments, at this size
			if tr := o.M.Transport; tr != nil && tr.Source == "ucx" && tr.CopiesAt(s.Bytes) {
				seg = tools.UCXSegSize(p.env)
			}
			e.Bytes += s.Bytes * n
			e.Packets += PacketsForSegments(s.Bytes, n, mtu, seg)
		}
	}
	if e.Packets == 0 && pings > 0 {
		e.FloorPackets = PingFloor(pings)
	}
	return e
}

// mtuOf reads perftest's "4096[B]".
func mtuOf(s string) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(s), "[B]"))
	return n
}
