package push

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/report/export"
	"github.com/rdmabench/rdmabench/report/schema"
)

// gateway stands in for a Pushgateway: PUT and POST on
// /metrics/job/JOB{/LABEL/VALUE}, name@base64 values decoded, and the
// gateway's own refusals (a body that is not the text format, a series
// whose grouping label disagrees with the URL's).
type gateway struct {
	mu     sync.Mutex
	groups map[string]string // grouping key → body
	types  []string
	hang   time.Duration
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(g.hang)
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/metrics/"), "/")
	if len(parts) < 2 || len(parts)%2 != 0 || !strings.HasPrefix(parts[0], "job") {
		http.Error(w, "bad grouping key", http.StatusBadRequest)
		return
	}
	key := map[string]string{}
	for i := 0; i < len(parts); i += 2 {
		name, value := parts[i], parts[i+1]
		if n, ok := strings.CutSuffix(name, "@base64"); ok {
			raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(value, "="))
			if err != nil {
				http.Error(w, "bad base64", http.StatusBadRequest)
				return
			}
			name, value = n, string(raw)
		}
		key[name] = value
	}
	body, _ := io.ReadAll(r.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.Contains(line, " ") {
			http.Error(w, "text format parsing error: "+line, http.StatusBadRequest)
			return
		}
		for name, value := range key {
			if strings.Contains(line, name+`="`) && !strings.Contains(line, name+`="`+value+`"`) {
				http.Error(w, "pushed metrics are invalid or inconsistent with existing metrics: label "+name, http.StatusBadRequest)
				return
			}
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.groups == nil {
		g.groups = map[string]string{}
	}
	g.groups["job="+key["job"]] = string(body)
	g.types = append(g.types, r.Header.Get("Content-Type"))
	w.WriteHeader(http.StatusOK)
}

func openMetrics(t *testing.T) (*schema.Report, []byte) {
	t.Helper()
	r, err := schema.Load("../../testdata/report/full.json")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := export.WriteOpenMetrics(&b, r); err != nil {
		t.Fatal(err)
	}
	return r, b.Bytes()
}

// A run's OpenMetrics text reaches the gateway as written, in the group of
// its scenario (job=SCENARIO), with the run's labels on its series.
func TestPushReachesThePushgateway(t *testing.T) {
	g := &gateway{}
	srv := httptest.NewServer(g)
	defer srv.Close()
	r, body := openMetrics(t)
	u, err := GroupURL(srv.URL, r.Run.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	if err := Push(context.Background(), nil, u, body); err != nil {
		t.Fatal(err)
	}
	got := g.groups["job="+r.Run.Scenario]
	if got != string(body) || g.types[0] != ContentType {
		t.Fatalf("group job=%s: %d bytes as %q", r.Run.Scenario, len(got), g.types)
	}
	if !strings.Contains(got, `rdmabench_run_info{scenario="`+r.Run.Scenario+`",run_id="`+r.Run.ID+`"`) {
		t.Errorf("the run's labels are not on its series:\n%.400s", got)
	}
}

func TestGroupURL(t *testing.T) {
	for _, tc := range []struct {
		gateway, job string
		labels       []string
		want         string
	}{
		{"http://pg:9091", "pd-disagg", nil, "http://pg:9091/metrics/job/pd-disagg"},
		{"http://pg:9091/", "pd-disagg", []string{"cluster", "us-east/1"}, "http://pg:9091/metrics/job/pd-disagg/cluster@base64/dXMtZWFzdC8x"},
		{"https://pg.example.com/prefix", "a", []string{"empty", ""}, "https://pg.example.com/prefix/metrics/job/a/empty@base64/="},
	} {
		got, err := GroupURL(tc.gateway, tc.job, tc.labels...)
		if err != nil || got != tc.want {
			t.Errorf("%s %s %v: %q %v, want %q", tc.gateway, tc.job, tc.labels, got, err, tc.want)
		}
	}
	for _, bad := range []string{"pushgateway:9091", "ftp://pg", "http://", "http://pg:9091?x=1"} {
		if _, err := GroupURL(bad, "a"); err == nil || !strings.Contains(err.Error(), "want the Pushgateway's http(s)://HOST:PORT") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A refusal is an error with the gateway's status and words; a gateway
// that does not answer is an error within the client's bound.
func TestPushErrors(t *testing.T) {
	srv := httptest.NewServer(&gateway{})
	defer srv.Close()
	u, _ := GroupURL(srv.URL, "pd-disagg")
	err := Push(context.Background(), nil, u, []byte("not_a_sample\n"))
	if err == nil || !strings.Contains(err.Error(), "400 Bad Request: text format parsing error") {
		t.Errorf("refused push: %v", err)
	}
	slow := httptest.NewServer(&gateway{hang: time.Second})
	defer slow.Close()
	u, _ = GroupURL(slow.URL, "pd-disagg")
	start := time.Now()
	err = Push(context.Background(), &http.Client{Timeout: 200 * time.Millisecond}, u, []byte("x 1\n"))
	if err == nil || time.Since(start) > time.Second || !strings.Contains(err.Error(), "push to "+u) {
		t.Errorf("hung gateway: %v after %s", err, time.Since(start))
	}
	closed := httptest.NewServer(&gateway{})
	u, _ = GroupURL(closed.URL, "pd-disagg")
	closed.Close()
	if err := Push(context.Background(), nil, u, []byte("x 1\n")); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("no gateway: %v", err)
	}
}
