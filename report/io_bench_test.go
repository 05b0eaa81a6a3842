package report

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkReportJSON64 is Save + Load of the same report.json.
func BenchmarkReportJSON64(b *testing.B) { benchReportJSON(b, bigMatrixReport(), true) }

// BenchmarkReportJSON256 is Save + Load of the 256-endpoint report.json.
func BenchmarkReportJSON256(b *testing.B) { benchReportJSON(b, matrix256(b), true) }

// benchReportJSON is Save, and Load after it when load is set.
func benchReportJSON(b *testing.B, r *Report, load bool) {
	path := filepath.Join(b.TempDir(), "report.json")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := Save(path, r); err != nil {
			b.Fatal(err)
		}
		if !load {
			continue
		}
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
	st, _ := os.Stat(path)
	b.ReportMetric(float64(st.Size())/1e6, "MB-json")
}

// BenchmarkReportSave256 is Save alone: results are encoded one at a time,
// so what it allocates is the file's size in small pieces, never the file.
func BenchmarkReportSave256(b *testing.B) { benchReportJSON(b, matrix256(b), false) }
