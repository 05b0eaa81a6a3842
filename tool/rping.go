package tool

// Rping is rdma-core's RDMA CM ping-pong.
const Rping = "rping"

var rping = Spec{Name: Rping, Family: FamilyRping, Programs: []string{"rping"}, Metric: MetricPings,
	Args: []string{"sizes", "count", "extra"}, Expect: []string{"minPings"}, NeedsRDMA: true, DefaultPort: 7174,
	Source: SourceTools, Install: "install rdma-core's examples (Debian/Ubuntu: apt-get install rdmacm-utils; RHEL: dnf install librdmacm-utils)"}
