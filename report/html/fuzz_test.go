package html

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmabench/rdmabench/report/compare"
	"github.com/rdmabench/rdmabench/report/export"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/report/text"
)

// FuzzLoadAndRender: no report.json, however broken, may panic Load or any
// renderer of what Load accepted.
func FuzzLoadAndRender(f *testing.F) {
	// A small real report: one of each kind of result (the full fixtures are
	// too large for the fuzzer to mutate usefully).
	small := fixture.Full(1)
	var keep []schema.Result
	seen := map[string]bool{}
	for _, r := range small.Results {
		if !seen[r.Test] {
			seen[r.Test] = true
			r.Repetitions = r.Repetitions[:min(len(r.Repetitions), 2)]
			keep = append(keep, r)
		}
	}
	small.Results = keep
	seedPath := filepath.Join(f.TempDir(), "seed.json")
	if err := schema.Save(seedPath, small); err != nil {
		f.Fatal(err)
	}
	seed, _ := os.ReadFile(seedPath)
	f.Add(seed)
	f.Add([]byte(`{"schemaVersion":"rdmabench.io/report/v1","results":[{"test":"t","tool":"alltoall_perf","verdict":"pass","samples":[{"bytes":-1,"busbw_bps":0}],"stats":[{"bytes":-1,"metric":"busbw_bps","n":1}]}]}`))
	f.Add([]byte(`{"schemaVersion":"rdmabench.io/report/v1","results":[{"from":"a","to":"b","efficiencyPct":-5,"samples":[{"bytes":8}]},{"from":"b","to":"c"},{"from":"c","to":"a","samples":[{"bytes":8,"lat_avg_us":1}]}]}`))
	f.Add([]byte("{\"schemaVersion\":\"rdmabench.io/report/v1\",\"results\":[{\"test\":\"t\",\"verdict\":\"error\",\"reason\":\"\\u001b[31m\\u0000 ]]>\",\"transport\":{\"kind\":\"tcp\",\"detail\":\"\\u001b[1meth0\"}}]}"))
	f.Add([]byte(`{"schemaVersion":"rdmabench.io/report/v1","results":[{"repetitions":[{"ok":true,"samples":[{"bytes":1,"bw_avg_bps":1}]},{"ok":true,"samples":[{"bytes":1,"bw_avg_bps":3}]}]}]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "report.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := schema.Load(p)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		_ = text.WriteSummaryTable(&buf, r)
		c := compare.Compare(r, r, compare.Options{ThresholdPct: 5})
		_ = compare.WriteTable(&buf, c)
		// Whatever the strings hold, JUnit stays XML a CI server can read.
		for _, write := range []func(*bytes.Buffer) error{
			func(b *bytes.Buffer) error { return export.WriteJUnit(b, r) },
			func(b *bytes.Buffer) error { return export.WriteCompareJUnit(b, c) },
		} {
			var x bytes.Buffer
			if err := write(&x); err == nil {
				var doc struct { // every element is read, known to it or not
					XMLName xml.Name `xml:"testsuites"`
				}
				if err := xml.Unmarshal(x.Bytes(), &doc); err != nil {
					t.Fatalf("JUnit is not well-formed: %v\n%s", err, x.Bytes())
				}
			}
		}
		_ = buildPage(r, Options{})
		_, _ = changeChart(c)
	})
}
