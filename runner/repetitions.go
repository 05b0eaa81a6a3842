package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/pathproof"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/tool"
)

// clockReruns bounds how often a repetition is run again after the tool
// could not time itself (parsers.ClassClock).
const clockReruns = 2

// runLeg runs a leg Job.Repetitions times and judges the whole. It returns
// false when the run was interrupted before the leg's first repetition
// finished; interrupted later, the leg is judged on the repetitions that
// finished (measured is kept), and says so.
func (r *run) runLeg(ctx context.Context, job *plan.Job, legIdx int) (schema.Result, bool) {
	res := r.newResult(job, legIdx)
	res.Started = time.Now().UTC()
	var users []string
	if legIdx < len(job.Legs) {
		users = portUsers(r.sharedPorts, &job.Legs[legIdx])
	}
	done := r.portBusy(job.ID, users, res.Started)
	reps := max(1, job.Repetitions)
	outs := make([]judge.Outcome, 0, reps)
	proof := r.newLegProof(job, legIdx)
	proof.Start(ctx)
	var discarded []judge.Outcome
	interrupted := false
	for rep := 0; rep < reps; rep++ {
		r.progress.start(job, legIdx, rep, reps)
		o, thrown := r.runRepetition(ctx, job, legIdx, rep, reps)
		discarded = append(discarded, thrown...)
		if o.Interrupted || ctx.Err() != nil {
			interrupted = true
			break
		}
		outs = append(outs, o)
	}
	end := time.Now().UTC()
	done(end)
	if interrupted && len(outs) == 0 {
		return res, false
	}
	judge.Fill(&res, r.tests[job.Test], r.legLineRate(res, outs), outs)
	proof.Finish(ctx, &res, outs, discarded) // nothing after an interrupt: Unproved says so
	pathproof.Unproved(&res, r.tests[res.Test], r.cfg.NoPathProof)
	r.noteSharedMachine(&res)
	r.noteSharedPort(&res, users, res.Started, end)
	r.noteVersion(job.Tool, outs)
	if interrupted {
		res.Reason = judge.JoinReason(fmt.Sprintf("interrupted after %d of %d repetitions: judged on those", len(outs), reps), res.Reason)
	}
	return res, true
}

// newLegProof is nil when the leg is not proved: proof off, a test that
// does not require RDMA, or an endpoint without a known device.
func (r *run) newLegProof(job *plan.Job, legIdx int) *pathproof.Leg {
	if r.cfg.NoPathProof || r.requires(job.Test, job.Tool) != "rdma" {
		return nil
	}
	proofs := pathproof.Run{Backend: r.cfg.Backend, Endpoints: r.endpoints, MTUs: r.mtus, ReadTimeout: r.cfg.PreflightTimeout}
	return proofs.Leg(r.tests[job.Test], &job.Legs[legIdx])
}

// runRepetition runs one repetition (repetition.go), again while the tool
// could not time itself: a noisy clock on a loaded host says nothing of the
// fabric. It returns the repetition's outcome, noting the reruns, and the
// attempts it discarded (their traffic still crossed the wire: the path
// proof counts it).
func (r *run) runRepetition(ctx context.Context, job *plan.Job, legIdx, rep, reps int) (o judge.Outcome, discarded []judge.Outcome) {
	o = r.runRep(ctx, job, legIdx, rep)
	attempts, first := 1, o.Err
	var kept []string // the discarded attempts' raw outputs
	for o.Class == parsers.ClassClock && attempts <= clockReruns && !o.Interrupted && ctx.Err() == nil {
		// The rerun writes the same raw files: the attempt's are kept
		// under names of their own, as evidence of the reason.
		kept = append(kept, r.dir.keepAttempt(o.Raw, attempts)...)
		discarded = append(discarded, o)
		r.progress.printf("again   %s repetition %d/%d (attempt %d of %d): the tool could not time itself (clock_error)",
			job.ID, rep+1, reps, attempts+1, clockReruns+1)
		o = r.runRep(ctx, job, legIdx, rep)
		attempts++
	}
	o.Raw = append(kept, o.Raw...)
	switch {
	case attempts == 1:
	case o.Class == parsers.ClassClock:
		o.Notes = append(o.Notes, fmt.Sprintf("repetition %d/%d ran %d times, without figures each time", rep+1, reps, attempts))
	case attempts == 2:
		o.Notes = append(o.Notes, fmt.Sprintf("repetition %d/%d ran twice: the first run had no figures (%s)", rep+1, reps, first))
	default:
		o.Notes = append(o.Notes, fmt.Sprintf("repetition %d/%d ran %d times: the first %d had no figures (%s)", rep+1, reps, attempts, attempts-1, first))
	}
	return o, discarded
}

// noteVersion keeps the version a tool reported, for RunMeta.ToolVersions.
func (r *run) noteVersion(tool string, outs []judge.Outcome) {
	for _, o := range outs {
		if o.OK && o.M.Version != "" {
			r.mu.Lock()
			if r.versions == nil {
				r.versions = map[string]string{}
			}
			r.versions[tool] = o.M.Version
			r.mu.Unlock()
			return
		}
	}
}

// nvlinkRate is the NVLink rate of the GPUs of an endpoint, read once with
// `nvidia-smi nvlink --status` where it runs (bounded); nil where there is
// none (no NVLink, no nvidia-smi).
func (r *run) nvlinkRate(name string) *schema.LineRate {
	r.mu.Lock()
	lr, seen := r.nvlink[name]
	r.mu.Unlock()
	if seen {
		return lr
	}
	ep, ok := r.endpoints[name]
	if ok {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		out, err := r.cfg.Backend.Exec(ctx, ep, []string{"nvidia-smi", "nvlink", "--status"})
		cancel()
		if gbps, detail, found := nic.NVLinkRate(nic.ParseNVLinkStatus(string(out))); err == nil && found {
			lr = &schema.LineRate{Bps: gbps * 8e9, Source: schema.LineRateNVLink, Detail: detail}
		}
	}
	r.mu.Lock()
	if r.nvlink == nil {
		r.nvlink = map[string]*schema.LineRate{}
	}
	r.nvlink[name] = lr
	r.mu.Unlock()
	return lr
}

// gpuToGPU says whether a leg's endpoints share one host's GPUs (each its
// own, endpoint.VisibleGPUs) and its data went from GPU to GPU.
func (r *run) gpuToGPU(names []string, outs []judge.Outcome) bool {
	for _, n := range names {
		if ep, ok := r.endpoints[n]; !ok || ep.VisibleGPUs == "" {
			return false
		}
	}
	for _, o := range outs {
		if o.OK && o.M.Transport != nil && o.M.Transport.Kind == parsers.TransportP2P {
			return true
		}
	}
	return false
}

// legLineRate is the line rate a result is held to: with `lineRate: auto`
// the lower of its endpoints' own (a pair is as fast as its slower end),
// else the run's.
func (r *run) legLineRate(res schema.Result, outs []judge.Outcome) *schema.LineRate {
	names := res.Ranks
	if len(names) == 0 {
		names = []string{res.From, res.To}
	}
	if one := slices.Compact(slices.Sorted(slices.Values(names))); len(one) == 1 && tool.IsCollective(tool.Family(res.Family)) {
		// Every rank on one host: the GPUs' NVLink carries it, not a NIC.
		if lr := r.nvlinkRate(one[0]); lr != nil {
			return lr
		}
	}
	if r.gpuToGPU(names, outs) {
		// Endpoints that share one host's GPUs, each its own, and data
		// that went GPU to GPU (UCX's cuda_ipc): NVLink carried it.
		if lr := r.nvlinkRate(names[0]); lr != nil {
			return lr
		}
	}
	var low *schema.LineRate
	var parts []string
	for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
		lr, ok := r.rates[n]
		if !ok {
			return r.cfg.LineRate // one end unread: the run's
		}
		parts = append(parts, n+" "+lr.Detail)
		if low == nil || lr.Bps < low.Bps {
			c := lr
			low = &c
		}
	}
	if low == nil {
		return r.cfg.LineRate
	}
	if len(parts) > 1 {
		low.Detail = "the lower of " + strings.Join(parts, " and ")
	}
	return low
}
