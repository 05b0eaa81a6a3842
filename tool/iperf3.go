package tool

import "fmt"

// Iperf3 is the TCP baseline.
const Iperf3 = "iperf3"

var iperf3 = Spec{Name: Iperf3, Family: FamilyIperf3, Programs: []string{"iperf3"}, Metric: MetricBandwidth,
	Args:        []Arg{argDuration, iperf3Streams, argBidirectional, argExtra},
	Expect:      []string{"minLineRate", "minBandwidth", "lowPair"},
	DefaultPort: 5201, Source: SourceTools,
	Install: "install iperf3 (Debian/Ubuntu: apt-get install iperf3; RHEL: dnf install iperf3)"}

var iperf3Streams = Arg{Key: "streams", Kind: KindInt, Min: 1, Hint: "iperf3 -P: parallel streams, 1–128", Check: func(x Value) (string, string) {
	if x.Int > 128 {
		return fmt.Sprintf("%d streams is too many", x.Int), "iperf3 -P accepts at most 128"
	}
	return "", ""
}}
