// Package tool describes every benchmark tool rdmabench drives, once, at
// the bottom of the import graph: the scenario loader, the parsers, the
// planner, the runner, the judge and the report all read it, and keep no
// list of tools of their own. The branches on a family left outside it
// are the parsers' own output layouts and reading reports of older
// versions: a new tool adds facts here rather than more of those.
//
// A tool's description is one file here (perftest.go, nixlbench.go …): its
// name and family, the programs whose output its parser reads, its
// argument schema (each key's kind, default, allowed values and checks:
// args.go), the expectations a test of it may write, what it needs (an RDMA
// device, a GPU), its headline metric (and so its display unit), its
// rendezvous port, where its binary comes from and how to install it. The
// decisions made from those facts ("needs a GPU", "is a latency test",
// "UCX_TLS names only TCP", "runs only over RDMA") are made once, in
// decide.go.
//
// What needs the scenario's types or the endpoints (the command builder,
// readiness, placeholders, timeouts) stays with the runner, in
// runner/tools/<tool>.go, keyed by the name declared here;
// docs/development/adding-a-tool.md lists every piece of a new tool.
package tool
