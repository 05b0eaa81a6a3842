// Package export writes a report, or a comparison, in the formats other
// systems read: JUnit XML for CI servers, OpenMetrics for Prometheus.
package export
