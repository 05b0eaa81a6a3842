package remote

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestTrackerKillAllBoundsEachKill: every tracked tool is killed, a tool
// that ended is not, and a kill that never returns on its own is cut at its
// own bound instead of holding up the others (the caller's context has no
// deadline: without the bound this test would hang).
func TestTrackerKillAllBoundsEachKill(t *testing.T) {
	var tr Tracker[int]
	for _, p := range []int{1, 2, 3, 4} {
		tr.Track(p, true)
	}
	tr.Track(4, false) // ended before the clean-up
	if got := len(tr.Snapshot()); got != 3 {
		t.Fatalf("Snapshot has %d tools, want 3", got)
	}
	var killed atomic.Int32
	stuck := errors.New("stuck")
	err := tr.KillAll(context.Background(),
		func(p int) time.Duration { return 200 * time.Millisecond },
		func(p int, ctx context.Context) error {
			if p == 4 {
				t.Errorf("tool 4 ended before the clean-up and was killed anyway")
			}
			if p == 2 { // a machine that never answers
				<-ctx.Done()
				return stuck
			}
			killed.Add(1)
			return nil
		})
	if !errors.Is(err, stuck) {
		t.Errorf("KillAll error = %v, want the stuck kill's", err)
	}
	if killed.Load() != 2 {
		t.Errorf("%d tools killed, want 2 (1 and 3)", killed.Load())
	}
}
