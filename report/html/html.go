package html

import (
	_ "embed"
	"html/template"
	"io"
	"strings"

	"github.com/rdmabench/rdmabench/report/schema"
)

//go:embed html.tmpl
var htmlTemplate string

//go:embed compare.tmpl
var compareTemplate string

//go:embed html.css
var htmlCSS string

var templateFuncs = template.FuncMap{
	"js":       func(s string) template.JS { return template.JS(s) },
	"css":      func() template.CSS { return template.CSS(htmlCSS) },
	"lower":    strings.ToLower,
	"nocharts": func() string { return NoChartsNote },
	"upper":    strings.ToUpper,
}

var pageTemplate = template.Must(template.New("report").Funcs(templateFuncs).Parse(htmlTemplate))

var comparePageTemplate = template.Must(template.New("compare").Funcs(templateFuncs).Parse(compareTemplate))

// Write writes r as one self-contained HTML file: ECharts is inlined
// from the embedded asset, so the file opens offline and makes no network
// request. A binary built without `make assets` writes the page without
// charts (NoChartsNote where each would be).
func Write(w io.Writer, r *schema.Report, o Options) error {
	js := echartsJS()
	p := buildPage(r, o)
	p.ECharts = js
	return pageTemplate.Execute(w, p)
}
