package remote

import (
	"context"
	"sync"
	"time"
)

// Tracker is the set of tools a backend has started and not yet seen end:
// what its Cleanup must kill. The ssh and kube backends keep one each; the
// zero value is ready to use.
type Tracker[P comparable] struct {
	mu   sync.Mutex
	live map[P]struct{}
}

// Track adds a started tool (live) or removes one that ended.
func (t *Tracker[P]) Track(p P, live bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !live {
		delete(t.live, p)
		return
	}
	if t.live == nil {
		t.live = map[P]struct{}{}
	}
	t.live[p] = struct{}{}
}

// Snapshot is the tools tracked now, in no order: Cleanup kills these,
// while those that end meanwhile remove themselves.
func (t *Tracker[P]) Snapshot() []P {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]P, 0, len(t.live))
	for p := range t.live {
		out = append(out, p)
	}
	return out
}

// KillAll kills every tracked tool at once, each within a bound of its own
// inside ctx, so that one stuck machine or stream cannot use up the time
// the others (and the rest of the clean-up) need. It returns the first
// kill's error.
func (t *Tracker[P]) KillAll(ctx context.Context, bound func(P) time.Duration, kill func(P, context.Context) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, p := range t.Snapshot() {
		wg.Add(1)
		go func(p P) {
			defer wg.Done()
			kctx, cancel := context.WithTimeout(ctx, bound(p))
			defer cancel()
			if err := kill(p, kctx); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}(p)
	}
	wg.Wait()
	return first
}
