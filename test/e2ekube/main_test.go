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
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/test/kubecluster/cluster"
)

// hostImage is the image name whose pods run on the host's file system:
// the CronJob test's pod reads the scenario and writes results in host
// folders, since the test agent has no volumes.
const hostImage = "host/rdmabench:test"

// Images of their own here: the tools image as the project ships it,
// without the GPU tools' stand-ins; a serving-like image (servingRootFS:
// no perftest, rping, iperf3, rdma-core or rdmabench; the stand-ins of
// the tools a serving image may carry). Every other image is the tools
// image with every stand-in.
const (
	cpuToolsImage = "rdmabench/tools-cpu:test"
	servingImage  = "example.com/serving:test"
)

var (
	kc         *cluster.Cluster
	rdmabench  string // the binary under test
	skipReason string
	imageRoot  string // the unpacked tools image every pod runs in; "" on the host
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
	// The stand-ins of the tools that cannot run here (nixlbench,
	// nccl-tests), static, bound into every pod first on PATH; never in
	// the image.
	standins := filepath.Join(bin, "standins")
	if err := buildStandins(ctx, standins); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	noGPUTools := filepath.Join(bin, "standins-no-gpu-tools")
	if err := linkCPUStandins(standins, noGPUTools); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Pods run in the tools image (make image), so the lane proves the
	// image's tools work; without it (go test by hand, no make image) they
	// run on the host's file system unless RDMABENCH_TOOLS_IMAGE insists.
	// Every endpoint pod needs the image: its init container copies
	// rdmabench's bundle from it.
	rootfs, err := cluster.ToolsRootFS()
	if err != nil {
		if os.Getenv("RDMABENCH_TOOLS_IMAGE") != "" {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		skipReason = "no tools image (make image): " + err.Error()
		return m.Run()
	}
	fmt.Fprintf(os.Stderr, "e2ekube: pods run in the tools image %s\n", rootfs)
	imageRoot = rootfs
	serving, err := servingRootFS(rootfs, filepath.Join(bin, "serving-rootfs"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var log bytes.Buffer
	// Four nodes: pd-disagg puts 2 prefill and 2 decode pods on four
	// distinct nodes.
	c, err := cluster.Start(ctx, cluster.Options{Nodes: 4, Log: &log, ExtraBinDir: standins, SRIOVNetworks: []string{"default/sriov-net"},
		ExtraBin: func(image string) string {
			if image == cpuToolsImage {
				return noGPUTools
			}
			return standins
		},
		RootFS: func(image string) string {
			if image == hostImage {
				return "" // the host's file system (the CronJob test's pod)
			}
			if image == servingImage {
				return serving
			}
			return imageRoot
		}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "start test cluster: %v\n%s", err, log.String())
		return 1
	}
	kc = c
	code := 1
	// The network every test uses, in default as a cluster admin would
	// publish it; scenarios name it default/data-net.
	// (Before make lint, an inner err here shadowed this one and a failed
	// install went unreported.)
	err = installMultusAPI(ctx, c)
	if err == nil {
		err = createNADIn(ctx, c, "default", "data-net")
	}
	if err == nil { // its attachments carry device-info, as the SR-IOV CNI's
		err = createNADIn(ctx, c, "default", "sriov-net")
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

// buildStandins builds testdata/standins/* (static: they run chrooted in
// the image) into dir.
func buildStandins(ctx context.Context, dir string) error {
	ents, err := os.ReadDir("../../testdata/standins")
	if err != nil {
		return err
	}
	args := []string{"build", "-o", dir + "/"}
	for _, e := range ents {
		if e.IsDir() && e.Name() != "internal" {
			args = append(args, "../../testdata/standins/"+e.Name())
		}
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build stand-ins: %v\n%s", err, out)
	}
	return nil
}

// linkCPUStandins fills dir with the stand-ins that are not GPU tools
// (none today: the folder is what an image without nixlbench and
// nccl-tests carries on its PATH).
func linkCPUStandins(all, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(all)
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		if n == "nixlbench" || strings.HasSuffix(n, "_perf") {
			continue
		}
		if err := os.Link(filepath.Join(all, n), filepath.Join(dir, n)); err != nil {
			return err
		}
	}
	return nil
}

// servingRootFS is a serving-like root file system made from the tools
// image's (hard links, nothing copied): without perftest, rping, iperf3,
// rdma-core's libraries and providers, and rdmabench, as the serving images
// read for issue 30 are (llm-d's, vLLM's). Only the bundle can bring them.
func servingRootFS(tools, dir string) (string, error) {
	if out, err := exec.Command("cp", "-al", tools, dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("serving root: %v: %s", err, out)
	}
	var gone []string
	for _, glob := range []string{"usr/bin/ib_*", "usr/bin/rping", "usr/bin/iperf3", "usr/lib/x86_64-linux-gnu/libibverbs*",
		"usr/lib/x86_64-linux-gnu/librdmacm*", "usr/lib/x86_64-linux-gnu/libiperf*", "etc/libibverbs.d", "usr/local/bin/rdmabench*", "opt/rdmabench"} {
		m, _ := filepath.Glob(filepath.Join(dir, glob))
		gone = append(gone, m...)
	}
	for _, p := range gone {
		if err := os.RemoveAll(p); err != nil {
			return "", err
		}
	}
	if len(gone) < 8 {
		return "", fmt.Errorf("serving root: only %d of the tools image's RDMA files found to remove: %v", len(gone), gone)
	}
	return dir, nil
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
