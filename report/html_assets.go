package report

import (
	"embed"
	"io/fs"
)

// The ECharts library is embedded at build time from the npm package pinned
// in assets/package-lock.json (`make assets` copies its dist/echarts.min.js
// into assets/dist, which git ignores): the HTML report is one offline file
// and no library code is committed. A binary built without that step (`go
// install`, `go build`) still writes every page, with its tables, and a
// note where each chart would be.
//
//go:embed all:assets/dist
var assetFS embed.FS

// NoChartsNote stands where a chart would be in a page written by a binary
// built without the ECharts asset.
const NoChartsNote = "Chart not drawn: this rdmabench was built without ECharts (a release binary or `make build` includes it); the tables hold every figure."

// echartsData reads the embedded echarts.min.js (nil when absent); a
// variable so that tests render as a binary built without it.
var echartsData = func() []byte {
	b, _ := fs.ReadFile(assetFS, "assets/dist/echarts.min.js")
	return b
}

// ChartsIncluded reports whether this binary can draw charts (rdmabench
// version says so).
func ChartsIncluded() bool { return len(echartsData()) > 0 }

// echartsJS returns the embedded library, or "" when the binary has none:
// the templates then leave the charts out and write NoChartsNote.
func echartsJS() string { return string(echartsData()) }
