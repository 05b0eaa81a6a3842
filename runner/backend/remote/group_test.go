package remote

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The kill and wait both remote backends share, with the backend's two
// parts recorded.
func TestGroupKillAndWait(t *testing.T) {
	newG := func() (*Group, *[]string, *int) {
		g := NewGroup([]string{"ib_write_bw", "-d", "mlx5_0"})
		var scripts []string
		abandoned := 0
		g.RunScript = func(_ context.Context, s string) error { scripts = append(scripts, s); return nil }
		g.Abandon = func() { abandoned++ }
		g.KillGrace = 200 * time.Millisecond
		return g, &scripts, &abandoned
	}

	// Known group: the kill script for it; a tool that then ends is Signaled.
	g, scripts, abandoned := newG()
	g.SetPGID(4242)
	if err := g.Kill(context.Background()); err != nil || len(*scripts) != 1 || !strings.Contains((*scripts)[0], "kill -TERM -4242") || *abandoned != 0 {
		t.Fatalf("kill: %v, scripts %q, abandoned %d", err, *scripts, *abandoned)
	}
	g.Exit.Code, g.Err = 143, errors.New("stream broke")
	g.End(g.Killed())
	if g.Exit.Code != -1 || !g.Exit.Signaled || g.Err != nil {
		t.Errorf("a killed tool ended as %+v, %v; want signaled without the stream's error", g.Exit, g.Err)
	}

	// A Kill after the backend saw the end (kube: while it kills the
	// orphan of a broken stream, which waits for the API) is not why the
	// tool ended: its exit and error stay.
	g, _, _ = newG()
	g.SetPGID(4243)
	killed := g.Killed() // the stream returned
	g.Exit.Code, g.Err = -1, errors.New("the exec stream broke")
	_ = g.Kill(context.Background())
	g.End(killed)
	if g.Exit.Signaled || g.Err == nil {
		t.Errorf("a tool killed after its stream broke ended as %+v, %v; want the stream's error", g.Exit, g.Err)
	}

	// Group never known: bounded by ctx, abandoned, said.
	g, scripts, abandoned = newG()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := g.Kill(ctx)
	if err == nil || !strings.Contains(err.Error(), "killing ib_write_bw: its process group never became known") || *abandoned != 1 || len(*scripts) != 0 {
		t.Fatalf("unknown group: %v, abandoned %d, scripts %q", err, *abandoned, *scripts)
	}

	// The wrapper's line never came and the tool ended: nothing to kill.
	g, scripts, _ = newG()
	g.NoPGID()
	if err := g.Kill(context.Background()); err != nil || len(*scripts) != 0 || g.PGID() != 0 {
		t.Fatalf("no pgid: %v, scripts %q", err, *scripts)
	}

	// Wait: the end as the tool reported it; on ctx's end, kill, then the
	// end if it comes within the bound, else abandon.
	g, _, _ = newG()
	g.Exit.Code = 3
	g.End(false)
	if exit, err := g.Wait(context.Background(), func() error { t.Error("killed a tool that ended"); return nil }, time.Second); exit.Code != 3 || err != nil {
		t.Errorf("wait: %+v %v", exit, err)
	}
	g, _, abandoned = newG()
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	exit, err := g.Wait(ctx, func() error { return errors.New("pod gone") }, 20*time.Millisecond)
	if !exit.Signaled || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "and killing ib_write_bw: pod gone") || *abandoned != 1 {
		t.Errorf("wait on ctx: %+v %v, abandoned %d", exit, err, *abandoned)
	}

	// The bound counts from ctx's end, the kill's own time included: a
	// kill that used it all leaves no second bound of waiting.
	g, _, abandoned = newG()
	start := time.Now()
	_, _ = g.Wait(ctx, func() error { time.Sleep(300 * time.Millisecond); return errors.New("host frozen") }, 300*time.Millisecond)
	if d := time.Since(start); d > 500*time.Millisecond || *abandoned != 1 {
		t.Errorf("wait on ctx with a kill that took its bound: %v, abandoned %d; want about 300ms", d, *abandoned)
	}
}
