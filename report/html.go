package report

import (
	_ "embed"
	"html/template"
	"io"
	"strings"
)

//go:embed html.tmpl
var htmlTemplate string

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"js":    func(s string) template.JS { return template.JS(s) },
	"lower": strings.ToLower,
	"upper": strings.ToUpper,
}).Parse(htmlTemplate))

// WriteHTML writes r as one self-contained HTML file: ECharts is inlined
// from the embedded asset, so the file opens offline and makes no network
// request. It fails with ErrEChartsMissing when the binary was built
// without `make assets`.
func WriteHTML(w io.Writer, r *Report, o HTMLOptions) error {
	js, err := echartsJS()
	if err != nil {
		return err
	}
	p := buildPage(r, o)
	p.ECharts = js
	return pageTemplate.Execute(w, p)
}
