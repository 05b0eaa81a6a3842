package local

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// Discovery on recorded sysfs trees (nic/testdata): the RDMA check and
// `lineRate: auto` as the runner sees them through the local backend.
func TestDiscoveryOnRecordedHosts(t *testing.T) {
	for _, c := range []struct {
		tree   string
		rdma   bool
		rate   float64
		detail string
	}{
		{"ib-ndr", true, 400e9, "port 1"},
		{"rxe-vm", true, 2.5e9, "rxe0 port 1"},
		{"no-such-host", false, 0, ""},
	} {
		t.Run(c.tree, func(t *testing.T) {
			old := SysRoot
			SysRoot = filepath.Join("..", "..", "..", "nic", "testdata", "sysfs", c.tree)
			defer func() { SysRoot = old }()
			b := New()
			if got := b.HasRDMA(context.Background(), endpoint.Endpoint{}); got != c.rdma {
				t.Errorf("HasRDMA = %v, want %v", got, c.rdma)
			}
			bps, detail, ok := b.LineRate(context.Background(), endpoint.Endpoint{})
			if c.rate > 0 && (!ok || bps != c.rate || !strings.Contains(detail, c.detail)) {
				t.Errorf("LineRate = %v %q %v, want %v", bps, detail, ok, c.rate)
			}
			if !c.rdma && ok {
				t.Errorf("LineRate on a host without RDMA: %v %q", bps, detail)
			}
			t.Logf("HasRDMA %v, LineRate %v %q %v", c.rdma, bps, detail, ok)
		})
	}
}

// The fingerprint compare warns on: the NIC's firmware and active MTU from
// a recorded ConnectX-7 host, the kernel from /proc, nothing where neither
// is readable.
func TestFingerprint(t *testing.T) {
	kernelOnly := t.TempDir()
	_ = os.MkdirAll(filepath.Join(kernelOnly, "proc", "sys", "kernel"), 0o755)
	_ = os.WriteFile(filepath.Join(kernelOnly, "proc", "sys", "kernel", "osrelease"), []byte("6.1.0-56-amd64\n"), 0o644)
	for _, c := range []struct {
		root string
		want map[string]string
	}{
		{filepath.Join("..", "..", "..", "nic", "testdata", "sysfs", "cx7-roce-gpu"), map[string]string{"nic.firmware": "28.39.1002", "nic.mtu": "4096"}},
		{kernelOnly, map[string]string{"kernel": "6.1.0-56-amd64"}},
		{t.TempDir(), nil},
	} {
		old := SysRoot
		SysRoot = c.root
		got := New().Fingerprint(context.Background(), endpoint.Endpoint{Device: ""})
		SysRoot = old
		if len(got) != len(c.want) {
			t.Errorf("%s: Fingerprint = %v, want %v", c.root, got, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", c.root, k, got[k], v)
			}
		}
	}
}

// TestProvisionReadsAffinity: on a recorded 4-GPU host with two NICs
// (mlx5_0 beside GPU0/1, mlx5_1 beside GPU2/3), each local endpoint's own
// GPUs (its CUDA_VISIBLE_DEVICES' first) are paired with its named NIC,
// the nearer NIC named where one is; no pairs without a named NIC.
func TestProvisionReadsAffinity(t *testing.T) {
	old := SysRoot
	SysRoot = filepath.Join("..", "..", "..", "nic", "testdata", "sysfs", "cx7-roce-gpu")
	defer func() { SysRoot = old }()
	eps, err := New().Provision(context.Background(), []endpoint.Endpoint{
		{Name: "prefill-0", GPUs: 1, VisibleGPUs: "0,1,2,3", Device: "mlx5_0"},
		{Name: "decode-0", GPUs: 2, VisibleGPUs: "2,3,0,1", Device: "mlx5_0"},
		{Name: "cpu-0", Device: "mlx5_0"},
		{Name: "gpu-no-nic", GPUs: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]endpoint.GPUNIC{
		"prefill-0": {{GPU: "GPU0", Device: "mlx5_0", Relation: "PIX"}},
		"decode-0": {{GPU: "GPU2", Device: "mlx5_0", Relation: "SYS", Nearest: "mlx5_1", NearestRelation: "PIX"},
			{GPU: "GPU3", Device: "mlx5_0", Relation: "SYS", Nearest: "mlx5_1", NearestRelation: "PXB"}},
	}
	for _, ep := range eps {
		if !reflect.DeepEqual(ep.Affinity, want[ep.Name]) {
			t.Errorf("%s: %+v, want %+v", ep.Name, ep.Affinity, want[ep.Name])
		}
	}
}
