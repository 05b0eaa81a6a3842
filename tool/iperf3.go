package tool

// Iperf3 is the TCP baseline.
const Iperf3 = "iperf3"

var iperf3 = Spec{Name: Iperf3, Family: FamilyIperf3, Programs: []string{"iperf3"}, Metric: MetricBandwidth,
	Args: []string{"duration", "streams", "bidirectional", "extra"}, Expect: []string{"minLineRate", "minBandwidth", "lowPair"},
	DefaultPort: 5201, Source: SourceTools,
	Install: "install iperf3 (Debian/Ubuntu: apt-get install iperf3; RHEL: dnf install iperf3)"}
