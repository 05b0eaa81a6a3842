package schema_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// BenchmarkReportJSON64 is Save + Load of the same report.json.
func BenchmarkReportJSON64(b *testing.B) { benchReportJSON(b, fixture.BigMatrix(), true) }

// BenchmarkReportJSON256 is Save + Load of the 256-endpoint report.json.
func BenchmarkReportJSON256(b *testing.B) { benchReportJSON(b, fixture.Matrix256(b), true) }

// benchReportJSON is Save, and Load after it when load is set.
func benchReportJSON(b *testing.B, r *schema.Report, load bool) {
	path := filepath.Join(b.TempDir(), "report.json")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := schema.Save(path, r); err != nil {
			b.Fatal(err)
		}
		if !load {
			continue
		}
		if _, err := schema.Load(path); err != nil {
			b.Fatal(err)
		}
	}
	st, _ := os.Stat(path)
	b.ReportMetric(float64(st.Size())/1e6, "MB-json")
}

// BenchmarkReportSave256 is Save alone: results are encoded one at a time,
// so what it allocates is the file's size in small pieces, never the file.
func BenchmarkReportSave256(b *testing.B) { benchReportJSON(b, fixture.Matrix256(b), false) }
