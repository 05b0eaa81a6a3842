package ssh

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/backend/remote"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// process is a command running in its own process group on a host.
type process struct {
	*remote.Group
	b      *Backend
	conn   *hostConn
	sess   *ssh.Session
	stderr *remote.PGIDFilter
}

// Start starts cmd on ep's host and returns at once. Output is streamed to
// cmd.Stdout and cmd.Stderr.
func (b *Backend) Start(ctx context.Context, ep endpoint.Endpoint, cmd backend.Command) (backend.Process, error) {
	return b.start(ctx, ep, cmd)
}

func (b *Backend) start(ctx context.Context, ep endpoint.Endpoint, cmd backend.Command) (*process, error) {
	if len(cmd.Argv) == 0 {
		return nil, errors.New("ssh: empty command")
	}
	h, err := b.host(ep)
	if err != nil {
		return nil, err
	}
	c := b.conn(h.Name)
	sess, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	p := b.newProcess(c, sess, cmd)
	if err := sess.Start(remote.Wrap(cmd.Argv, remote.MergeEnv(ep.Env, cmd.Env))); err != nil {
		sess.Close()
		return nil, c.errorf("starting %s: %w", cmd.Argv[0], err)
	}
	p.Start = time.Now()
	b.procs.Track(p, true)
	go p.wait()
	return p, nil
}

// newProcess is the process of cmd in sess, not started yet: its output
// goes to cmd's writers, the pgid line taken out of stderr.
func (b *Backend) newProcess(c *hostConn, sess *ssh.Session, cmd backend.Command) *process {
	p := &process{Group: remote.NewGroup(cmd.Argv), b: b, conn: c, sess: sess}
	p.RunScript = func(ctx context.Context, script string) error { _, err := c.run(ctx, script); return err }
	p.Abandon = func() { sess.Close() } // the remote end did not answer in time; stop waiting for it
	p.KillGrace = b.opts.KillGrace
	p.stderr = &remote.PGIDFilter{Out: remote.OrDiscard(cmd.Stderr), Found: p.SetPGID}
	sess.Stdout = remote.OrDiscard(cmd.Stdout)
	sess.Stderr = p.stderr
	return p
}

func (p *process) wait() {
	err := p.sess.Wait()
	killed := p.Killed()
	p.stderr.Flush()
	p.sess.Close()
	p.Exit.Elapsed = time.Since(p.Start)
	var ee *ssh.ExitError
	var missing *ssh.ExitMissingError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		p.Exit.Code = ee.ExitStatus()
		if ee.Signal() != "" {
			p.Exit.Code, p.Exit.Signaled = -1, true
		}
	case errors.As(err, &missing):
		p.Exit.Code = -1
		p.Err = p.conn.errorf("%s: the connection ended without an exit status (host down or sshd restarted?)", p.Argv[0])
	default:
		p.Exit.Code = -1
		p.Err = p.conn.errorf("%s: %w", p.Argv[0], err)
	}
	p.stderr.GiveUp(p.NoPGID)
	p.b.procs.Track(p, false)
	p.End(killed)
}

// killBound bounds one kill: SIGTERM, the grace, SIGKILL, and a dial.
func (p *process) killBound() time.Duration { return 3*p.b.opts.KillGrace + p.b.opts.DialTimeout }

// Wait returns when the process exits, or kills it when ctx ends: one
// bound for the kill and the wait for the session's end together.
func (p *process) Wait(ctx context.Context) (backend.Exit, error) {
	return p.Group.Wait(ctx, p.Kill, p.killBound())
}

// Kill ends the remote process group: SIGTERM, then SIGKILL after KillGrace.
func (p *process) Kill() error {
	ctx, cancel := context.WithTimeout(context.Background(), p.killBound())
	defer cancel()
	return p.kill(ctx)
}

func (p *process) kill(ctx context.Context) error {
	if err := p.Group.Kill(ctx); err != nil {
		return p.conn.errorf("%w", err)
	}
	return nil
}

// Exec runs a short command to completion and returns its stdout; a
// non-zero exit is an error carrying the command's stderr.
func (b *Backend) Exec(ctx context.Context, ep endpoint.Endpoint, argv []string) ([]byte, error) {
	var out, errb bytes.Buffer
	p, err := b.start(ctx, ep, backend.Command{Argv: argv, Stdout: &out, Stderr: &errb})
	if err != nil {
		return nil, err
	}
	exit, err := p.Wait(ctx)
	if err != nil {
		return out.Bytes(), err
	}
	if exit.Code != 0 {
		return out.Bytes(), p.conn.errorf("%s exited with %d: %s", remote.Brief(argv), exit.Code, bytes.TrimSpace(errb.Bytes()))
	}
	return out.Bytes(), nil
}

// ExecStdin runs argv to completion in a plain session (no process group:
// a short command) with stdin as its input (backend.StdinExecer).
func (b *Backend) ExecStdin(ctx context.Context, ep endpoint.Endpoint, argv []string, stdin []byte) ([]byte, error) {
	if len(argv) == 0 {
		return nil, errors.New("ssh: empty command")
	}
	h, err := b.host(ep)
	if err != nil {
		return nil, err
	}
	c := b.conn(h.Name)
	line := remote.Brief(argv)
	if len(ep.Env) > 0 {
		line = "env " + remote.Join(envList(ep.Env)) + " " + line
	}
	var out, errb bytes.Buffer
	s, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	s.Stdin, s.Stdout, s.Stderr = bytes.NewReader(stdin), &out, &errb
	ch := make(chan error, 1)
	go func() { ch <- s.Run(line) }()
	select {
	case err = <-ch:
	case <-ctx.Done():
		return nil, c.errorf("%s: %w", remote.Brief(argv), ctx.Err())
	}
	var ee *ssh.ExitError
	switch {
	case errors.As(err, &ee):
		return out.Bytes(), c.errorf("%s exited with %d: %s", remote.Brief(argv), ee.ExitStatus(), bytes.TrimSpace(errb.Bytes()))
	case err == io.EOF:
		// Exit status 0, and the channel closed under the rest of stdin
		// (the command did not read it all): a pipe's EPIPE, as os/exec
		// and the local backend take it, not a failure.
	case err != nil:
		return out.Bytes(), c.errorf("%s: %w", remote.Brief(argv), err)
	}
	return out.Bytes(), nil
}

// envList is env as sorted KEY=VALUE words.
func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// run runs a shell script in a plain session (no process group), bounded
// by ctx; for the kill script itself.
func (c *hostConn) run(ctx context.Context, script string) ([]byte, error) {
	s, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	type res struct {
		out []byte
		err error
	}
	ch := make(chan res, 1)
	go func() {
		out, err := s.CombinedOutput(script)
		ch <- res{out, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return r.out, fmt.Errorf("%w: %s", r.err, bytes.TrimSpace(r.out))
		}
		return r.out, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
