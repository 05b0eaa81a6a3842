package cluster

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// BenchmarkPodsReady: N pods (each with a secondary network) created at
// once on the 3-node cluster, until every one is Ready; deleting them is
// outside the timer. Reports seconds to all-Ready per batch.
func BenchmarkPodsReady(b *testing.B) {
	for _, n := range []int{8, 64} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			c := needCluster(b)
			for i := 0; i < b.N; i++ {
				sel := fmt.Sprintf("bench=b%d-%d", n, i)
				b.StartTimer()
				createBatch(b, c, n, i)
				waitAllReady(b, c, sel, n)
				b.StopTimer()
				deleteBatch(b, c, sel)
			}
		})
	}
}

func createBatch(b *testing.B, c *Cluster, n, iter int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for j := 0; j < n; j++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			p := testPod(fmt.Sprintf("bench-%d-%d-%d", n, iter, j), sleeper, withNetworks("rdma-net"))
			p.Labels["bench"] = fmt.Sprintf("b%d-%d", n, iter)
			if _, err := c.Client().CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
}

func waitAllReady(b *testing.B, c *Cluster, sel string, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ready := 0
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client().CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, nil
		}
		ready = 0
		for i := range pods.Items {
			if isReady(&pods.Items[i]) {
				ready++
			}
		}
		return ready == n, nil
	})
	if err != nil {
		b.Fatalf("%d/%d pods Ready after 5 minutes", ready, n)
	}
}

func deleteBatch(b *testing.B, c *Cluster, sel string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	zero := int64(0)
	err := c.Client().CoreV1().Pods("default").DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero},
		metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		b.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client().CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: sel})
		return err == nil && len(pods.Items) == 0 && len(c.NetNSes()) == 0, nil
	})
	if err != nil {
		b.Fatalf("pods of %s not gone within 3 minutes", sel)
	}
}
