package tool

// GPUCopy is the GPU peer copy (rdmabench-nccl --collective copy): the
// test's from endpoint's GPU READs the to endpoint's GPU of the same host
// with the copy engines, over NVLink or PCIe peer-to-peer. It is the
// bottom of a one-host pair's waterfall: the ceiling UCX's cuda_ipc, NIXL
// and NCCL are held against.
//
// A tool of its own rather than nccl_probe with collective: copy: a
// nccl_probe test is a collective whose ranks are every GPU of from and
// to, meeting through etcd; the copy is one process on one endpoint, a
// pair result (From, To) like the NIXL probe's, directional (decode reads
// prefill), with no NCCL to find. It shares the probe's program and
// nccl-tests' table, so its family and parser are the probe's.
const GPUCopy = "gpu_copy"

var gpuCopy = Spec{Name: GPUCopy, Family: FamilyNCCL, Programs: []string{"rdmabench-nccl"}, Metric: MetricBusBW,
	Args: []Arg{argMinSize, argMaxSize,
		{Key: "stepFactor", Kind: KindInt, Min: 2, Hint: "each size is the previous times this, 2 or more"},
		argIterations, argExtra},
	ArgRules:    []Rule{sizeRange},
	Expect:      []string{"minLineRate", "minBandwidth", "minBusBW", "transport"},
	Directional: true,
	// The copy opens no port; the planner numbers jobs from the probe's.
	DefaultPort: 29500, Source: SourceBundle, ImageFamily: "nccl",
	Install:     "put rdmabench-nccl (rdmabench's bundle) on PATH; the copy needs the CUDA driver (libcuda.so.1) and no NCCL",
	HostInstall: "put rdmabench-nccl (make build: bin/rdmabench-nccl) on PATH; the copy needs the CUDA driver (libcuda.so.1) and no NCCL",
	gpu:         func(Settings) bool { return true }, waterfall: gpuCopyLayer}
