// Package history reads every run under some folders (their report.json,
// or the history.idx written beside it) and follows each result over them:
// one Series per result and size, its noise and the run where it stepped
// down. The automatic baseline is chosen among the same runs
// (PickBaseline, PickSeriesBaseline). It matches results as package
// compare does, so that a step here is the regression compare reports.
package history
