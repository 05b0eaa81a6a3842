package tools

import (
	"strings"
	"testing"
)

// TestNCCLProbeFindsNCCL judges rdmabench-nccl --find's lines (the probe's
// own output, as its tests print it over the stand-ins).
func TestNCCLProbeFindsNCCL(t *testing.T) {
	p := NCCLProbeFindsNCCL()
	for out, want := range map[string]struct {
		status   ProbeStatus
		evidence string
	}{
		"nccl=/opt/venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2\nnccl-found-by=torch\nnccl-version=2.28.9\n":                                                      {ProbePass, "NCCL 2.28.9 at /opt/venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2 (found by torch)"},
		"nccl=notfound\nnccl-error=cannot load libnccl.so.2: no such file\nlooked=/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2; the dynamic loader's libnccl.so.2\n": {ProbeFail, "looked at: /usr/lib/python3/dist-packages"},
		"nccl=noprobe\n": {ProbeFail, "rdmabench-nccl is not on PATH"},
		"garbage":        {ProbeUnknown, "garbage"},
	} {
		st, ev, _ := p.Judge(out)
		if st != want.status || !strings.Contains(ev, want.evidence) {
			t.Errorf("%q: %v %q, want %v containing %q", out, st, ev, want.status, want.evidence)
		}
	}
}
