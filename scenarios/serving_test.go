package scenarios

import (
	"strings"
	"testing"
)

// A field beside a preset overrides that field only: kvHeads alone keeps
// the preset's headDim (it used to zero it, and the KV budget with it).
func TestServingResolvedOverridesOneField(t *testing.T) {
	r := (&Serving{Model: "llama-3.1-70b", KVHeads: 4}).Resolved()
	if r.Layers != 80 || r.KVHeads != 4 || r.HeadDim != 128 || r.LatentDim != 0 {
		t.Fatalf("llama-3.1-70b + kvHeads 4: %+v", r)
	}
	r = (&Serving{Model: "deepseek-v3", KVHeads: 8, HeadDim: 128}).Resolved()
	if r.Layers != 61 || r.KVHeads != 8 || r.HeadDim != 128 || r.LatentDim != 0 {
		t.Fatalf("deepseek-v3 as GQA: %+v", r)
	}
	// An MLA preset with kvHeads alone has no headDim: the shape is
	// incomplete, and validation says so.
	r = (&Serving{Model: "deepseek-v3", KVHeads: 8}).Resolved()
	if r.LatentDim != 0 || r.HeadDim != 0 {
		t.Fatalf("deepseek-v3 + kvHeads: %+v", r)
	}
}

func TestServingPresetOverrideIncomplete(t *testing.T) {
	y := `apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata:
  name: t
pools:
  - name: ep
    replicas: 2
tests:
  - name: bw
    tool: iperf3
    from: ep
serving:
  model: deepseek-v3
  kvHeads: 8
`
	_, err := LoadBytes("s.yaml", []byte(y))
	if err == nil || !strings.Contains(err.Error(), "s.yaml:12:1") || !strings.Contains(err.Error(), "incomplete") {
		t.Fatalf("want an incomplete-shape error at 12:1, got %v", err)
	}
}
