package tool

// NCCLProbe is rdmabench's own NCCL probe (cmd/rdmabench-nccl): the
// collectives of nccl-tests, measured with the NCCL library the serving
// image holds (found as vLLM finds it), one process per GPU, ranks
// rendezvousing through the run's etcd; no nccl-tests, MPI or sshd.
const NCCLProbe = "nccl_probe"

// ncclProbeDataTypes are the -d values rdmabench-nccl takes (probe/nccl:
// NCCL's types up to bfloat16; no fp8, no "all").
var ncclProbeDataTypes = []string{"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16"}

var ncclProbe = Spec{Name: NCCLProbe, Family: FamilyNCCL, Programs: []string{"rdmabench-nccl"}, Metric: MetricBusBW,
	Args: collectiveArgs(ncclProbeDataTypes), ArgRules: []Rule{sizeRange},
	Expect:     []string{"minLineRate", "minBandwidth", "minBusBW", "transport", "affinity"},
	Collective: true, DefaultPort: 29500, Source: SourceBundle, ImageFamily: "nccl",
	Install:     "use an image with NCCL (the libnccl.so.2 torch loads, or VLLM_NCCL_SO_PATH) and rdmabench-nccl on PATH (rdmabench's bundle)",
	HostInstall: "install NCCL (libnccl2) and put rdmabench-nccl (make build: bin/rdmabench-nccl) on PATH",
	gpu:         func(Settings) bool { return true }, waterfall: ncclLayer}
