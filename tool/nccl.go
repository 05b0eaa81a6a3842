package tool

import (
	"slices"
	"strings"
)

// NCCL is nccl-tests: one of its collectives (args.collective) per test.
const NCCL = "nccl"

// Collectives are the nccl-tests operations a test may name; each runs the
// binary <collective>_perf.
var Collectives = []string{"all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv", "broadcast"}

// NCCLProgram is the nccl-tests binary of a collective.
func NCCLProgram(collective string) string { return collective + "_perf" }

// extraNCCL are nccl-tests programs whose output the parser reads though no
// test runs them.
var extraNCCL = []string{"alltoallv_perf", "reduce_perf", "gather_perf", "scatter_perf", "hypercube_perf"}

func ncclPrograms() []string {
	out := make([]string, len(Collectives))
	for i, c := range Collectives {
		out[i] = NCCLProgram(c)
	}
	return out
}

// NCCLDataTypes are nccl-tests -d values.
var NCCLDataTypes = []string{"int8", "uint8", "int32", "uint32", "int64", "uint64",
	"half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2", "all"}

var nccl = Spec{Name: NCCL, Family: FamilyNCCL, Programs: ncclPrograms(), Metric: MetricBusBW,
	Args: collectiveArgs(NCCLDataTypes), ArgRules: []Rule{sizeRange},
	Expect:     []string{"minLineRate", "minBandwidth", "minBusBW", "transport", "affinity"},
	Collective: true, MPI: true, DefaultPort: 29500, Source: SourceServing, ImageFamily: "nccl",
	Install:     "use an image with nccl-tests on PATH (built with MPI=1 for several endpoints), such as your serving image",
	HostInstall: "build nccl-tests (github.com/NVIDIA/nccl-tests: make MPI=1 for several endpoints) and put its build folder on PATH",
	gpu:         func(Settings) bool { return true }, waterfall: ncclLayer}

// collectiveArgs are the arguments of nccl-tests and of the NCCL probe,
// which takes its command line: one collective, a size sweep, and the
// data types the tool knows.
func collectiveArgs(dataTypes []string) []Arg {
	return []Arg{
		{Key: "collective", Kind: KindString, Always: true, Required: true, OneOf: Collectives, What: "collectives"},
		argMinSize, argMaxSize,
		{Key: "stepFactor", Kind: KindInt, Min: 2, Hint: "nccl-tests -f: each size is the previous times this, 2 or more"},
		argIterations,
		{Key: "dataType", Kind: KindString, OneOf: dataTypes, What: "data types"},
		argExtra,
	}
}

// Alias resolves a program name a test may write as its tool (the name
// people know: all_reduce_perf) to the tool and the argument it implies
// (nccl, collective: all_reduce); ok false for any other name.
func Alias(name string) (toolName, key, value string, ok bool) {
	c, found := strings.CutSuffix(name, "_perf")
	if !found || !slices.Contains(Collectives, c) {
		return "", "", "", false
	}
	return NCCL, "collective", c, true
}
