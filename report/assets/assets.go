// Package assets embeds the ECharts library the HTML pages inline, from the
// npm package pinned in package-lock.json: `make assets` copies its
// dist/echarts.min.js into dist/, which git ignores, so no library code is
// committed. A binary built without that step (`go install`, `go build`)
// embeds none, and the pages say so where each chart would be.
package assets

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// ECharts is the embedded echarts.min.js; nil when the binary was built
// without it.
func ECharts() []byte {
	b, _ := fs.ReadFile(dist, "dist/echarts.min.js")
	return b
}
