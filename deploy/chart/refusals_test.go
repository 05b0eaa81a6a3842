package chart

import (
	"strings"
	"testing"
)

// What plan -o cronjob refuses, the chart refuses at install, with the
// reason: a scenario for another backend, one without a name, a name too
// long for a CronJob, a value the chart does not have (a typo), a push URL
// that is not one.
func TestChartRefusals(t *testing.T) {
	local := strings.Replace(customScenario, "backend: kube", "backend: local", 1)
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"scenario": local}, "needs backend: kube (this one is local)"},
		{map[string]any{"scenario": "apiVersion: rdmabench.io/v1alpha1\nkind: Scenario\nbackend: kube\n"}, "no metadata.name"},
		{map[string]any{"scenario": strings.Replace(customScenario, "nightly-tcp", strings.Repeat("n", 50), 1)}, "longer than 52 characters"},
		{map[string]any{"schedul": "0 1 * * *"}, "schedul"},
		{map[string]any{"push": map[string]any{"url": "pushgateway:9091"}}, "/push/url"},
		{map[string]any{"openshift": map[string]any{"scc": "yes"}}, "/openshift/scc"},
	} {
		_, err := Render(Dir(), Options{Release: "nightly", Namespace: "rdmabench", Values: tc.values})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error with %q", tc.values, err, tc.want)
		}
	}
}
