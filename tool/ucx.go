package tool

import "strings"

// UCXPerftest is UCX's own benchmark.
const UCXPerftest = "ucx_perftest"

var ucxPerftest = Spec{Name: UCXPerftest, Family: FamilyUCXPerftest, Programs: []string{"ucx_perftest"}, Metric: MetricBandwidth,
	Args:      []string{"test", "sizes", "iterations", "transports", "extra"},
	Expect:    append(append([]string{}, bwExpect...), "maxLatency", "maxP99Latency"),
	NeedsRDMA: true, SelectsTransport: true, DefaultPort: 13337, Source: SourceTools,
	Install: "install UCX's tools (Debian/Ubuntu: apt-get install ucx-utils; RHEL: dnf install ucx)",
	// *_lat tests (tag_lat, ucp_put_lat, am_lat …) measure latency.
	latency: func(a Settings) bool { return strings.HasSuffix(a.UCXTest, "_lat") }}
