// Package html writes the HTML pages: a run's report (Write), a
// comparison (WriteCompare) and a history (WriteHistory), each one offline
// file with ECharts inlined from report/assets. It is the only package that
// draws charts (go-echarts builds their options); the tables beside them
// hold the same words as the terminal's (report/text).
package html
