package tool

import "strings"

// UCXPerftest is UCX's own benchmark.
const UCXPerftest = "ucx_perftest"

// UCXTests are ucx_perftest -t tests (UCP and UCT).
var UCXTests = []string{"tag_lat", "tag_bw", "tag_sync_lat", "tag_sync_bw",
	"ucp_put_lat", "ucp_put_bw", "ucp_get", "ucp_add", "ucp_fadd", "ucp_swap", "ucp_cswap",
	"stream_bw", "stream_lat", "ucp_am_lat", "ucp_am_bw",
	"am_lat", "put_lat", "add_lat", "get", "fadd", "swap", "cswap", "am_bw", "put_bw", "get_bw", "add_mr"}

// DefaultUCXTest is the ucx_perftest test a test runs when it names none.
const DefaultUCXTest = "tag_bw"

var ucxPerftest = Spec{Name: UCXPerftest, Family: FamilyUCXPerftest, Programs: []string{"ucx_perftest"}, Metric: MetricBandwidth,
	Args: []Arg{{Key: "test", Kind: KindString, Always: true, OneOf: UCXTests, What: "ucx_perftest tests", Default: fixed(DefaultUCXTest)},
		argSizes, argIterations, argTransports, argExtra},
	Expect:    append(append([]string{}, bwExpect...), "maxLatency", "maxP99Latency"),
	NeedsRDMA: true, SelectsTransport: true, BackendArg: "transports", DefaultPort: 13337, Source: SourceTools, waterfall: ucxLayer,
	Install: "install UCX's tools (Debian/Ubuntu: apt-get install ucx-utils; RHEL: dnf install ucx)",
	// *_lat tests (tag_lat, ucp_put_lat, am_lat …) measure latency.
	latency: func(a Settings) bool { return strings.HasSuffix(a.UCXTest, "_lat") },
	subject: func(a Settings) string { return UCXPerftest + " " + a.UCXTest }}
