package html

import "github.com/rdmabench/rdmabench/report/assets"

// The ECharts library is inlined from report/assets, embedded at build time
// from the npm package pinned there: the HTML report is one offline file. A
// binary built without `make assets` (`go install`, `go build`) still
// writes every page, with its tables, and a note where each chart would be.

// NoChartsNote stands where a chart would be in a page written by a binary
// built without the ECharts asset.
const NoChartsNote = "Chart not drawn: this rdmabench was built without ECharts (a release binary or `make build` includes it); the tables hold every figure."

// echartsData reads the embedded echarts.min.js (nil when absent); a
// variable so that tests render as a binary built without it.
var echartsData = assets.ECharts

// ChartsIncluded reports whether this binary can draw charts (rdmabench
// version says so).
func ChartsIncluded() bool { return len(echartsData()) > 0 }

// echartsJS returns the embedded library, or "" when the binary has none:
// the templates then leave the charts out and write NoChartsNote.
func echartsJS() string { return string(echartsData()) }
