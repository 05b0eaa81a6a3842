package parsers

import (
	"reflect"
	"strings"
	"testing"
)

// Lines as UCX 1.22 printed them between the soft-RoCE VMs
// (testdata/nixl/softroce-vms-ssh), cut to the tables that matter.
const ucxWriteTable = `[1795584545.028608] [vm2:179  :0]   +----------+-------------+---------------------------------+
[1795584545.028608] [vm2:179  :0]   | initiator inter-node cfg#1                               |
[1795584545.028608] [vm2:179  :0]   | remote memory write by ucp_put* from host memory to host |
[1795584545.028608] [vm2:179  :0]   +----------+-------------+---------------------------------+
[1795584545.028608] [vm2:179  :0]   |  Range   | Description |             Config              |
[1795584545.028608] [vm2:179  :0]   +----------+-------------+---------------------------------+
[1795584545.028608] [vm2:179  :0]   |    0..80 | short       | rc_verbs/rxe0:1                 |
[1795584545.028608] [vm2:179  :0]   |  81..477 | copy-in     | rc_verbs/rxe0:1                 |
[1795584545.028608] [vm2:179  :0]   | 478..inf | zero-copy   | rc_verbs/rxe0:1                 |
[1795584545.028608] [vm2:179  :0]   +----------+-------------+---------------------------------+
`

const ucxReadTable = `[1795584553.844636] [vm2:179  :0]   +--------+-------------+-------------------------------------------+
[1795584553.844636] [vm2:179  :0]   | initiator inter-node cfg#1                                       |
[1795584553.844636] [vm2:179  :0]   | remote memory read by ucp_get*(multi) into host memory from host |
[1795584553.844636] [vm2:179  :0]   +--------+-------------+-------------------------------------------+
[1795584553.844636] [vm2:179  :0]   | Range  | Description |                  Config                   |
[1795584553.844636] [vm2:179  :0]   +--------+-------------+-------------------------------------------+
[1795584553.844636] [vm2:179  :0]   | 0..inf | copy-out    | rc_verbs/rxe0:1                           |
[1795584553.844636] [vm2:179  :0]   +--------+-------------+-------------------------------------------+
`

// The copies a transfer goes through are its op's, at its sizes: a read
// copies out at every size; a write copies in from 81 to 477 bytes only,
// and moves 256 KiB by zero-copy.
func TestUCXCopyPerOpAndSize(t *testing.T) {
	tr := DetectTransport(ucxWriteTable + ucxReadTable)
	if tr == nil || tr.Kind != TransportRDMA {
		t.Fatalf("transport %+v", tr)
	}
	read, write := *tr, *tr
	read.ForOp("READ")
	write.ForOp("WRITE")
	if !reflect.DeepEqual(read.CopyRanges, []ByteRange{{0, -1}}) || !read.CopiesAt(256<<10) {
		t.Errorf("READ copies %+v", read.CopyRanges)
	}
	if !reflect.DeepEqual(write.CopyRanges, []ByteRange{{81, 477}}) || write.CopiesAt(256<<10) || !write.CopiesAt(100) {
		t.Errorf("WRITE copies %+v", write.CopyRanges)
	}
}

// A table ends where its rows do: an ep_cfg log line after a table of tcp
// rows is read for its own rma(…), not as a row of that table.
func TestUCXTableEndsAtItsRows(t *testing.T) {
	tcpTable := strings.ReplaceAll(ucxReadTable, "rc_verbs/rxe0:1", "tcp/eth0       ")
	epCfg := "[1795584553.900000] [vm2:179  :0]           ucp_ep.c:1505 UCX  DIAG  ep_cfg[2]: tag(rc_verbs/rxe0:1) am(rc_verbs/rxe0:1) rma(tcp/eth0)\n"
	tr := DetectTransport(tcpTable + epCfg)
	if tr == nil || tr.Kind != TransportTCP || !strings.HasPrefix(tr.Detail, "tcp (data)") {
		t.Errorf("transport %+v; want tcp data (rc_verbs only for tags and active messages)", tr)
	}
}

// UCX_PROTO_INFO titles name each side's memory; the key puts the local
// (initiator's) buffer first, as UCXPathKey does from nixlbench's segments.
func TestUCXPathKeys(t *testing.T) {
	for title, want := range map[string]string{
		"[1.5] [vm:1 :0]   | remote memory read by ucp_get*(multi) into cuda/GPU0 from cuda/dev[0] |": "READ cuda<-cuda",
		"[1.5] [vm:1 :0]   | remote memory write by ucp_put* from host memory to host |":              "WRITE host->host",
		"| remote memory write by ucp_put*(fast-completion) from host memory to cuda/dev[0] |":        "WRITE host->cuda",
		"| remote memory read by ucp_get* into host memory from host |":                               "READ host<-host",
	} {
		if got := ucxPathKeyOf(title); got != want {
			t.Errorf("%q: %q, want %q", title, got, want)
		}
	}
	if got := UCXPathKey("read", "VRAM", "DRAM"); got != "READ cuda<-host" {
		t.Errorf("UCXPathKey: %q", got)
	}
}

// ForOpMemories picks the one table of an op whose memories are the
// test's; none, or two that fit, leave the verdict as it was.
func TestUCXForOpMemories(t *testing.T) {
	cudaRead := strings.ReplaceAll(strings.ReplaceAll(ucxReadTable, "into host memory from host", "into cuda/GPU1 from cuda/dev[0]"), "copy-out    | rc_verbs/rxe0:1", "zero-copy   | cuda_ipc/cuda  ")
	for _, c := range []struct {
		op   string
		mems []string
		key  string
		kind string
	}{
		{"READ", []string{"cuda"}, "READ cuda<-cuda", TransportP2P},
		{"READ", []string{"host"}, "READ host<-host", TransportRDMA},
		{"WRITE", []string{"host"}, "WRITE host->host", TransportRDMA},
		{"READ", []string{"host", "cuda"}, "", TransportRDMA}, // two tables fit
		{"WRITE", []string{"cuda"}, "", TransportRDMA},        // none fits
	} {
		tr := DetectTransport(ucxWriteTable + ucxReadTable + cudaRead)
		if key := tr.ForOpMemories(c.op, c.mems); key != c.key || tr.Kind != c.kind {
			t.Errorf("%s %v: key %q kind %s (%q), want %q %s", c.op, c.mems, key, tr.Kind, tr.Detail, c.key, c.kind)
		}
	}
	var none *Transport
	if none.ForOpMemories("READ", []string{"host"}) != "" {
		t.Error("a nil transport has no path")
	}
}

// A multi-lane row's cell names each lane (UCX's ucp_proto_multi_query:
// "30% on A, 40% on B and 30% on C"; one device over several paths:
// "A 50% on path0 and 50% on path1"): the path is every lane's transport
// and device, never the percentages or the paths.
func TestUCXMultiLaneRows(t *testing.T) {
	for _, c := range []struct {
		cell string
		devs []string
	}{
		{"50% on rc_mlx5/mlx5_0:1 and 50% on rc_mlx5/mlx5_1:1", []string{"mlx5_0:1", "mlx5_1:1"}},
		{"30% on rc_mlx5/mlx5_0:1, 40% on rc_mlx5/mlx5_1:1 and 30% on rc_mlx5/mlx5_2:1", []string{"mlx5_0:1", "mlx5_1:1", "mlx5_2:1"}},
		{"rc_mlx5/mlx5_0:1 50% on path0 and 50% on path1", []string{"mlx5_0:1"}},
		{"50% on rc_mlx5/mlx5_0:1/path0 and 50% on rc_mlx5/mlx5_0:1/path1", []string{"mlx5_0:1"}},
		{"rc_verbs/rxe0:1", []string{"rxe0:1"}},
		// Cut by UCX at 127 characters: after a lane (its fifth lost), in a
		// lane's path (its device whole), in a device (no device taken).
		{"20% on rc_mlx5/mlx5_10:1/path0, 20% on rc_mlx5/mlx5_11:1/path0, 20% on rc_mlx5/mlx5_12:1/path0, 20% on rc_mlx5/mlx5_13:1/path0,",
			[]string{"mlx5_10:1", "mlx5_11:1", "mlx5_12:1", "mlx5_13:1"}},
		{"25% on rc_mlx5/mlx5_10:1/path0, 25% on rc_mlx5/mlx5_11:1/path0, 25% on rc_mlx5/mlx5_12:1/path0 and 25% on rc_mlx5/mlx5_13:1/pat",
			[]string{"mlx5_10:1", "mlx5_11:1", "mlx5_12:1", "mlx5_13:1"}},
		{"25% on rc_mlx5/mlx5_100:1/path0, 25% on rc_mlx5/mlx5_110:1/path0, 25% on rc_mlx5/mlx5_120:1/path0 and 25% on rc_mlx5/mlx5_130:1",
			[]string{"mlx5_100:1", "mlx5_110:1", "mlx5_120:1"}},
	} {
		table := strings.ReplaceAll(ucxReadTable, "rc_verbs/rxe0:1                          ", c.cell)
		table = strings.ReplaceAll(table, "copy-out    ", "zero-copy   ")
		tr := DetectTransport(table)
		if tr == nil {
			t.Fatalf("%q: no transport", c.cell)
		}
		tr.ForPath("READ host<-host")
		if tr.Kind != TransportRDMA || !reflect.DeepEqual(tr.Devices, c.devs) || !strings.HasSuffix(tr.Detail, " (READ host<-host)") || strings.Contains(tr.Detail, "%") {
			t.Errorf("%q: %s %v %q, want rdma %v", c.cell, tr.Kind, tr.Devices, tr.Detail, c.devs)
		}
	}
}
