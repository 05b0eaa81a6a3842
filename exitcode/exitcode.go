// Package exitcode is every exit code rdmabench returns, in one place.
// Library errors carry theirs (an ExitCode method returning one of these);
// the command maps any error to its code (cmd/rdmabench exitCodeFor). The
// table of docs/reference/exit-codes.md is checked against Table.
package exitcode

// The exit codes.
const (
	// OK: every test met its expectations.
	OK = 0
	// Shortfall: a finding about the fabric, not a failure of the harness.
	Shortfall = 1
	// Usage: bad flags, arguments or scenario.
	Usage = 2
	// Harness: the harness, a tool or the infrastructure failed.
	Harness = 3
	// NoBaseline: compare --baseline auto found no run that qualifies.
	NoBaseline = 4
	// NothingMeasured: the run finished without measuring anything (every
	// test skipped, or none planned): a nightly job that measured nothing
	// must not look green. `run --allow-empty` accepts it (exit 0).
	NothingMeasured = 5
	// Interrupted: Ctrl-C or SIGTERM (the shell's code for SIGINT); every
	// finished result is kept.
	Interrupted = 130
)

// Meaning is one row of the exit-code table.
type Meaning struct {
	Code int
	Text string
}

// Table is every code with what it means, as docs/reference/exit-codes.md
// shows it.
var Table = []Meaning{
	{OK, "every test met its expectations"},
	{Shortfall, "some test fell short of its expectation, or its traffic did not cross the device it names (verdict `invalid`), or `compare` found a regression, or `preflight` found a check that keeps a planned test from running"},
	{Usage, "usage, scenario or configuration error (every scenario error names FILE:LINE:COL; a missing or unreadable kubeconfig is one too)"},
	{Harness, "the harness or the infrastructure failed"},
	{NoBaseline, "`compare --baseline auto` found no run that qualifies as a baseline (see [the automatic baseline](../user-guide/nightly-ci.md#automatic-baseline))"},
	{NothingMeasured, "the run measured nothing: every test was skipped (each with its reason in the report and the JUnit file) or none was planned; `run --allow-empty` accepts that with 0"},
	{Interrupted, "interrupted (Ctrl-C); everything measured so far is kept"},
}
