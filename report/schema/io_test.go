package schema_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// fixtureReports are the reports kept under testdata/report for the CLI
// tests, the schema test and the README.
func fixtureReports() map[string]*schema.Report {
	base, cur := fixture.BaseAndCurrent()
	return map[string]*schema.Report{"full.json": fixture.Full(1), "baseline.json": base, "current.json": cur}
}

// TestFixtures writes the fixture reports with -update and checks Save's
// bytes against them otherwise: the report.json round trip golden.
func TestFixtures(t *testing.T) {
	for name, r := range fixtureReports() {
		path := filepath.Join(t.TempDir(), "report.json")
		if err := schema.Save(path, r); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fixture.Golden(t, name, data)
	}
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := fixture.Full(1)
	p1 := filepath.Join(dir, "a.json")
	if err := schema.Save(p1, want); err != nil {
		t.Fatal(err)
	}
	got, err := schema.Load(p1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Load(Save(r)) differs from r")
	}
	p2 := filepath.Join(dir, "b.json")
	if err := schema.Save(p2, got); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(p1)
	b, _ := os.ReadFile(p2)
	if string(a) != string(b) {
		t.Fatal("second Save differs from the first")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		_ = os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	cases := []struct{ path, want string }{
		{write("bad.json", "{not json"), "bad.json: not a report.json"},
		{write("old.json", `{"schemaVersion":"rdmabench.io/report/v0"}`), `schemaVersion "rdmabench.io/report/v0"`},
		{filepath.Join(dir, "absent.json"), "absent.json"},
	}
	for _, c := range cases {
		_, err := schema.Load(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%s) = %v, want error containing %q", c.path, err, c.want)
		}
	}
}

// A report.json of schema v1 (a real soft-RoCE/loopback run, kept as it
// was written) still loads, and every result then carries the family and
// metric v1 readers guessed from its tool and figures.
func TestLoadUpgradesV1(t *testing.T) {
	r, err := schema.Load(filepath.Join(fixture.TestdataDir, "real-loopback.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.SchemaVersion != schema.Version {
		t.Errorf("loaded schemaVersion %q, want %q", r.SchemaVersion, schema.Version)
	}
	want := map[string]struct {
		f parsers.Family
		m parsers.Metric
	}{
		"iperf3":       {parsers.FamilyIperf3, parsers.MetricBandwidth},
		"ucx_perftest": {parsers.FamilyUCXPerftest, parsers.MetricBandwidth},
		"ib_write_bw":  {parsers.FamilyPerftest, parsers.MetricBandwidth},
		"ib_send_lat":  {parsers.FamilyPerftest, parsers.MetricLatency}, // skipped: from its name
		"rping":        {parsers.FamilyRping, parsers.MetricPings},
	}
	seen := 0
	for _, res := range r.Results {
		w, ok := want[res.Tool]
		if !ok {
			t.Errorf("unexpected tool %q in the capture", res.Tool)
			continue
		}
		seen++
		if res.Family != w.f || res.Metric != w.m {
			t.Errorf("%s %s: family %q metric %q, want %q %q", res.Test, res.Tool, res.Family, res.Metric, w.f, w.m)
		}
	}
	if seen == 0 {
		t.Fatal("no results in the v1 capture")
	}
}

// Save streams results one at a time; the file must be what marshalling
// the whole report would write, byte for byte (goldens, history indexes
// and users' diffs depend on it).
func TestSaveStreamsWhatMarshalIndentWrites(t *testing.T) {
	empty := fixture.Full(1)
	empty.Results = []schema.Result{}
	none := fixture.Full(1)
	none.Results = nil
	for name, r := range map[string]*schema.Report{"full": fixture.Full(1), "matrix": fixture.Matrix(6, fixture.Sweep(4<<10, 64<<10)),
		"empty": empty, "nil": none, "trust": fixture.Trust()} {
		want, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "report.json")
		if err := schema.Save(path, r); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, append(want, '\n')) {
			t.Errorf("%s: Save wrote %d bytes, MarshalIndent %d", name, len(got), len(want)+1)
		}
	}
}

// report.json is readable as report.html is (0644), not the temporary
// file's 0600: a web server or a colleague reads the run folder.
func TestSaveIsReadableLikeTheHTML(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	if err := schema.Save(path, fixture.Full(1)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("report.json is %v, want -rw-r--r--", st.Mode().Perm())
	}
}
