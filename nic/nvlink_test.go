package nic

import (
	"math"
	"os"
	"strings"
	"testing"
)

// TestNVLinkStatusOfH200: the real `nvidia-smi nvlink -s` of a 2×H200 host
// (testdata/gpu/h200-2gpu/machine.txt, cut by head -20 after GPU 0's 18
// links): 18 × 26.562 GB/s per direction; GPU 1's lines were cut, so it is
// not counted.
func TestNVLinkStatusOfH200(t *testing.T) {
	raw, err := os.ReadFile("../testdata/gpu/h200-2gpu/machine.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, status, _ := strings.Cut(string(raw), "+ nvidia-smi nvlink -s\n")
	gpus := ParseNVLinkStatus(status)
	if len(gpus) != 2 || gpus[0].Links != 18 || gpus[0].PerLink != 26.562 || gpus[0].Name != "NVIDIA H200" || gpus[1].Links != 0 {
		t.Fatalf("%+v", gpus)
	}
	gbps, detail, ok := NVLinkRate(gpus)
	if !ok || math.Abs(gbps-478.116) > 1e-6 || !strings.Contains(detail, "NVLink: 18 links × 26.562 GB/s per direction (GPU 0, NVIDIA H200") {
		t.Errorf("%v %q %v", gbps, detail, ok)
	}
}

// TestNVLinkInactiveAndNone: inactive links do not count; a host without
// NVLink has no NVLink rate.
func TestNVLinkInactiveAndNone(t *testing.T) {
	gpus := ParseNVLinkStatus("GPU 0: NVIDIA A100 (UUID: x)\n\t Link 0: 25 GB/s\n\t Link 1: <inactive>\nGPU 1: NVIDIA A100 (UUID: y)\n\t Link 0: 25 GB/s\n\t Link 1: 25 GB/s\n")
	if gbps, _, ok := NVLinkRate(gpus); !ok || gbps != 25 {
		t.Errorf("lowest GPU: %v %v (%+v)", gbps, ok, gpus)
	}
	if _, _, ok := NVLinkRate(ParseNVLinkStatus("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n")); ok {
		t.Error("a rate from no GPU")
	}
}

// TestNVLinkOneGPUWithout: a GPU of the host with no active link reaches
// the others over PCIe: the host has no NVLink rate to hold a collective
// to (the lowest GPU's NVLink is none, not the next one's).
func TestNVLinkOneGPUWithout(t *testing.T) {
	gpus := ParseNVLinkStatus("GPU 0: NVIDIA H100 (UUID: x)\n\t Link 0: 26.562 GB/s\nGPU 1: NVIDIA H100 (UUID: y)\n\t Link 0: <inactive>\n")
	if gbps, detail, ok := NVLinkRate(gpus); ok {
		t.Errorf("rate %v (%s) though GPU 1 has no active link", gbps, detail)
	}
}
