package chart

import (
	"testing"

	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// helm lint's checks (Chart.yaml, values and their schema, every template
// rendered and parsed as Kubernetes objects) pass without a warning, with
// the defaults and with every optional part switched on.
func TestChartLint(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"defaults": nil,
		"everything": {
			"openshift":     map[string]any{"scc": true},
			"namespaceRole": map[string]any{"enabled": true},
			"push":          map[string]any{"url": "http://pushgateway.monitoring.svc:9091"},
			"timeZone":      "Etc/UTC",
			"results":       map[string]any{"storageClass": "fast"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			l := lint.All(Dir(), values, "rdmabench", false)
			for _, m := range l.Messages {
				t.Logf("%s", m.Error())
				if m.Severity >= support.WarningSev {
					t.Errorf("lint: %s", m.Error())
				}
			}
		})
	}
}
