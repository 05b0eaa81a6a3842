package judge

import (
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/scenarios"
)

// NICRate is what NIC discovery returns for `lineRate: auto`: the rate in
// bits/s and where it came from ("mlx5_0 port 1: 400 Gb/sec (4X NDR)").
type NICRate func() (bps float64, detail string, ok bool)

// ResolveLineRate is the rate results are judged against: declared in the
// scenario, read from the NIC for `lineRate: auto`, or none.
func ResolveLineRate(sc *scenarios.Scenario, nic NICRate) *schema.LineRate {
	if sc == nil || !sc.LineRate.IsSet() {
		return &schema.LineRate{Source: schema.LineRateNone, Detail: "lineRate not set in the scenario"}
	}
	r := sc.LineRate
	if r.Raw == "auto" {
		if nic != nil {
			if bps, detail, ok := nic(); ok && bps > 0 {
				return &schema.LineRate{Bps: bps, Source: schema.LineRateNIC, Detail: detail}
			}
		}
		return &schema.LineRate{Source: schema.LineRateNone, Detail: "lineRate: auto, but no RDMA NIC reported a rate"}
	}
	if bps, ok := rate(r); ok {
		return &schema.LineRate{Bps: bps, Source: schema.LineRateDeclared, Detail: "scenario: " + r.Raw}
	}
	return &schema.LineRate{Source: schema.LineRateNone, Detail: "lineRate " + r.Raw + " could not be read"}
}
