package history

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
)

func TestHistoryTable(t *testing.T) {
	h := Build(fixture.Nightly(20))
	var buf bytes.Buffer
	if err := WriteTable(&buf, h, MaxTableRows); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "rule:") {
		t.Errorf("the rule is printed without --explain")
	}
	if err := WriteRule(&buf, h); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"20 runs from 2026-01-01 (nightly-00) to 2026-01-20 (nightly-19), 3 series, 2 stepped down",
		`environment changed at nightly-12 (2026-01-13): nic.firmware was "28.43.1014", now "28.44.1000"`,
		"│ write-bw WRITE │ a-0 → b-0 │         │ 1M   │ 20   │ 303.00 Gb/s │ 393.00 Gb/s │ 390.00 Gb/s │ ±0.5% │ 2026-01-13 (nightly-12) -23.2%: 392.00 Gb/s → 301.00 Gb/s │",
		"│ send-lat       │ a-0 → b-0 │         │ 2B   │ 20   │ 2.61 µs     │ 1.90 µs     │ 1.92 µs     │ ±0.5% │ 2026-01-16 (nightly-15) +36.6%: 1.91 µs → 2.61 µs         │",
		"rule: noise = 1.4826",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// The stepped-down series come first (the latency, 36.6% worse, before
	// the bandwidth, 23.2% worse), the steady one last.
	if i, j, k := strings.Index(out, "│ 2B "), strings.Index(out, "│ 1M "), strings.Index(out, "│ 64K "); i < 0 || j < i || k < j {
		t.Errorf("order:\n%s", out)
	}
	buf.Reset()
	_ = WriteTable(&buf, h, 1)
	if !strings.Contains(buf.String(), "… 2 more series not shown") {
		t.Errorf("no fold line:\n%s", buf.String())
	}
}
