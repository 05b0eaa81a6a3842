package scenarios

import (
	"reflect"

	"github.com/rdmabench/rdmabench/tool"
)

// Defaults the loader applies, in one place, so that what a scenario means
// is visible in code (and in the rendered scenario saved with each run).
// The planner and the tool table (runner/tools) read them from here too, for
// scenarios built in code that never went through ApplyDefaults.
const (
	DefaultNamespace    = "rdmabench"
	DefaultAntiAffinity = "kubernetes.io/hostname"
	DefaultCapability   = "IPC_LOCK"
	DefaultReplicas     = 1
	DefaultRepetitions  = 1
	DefaultUCXTest      = tool.DefaultUCXTest
	DefaultNixlBackend  = tool.DefaultNixlBackend
	DefaultNixlOp       = tool.DefaultNixlOp
	// DefaultNixlRequestOp is a perRequest test's op: vLLM's NIXL
	// connector has decode pull the KV from prefill (a READ).
	DefaultNixlRequestOp = tool.DefaultNixlRequestOp
	DefaultNixlSeg       = tool.DefaultNixlSeg
	// DefaultGPUResource is what pool.gpus requests when the resources
	// name no GPU resource.
	DefaultGPUResource = "nvidia.com/gpu"
)

// ReplicaCount is a pool's endpoint count: replicas, else the default.
func (p *Pool) ReplicaCount() int {
	if p.Replicas == nil {
		return DefaultReplicas
	}
	return *p.Replicas
}

// NodeShare is how many of the pool's endpoints share a node: perNode,
// else 1 (one per node).
func (p *Pool) NodeShare() int {
	if p.PerNode == nil {
		return 1
	}
	return *p.PerNode
}

// RepetitionCount is how often a test runs: its own repetitions, else the
// scenario's defaults, else the default.
func (t *Test) RepetitionCount(d *Defaults) int {
	switch {
	case t.Repetitions != nil && *t.Repetitions > 0:
		return *t.Repetitions
	case d != nil && d.Repetitions != nil && *d.Repetitions > 0:
		return *d.Repetitions
	}
	return DefaultRepetitions
}

// ApplyDefaults fills every field the user left unset with its default.
// It runs after Decode and before Validate, never fails and never panics,
// whatever the document holds (validation judges the result). Fields the
// user wrote are left alone; Positions still tells written from defaulted.
func ApplyDefaults(s *Scenario) {
	if s.Backend == "" {
		s.Backend = BackendLocal
	}
	if s.Backend == BackendKube {
		if s.Cluster == nil {
			s.Cluster = &Cluster{}
		}
		defaultCluster(s.Cluster)
	}
	if s.Defaults.Repetitions == nil {
		s.Defaults.Repetitions = intPtr(DefaultRepetitions)
	}
	for i := range s.Pools {
		if s.Pools[i].Replicas == nil {
			s.Pools[i].Replicas = intPtr(DefaultReplicas)
		}
	}
	for i := range s.Tests {
		defaultTest(&s.Tests[i], &s.Defaults)
	}
}

func defaultCluster(c *Cluster) {
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.AntiAffinity == "" {
		c.AntiAffinity = DefaultAntiAffinity
	}
	if c.Capabilities == nil {
		c.Capabilities = []string{DefaultCapability}
	}
	if c.CPU == "" {
		c.CPU = DefaultCPU
	}
	if c.Memory == "" {
		c.Memory = DefaultMemory
	}
	if c.ShmSize == "" {
		c.ShmSize = DefaultShmSize
	}
}

// defaultTest fills a test's defaults. The test timeout stays unset unless
// defaults.timeout gives one: the planner derives it from the arguments.
func defaultTest(t *Test, d *Defaults) {
	resolveAlias(t)
	if t.Pattern == "" && !collective(t.Tool) {
		t.Pattern = PatternPairwise
	}
	if t.To == "" && !collective(t.Tool) {
		t.To = t.From
	}
	if t.Repetitions == nil && d.Repetitions != nil {
		t.Repetitions = intPtr(*d.Repetitions)
	}
	if !t.Timeout.IsSet() {
		t.Timeout = d.Timeout
	}
	if t.Requires == "" {
		t.Requires = defaultRequires(t)
	}
	defaultArgs(t)
}

// resolveAlias turns a program name written as the tool (`tool:
// alltoall_perf`) into the tool and the argument it implies (`tool: nccl`,
// `args.collective: alltoall`): the name people know is accepted.
func resolveAlias(t *Test) {
	name, key, value, ok := tool.Alias(t.Tool)
	if !ok {
		return
	}
	t.Tool = name
	if f := argField(&t.Args, key); f.IsValid() && f.Kind() == reflect.String && f.String() == "" {
		f.SetString(value)
	}
}

// defaultRequires, from the tool's description: RDMA tools need a device;
// a tool that needs none (iperf3), or whose transport the test chose as
// TCP (ucx_perftest, nixlbench over a TCP UCX_TLS), runs on any host. A
// collective is left unset: the planner decides from placement, since
// ranks on one host need no NIC (NVLink, PCIe peer-to-peer, shared memory)
// and ranks on several do.
func defaultRequires(t *Test) string {
	spec, ok := tool.Lookup(t.Tool)
	switch {
	case !ok:
		return RequiresRDMA // refused by validation, which names the tool
	case spec.Collective:
		return ""
	case !spec.NeedsRDMA, spec.SelectsTransport && tool.TransportsAreTCP(t.Args.Transports):
		return RequiresTCP
	}
	return RequiresRDMA
}

// defaultArgs makes the tools' own defaults explicit where the report
// shows them (NIXL backend, op and memory; the UCX test): each key of the
// tool's argument schema with a default, left empty by the test.
func defaultArgs(t *Test) {
	spec, ok := tool.Lookup(t.Tool)
	if !ok {
		return
	}
	a := &t.Args
	vals := argValues(nil, a, func(string) bool { return false })
	for i := range spec.Args {
		f := argField(a, spec.Args[i].Key)
		if spec.Args[i].Default == nil || !f.IsValid() || f.Kind() != reflect.String || f.String() != "" {
			continue
		}
		f.SetString(spec.Args[i].Default(vals))
	}
}

func intPtr(i int) *int { return &i }
