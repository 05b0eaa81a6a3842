// Package grafana holds the Grafana dashboard over rdmabench's nightly
// series (rdmabench.json) and the test that keeps its queries on metrics
// the OpenMetrics export writes.
package grafana
