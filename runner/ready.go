package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	runetcd "github.com/rdmabench/rdmabench/runner/etcd"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// The listen table or etcd is read every firstPoll at first (a server
// usually listens within milliseconds), backing off to maxPoll.
const (
	firstPoll = 2 * time.Millisecond
	maxPoll   = 20 * time.Millisecond
)

// errExited is returned when the side exits before it became ready.
type errExited struct{ exit backend.Exit }

// Error gives the exit code.
func (e errExited) Error() string {
	return fmt.Sprintf("exited with code %d before it was ready", e.exit.Code)
}

// waitReady blocks until s is ready by its tool's own signal, s exits, or
// ctx ends. It never connects to the server: perftest and ucx_perftest
// accept exactly one connection and would take a probe for the client.
func (l *legRun) waitReady(ctx context.Context, s *side) error {
	ready := s.pc.Ready
	switch {
	case ready == "" || ready == tools.ReadyRetry:
		return nil
	case ready == tools.ReadyListen:
		if s.pc.Port <= 0 {
			return fmt.Errorf("ready=listen but the plan gives no port for %s", s.pc.Endpoint)
		}
		return l.poll(ctx, s, func(ctx context.Context) (bool, error) {
			return l.listening(ctx, s.ep, s.pc.Port)
		})
	case strings.HasPrefix(ready, tools.ReadyLine):
		select {
		case <-s.out.seen:
			return nil
		case <-s.done:
			return errExited{s.exit}
		case <-ctx.Done():
			return ctx.Err()
		}
	case strings.HasPrefix(ready, tools.ReadyEtcd):
		if l.r.etcd == nil {
			return fmt.Errorf("ready=%s but no etcd runs", ready)
		}
		prefix := l.subst.text(strings.TrimPrefix(ready, tools.ReadyEtcd))
		return l.poll(ctx, s, func(ctx context.Context) (bool, error) {
			n, err := runetcd.CountPrefix(ctx, l.r.etcd, prefix)
			return n > 0, err
		})
	}
	return fmt.Errorf("unknown readiness %q (want listen, line:TEXT, etcd:PREFIX, retry or empty)", ready)
}

// poll calls check, after a first short wait, until it says ready, s
// exits, or ctx ends. Transient check errors are retried; the last one is
// reported on timeout.
func (l *legRun) poll(ctx context.Context, s *side, check func(context.Context) (bool, error)) error {
	wait := firstPoll
	var last error
	for {
		// Wait first: a process started a moment ago is not ready yet, and
		// a check can cost (/proc/net/tcp on a busy host: milliseconds).
		select {
		case <-s.done:
			return errExited{s.exit}
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("%w (last check: %v)", ctx.Err(), last)
			}
			return ctx.Err()
		case <-time.After(wait):
		}
		ok, err := check(ctx)
		if ok {
			return nil
		}
		if errors.Is(err, backend.ErrEndpointLost) {
			return err // its pod or node is gone: it will never be ready
		}
		if err != nil {
			last = err
		}
		wait = min(2*wait, maxPoll)
	}
}

// portFree fails when a server waited for by the listen table would find
// its port already listening: another process (a stray iperf3 -s, another
// run) holds it, its entry would pass for readiness and the client would
// measure against that process while the tool itself fails to bind.
func (l *legRun) portFree(ctx context.Context, pc plan.PlannedCommand) error {
	ep, ok := l.r.endpoints[pc.Endpoint]
	if pc.Ready != tools.ReadyListen || pc.Port <= 0 || !ok {
		return nil
	}
	taken, err := l.listening(ctx, ep, pc.Port)
	if err != nil || !taken {
		return nil // unknown: the readiness wait reports a failing table
	}
	name := "the " + pc.Role
	if len(pc.Argv) > 0 {
		name = pc.Argv[0]
	}
	return fmt.Errorf("TCP port %d on %s is already in use by another process: stop it, or shift every tool port "+
		"with --port-offset N (%s not started: that process would pass for its readiness)", pc.Port, pc.Endpoint, name)
}

// listening reads the endpoint's TCP listen tables.
func (l *legRun) listening(ctx context.Context, ep endpoint.Endpoint, port int) (bool, error) {
	out, err := l.r.cfg.Backend.Exec(ctx, ep, []string{"cat", "/proc/net/tcp", "/proc/net/tcp6"})
	if err != nil {
		return false, err
	}
	return portListening(out, port), nil
}

// portListening reports whether /proc/net/tcp{,6} text lists port in state
// LISTEN (0A) on any local address.
func portListening(table []byte, port int) bool {
	sc := bufio.NewScanner(bytes.NewReader(table))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || f[3] != "0A" {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && int(p) == port {
			return true
		}
	}
	return false
}
