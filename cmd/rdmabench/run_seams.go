package main

import (
	"io"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/report/text"
	"github.com/rdmabench/rdmabench/runner/plan"
	"github.com/rdmabench/rdmabench/scenarios"
)

// compilePlan is the planner with what a run knows about this machine:
// whether endpoints have RDMA devices (tests needing one are skipped with
// the reason) and the port offset. Binaries are not pre-checked: a missing
// one is an error result that names it and says how to install it.
func compilePlan(sc *scenarios.Scenario, opts plan.CompileOptions) (*plan.Plan, error) {
	return plan.Compile(sc, opts)
}

// writeSummary prints the summary table of the report (report package).
func writeSummary(w io.Writer, r *schema.Report) error { return text.WriteSummaryTable(w, r) }
