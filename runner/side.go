package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// side is one process of a leg repetition.
type side struct {
	pc   plan.PlannedCommand
	ep   endpoint.Endpoint
	argv []string
	env  map[string]string
	out  *output
	rel  string // raw output path relative to the results folder

	proc    backend.Process
	started time.Time
	done    chan struct{} // closed when proc has exited
	exit    backend.Exit
	waitErr error
	ended   time.Time
	// killed is set when the runner killed it (grace expired, timeout).
	killed atomic.Bool
}

// Bounds on the retry of a client whose server readiness cannot be seen.
const (
	retryFastFail   = time.Second
	retryMinBackoff = 50 * time.Millisecond
	retryMaxBackoff = 500 * time.Millisecond
)

// startSide starts pc (retrying it while it fails fast when retry is set).
func (l *legRun) startSide(ctx context.Context, pc plan.PlannedCommand, retry bool) (*side, error) {
	ep, ok := l.toolEndpoint(pc.Endpoint)
	if !ok {
		return nil, fmt.Errorf("command for endpoint %q, which the plan does not list", pc.Endpoint)
	}
	argv, env, err := l.subst.command(pc)
	if err != nil {
		return nil, err
	}
	argv, env = l.mpiEnv(pc, argv, env)
	argv = l.ncclJSON(ctx, ep, argv)
	abs, rel := l.r.dir.rawPath(l.job.ID, l.legIdx, l.rep, pc.Endpoint, l.outputRole(pc))
	want := ""
	if strings.HasPrefix(pc.Ready, tools.ReadyLine) {
		want = l.subst.text(strings.TrimPrefix(pc.Ready, tools.ReadyLine))
	}
	out, err := newOutput(abs, want)
	if err != nil {
		return nil, err
	}
	s := &side{pc: pc, ep: ep, argv: argv, env: env, out: out, rel: rel}
	l.sides = append(l.sides, s)
	if !retry {
		return s, l.launch(ctx, s)
	}
	return s, l.launchRetrying(ctx, s)
}

// outputRole names a side's raw output: its role, and where the leg has
// started others of that role on the same endpoint (one rank per GPU of
// one endpoint), its index among them ("rank", "rank-1", "rank-2" …), so
// that no two processes write one file.
func (l *legRun) outputRole(pc plan.PlannedCommand) string {
	n := 0
	for _, s := range l.sides {
		if s.pc.Endpoint == pc.Endpoint && s.pc.Role == pc.Role {
			n++
		}
	}
	if n == 0 {
		return pc.Role
	}
	return fmt.Sprintf("%s-%d", pc.Role, n)
}

// launch starts the process and a watcher that records its exit.
func (l *legRun) launch(ctx context.Context, s *side) error {
	cmd := backend.Command{Argv: s.argv, Env: s.env, Stdout: s.out.stream(), Stderr: s.out.stream()}
	p, err := l.r.cfg.Backend.Start(ctx, s.ep, cmd)
	if err != nil {
		var mb *backend.MissingBinaryError
		if errors.As(err, &mb) {
			return &missingToolError{mb}
		}
		return fmt.Errorf("start %s on %s: %w", s.argv[0], s.ep.Name, err)
	}
	s.proc, s.started, s.done = p, time.Now(), make(chan struct{})
	go func() {
		// The runner kills explicitly (timeout, grace, interrupt), so it
		// can say what was still running; Wait itself is not cut short.
		s.exit, s.waitErr = p.Wait(context.WithoutCancel(ctx))
		s.ended = time.Now()
		close(s.done)
	}()
	return nil
}

// launchRetrying starts s and starts it again while it exits non-zero
// within retryFastFail (a client that found no server yet), within ctx.
func (l *legRun) launchRetrying(ctx context.Context, s *side) error {
	backoff := retryMinBackoff
	for attempt := 1; ; attempt++ {
		if err := l.launch(ctx, s); err != nil {
			return err
		}
		t := time.NewTimer(retryFastFail)
		select {
		case <-s.done:
			t.Stop()
		case <-t.C:
			return nil // still running: it connected
		}
		if s.exit.Code == 0 || ctx.Err() != nil || errors.Is(s.waitErr, backend.ErrEndpointLost) {
			return nil // (a lost pod or node: trying again cannot help)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, retryMaxBackoff)
		l.retries = attempt
		s.out.reset()
	}
}

// kill kills a side's process group (marking it killed by the runner).
func (s *side) kill() {
	if s.proc == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	s.killed.Store(true)
	_ = s.proc.Kill()
	select { // let the watcher record the exit
	case <-s.done:
	case <-time.After(reapBound):
	}
}

// exited reports whether the side's process has ended.
func (s *side) exited() bool {
	if s.done == nil {
		return true
	}
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// missingToolError names the binary and how to install it.
type missingToolError struct{ mb *backend.MissingBinaryError }

// Error names the binary, the endpoint and the install hint.
func (e *missingToolError) Error() string {
	return fmt.Sprintf("%s not found in PATH on endpoint %s: %s", e.mb.Binary, e.mb.Endpoint, InstallHint(e.mb.Binary))
}

// Unwrap returns the backend's error.
func (e *missingToolError) Unwrap() error { return e.mb }

// reapBound is how long a killed side may take to be reaped.
const reapBound = 15 * time.Second
