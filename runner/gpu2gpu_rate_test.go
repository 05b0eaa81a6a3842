package runner

import (
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/judge"
)

// TestGPUToGPUTransferIsHeldToNVLink: prefill and decode sharing one
// host's GPUs (each its own) with data that went over cuda_ipc are held to
// the GPUs' NVLink; the same pair moving host memory, or endpoints of
// their own hosts, are not.
func TestGPUToGPUTransferIsHeldToNVLink(t *testing.T) {
	nvlink := &schema.LineRate{Bps: 18 * 26.562e9 * 8, Source: schema.LineRateNVLink, Detail: "NVLink: 18 links"}
	run := func(visible string) *run {
		return &run{
			endpoints: map[string]endpoint.Endpoint{
				"decode-0":  {Name: "decode-0", GPUs: 1, VisibleGPUs: visible},
				"prefill-0": {Name: "prefill-0", GPUs: 1, VisibleGPUs: visible},
			},
			nvlink: map[string]*schema.LineRate{"decode-0": nvlink, "prefill-0": nvlink},
		}
	}
	res := schema.Result{From: "decode-0", To: "prefill-0", Family: "nixl"}
	outs := func(kind string) []judge.Outcome {
		return []judge.Outcome{{OK: true, M: parsers.Measurement{Transport: &parsers.Transport{Kind: kind}}}}
	}
	if lr := run("1,0").legLineRate(res, outs(parsers.TransportP2P)); lr != nvlink {
		t.Errorf("cuda_ipc between the host's GPUs: line rate %+v, want NVLink's", lr)
	}
	if lr := run("1,0").legLineRate(res, outs(parsers.TransportShm)); lr == nvlink {
		t.Errorf("host memory between the same endpoints held to NVLink")
	}
	if lr := run("").legLineRate(res, outs(parsers.TransportP2P)); lr == nvlink {
		t.Errorf("endpoints of their own hosts held to one host's NVLink")
	}
}
