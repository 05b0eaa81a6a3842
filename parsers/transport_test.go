package parsers

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDetectTransport(t *testing.T) {
	cases := []struct {
		name    string
		text    string
		kind    string
		detail  string
		devices []string
		gdr     *bool
		copy    bool
	}{
		{
			name: "nccl over RoCE with GPUDirect",
			text: "node1:100:100 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB eth0:10.0.0.1<0>\n" +
				"node1:100:100 [0] NCCL INFO Using network IB\n" +
				"node1:100:120 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n" +
				"node1:100:120 [0] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM\n",
			kind: TransportRDMA, detail: "NET/IB", devices: []string{"mlx5_0:1/RoCE", "mlx5_1:1/RoCE"}, gdr: trBool(true),
		},
		{
			// Google's gIB plugin on GKE (A3 Ultra, A4): the channel lines
			// name NET/gIB/<n>/GDRDMA, as a GKE deployment's NCCL 2.28.3 log
			// was reported; it is RDMA, named as the plugin.
			name: "nccl through gIB on GKE",
			text: "h:1:1 [0] NCCL INFO Using network gIB\n" +
				"h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/gIB/0/GDRDMA\n",
			kind: TransportRDMA, detail: "NET/gIB", gdr: trBool(true),
		},
		{
			name: "nccl over IB, GDR off on the ring",
			text: "h:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_2:1/IB ; OOB ib0:10.1.0.1<0>\n" +
				"h:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [receive] via NET/IB/0\n" +
				"h:1:2 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 0\n",
			kind: TransportRDMA, detail: "NET/IB", devices: []string{"mlx5_2:1/IB"}, gdr: trBool(false),
		},
		{
			name: "nccl multi-node fell back to sockets",
			text: "h:1:1 [0] NCCL INFO NET/IB : No device found.\n" +
				"h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0> [1]eth1:10.0.1.1<0>\n" +
				"h:1:1 [0] NCCL INFO Using network Socket\n" +
				"h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n",
			kind: TransportTCP, detail: "NET/Socket", devices: []string{"eth0:10.0.0.1", "eth1:10.0.1.1"},
		},
		{
			name: "nccl single node: network named but unused",
			text: "h:1:1 [0] NCCL INFO Using network Socket\n" +
				"h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n",
			kind: TransportUnknown, detail: "NET/Socket (single node, no channel lines)",
		},
		{
			name: "nccl over AWS EFA (OFI plugin)",
			text: "0: h:1:9 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/AWS Libfabric/0/GDRDMA\n",
			kind: TransportRDMA, detail: "NET/AWS Libfabric", gdr: trBool(true),
		},
		{
			name: "nccl intra-node shared memory",
			text: "h:1:3 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n",
			kind: TransportShm, detail: "SHM",
		},
		{
			name: "ucx proto info over rc_mlx5",
			text: "[1757492049.543053] [h:627036:0]   |        0..8184 | short         | rc_mlx5/mlx5_0:1 |\n" +
				"[1757492049.543053] [h:627036:0]   |      8185..inf | zero-copy     | rc_mlx5/mlx5_0:1 |\n",
			kind: TransportRDMA, detail: "rc_mlx5", devices: []string{"mlx5_0:1"},
		},
		{
			name: "ucx log ep config with tcp only",
			text: "[1717108085.315264] [gpu1:3292353:0]     ucp_worker.c:1888 UCX  INFO  ep_cfg[1]: tag(tcp/eth0 self/memory);\n",
			kind: TransportTCP, detail: "self+tcp", devices: []string{"eth0"},
		},
		{
			name: "ucx proto info: the data path (remote memory read) over cma, control over tcp",
			text: "[1.1] [h:1:0]   | remote memory read by ucp_get*(multi) into host memory from host |\n" +
				"[1.1] [h:1:0]   | 0..inf | zero-copy   | cma/memory                                |\n" +
				"[1.2] [h:1:0]   | active message by ucp_am_send* from host memory |\n" +
				"[1.2] [h:1:0]   |   1..16515 | zero-copy          | tcp/lo        |\n",
			kind: TransportShm, detail: "cma (data), tcp (control)",
		},
		{
			name: "ucx proto info: remote memory read over rc_verbs by copy-out (soft-RoCE)",
			text: "[1.1] [vm2:179:0]   | remote memory read by ucp_get*(multi) into host memory from host |\n" +
				"[1.1] [vm2:179:0]   | 0..inf | copy-out    | rc_verbs/rxe0:1                           |\n",
			kind: TransportRDMA, detail: "rc_verbs (data)", devices: []string{"rxe0:1"}, copy: true,
		},
		{
			name: "ucx ep config: rma over rc_verbs on rxe0, keep-alive over tcp",
			text: "[1.1] [vm2:5:0] ucp_worker.c:1888 UCX INFO ep_cfg[2]: rma(rc_verbs/rxe0:1) am(rc_verbs/rxe0:1 tcp/eth0) ka(tcp/eth0)\n",
			kind: TransportRDMA, detail: "rc_verbs (data), tcp (control)", devices: []string{"rxe0:1"},
		},
		{
			name: "ucx proto info: remote memory write over tcp is a fallback",
			text: "[1.1] [h:1:0]   | remote memory write by ucp_put* from host memory to host |\n" +
				"[1.1] [h:1:0]   | 0..inf | zero-copy | tcp/eth1 |\n",
			kind: TransportTCP, detail: "tcp (data)", devices: []string{"eth1"},
		},
		{
			name: "nixl libfabric rails over the tcp provider",
			text: "I1125 05:06:27.998847   11901 libfabric_rail_manager.cpp:232] Created 1 rails using provider=tcp\n",
			kind: TransportTCP, detail: "tcp",
		},
		{
			name: "nixl libfabric rails over efa",
			text: "I1125 05:06:27.998847   11901 libfabric_rail_manager.cpp:232] Created 4 rails using provider=efa\n",
			kind: TransportRDMA, detail: "efa",
		},
		{
			name: "ucx shared memory only",
			text: "[1.2] [h:1:0]   |  0..inf | copy-in | sysv/memory |\n[1.2] [h:1:0]   | 0..inf | copy | cma/memory |\n",
			kind: TransportShm, detail: "cma+sysv",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := DetectTransport(c.text)
			if tr == nil {
				t.Fatal("no transport detected")
			}
			if tr.Kind != c.kind || tr.Detail != c.detail || !reflect.DeepEqual(tr.Devices, c.devices) {
				t.Errorf("got kind=%q detail=%q devices=%v, want %q %q %v", tr.Kind, tr.Detail, tr.Devices, c.kind, c.detail, c.devices)
			}
			if tr.Copy != c.copy {
				t.Errorf("copy %v, want %v", tr.Copy, c.copy)
			}
			if !reflect.DeepEqual(tr.GDR, c.gdr) {
				t.Errorf("gdr %v, want %v", trDeref(tr.GDR), trDeref(c.gdr))
			}
			if len(tr.Evidence) == 0 || len(tr.Evidence) > maxEvidence {
				t.Errorf("%d evidence lines", len(tr.Evidence))
			}
		})
	}
	if tr := DetectTransport("# Avg bus bandwidth : 12\nplain text\n"); tr != nil {
		t.Errorf("evidence found in plain text: %+v", tr)
	}
}

// TestDetectTransportCaptures checks the verdict on the real NCCL_DEBUG=INFO
// captures: intra-node P2P, and the forced fallback to NET/Socket.
func TestDetectTransportCaptures(t *testing.T) {
	cases := map[string]string{
		"all_reduce_g4_debug_info.txt":                         TransportP2P,
		"alltoall_g2_debug_info.txt":                           TransportP2P,
		"all_reduce_g2_debug_info_socket_p2p_shm_disabled.txt": TransportTCP,
	}
	for file, kind := range cases {
		data, err := os.ReadFile(filepath.Join(ncclCaptureDir, file))
		if err != nil {
			t.Fatal(err)
		}
		tr := DetectTransport(string(data))
		if tr == nil || tr.Kind != kind || tr.Source != "nccl" {
			t.Errorf("%s: %+v, want kind %s", file, tr, kind)
			continue
		}
		if kind == TransportTCP && (!reflect.DeepEqual(tr.Devices, []string{"eth0:192.0.2.2"}) || tr.GDR == nil || *tr.GDR) {
			t.Errorf("%s: devices %v gdr %v", file, tr.Devices, trDeref(tr.GDR))
		}
		if !strings.Contains(strings.Join(tr.Evidence, "\n"), "via ") {
			t.Errorf("%s: no channel line among the evidence: %q", file, tr.Evidence)
		}
	}
}

func trBool(v bool) *bool { return &v }

func trDeref(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}
