package parsers

import "github.com/rdmabench/rdmabench/tool"

// Metric names the figure a result is judged and compared by: its headline
// (package tool's; which metric a tool has is the tool table's decision).
type Metric = tool.Metric

// Headline metrics (package tool's, named here for the parsers' readers).
const (
	MetricBandwidth = tool.MetricBandwidth
	MetricBusBW     = tool.MetricBusBW
	MetricLatency   = tool.MetricLatency
	MetricPings     = tool.MetricPings
)

// Figure is metric m's value in one sample. Latency is the average, else
// the typical value (perftest's latency tools print both; some logs only
// the typical one). Pings have no per-sample figure.
func Figure(m Metric, s *Sample) (float64, bool) {
	var p *float64
	switch m {
	case MetricBandwidth:
		p = s.BWAvgBps
	case MetricBusBW:
		p = s.BusBWBps
	case MetricLatency:
		p = s.LatAvgUS
		if p == nil {
			p = s.LatTypicalUS
		}
	}
	if p == nil {
		return 0, false
	}
	return *p, true
}
