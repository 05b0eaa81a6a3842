// Package docs holds the tests of the documentation tree beside it: every
// relative link and anchor resolves, the README stays a front door, and the
// hand-written references (report.json's fields, the OpenMetrics families)
// name what the code has. The CLI and scenario-key references are generated
// by tests of their own packages (cmd/rdmabench, scenarios).
package docs
