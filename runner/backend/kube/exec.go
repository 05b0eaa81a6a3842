package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/backend/remote"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// stream runs argv in the endpoint's pod through the exec subresource
// (WebSocket, falling back to SPDY on servers that predate it) and returns
// its exit code; an error is a failure to run it at all. An API that
// cannot be reached (a restarting apiserver) is waited for, bounded.
func (b *Backend) stream(ctx context.Context, pod target, argv []string, stdout, stderr io.Writer) (int, error) {
	return b.streamStdin(ctx, pod, argv, nil, stdout, stderr, false)
}

// streamStdin is stream with stdin (nil: none) fed to the command; every
// attempt reads it from the start.
//
// Only an attempt that printed nothing is tried again: once output came,
// the command ran, and a second run would repeat it (and its output).
//
// tool says the command is a tool whose output may be long (a session
// then prefixes its lines with sed rather than a shell loop).
func (b *Backend) streamStdin(ctx context.Context, pod target, argv []string, stdin []byte, stdout, stderr io.Writer, tool bool) (int, error) {
	code := -1
	if err := b.lostErr(pod.pod); err != nil {
		return code, err // gone: no call on it can succeed
	}
	out, errw := &seenWriter{w: stdout}, &seenWriter{w: stderr}
	err := retry(ctx, func() error {
		var err error
		code, err = b.streamOnce(ctx, pod, argv, stdin, out, errw, tool)
		if err != nil && (out.seen || errw.seen) {
			return streamBroke{err}
		}
		return err
	})
	var sb streamBroke
	if errors.As(err, &sb) {
		err = sb.err
	}
	if err != nil && ctx.Err() == nil {
		// A deleted pod, a lost node: say so, and remember it.
		if lerr := b.checkLost(pod, err); lerr != nil {
			err = lerr
		}
	}
	return code, err
}

// seenWriter notes whether anything was written through it.
type seenWriter struct {
	w    io.Writer
	seen bool
}

func (s *seenWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		s.seen = true
	}
	return s.w.Write(p)
}

// streamBroke is an error of a stream that had output: never retried.
type streamBroke struct{ err error }

func (e streamBroke) Error() string { return "exec stream broke after output: " + e.err.Error() }

func (e streamBroke) Unwrap() error { return e.err }

func (b *Backend) streamOnce(ctx context.Context, pod target, argv []string, stdin []byte, stdout, stderr io.Writer, tool bool) (int, error) {
	if stdin == nil && !b.opts.ExecPerCommand {
		return b.sessionRun(ctx, pod, argv, stdout, stderr, tool)
	}
	var in io.Reader
	if stdin != nil {
		in = bytes.NewReader(stdin)
	}
	return b.execStream(ctx, pod, argv, in, stdout, stderr)
}

// execStream runs argv in the pod through one exec of its own: the
// session's shell, or a command that feeds stdin (nil: none).
func (b *Backend) execStream(ctx context.Context, pod target, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	req := b.client.CoreV1().RESTClient().Post().Resource("pods").Namespace(b.namespace).Name(pod.pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: pod.containerName(), Command: withBundlePath(argv), Stdin: stdin != nil, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(b.config, "GET", req.URL().String())
	if err != nil {
		return -1, err
	}
	spdy, err := remotecommand.NewSPDYExecutor(b.config, "POST", req.URL())
	if err != nil {
		return -1, err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return -1, err
	}
	opts := remotecommand.StreamOptions{Stdout: stdout, Stderr: stderr, Stdin: stdin}
	err = ex.StreamWithContext(ctx, opts)
	var ce utilexec.CodeExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ce):
		return ce.Code, nil
	}
	return -1, err
}

// target is where a command runs: a pod (its one container).
type target struct {
	pod string
}

func (t target) containerName() string { return container }

// String names the pod.
func (t target) String() string { return t.pod }

// podOf is where a call on a provisioned endpoint runs: its pod.
func (b *Backend) podOf(ep endpoint.Endpoint) (target, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.pods[ep.Name]
	if !ok {
		return target{}, fmt.Errorf("kube: endpoint %s has no pod (not provisioned)", ep.Name)
	}
	return target{pod: p.name}, nil
}

// imageOf is the image of the pod's container a call on ep runs in.
func (b *Backend) imageOf(endpoint.Endpoint) string { return b.sc.Cluster.Image }

// bundlePath puts the bundle (BundleBin) on the PATH of a command, after
// the image's own folders: a tool the serving image has (perftest built
// with CUDA, nixlbench) is the image's, one it lacks the bundle's. The
// image's PATH is known only inside the container, so the exec's command
// extends it there.
const bundlePath = `PATH="${PATH:+$PATH:}` + BundleBin + `"; export PATH; exec "$@"`

// withBundlePath is argv run with the bundle on its PATH.
func withBundlePath(argv []string) []string {
	return append([]string{"sh", "-c", bundlePath, "sh"}, argv...)
}

// Exec runs a short command in the endpoint's pod to completion and
// returns its stdout; a non-zero exit is an error with its stderr.
func (b *Backend) Exec(ctx context.Context, ep endpoint.Endpoint, argv []string) ([]byte, error) {
	return b.ExecStdin(ctx, ep, argv, nil)
}

// ExecStdin is Exec with stdin fed to the command (backend.StdinExecer):
// it travels in the exec stream, not in the request's URL.
func (b *Backend) ExecStdin(ctx context.Context, ep endpoint.Endpoint, argv []string, stdin []byte) ([]byte, error) {
	pod, err := b.podOf(ep)
	if err != nil {
		return nil, err
	}
	// A slot, waited for no longer than the caller waits: a round's many
	// short commands queue here instead of at the apiserver, and one that
	// hangs holds one slot until its own bound, not the round.
	select {
	case b.execSlots <- struct{}{}:
		defer func() { <-b.execSlots }()
	case <-ctx.Done():
	}
	// Both cases may be ready at once, and select picks either: a caller
	// whose context has ended runs nothing.
	if ctx.Err() != nil {
		return nil, fmt.Errorf("kube: exec in pod %s: %s: waiting for one of %d exec slots: %w", pod, remote.Brief(argv), cap(b.execSlots), context.Cause(ctx))
	}
	var out, errb bytes.Buffer
	code, err := b.streamStdin(ctx, pod, argv, stdin, &out, &errb, false)
	if err != nil {
		return out.Bytes(), fmt.Errorf("kube: exec in pod %s: %s: %w", pod, remote.Brief(argv), err)
	}
	if code > 128 && ctx.Err() == nil {
		if lerr := b.checkLost(pod, nil); lerr != nil { // killed with its pod
			return out.Bytes(), fmt.Errorf("kube: %w: %s exited with %d", lerr, remote.Brief(argv), code)
		}
	}
	if code != 0 {
		return out.Bytes(), fmt.Errorf("kube: pod %s: %s exited with %d: %s", pod, remote.Brief(argv), code, bytes.TrimSpace(errb.Bytes()))
	}
	return out.Bytes(), nil
}

// process is a tool running in a pod, in a process group of its own.
type process struct {
	*remote.Group
	b      *Backend
	pod    target
	cancel context.CancelFunc // ends the exec stream
	stderr *remote.PGIDFilter
}

// newProcess is a process of pod whose stream cancel ends.
func (b *Backend) newProcess(pod target, argv []string, cancel context.CancelFunc) *process {
	p := &process{Group: remote.NewGroup(argv), b: b, pod: pod, cancel: cancel}
	p.RunScript = func(ctx context.Context, script string) error {
		var out bytes.Buffer
		if _, err := b.stream(ctx, pod, []string{"sh", "-c", script}, &out, &out); err != nil {
			return fmt.Errorf("%w: %s", err, strings.TrimSpace(out.String()))
		}
		return nil
	}
	p.Abandon = cancel // the pod cannot be reached: close the stream
	p.KillGrace = b.opts.KillGrace
	return p
}

// Start starts cmd in the endpoint's pod and returns at once; output is
// streamed to cmd.Stdout and cmd.Stderr. A program the image does not
// have is a MissingBinaryError (checked once per pod and binary).
func (b *Backend) Start(ctx context.Context, ep endpoint.Endpoint, cmd backend.Command) (backend.Process, error) {
	if len(cmd.Argv) == 0 {
		return nil, errors.New("kube: empty command")
	}
	pod, err := b.podOf(ep)
	if err != nil {
		return nil, err
	}
	if err := b.checkBinary(ctx, ep, pod, cmd.Argv[0]); err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.Background())
	p := b.newProcess(pod, cmd.Argv, cancel)
	p.stderr = &remote.PGIDFilter{Out: remote.OrDiscard(cmd.Stderr), Found: p.SetPGID}
	script := remote.Wrap(cmd.Argv, remote.MergeEnv(ep.Env, cmd.Env))
	b.procs.Track(p, true)
	go p.run(sctx, script, remote.OrDiscard(cmd.Stdout))
	return p, nil
}

// checkBinary looks the program up in the pod once, so that a tool the
// image lacks is named as such rather than as a failed run.
func (b *Backend) checkBinary(ctx context.Context, ep endpoint.Endpoint, pod target, bin string) error {
	key := pod.pod + "\x00" + pod.containerName() + "\x00" + bin
	b.mu.Lock()
	found, known := b.binaries[key]
	b.mu.Unlock()
	if !known {
		var out bytes.Buffer
		code, err := b.stream(ctx, pod, []string{"sh", "-c", "command -v " + remote.Quote(bin)}, &out, io.Discard)
		if err != nil {
			return fmt.Errorf("kube: exec in pod %s: %w", pod, err)
		}
		found = code == 0
		b.mu.Lock()
		b.binaries[key] = found
		b.mu.Unlock()
	}
	if !found {
		return &backend.MissingBinaryError{Binary: bin, Endpoint: ep.Name,
			Err: fmt.Errorf("not in the image %s (container %s) of pod %s", b.imageOf(ep), pod.containerName(), pod.pod)}
	}
	return nil
}

func (p *process) run(ctx context.Context, script string, stdout io.Writer) {
	code, err := p.b.streamStdin(ctx, p.pod, []string{"sh", "-c", script}, nil, stdout, p.stderr, true)
	killed := p.Killed()
	p.stderr.Flush()
	p.Exit = backend.Exit{Code: code, Elapsed: time.Since(p.Start)}
	if code > 128 && code < 160 {
		p.Exit.Signaled = true // the wrapper's wait reports 128+signal
	}
	if err == nil && !killed && code > 128 {
		// Killed, not by the runner: its pod deleted or evicted, its
		// node lost? Then that is the reason, not the signal.
		if lerr := p.b.checkLost(p.pod, nil); lerr != nil {
			p.Exit.Code = -1
			p.Err = fmt.Errorf("kube: %s ended with %d: %w", p.Argv[0], code, lerr)
		}
	}
	if err != nil && !killed {
		p.Exit.Code = -1
		p.Err = fmt.Errorf("kube: pod %s: %s: the exec stream broke: %w", p.pod, p.Argv[0], err)
		if lerr := p.b.lostErr(p.pod.pod); lerr != nil { // (its stream ended by recordLost)
			p.Err = fmt.Errorf("kube: %s: %w", p.Argv[0], lerr)
		}
		// The tool may still run in the pod with nobody reading it:
		// end its group once the API answers again.
		p.killOrphan()
	}
	p.stderr.GiveUp(p.NoPGID)
	p.b.procs.Track(p, false)
	p.End(killed)
	p.cancel()
}

// killOrphan kills the process group of a tool whose stream broke.
func (p *process) killOrphan() {
	pgid := p.PGID()
	if pgid <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), retryWindow)
	defer cancel()
	_, _ = p.b.stream(ctx, p.pod, []string{"sh", "-c", remote.KillScript(pgid, p.b.opts.KillGrace)}, io.Discard, io.Discard)
}

// Wait returns when the process exits, or kills it when ctx ends: the
// kill's bound, then KillGrace+5s for the stream to end.
func (p *process) Wait(ctx context.Context) (backend.Exit, error) {
	return p.Group.Wait(ctx, p.Kill, p.b.killBound+p.b.opts.KillGrace+5*time.Second)
}

// Kill ends the process group in the pod: SIGTERM, then SIGKILL after
// KillGrace. Bounded; it closes the stream when the pod cannot be reached.
func (p *process) Kill() error {
	ctx, cancel := context.WithTimeout(context.Background(), p.b.killBound)
	defer cancel()
	return p.kill(ctx)
}

func (p *process) kill(ctx context.Context) error {
	if err := p.Group.Kill(ctx); err != nil {
		return fmt.Errorf("kube: pod %s: %w", p.pod, err)
	}
	return nil
}
