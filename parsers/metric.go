package parsers

// Metric names the figure a result is judged and compared by: its headline.
// The value is the Sample field's JSON name, as report.json carries it in
// each result's "metric" and in its stats. Which metric a tool has is the
// tool table's decision (runner/tools); renderers read it, never guess it.
type Metric string

// Headline metrics.
const (
	MetricBandwidth Metric = "bw_avg_bps" // bits/s, held against the line rate
	MetricBusBW     Metric = "busbw_bps"  // nccl-tests bus bandwidth, bits/s, held against the line rate
	MetricLatency   Metric = "lat_avg_us" // microseconds
	MetricPings     Metric = "pings"      // completed round trips (rping): no per-size figure
)

// IsBandwidth says whether the metric is a rate, held against the line rate
// (and higher is better); latency is lower-is-better.
func (m Metric) IsBandwidth() bool { return m == MetricBandwidth || m == MetricBusBW }

// Figure is the metric's value in one sample. Latency is the average, else
// the typical value (perftest's latency tools print both; some logs only
// the typical one). Pings have no per-sample figure.
func (m Metric) Figure(s *Sample) (float64, bool) {
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
