package tool

import "fmt"

// Rping is rdma-core's RDMA CM ping-pong.
const Rping = "rping"

var rping = Spec{Name: Rping, Family: FamilyRping, Programs: []string{"rping"}, Metric: MetricPings,
	Args: []Arg{rpingSizes, {Key: "count", Kind: KindInt, Min: 1, Hint: "rping -C: pings to send, 1 or more"},
		{Key: "crossRails", Kind: KindBool}, argExtra},
	Expect: []string{"minPings"}, NeedsRDMA: true, DefaultPort: 7174,
	Source: SourceTools, Install: "install rdma-core's examples (Debian/Ubuntu: apt-get install rdmacm-utils; RHEL: dnf install librdmacm-utils)"}

// rpingSizes: rping -S exits at once on a size outside its range.
var rpingSizes = Arg{Key: "sizes", Kind: KindSizes, Check: func(x Value) (string, string) {
	if x.Bytes < 23 || x.Bytes > 65535 {
		return fmt.Sprintf("size %s is outside rping's range", x.Text), "rping -S accepts 23 to 65535 bytes"
	}
	return "", ""
}}
