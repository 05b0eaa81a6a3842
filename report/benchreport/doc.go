// Package benchreport writes a run as a partial Benchmark Report v0.2, the
// report format llm-d-benchmark defines and its harnesses (inference-perf,
// guidellm, vllm-benchmark) are converted to: the schema's version "0.2"
// (llm-d-benchmark, llmdbenchmark/analysis/benchmark_report/
// br_v0_2_json_schema.json). A serving benchmark's report says what TTFT and
// TPOT were; this partial says what the fabric under it gave, so that the two
// merge into one report (yq's deep merge, the serving report last: its run
// wins, the stacks append).
//
// The schema forbids fields it does not name, except in three places: a
// generic stack component's standardized section, a component's native
// config, and results.observability (which its authors keep open for
// metrics not yet formalised). The fabric goes there: a generic component
// "rdmabench-fabric" in scenario.stack (tool, version, backend, nodes, line
// rate; the scenario's hash as its cfg_id) and its measurements in
// results.observability.rdma_fabric, a section of ours with its own strict
// schema (FabricSchemaVersion). The types are ours, written from the
// schema's rules; none of llm-d-benchmark's code is copied.
package benchreport
