package parsers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gpuCaptureDir holds the GPU lane's real captures (testdata/gpu, issue 13).
const gpuCaptureDir = "../testdata/gpu"

// TestDetectTransportGPULane checks the transport named for the GPU lane's
// real NCCL_DEBUG=INFO runs: one H200 (one rank: nothing between GPUs, NCCL
// only says "Using network Socket"), two H200s driven by one process (-g 2:
// "via P2P/direct pointer") and by two MPI processes ("via P2P/CUMEM").
func TestDetectTransportGPULane(t *testing.T) {
	cases := []struct {
		file, kind, detail, evidence string
	}{
		{"h200-1gpu/raw-sendrecv.txt", TransportNone, "single rank: no inter-GPU transport", "nRanks 1 "},
		{"h200-1gpu/raw-all-reduce.txt", TransportNone, "single rank: no inter-GPU transport", "nRanks 1 "},
		{"h200-2gpu/raw-all-reduce.txt", TransportP2P, "P2P/direct pointer", "via P2P/direct pointer"},
		{"h200-2gpu/raw-alltoall.txt", TransportP2P, "P2P/direct pointer", "via P2P/direct pointer"},
		{"h200-2gpu/raw-sendrecv.txt", TransportP2P, "P2P/direct pointer", "via P2P/direct pointer"},
		{"h200-2gpu/mpi/raw-sendrecv.txt", TransportP2P, "P2P/CUMEM", "via P2P/CUMEM"},
		{"h200-2gpu/mpi/raw-all_reduce.txt", TransportP2P, "P2P/CUMEM", "via P2P/CUMEM"},
	}
	for _, c := range cases {
		data, err := os.ReadFile(filepath.Join(gpuCaptureDir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		tr := DetectTransport(string(data))
		if tr == nil || tr.Kind != c.kind || tr.Detail != c.detail {
			t.Errorf("%s: %+v, want %s %q", c.file, tr, c.kind, c.detail)
			continue
		}
		if !strings.Contains(strings.Join(tr.Evidence, "\n"), c.evidence) {
			t.Errorf("%s: evidence lacks %q: %q", c.file, c.evidence, tr.Evidence)
		}
	}
}

// TestDetectTransportSHMAndP2P: a run whose channels mix SHM and P2P (GPUs
// without peer access between some pairs) is GPU peer-to-peer, with both named.
func TestDetectTransportSHMAndP2P(t *testing.T) {
	text := "h:1:3 [0] NCCL INFO comm 0x1 rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 0\n" +
		"h:1:3 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read\n" +
		"h:1:3 [0] NCCL INFO Channel 00/0 : 1[1] -> 2[2] via SHM/direct/direct\n"
	tr := DetectTransport(text)
	if tr == nil || tr.Kind != TransportP2P || tr.Detail != "P2P/IPC+SHM" {
		t.Fatalf("%+v", tr)
	}
	nvls := "h:1:3 [0] NCCL INFO 16 coll channels, 16 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer\n"
	if tr := DetectTransport(nvls); tr == nil || tr.Kind != TransportP2P || tr.Detail != "NVLS" {
		t.Fatalf("nvls: %+v", tr)
	}
}
