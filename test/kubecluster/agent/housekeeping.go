package agent

import (
	"context"
	"math/rand/v2"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// housekeepingInterval paces the orphan sweep.
const housekeepingInterval = 2 * time.Second

// housekeep ends pods that run here but no longer exist in the API, as a
// kubelet's housekeeping does. virtual-kubelet's pod controller learns of
// deletions from its watch; a pod deleted while that watch was down (an
// apiserver restart) reaches it only as a tombstone it does not act on,
// and its processes would run on forever.
func (a *Agent) housekeep() {
	// Started at a random point of the interval, so that many agents
	// started together do not list together.
	select {
	case <-a.ctx.Done():
		return
	case <-time.After(time.Duration(rand.Int64N(int64(housekeepingInterval)))):
	}
	t := time.NewTicker(housekeepingInterval)
	defer t.Stop()
	for {
		select {
		case <-a.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
		listed := time.Now()
		// From the apiserver's watch cache (resourceVersion 0), as a
		// kubelet's periodic lists are: 256 agents listing from etcd
		// every 2 s saturated the apiserver and timed its handlers out.
		list, err := a.opts.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + a.opts.Name, ResourceVersion: "0"})
		cancel()
		if err != nil {
			continue // the API is away; try again next tick
		}
		live := map[types.UID]bool{}
		for _, p := range list.Items {
			live[p.UID] = true
		}
		for _, p := range a.podList() {
			p.mu.Lock()
			spec, started, deleting := p.spec, p.started.Time, p.deleting
			p.mu.Unlock()
			// A pod created after the list was asked for cannot be in it:
			// under load (256 agents listing) the answer comes seconds
			// later, and a pod started meanwhile is not an orphan.
			if live[spec.UID] || deleting || !started.Before(listed.Add(-2*housekeepingInterval)) {
				continue
			}
			a.logf("housekeeping: pod %s/%s is gone from the API; ending it", spec.Namespace, spec.Name)
			orphan := spec.DeepCopy()
			zero := int64(0)
			orphan.DeletionGracePeriodSeconds = &zero
			_ = provider{a}.DeletePod(a.ctx, orphan)
		}
	}
}
