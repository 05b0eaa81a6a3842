package remote

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/runner/backend"
)

// Group is what the ssh and kube backends share of a tool started with
// Wrap on another machine: its process group id (the wrapper's stderr
// line), its end, whether rdmabench killed it, and the kill and the wait
// themselves. Each backend supplies the two things that differ: how a
// script runs beside the tool (a second session, another exec) and how to
// stop reading a tool that cannot be reached (close the session, cancel
// the stream).
type Group struct {
	Argv  []string
	Start time.Time
	// Exit and Err are how the tool ended; set by the backend before End.
	Exit backend.Exit
	Err  error

	// RunScript runs a shell script on the tool's machine, bounded by ctx;
	// the error carries what the script printed.
	RunScript func(ctx context.Context, script string) error
	// Abandon stops reading the tool; its end then follows.
	Abandon func()
	// KillGrace is the time between SIGTERM and SIGKILL.
	KillGrace time.Duration

	pgidKnown chan struct{}
	pgid      int
	done      chan struct{}
	mu        sync.Mutex
	killed    bool
}

// NewGroup is a Group for argv, started now.
func NewGroup(argv []string) *Group {
	return &Group{Argv: argv, Start: time.Now(), pgidKnown: make(chan struct{}), done: make(chan struct{})}
}

// SetPGID records the group id: PGIDFilter's Found.
func (g *Group) SetPGID(pgid int) {
	g.pgid = pgid
	close(g.pgidKnown)
}

// NoPGID says the group id will never be known (the tool ended without
// the wrapper's line): PGIDFilter.GiveUp's notFound, never after SetPGID.
func (g *Group) NoPGID() { close(g.pgidKnown) }

// PGID is the group id once PGIDKnown is closed (0: it never will be).
func (g *Group) PGID() int {
	select {
	case <-g.pgidKnown:
		return g.pgid
	default:
		return 0
	}
}

// Done is closed when the tool ended (End).
func (g *Group) Done() <-chan struct{} { return g.done }

// End marks the tool ended. killed is Killed() as the backend read it
// when the tool's stream or session returned: a tool rdmabench had killed
// ends as Signaled, without the error its broken stream or session would
// give. A Kill that comes after (while the backend still works on the end:
// kube's kill of an orphan waits for the API) changes nothing.
func (g *Group) End(killed bool) {
	if killed {
		g.Exit.Code, g.Exit.Signaled = -1, true
		g.Err = nil
	}
	close(g.done)
}

// Killed says whether Kill was called.
func (g *Group) Killed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.killed
}

// Kill ends the process group on its machine: SIGTERM, then SIGKILL after
// KillGrace (KillScript), bounded by ctx. A tool whose group never became
// known, or whose kill could not run, is abandoned.
func (g *Group) Kill(ctx context.Context) error {
	select {
	case <-g.done:
		return nil
	default:
	}
	g.mu.Lock()
	g.killed = true
	g.mu.Unlock()
	select {
	case <-g.pgidKnown:
	case <-g.done:
		return nil
	case <-ctx.Done():
		g.Abandon()
		return fmt.Errorf("killing %s: its process group never became known: %w", g.Argv[0], ctx.Err())
	}
	if g.pgid <= 0 {
		g.Abandon()
		return nil
	}
	if err := g.RunScript(ctx, KillScript(g.pgid, g.KillGrace)); err != nil {
		g.Abandon()
		return fmt.Errorf("killing process group %d (%s): %w", g.pgid, g.Argv[0], err)
	}
	return nil
}

// Wait returns when the tool ends, or kills it when ctx ends first (kill
// is the backend's Kill, with its own bound) and waits for the end until
// bound has passed since ctx ended, the kill's time included, before
// abandoning it: a Wait whose ctx ended returns within bound (and kill's
// own bound, where that is longer).
func (g *Group) Wait(ctx context.Context, kill func() error, bound time.Duration) (backend.Exit, error) {
	select {
	case <-g.done:
		return g.Exit, g.Err
	case <-ctx.Done():
	}
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	kerr := kill()
	exit := backend.Exit{Code: -1, Signaled: true, Elapsed: time.Since(g.Start)}
	select {
	case <-g.done:
		exit = g.Exit
	case <-deadline.C:
		g.Abandon()
	}
	if kerr != nil {
		return exit, fmt.Errorf("%w (and killing %s: %v)", ctx.Err(), g.Argv[0], kerr)
	}
	return exit, ctx.Err()
}
