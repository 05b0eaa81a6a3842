package e2ekube

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/rdmabench/rdmabench/runner"
	"github.com/rdmabench/rdmabench/runner/backend/kube"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// The scale benchmarks run on virtual nodes added to the lane's cluster
// for them (RDMABENCH_BENCH_NODES, default 256, labelled
// rdmabench.test/scale), the pods of a pool packed as the scheduler likes
// (no anti-affinity), each running a zero-cost tool (true): they measure
// the harness and the API, not a tool.
//
//	make bench-kube-scale
//	RDMABENCH_BENCH_NODES=64 go test ./test/e2ekube -run '^$' -bench 'Scale' -benchtime 1x -timeout 60m

var (
	scaleOnce  sync.Once
	scaleErr   error
	scaleNodes int
)

// scaleCluster adds the benchmark's nodes once per test binary, 16 at a
// time; Stop removes them with the cluster.
func scaleCluster(b *testing.B) *cluster.Cluster {
	b.Helper()
	if kc == nil {
		b.Skip("kube test cluster unavailable: " + skipReason)
	}
	scaleOnce.Do(func() {
		scaleNodes = 256
		if v, err := strconv.Atoi(os.Getenv("RDMABENCH_BENCH_NODES")); err == nil && v > 0 {
			scaleNodes = v
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		start := time.Now()
		sem := make(chan struct{}, 16)
		var wg sync.WaitGroup
		var mu sync.Mutex
		for i := 1; i <= scaleNodes; i++ {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				err := kc.AddNode(ctx, fmt.Sprintf("scale-%d", i), map[string]string{"rdmabench.test/scale": "1"})
				if err != nil {
					mu.Lock()
					scaleErr = err
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		fmt.Fprintf(os.Stderr, "e2ekube: %d virtual nodes added in %s\n", scaleNodes, time.Since(start).Round(time.Second))
	})
	if scaleErr != nil {
		b.Fatalf("adding %d nodes: %v", scaleNodes, scaleErr)
	}
	return kc
}

// counted is a client of the cluster whose requests are counted.
type counted struct {
	client kubernetes.Interface
	be     *kube.Backend
	n      *atomic.Int64
}

type countingRT struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (c countingRT) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	if os.Getenv("RDMABENCH_BENCH_TRACE") != "" {
		fmt.Fprintf(os.Stderr, "req %s %s?%s\n", r.Method, r.URL.Path, r.URL.RawQuery)
	}
	return c.rt.RoundTrip(r)
}

// countedBackend is a kube backend of n endpoints on the scale nodes whose
// API requests are counted (exec streams included: one request each).
func countedBackend(b *testing.B, c *cluster.Cluster, n int, id string, perCommand bool) counted {
	b.Helper()
	cfg := c.RESTConfig()
	cfg.QPS, cfg.Burst = 1000, 2000 // the cluster's speed, not the client's limiter
	var reqs atomic.Int64
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingRT{rt, &reqs} })
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	sc := benchScenario("bench-scale", n)
	sc.Cluster.NodeSelector = map[string]string{"rdmabench.test/scale": "1"}
	sc.Cluster.AntiAffinity = "rdmabench.test/no-such-key"
	sc.Cluster.Networks = nil // one interface: the pods' own; the secondary network is BenchmarkPodsToReady's
	be, err := kube.New(sc, kube.Options{Client: cs, Config: cfg, RunID: id, Progress: io.Discard, ExecPerCommand: perCommand})
	if err != nil {
		b.Fatal(err)
	}
	return counted{client: cs, be: be, n: &reqs}
}

// BenchmarkScalePodsToReady: 64 and 256 endpoints from the first create to
// every pod Ready, with the API requests that took (creates, the watch).
func BenchmarkScalePodsToReady(b *testing.B) {
	c := scaleCluster(b)
	for _, n := range []int{64, 256} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cb := countedBackend(b, c, n, fmt.Sprintf("scale-ready-%d-%d", n, i), false)
				start := time.Now()
				eps, err := cb.be.Provision(context.Background(), benchEndpoints(n))
				d := time.Since(start)
				reqs := cb.n.Load()
				b.StopTimer()
				cerr := cb.be.Cleanup(context.Background())
				if err != nil || len(eps) != n {
					b.Fatalf("provision %d: %v", n, err)
				}
				if cerr != nil {
					b.Fatal(cerr)
				}
				b.ReportMetric(d.Seconds(), "s-to-ready")
				b.ReportMetric(float64(reqs), "api-requests")
				b.StartTimer()
			}
		})
	}
}

// BenchmarkScaleRoundOverhead: rounds of an all-to-all's shape on 64 and
// 256 provisioned endpoints (N/2 pairs a round, a server and a client
// each, both the zero-cost true): the wall time of a round is the
// harness's overhead (execs through the apiserver, output, results), with
// the API requests per round. A round's figures are the difference
// between a run of 1+rounds rounds and a run of 1, so that what a run
// pays once (preflight, the results folder, the report) is not spread
// over its rounds; preflight's own cost (one exec per endpoint) is
// reported beside them (preflight-s).
func BenchmarkScaleRoundOverhead(b *testing.B) {
	c := scaleCluster(b)
	for _, n := range []int{64, 256} {
		for _, mode := range []string{"session", "per-command"} {
			b.Run(fmt.Sprintf("%d/%s", n, mode), func(b *testing.B) { benchRounds(b, c, n, mode == "per-command") })
		}
	}
}

// benchRounds is BenchmarkScaleRoundOverhead on n endpoints, commands
// through each pod's exec session or an exec each (perCommand).
func benchRounds(b *testing.B, c *cluster.Cluster, n int, perCommand bool) {
	const rounds = 4
	mode := "session"
	if perCommand {
		mode = "exec"
	}
	cb := countedBackend(b, c, n, fmt.Sprintf("scale-round-%d-%s", n, mode), perCommand)
	eps, err := cb.be.Provision(context.Background(), benchEndpoints(n))
	defer func() { _ = cb.be.Cleanup(context.Background()) }()
	if err != nil {
		b.Fatal(err)
	}
	// run times a run of r rounds, and counts its requests.
	run := func(r int, preflight bool) (time.Duration, int64) {
		before := cb.n.Load()
		start := time.Now()
		rep, err := runner.Run(context.Background(), runner.Config{Plan: roundsPlan(eps, r), Backend: provisioned{cb.be, eps},
			OutDir: b.TempDir(), Parse: benchParse, NoPreflight: !preflight})
		if err != nil || rep.Summary.Pass != r*n/2 {
			b.Fatalf("run: %v %+v", err, rep.Summary)
		}
		return time.Since(start), cb.n.Load() - before
	}
	// The first run checks each pod's binaries once (and opens the
	// sessions); not timed.
	run(1, false)
	b.ResetTimer()
	var wall, preflight time.Duration
	var reqs int64
	for i := 0; i < b.N; i++ {
		one, oneReqs := run(1, false)
		many, manyReqs := run(1+rounds, false)
		withPreflight, _ := run(1, true)
		wall += many - one
		reqs += manyReqs - oneReqs
		preflight += withPreflight - one
	}
	b.ReportMetric(wall.Seconds()/float64(b.N*rounds), "s/round")
	b.ReportMetric(float64(reqs)/float64(b.N*rounds), "api-requests/round")
	b.ReportMetric(preflight.Seconds()/float64(b.N), "preflight-s")
}

// roundsPlan is r rounds of n/2 pairs: in round k endpoint i (< n/2)
// pairs with i+n/2, shifted by k, so no endpoint is in two pairs of a
// round.
func roundsPlan(eps []endpoint.Endpoint, r int) *plan.Plan {
	n := len(eps)
	p := &plan.Plan{Scenario: "bench", Backend: "kube", Endpoints: eps}
	for k := 0; k < r; k++ {
		round := plan.Round{Index: k, Test: "t"}
		for i := 0; i < n/2; i++ {
			a, z := eps[(i+k)%n], eps[(i+k+n/2)%n]
			round.Jobs = append(round.Jobs, plan.Job{ID: fmt.Sprintf("t/r%d/%s->%s", k, a.Name, z.Name), Test: "t", Tool: "trivial", Round: k, Repetitions: 1, TimeoutSec: 60,
				Legs: []plan.Leg{{Commands: []plan.PlannedCommand{
					{Endpoint: z.Name, Role: tools.RoleServer, Argv: []string{"true"}},
					{Endpoint: a.Name, Role: tools.RoleClient, Argv: []string{"true"}, Parse: true},
				}}}})
		}
		p.Rounds = append(p.Rounds, round)
	}
	return p
}
