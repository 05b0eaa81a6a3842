package tools

import (
	"strings"

	"github.com/rdmabench/rdmabench/scenarios"
)

// Probe checks a tool's build on an endpoint before any test runs: what a
// missing binary would not say (a nixlbench built without its ETCD
// runtime starts, then fails every leg). Preflight runs Script through the
// backend and Judge reads its output; a failing probe skips only the tests
// that need it, with Fix in the reason.
type Probe struct {
	// ID names the check in the report ("nixlbench-etcd").
	ID string
	// Script is a short POSIX sh script; its stdout is judged.
	Script string
	// Judge reads Script's output: pass, or not with what was seen and
	// how to fix it; unknown is a warning (the probe could not tell).
	Judge func(out string) (status ProbeStatus, evidence, fix string)
	// Backend scopes the probe to the legs of one NIXL backend (its
	// plugin): a missing UCCL plugin skips the UCCL legs of a test, not
	// its UCX ones. "" for every leg.
	Backend string
}

// ProbeStatus is a probe's verdict.
type ProbeStatus int

// Probe verdicts.
const (
	ProbePass ProbeStatus = iota
	ProbeFail
	ProbeUnknown
)

// ProbesOf lists the probes a test of tool needs on its endpoints (none
// when the scenario is not known).
func ProbesOf(t *scenarios.Test, tool string) []Probe {
	spec, ok := Lookup(tool)
	if !ok || t == nil {
		return nil
	}
	probes := []Probe{BinaryProbe(BinaryOf(t, tool), spec.Install)}
	if spec.probes != nil {
		probes = append(probes, spec.probes(t)...)
	}
	if AsksGPUInitiated(t) {
		probes = append(probes, GPUInitiatedProbe())
	}
	return probes
}

// probeField is the value of a "key=value" line of a probe's output.
func probeField(out, key string) string {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+"="); ok {
			return v
		}
	}
	return ""
}
