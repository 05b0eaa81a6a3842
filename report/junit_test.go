package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

func TestJUnitGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, fullReport(1)); err != nil {
		t.Fatal(err)
	}
	golden(t, "junit.xml", buf.Bytes())
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	// One suite per test, counts that add up to the report's verdicts.
	if len(doc.Suites) != 9 || doc.Tests != 67 || doc.Failures != 3 || doc.Errors != 1 || doc.Skipped != 1 {
		t.Fatalf("suites %d tests %d failures %d errors %d skipped %d", len(doc.Suites), doc.Tests, doc.Failures, doc.Errors, doc.Skipped)
	}
	var tcp *junitCase
	for _, s := range doc.Suites {
		for i, c := range s.Cases {
			if s.Name == "ucx-put-bw" {
				tcp = &s.Cases[i]
			}
			_ = c
		}
	}
	if tcp == nil || tcp.Failure == nil || tcp.Failure.Type != "tcp_fallback" ||
		!strings.Contains(tcp.Failure.Text, "transport: TCP fallback (tcp/eth0)") || !strings.Contains(tcp.Failure.Message, "ran over TCP") {
		t.Fatalf("TCP fallback case: %+v", tcp)
	}
}

func TestCompareJUnit(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCompareJUnit(&buf, compareFixture(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare-junit.xml", buf.Bytes())
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Failures != 23 || doc.Skipped != 1 {
		t.Fatalf("failures %d skipped %d, want 23 regressions and 1 missing", doc.Failures, doc.Skipped)
	}
}
