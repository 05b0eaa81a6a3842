package report

import (
	"embed"
	"errors"
	"io/fs"
)

// The ECharts library is embedded at build time from the npm package pinned
// in assets/package-lock.json (`make assets` copies its dist/echarts.min.js
// into assets/dist, which git ignores): the HTML report is one offline file
// and no library code is committed.
//
//go:embed all:assets/dist
var assetFS embed.FS

// ErrEChartsMissing is returned by the HTML renderers when the binary was
// built without the ECharts asset.
var ErrEChartsMissing = errors.New("echarts asset missing: run make assets")

// echartsJS returns the embedded echarts.min.js.
func echartsJS() (string, error) {
	b, err := fs.ReadFile(assetFS, "assets/dist/echarts.min.js")
	if err != nil || len(b) == 0 {
		return "", ErrEChartsMissing
	}
	return string(b), nil
}
