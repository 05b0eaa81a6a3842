package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	runetcd "github.com/rdmabench/rdmabench/runner/etcd"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/tool"
)

// DefaultLegTimeout bounds a leg whose job gives no TimeoutSec.
const DefaultLegTimeout = 120 * time.Second

// runRep runs the leg's commands once: servers first, each waited for by
// its readiness signal, then the client; all bounded by the job's timeout.
func (r *run) runRep(ctx context.Context, job *plan.Job, legIdx, rep int) judge.Outcome {
	start := time.Now()
	timeout := time.Duration(job.TimeoutSec * float64(time.Second))
	if timeout <= 0 {
		timeout = DefaultLegTimeout
	}
	legCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	l := &legRun{r: r, job: job, leg: &job.Legs[legIdx], legIdx: legIdx, rep: rep}
	outDir, err := r.scratch(legCtx, l)
	if err != nil {
		return judge.Outcome{Class: parsers.ClassToolError, Err: err.Error()}
	}
	l.subst = newSubstituter(r.endpoints, r.etcdURL, r.runID, outDir)
	keys := r.nixlKeysOf(l)
	keys.Clear() // what an earlier, killed run of the same group left
	keys.Watch()
	o := l.execute(ctx, legCtx, timeout)
	l.finish()
	n := len(l.pendingNotes)
	l.mpiDown()
	o.Notes = append(o.Notes, l.pendingNotes[n:]...)
	keys.Clear()
	o.Seconds = time.Since(start).Seconds()
	return o
}

// nixlKeysOf is the leg's group in the run's etcd; nil when no etcd runs
// or the leg has none (other tools, the ASIO runtime).
func (r *run) nixlKeysOf(l *legRun) *runetcd.Group {
	if r.etcd == nil || l.leg.NixlGroup == "" {
		return nil
	}
	return runetcd.NewGroup(r.etcd, tools.EtcdPrefix(l.subst.text(l.leg.NixlGroup)))
}

// execute starts the sides in order and waits for them.
func (l *legRun) execute(ctx, legCtx context.Context, timeout time.Duration) judge.Outcome {
	cmds := l.leg.Commands
	if len(cmds) == 0 {
		return judge.Outcome{Class: parsers.ClassToolError, Err: "leg has no commands"}
	}
	if err := l.mpiUp(legCtx); err != nil {
		return l.failed(ctx, legCtx, timeout, "make the ranks reachable by the MPI launcher", err)
	}
	for i, pc := range cmds {
		if err := l.portFree(legCtx, pc); err != nil {
			return l.failed(ctx, legCtx, timeout, "start "+pc.Role+" on "+pc.Endpoint, err)
		}
		retry := i > 0 && cmds[i-1].Ready == tools.ReadyRetry
		s, err := l.startSide(legCtx, pc, retry)
		if err != nil {
			return l.failed(ctx, legCtx, timeout, "start "+pc.Role+" on "+pc.Endpoint, err)
		}
		if i == len(cmds)-1 {
			break
		}
		if err := l.waitReady(legCtx, s); err != nil {
			return l.failed(ctx, legCtx, timeout, "wait for "+pc.Role+" on "+pc.Endpoint+" to be ready ("+pc.Ready+")", err)
		}
	}
	if err := l.waitAll(legCtx); err != nil {
		return l.failed(ctx, legCtx, timeout, "wait for the tools to finish", err)
	}
	return l.parse()
}

// failed turns an error of a phase into an outcome: interrupted, timeout,
// or the error itself with the side's last output lines.
func (l *legRun) failed(ctx, legCtx context.Context, timeout time.Duration, phase string, err error) judge.Outcome {
	running := l.running()
	l.killAll()
	o := l.base()
	switch {
	case ctx.Err() != nil:
		o.Interrupted = true
		o.Class, o.Err = parsers.ClassTimeout, "interrupted"
	case errors.Is(legCtx.Err(), context.DeadlineExceeded):
		o.Class = parsers.ClassTimeout
		o.Err = fmt.Sprintf("timed out after %s: %s; still running: %s", timeout, phase, running)
	default:
		o.Class = parsers.ClassToolError
		o.Err = phase + ": " + err.Error()
		var ex errExited
		if errors.As(err, &ex) {
			o = l.classifyExit(o, phase, ex)
		}
	}
	return o
}

// classifyExit explains a side that exited before it was ready, using the
// parser's error class when its output says why (no device, refused …).
func (l *legRun) classifyExit(o judge.Outcome, phase string, ex errExited) judge.Outcome {
	s := l.sides[len(l.sides)-1]
	o.Err = fmt.Sprintf("%s: %s exited with code %d before it was ready; last output: %s", phase, s.argv[0], ex.exit.Code, s.out.lastLines())
	if s.waitErr != nil {
		o.Err = fmt.Sprintf("%s: %s ended before it was ready: %v; last output: %s", phase, s.argv[0], s.waitErr, s.out.lastLines())
	}
	if m, err := l.parseFile(s); err == nil && !m.OK && m.ErrorClass != parsers.ClassNone {
		o.Class = m.ErrorClass
	}
	return o
}

// running lists the sides still running, for a timeout message.
func (l *legRun) running() string {
	var names []string
	for _, s := range l.sides {
		if !s.exited() {
			names = append(names, s.pc.Role+"@"+s.pc.Endpoint)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// waitAll waits until every side has exited. Once the last-started side
// (the client) has ended, or any side failed, the others get a short grace
// and are then killed: a server whose client is gone would wait forever.
func (l *legRun) waitAll(ctx context.Context) error {
	exited := make(chan *side, len(l.sides))
	for _, s := range l.sides {
		go func(s *side) { <-s.done; exited <- s }(s)
	}
	last := l.sides[len(l.sides)-1]
	var grace <-chan time.Time
	for left := len(l.sides); left > 0; {
		select {
		case s := <-exited:
			left--
			if grace == nil && (s == last || s.exit.Code != 0) {
				grace = time.After(l.r.exitGrace())
			}
		case <-grace:
			for _, s := range l.sides {
				if !s.exited() {
					l.notef("%s on %s still running %s after the others ended: killed", s.pc.Role, s.pc.Endpoint, l.r.exitGrace())
					go s.kill()
				}
			}
			grace = nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// killAll kills every side still running, concurrently.
func (l *legRun) killAll() {
	done := make(chan struct{}, len(l.sides))
	for _, s := range l.sides {
		go func(s *side) { s.kill(); done <- struct{}{} }(s)
	}
	for range l.sides {
		<-done
	}
}

// finish makes sure nothing of the leg runs on and closes the raw files.
func (l *legRun) finish() {
	l.killAll()
	for _, s := range l.sides {
		if s.done != nil {
			select {
			case <-s.done:
			case <-time.After(reapBound):
				l.notef("%s on %s did not exit after it was killed", s.pc.Role, s.pc.Endpoint)
			}
		}
		_ = s.out.close()
	}
}

// base is an outcome carrying the leg's provenance.
func (l *legRun) base() judge.Outcome {
	var o judge.Outcome
	var first, lastEnd time.Time
	for _, s := range l.sides {
		o.Raw = append(o.Raw, s.rel)
		o.Commands = append(o.Commands, commandLine(s))
		if s.started.IsZero() {
			continue
		}
		if first.IsZero() || s.started.Before(first) {
			first = s.started
		}
		end := time.Now()
		if s.exited() { // ended is written before done is closed
			end = s.ended
		}
		if end.After(lastEnd) {
			lastEnd = end
		}
	}
	if !first.IsZero() {
		o.ToolSeconds = lastEnd.Sub(first).Seconds()
	}
	if l.retries > 0 {
		o.Notes = append(o.Notes, fmt.Sprintf("client started %d time(s) before the server took it", l.retries+1))
	}
	return o
}

// commandLine renders a side as "endpoint$ ENV=v argv…" for the report.
func commandLine(s *side) string { return formatCommand(s.pc.Endpoint, s.env, s.argv) }

// formatCommand is a command line as the report shows it:
// "endpoint$ K=V … argv…", the variables sorted.
func formatCommand(endpoint string, env map[string]string, argv []string) string {
	var b strings.Builder
	b.WriteString(endpoint + "$ ")
	for _, k := range slices.Sorted(maps.Keys(env)) {
		b.WriteString(k + "=" + env[k] + " ")
	}
	b.WriteString(strings.Join(argv, " "))
	return b.String()
}

// parse reads the result-bearing side's output with the tool's parser.
func (l *legRun) parse() judge.Outcome {
	o := l.base()
	o.Notes = append(o.Notes, l.pendingNotes...)
	for _, s := range l.sides {
		if !s.killed.Load() && s.exit.Code != 0 {
			o.Notes = append(o.Notes, fmt.Sprintf("%s on %s: %s", s.pc.Role, s.pc.Endpoint, exitText(s)))
		}
	}
	var firstErr judge.Outcome
	for _, s := range l.parseSides() {
		m, err := l.parseFile(s)
		switch {
		case err != nil:
			firstErr = withErr(firstErr, parsers.ClassUnknownFormat, fmt.Sprintf("%s output (%s): %v", s.pc.Role, s.rel, err))
		case !m.OK && m.ErrorClass == parsers.ClassClock:
			// The rows say what crossed the wire (for the path proof),
			// though none is a measurement.
			firstErr = withErr(firstErr, m.ErrorClass, fmt.Sprintf("%s: %s", s.pc.Role, m.Error))
			if o.M.Tool == "" {
				o.M = m
			}
		case !m.OK:
			firstErr = withErr(firstErr, classOr(m.ErrorClass), fmt.Sprintf("%s: %s (%s; last output: %s)", s.pc.Role, m.Error, exitText(s), s.out.lastLines()))
		default:
			o.M, o.OK = withLegSize(m, l.leg.Variant), true
			if o.M.Transport == nil {
				o.M.Transport = configuredTransport(l.job.Tool, s.env)
			}
			if l.job.Tool == tool.UCXPerftest {
				// The test's own RMA table, not the control writes'
				// beside it (a -m cuda get is cuda_ipc, not tcp).
				o.M.Transport.ForOpMemories(tools.UCXPerftestPath(s.pc.Argv))
			}
			return o
		}
	}
	o.Class, o.Err = firstErr.Class, firstErr.Err
	return o
}

func withErr(o judge.Outcome, c parsers.ErrorClass, msg string) judge.Outcome {
	if o.Err == "" {
		o.Class, o.Err = c, msg
	}
	return o
}

func classOr(c parsers.ErrorClass) parsers.ErrorClass {
	if c == parsers.ClassNone {
		return parsers.ClassToolError
	}
	return c
}

// parseSides are the sides marked Parse, or the last one when none is.
func (l *legRun) parseSides() []*side {
	var out []*side
	for _, s := range l.sides {
		if s.pc.Parse {
			out = append(out, s)
		}
	}
	if len(out) == 0 && len(l.sides) > 0 {
		out = append(out, l.sides[len(l.sides)-1])
	}
	return out
}

func (l *legRun) parseFile(s *side) (parsers.Measurement, error) {
	if err := s.out.sync(); err != nil {
		return parsers.Measurement{}, err
	}
	f, err := os.Open(s.out.path)
	if err != nil {
		return parsers.Measurement{}, err
	}
	defer f.Close()
	return l.r.parse(parserName(l.r.tests[l.job.Test], l.job.Tool), f)
}

// exitText says how a side ended, for a reason.
func exitText(s *side) string {
	switch {
	case s.killed.Load():
		return "killed by rdmabench"
	case s.waitErr != nil:
		// The backend knows why (a pod deleted, a node lost, a stream
		// that broke): that, not the code it had to make up.
		return s.waitErr.Error()
	case s.exit.Signaled:
		return "killed by a signal (crashed)"
	}
	return fmt.Sprintf("exit code %d", s.exit.Code)
}

// withLegSize gives samples without a size the leg's size, when the leg
// is one size of a sweep (Variant "65536"): ucx_perftest's client does not
// print the message size it ran.
func withLegSize(m parsers.Measurement, variant string) parsers.Measurement {
	size, err := strconv.ParseInt(plan.WithoutRail(variant), 10, 64)
	if err != nil || size <= 0 {
		return m
	}
	for i := range m.Samples {
		if m.Samples[i].Bytes == 0 {
			m.Samples[i].Bytes = size
		}
	}
	return m
}

// scratch makes the leg's ${out} folder on its endpoints, when a command
// uses it.
func (r *run) scratch(ctx context.Context, l *legRun) (string, error) {
	if sharesHost(r.cfg.Backend) {
		abs, err := filepath.Abs(r.dir.scratchDir(l.job.ID, l.legIdx, l.rep))
		if err != nil || !usesOut(l.leg) {
			return abs, err
		}
		return abs, mkdirAll(abs)
	}
	if !usesOut(l.leg) {
		return "", nil
	}
	dir := fmt.Sprintf("/tmp/rdmabench-%s/%s/%d-%d", r.runID, sanitize(l.job.ID), l.legIdx, l.rep)
	seen := map[string]bool{}
	for _, pc := range l.leg.Commands {
		if seen[pc.Endpoint] {
			continue
		}
		seen[pc.Endpoint] = true
		ep, _ := l.toolEndpoint(pc.Endpoint) // the tool's container: pods' containers share no /tmp
		if _, err := r.cfg.Backend.Exec(ctx, ep, []string{"mkdir", "-p", dir}); err != nil {
			return "", fmt.Errorf("make scratch folder on %s: %w", pc.Endpoint, err)
		}
	}
	return dir, nil
}

func (r *run) exitGrace() time.Duration {
	if r.cfg.ExitGrace > 0 {
		return r.cfg.ExitGrace
	}
	return 5 * time.Second
}

func mkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

// usesOut reports whether a command of the leg refers to ${out}.
func usesOut(leg *plan.Leg) bool {
	for _, pc := range leg.Commands {
		for _, a := range pc.Argv {
			if strings.Contains(a, tools.PlaceholderOut) {
				return true
			}
		}
		for _, v := range pc.Env {
			if strings.Contains(v, tools.PlaceholderOut) {
				return true
			}
		}
	}
	return false
}
