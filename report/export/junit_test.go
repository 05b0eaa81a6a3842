package export

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/compare"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

func TestJUnitGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, fixture.Full(1)); err != nil {
		t.Fatal(err)
	}
	fixture.Golden(t, "junit.xml", buf.Bytes())
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	// One suite per test, counts that add up to the report's verdicts.
	if len(doc.Suites) != 9 || doc.Tests != 67 || doc.Failures != 3 || doc.Errors != 1 || doc.Skipped != 1 {
		t.Fatalf("suites %d tests %d failures %d errors %d skipped %d", len(doc.Suites), doc.Tests, doc.Failures, doc.Errors, doc.Skipped)
	}
	checkJUnitCounts(t, buf.Bytes())
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
	fixture.Golden(t, "compare-junit.xml", buf.Bytes())
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Failures != 24 || doc.Skipped != 0 {
		t.Fatalf("failures %d skipped %d, want 23 regressions and 1 missing result (a failure)", doc.Failures, doc.Skipped)
	}
	checkJUnitCounts(t, buf.Bytes())
}

// checkJUnitCounts re-reads JUnit XML and checks that every count attribute
// equals the elements it counts, per suite and in total.
func checkJUnitCounts(t *testing.T, data []byte) {
	t.Helper()
	var doc junitSuites
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("not well-formed XML: %v", err)
	}
	var tests, failures, errs, skipped int
	for _, s := range doc.Suites {
		var f, e, sk int
		for _, c := range s.Cases {
			f, e, sk = f+btoi(c.Failure != nil), e+btoi(c.Error != nil), sk+btoi(c.Skipped != nil)
		}
		if s.Tests != len(s.Cases) || s.Failures != f || s.Errors != e || s.Skipped != sk {
			t.Errorf("suite %s says %d/%d/%d/%d, holds %d/%d/%d/%d (tests/failures/errors/skipped)",
				s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, len(s.Cases), f, e, sk)
		}
		tests, failures, errs, skipped = tests+len(s.Cases), failures+f, errs+e, skipped+sk
	}
	if doc.Tests != tests || doc.Failures != failures || doc.Errors != errs || doc.Skipped != skipped {
		t.Errorf("testsuites says %d/%d/%d/%d, holds %d/%d/%d/%d", doc.Tests, doc.Failures, doc.Errors, doc.Skipped, tests, failures, errs, skipped)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Tool output quoted in a reason may hold control characters (a coloured
// log's ESC, a NUL) and "]]>": the XML stays well-formed.
func TestJUnitControlCharacters(t *testing.T) {
	const reason = "client: \x1b[31mERROR\x1b[0m \x00 ]]> gone \xff"
	base, cur := fixture.Full(1), fixture.Full(1)
	for i := range cur.Results {
		if cur.Results[i].Test == "read-bw" {
			cur.Results[i].Samples, cur.Results[i].Stats, cur.Results[i].Repetitions = nil, nil, nil
			cur.Results[i].Verdict, cur.Results[i].Reason = schema.VerdictError, reason
			cur.Results[i].Transport = &parsers.Transport{Kind: "tcp", Detail: "tcp/\x1b[1meth0"}
		}
	}
	var a, b bytes.Buffer
	if err := WriteJUnit(&a, cur); err != nil {
		t.Fatal(err)
	}
	if err := WriteCompareJUnit(&b, compare.Compare(base, cur, compare.Options{ThresholdPct: 5})); err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{a.Bytes(), b.Bytes()} {
		checkJUnitCounts(t, data)
		if !bytes.Contains(data, []byte("\uFFFD[31mERROR\uFFFD[0m \uFFFD ]]")) {
			t.Errorf("control characters not replaced:\n%s", data)
		}
	}
}

// A low pair's rerun is its own test case, not a second one of the same name.
func TestJUnitRetestName(t *testing.T) {
	r := schema.Result{Test: "a2a", Tool: "ib_write_bw", From: "ep-0", To: "ep-1", Verdict: schema.VerdictFail, Retest: 2}
	if c := resultCase(&r); !strings.HasSuffix(c.Name, "(retest 2)") {
		t.Fatalf("name %q", c.Name)
	}
}

// compareFixture compares the fixtures' baseline and current runs.
func compareFixture(t *testing.T) *compare.Comparison {
	t.Helper()
	base, cur := fixture.BaseAndCurrent()
	return compare.Compare(base, cur, compare.Options{ThresholdPct: 5})
}
