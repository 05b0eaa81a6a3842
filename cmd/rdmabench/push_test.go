package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// pushgateway records what reaches /metrics/job/JOB, as a Pushgateway takes it.
type pushgateway struct {
	mu     sync.Mutex
	method string
	path   string
	body   string
	status int
}

func (p *pushgateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.method, p.path, p.body = r.Method, r.URL.Path, string(b)
	if p.status != 0 {
		http.Error(w, "pushed metrics are invalid", p.status)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// report --push (and run --push, through the same pushMetrics) PUTs the
// run's OpenMetrics to the group job=SCENARIO and says where; a refusal is
// an error naming the gateway's answer; a URL that is not one is a usage
// error before anything runs.
func TestPushToPushgateway(t *testing.T) {
	pg := &pushgateway{}
	srv := httptest.NewServer(pg)
	defer srv.Close()
	rep := filepath.Join(reportFixtures, "full.json")
	code, _, errs := runInTempDir(t, "report", rep, "--push", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if pg.method != http.MethodPut || pg.path != "/metrics/job/pd-disagg" || !strings.HasPrefix(pg.body, "# HELP rdmabench_run_info") ||
		!strings.Contains(errs, "rdmabench: pushed ") || !strings.Contains(errs, srv.URL+"/metrics/job/pd-disagg") {
		t.Errorf("%s %s (%d bytes); stderr %q", pg.method, pg.path, len(pg.body), errs)
	}
	pg.status = http.StatusBadRequest
	code, _, errs = runInTempDir(t, "report", rep, "--push", srv.URL)
	if code == 0 || !strings.Contains(errs, "the Pushgateway answered 400 Bad Request: pushed metrics are invalid") {
		t.Errorf("refused: exit %d %q", code, errs)
	}
	for _, args := range [][]string{{"report", rep, "--push", "pushgateway:9091"}, {"run", "loopback", "--push", "pushgateway:9091"}} {
		code, _, errs = runInTempDir(t, args...)
		if code != 2 || !strings.Contains(errs, `--push: push URL "pushgateway:9091"`) {
			t.Errorf("%v: exit %d %q", args, code, errs)
		}
	}
}

// compare --push PUTs the verdicts to the group job=SCENARIO/command=compare
// (apart from run's job=SCENARIO: a PUT replaces only its own group) and
// --metrics writes the same text to a file; both happen before a
// regression exits 1, which a refused push does not change. A push that
// fails after a clean comparison is the error; a bad URL is a usage error.
func TestComparePushAndMetrics(t *testing.T) {
	pg := &pushgateway{}
	srv := httptest.NewServer(pg)
	defer srv.Close()
	base, cur := filepath.Join(reportFixtures, "baseline.json"), filepath.Join(reportFixtures, "current.json")
	metrics := filepath.Join(t.TempDir(), "compare.prom")
	code, _, errs := runInTempDir(t, "compare", base, cur, "--metrics", metrics, "--push", srv.URL)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the fixtures hold a regression): %s", code, errs)
	}
	written, err := os.ReadFile(metrics)
	if err != nil {
		t.Fatal(err)
	}
	if pg.method != http.MethodPut || pg.path != "/metrics/job/pd-disagg/command/compare" || pg.body != string(written) ||
		!strings.HasPrefix(pg.body, "# HELP rdmabench_compare_info") || !strings.Contains(pg.body, `status="regression",fails="true"} 1`) ||
		!strings.Contains(errs, "wrote "+metrics) || !strings.Contains(errs, "rdmabench: pushed ") {
		t.Errorf("%s %s (%d bytes, file %d); stderr %q", pg.method, pg.path, len(pg.body), len(written), errs)
	}
	pg.status = http.StatusBadRequest
	code, _, errs = runInTempDir(t, "compare", base, cur, "--push", srv.URL)
	if code != 1 || !strings.Contains(errs, "the Pushgateway answered 400 Bad Request") {
		t.Errorf("refused push with a regression: exit %d %q", code, errs)
	}
	code, _, errs = runInTempDir(t, "compare", cur, cur, "--push", srv.URL)
	if code == 0 || code == 1 || !strings.Contains(errs, "the Pushgateway answered 400 Bad Request") {
		t.Errorf("refused push, no regression: exit %d %q", code, errs)
	}
	code, _, errs = runInTempDir(t, "compare", base, cur, "--push", "pushgateway:9091")
	if code != 2 || !strings.Contains(errs, `--push: push URL "pushgateway:9091"`) {
		t.Errorf("bad URL: exit %d %q", code, errs)
	}
	code, _, errs = runInTempDir(t, "compare", base, cur, "--metrics", filepath.Join(t.TempDir(), "no", "such", "dir", "x.prom"))
	if code == 0 || code == 1 {
		t.Errorf("unwritable --metrics: exit %d %q", code, errs)
	}
}
