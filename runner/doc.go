// Package runner is the executor: it runs a compiled plan (runner/plan) on a
// backend, round by round, with bounded waits and kills, writes every raw
// output and result the moment a leg ends, and hands each leg's repetitions
// to the judge (runner/judge) for its verdict. It is the only part of the
// runner that touches processes, pods and files; imports go one way
// (runner → plan, judge), which TestPlannerAndJudgeStayPure keeps.
package runner
