// Package e2ekube is the kube lane: `rdmabench run` on kube scenarios
// against a real kube-apiserver and kube-scheduler (test/kubecluster), whose
// nodes run pod commands as processes in network namespaces with a
// secondary veth network standing for Multus. Real ucx_perftest and iperf3
// run between pods over that network; failures, Ctrl-C and clean-up are
// checked through the API and the nodes' process tables.
package e2ekube

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

var (
	kc         *cluster.Cluster
	rdmabench  string // the binary under test
	skipReason string
)

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	if err := cluster.Available(); err != nil {
		skipReason = err.Error()
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	bin, err := os.MkdirTemp("", "rdmabench-e2ekube-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(bin)
	rdmabench = filepath.Join(bin, "rdmabench")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", rdmabench, "../../cmd/rdmabench").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build rdmabench: %v\n%s", err, out)
		return 1
	}
	var log bytes.Buffer
	// Four nodes: pd-disagg puts 2 prefill and 2 decode pods on four
	// distinct nodes.
	c, err := cluster.Start(ctx, cluster.Options{Nodes: 4, Log: &log})
	if err != nil {
		fmt.Fprintf(os.Stderr, "start test cluster: %v\n%s", err, log.String())
		return 1
	}
	kc = c
	code := 1
	// The network every test uses, in default as a cluster admin would
	// publish it; scenarios name it default/data-net.
	if err := installMultusAPI(ctx, c); err == nil {
		err = createNADIn(ctx, c, "default", "data-net")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "install the NetworkAttachmentDefinition API: %v\n", err)
	} else {
		code = m.Run()
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop test cluster: %v\n", err)
		return 1
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "--- cluster log (last 4 KB)\n%s\n", tail(log.Bytes(), 4096))
	}
	return code
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func needCluster(t *testing.T) *cluster.Cluster {
	t.Helper()
	if kc == nil {
		t.Skip("kube test cluster unavailable: " + skipReason)
	}
	return kc
}
