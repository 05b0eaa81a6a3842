package scenarios

import (
	"strings"
	"testing"
)

// Audit of issue 29 (pure refactor): UCX_TLS exclusions that leave RDMA
// transports in play ("^ud" keeps rc and dc, "^rc" keeps ud and dc, "^dc"
// keeps rc and ud) are not TCP-only. At c87395b scenarios.transportsAreTCP
// said so (only the runner's tcpOnly listed them); tool.TransportsAreTCP,
// the merged decision, now treats them as TCP, so a scenario that loaded at
// c87395b is refused and the default of requires flips to tcp.
func TestAudit29ExclusionsLeavingRDMAAreNotTCP(t *testing.T) {
	for _, tls := range []string{"^ud", "^rc", "^dc"} {
		text := minimal + "  - {name: t, tool: ucx_perftest, from: a, to: b, requires: rdma, args: {transports: \"" + tls + "\"}}\n"
		if _, err := LoadBytes("t.yaml", []byte(text)); err != nil {
			t.Errorf("transports %q with requires: rdma: refused (loaded at c87395b): %v", tls, err)
		}
		s, err := LoadBytes("t.yaml", []byte(minimal+"  - {name: t, tool: ucx_perftest, from: a, to: b, args: {transports: \""+tls+"\"}}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Tests[0].Requires; got != RequiresRDMA {
			t.Errorf("transports %q: requires defaults to %q, was %q at c87395b (UCX still picks an RDMA transport)", tls, got, RequiresRDMA)
		}
	}
}

// nccl_probe shares nccl's argument schema, but rdmabench-nccl knows only
// int8 … bfloat16 (probe/nccl dataTypes): "all", "f8e4m3" and "f8e5m2"
// load, then every rank exits with `unknown data type` at run time.
func TestAudit29NCCLProbeRefusesDataTypesItCannotRun(t *testing.T) {
	for _, dt := range []string{"all", "f8e4m3", "f8e5m2"} {
		_, err := LoadBytes("t.yaml", []byte(minimal+"  - {name: t, tool: nccl_probe, from: a, args: {collective: all_reduce, dataType: "+dt+"}}\n"))
		if err == nil || !strings.Contains(err.Error(), "dataType") {
			t.Errorf("nccl_probe dataType %s: loads (rdmabench-nccl refuses it at run time); err %v", dt, err)
		}
	}
}

// A kube scenario of nccl_probe without cluster.images.nccl is told to use
// an image with nccl-tests, Open MPI and sshd: what the probe exists to do
// without. The hint is the nccl image family's, not the tool's.
func TestAudit29NCCLProbeImageHintIsTheProbes(t *testing.T) {
	text := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: m}
backend: kube
cluster: {image: quay.io/x/tools:1}
pools:
  - {name: gpu, gpus: 2}
tests:
  - {name: ar, tool: nccl_probe, from: gpu, args: {collective: all_reduce}}
`
	_, err := LoadBytes("t.yaml", []byte(text))
	if err == nil {
		t.Skip("no image error")
	}
	for _, wrong := range []string{"nccl-tests", "sshd", "MPI"} {
		if strings.Contains(err.Error(), wrong) {
			t.Errorf("nccl_probe's image error mentions %s: %v", wrong, err)
		}
	}
}
