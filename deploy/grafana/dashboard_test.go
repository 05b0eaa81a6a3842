package grafana

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/export"
)

type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

var metricName = regexp.MustCompile(`\brdmabench_[a-z_]+`)

// Every metric the dashboard queries (panels and variables) is one the
// export writes (export.OpenMetricsFamilies for run --push,
// export.CompareOpenMetricsFamilies for compare --push); the panels the
// nightly page promises are there, regressions from compare's own verdicts.
func TestDashboardQueriesExportedMetrics(t *testing.T) {
	data, err := os.ReadFile("rdmabench.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID        string  `json:"uid"`
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	var exported []string
	for _, f := range append(slices.Clone(export.OpenMetricsFamilies), export.CompareOpenMetricsFamilies...) {
		exported = append(exported, f.Name)
	}
	exprs := []string{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			if tg.Expr == "" {
				t.Errorf("panel %q: a target without a query", p.Title)
			}
			exprs = append(exprs, tg.Expr)
		}
		// Regressions are compare's verdicts (threshold, t-test, lost
		// sizes), not a PromQL approximation of them.
		if strings.HasPrefix(p.Title, "Regressions") && (len(p.Targets) == 0 || !strings.Contains(p.Targets[0].Expr, "rdmabench_compare_")) {
			t.Errorf("panel %q: regressions come from compare's series (rdmabench_compare_*)", p.Title)
		}
		if len(p.Targets) == 0 && p.Type != "text" {
			t.Errorf("panel %q queries nothing", p.Title)
		}
	}
	for _, v := range d.Templating.List {
		exprs = append(exprs, v.Definition)
	}
	queried := map[string]bool{}
	for _, e := range exprs {
		names := metricName.FindAllString(e, -1)
		if len(names) == 0 && e != "" {
			t.Errorf("query %q names no rdmabench metric", e)
		}
		for _, n := range names {
			queried[n] = true
			if !slices.Contains(exported, n) {
				t.Errorf("query %q: %s is not a metric the export writes", e, n)
			}
		}
	}
	for _, want := range []string{"rdmabench_line_rate_ratio", "rdmabench_kv_transfer_ttft_seconds", "rdmabench_ep_budget_seconds", "rdmabench_result_verdict", "rdmabench_run_results",
		"rdmabench_compare_regressions", "rdmabench_compare_status"} {
		if !queried[want] {
			t.Errorf("no panel queries %s", want)
		}
	}
}
