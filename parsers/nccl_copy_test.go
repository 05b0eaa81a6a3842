package parsers

import (
	"strings"
	"testing"
)

// ncclCopyText is the probe's copy table as it prints it (the stand-in's
// numbers): GPU 0 READs GPU 1, in-place the same copy timed again.
const ncclCopyText = `# rdmabench-nccl version 1 cuda-driver=13000 copy-device=0 copy-peer=1 copy-p2p=%s
# Collective test starting: copy (rdmabench-nccl)
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0
#
# Using devices
#  Rank  0 Group  0 Pid   4242 on       host device  0 [0000:10:00] rdmabench stand-in GPU 0
#  Peer: device  1 [0000:11:00] rdmabench stand-in GPU 1, read by cuMemcpyPeerAsync, direct (cuCtxEnablePeerAccess: NVLink or PCIe peer-to-peer)
#  In-place columns: the same copy timed again
#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong 
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         
     1048576        262144     float    none      -1     2.62  400.00  400.00       0     2.62  400.00  400.00    N/A
     2097152        524288     float    none      -1     5.24  400.00  400.00       0     5.24  400.00  400.00    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 400 
#
# Collective test concluded: copy (rdmabench-nccl)
#
`

// TestNCCLProbeCopyTable: the copy's table parses as the probe's, test
// copy, one rank, both sizes with busbw = algbw and no wrong element; its
// transport is GPU peer-to-peer when peer access is direct and host
// memory when the driver staged it.
func TestNCCLProbeCopyTable(t *testing.T) {
	for p2p, kind := range map[string]string{"direct": TransportP2P, "staged": TransportShm} {
		ms, err := Parse("rdmabench-nccl", strings.NewReader(strings.Replace(ncclCopyText, "%s", p2p, 1)))
		if err != nil || len(ms) != 1 {
			t.Fatalf("%s: %v %+v", p2p, err, ms)
		}
		m := ms[0]
		if !m.OK || m.Tool != "rdmabench-nccl" || m.Test != "copy" || m.Ranks != 1 || len(m.Samples) != 2 || m.Info["copy_peer"] != "1" {
			t.Fatalf("%s: ok %v tool %q test %q ranks %d samples %d info %v (%s)", p2p, m.OK, m.Tool, m.Test, m.Ranks, len(m.Samples), m.Info, m.Error)
		}
		for i, s := range m.Samples {
			if s.Bytes != 1048576<<i || *s.BusBWBps != 3.2e12 || *s.AlgBWBps != 3.2e12 || *s.Wrong != 0 || *s.InplaceBusBWBps != 3.2e12 || s.InplaceWrong != nil {
				t.Errorf("%s: sample %+v", p2p, s)
			}
		}
		if m.Transport == nil || m.Transport.Kind != kind || m.Transport.Source != "cuda" {
			t.Errorf("%s: transport %+v, want %s", p2p, m.Transport, kind)
		}
		if m.AvgBusBWBps == nil || *m.AvgBusBWBps != 3.2e12 {
			t.Errorf("%s: avg busbw %v", p2p, m.AvgBusBWBps)
		}
	}
}
