package report

import (
	"fmt"
	"strings"

	"github.com/rdmabench/rdmabench/parsers"
)

// perftestSweep is ib_write_bw -a between two pods, three repetitions.
func (b *fixtureBuilder) perftestSweep(test, tool, from, to string, peak float64) Result {
	res := b.newResult(test, tool, from, to, 21)
	res.Pattern, res.Op = "pairwise", "WRITE"
	if strings.Contains(tool, "read") {
		res.Op = "READ"
	}
	res.Transport = rdmaEvidence("mlx5_0")
	res.Commands = []string{tool + " -d mlx5_0 -x 3 -F --report_gbits -a -q 4", tool + " -d mlx5_0 -x 3 -F --report_gbits -a -q 4 ${addr:" + to + "}"}
	b.repeated(&res, 3, sweep(2, 8<<20), func(sz int64) parsers.Sample {
		avg := round(bwCurve(peak, 24<<10, sz)*b.noise(0.01), 0)
		peakBW := round(avg*b.noise(0.004)+avg*0.004, 0)
		return parsers.Sample{Bytes: sz, Iterations: 5000, BWAvgBps: &avg, BWPeakBps: &peakBW,
			MsgRatePPS: parsers.F(round(avg/8/float64(sz), 1))}
	}, parsers.MetricBandwidth)
	judge(&res, nicLineRate(), parsers.MetricBandwidth)
	return res
}

// matrix is an all-to-all of ib_write_bw over n endpoints at one large
// size; the link slowFrom → slowTo runs at slowFrac of the others.
func (b *fixtureBuilder) matrix(test string, n int, slowFrom, slowTo int, slowFrac float64, sizes []int64) []Result {
	var out []Result
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			peak := 0.975 * ndr
			if i == slowFrom && j == slowTo {
				peak *= slowFrac
			}
			from, to := fmt.Sprintf("ep-%d", i), fmt.Sprintf("ep-%d", j)
			res := b.newResult(test, "ib_write_bw", from, to, 6)
			res.Pattern, res.Op = "all-to-all", "WRITE"
			res.Transport = rdmaEvidence("mlx5_0")
			b.repeated(&res, 1, sizes, func(sz int64) parsers.Sample {
				avg := round(bwCurve(peak, 24<<10, sz)*b.noise(0.008), 0)
				return parsers.Sample{Bytes: sz, Iterations: 5000, BWAvgBps: &avg}
			}, parsers.MetricBandwidth)
			judge(&res, nicLineRate(), parsers.MetricBandwidth)
			out = append(out, res)
		}
	}
	return out
}

// nixl is nixlbench pairwise WRITE with one NIXL backend, VRAM to VRAM.
func (b *fixtureBuilder) nixl(backend string, peakGBs float64, reps int, noise float64) Result {
	res := b.newResult("kv-transfer", "nixlbench", "prefill-0", "decode-0", 40)
	res.Backend, res.Op, res.Pattern = backend, "WRITE", "pairwise"
	res.Transport = &parsers.Transport{Kind: parsers.TransportRDMA, Source: "ucx", Detail: "rc_mlx5/mlx5_0:1", Devices: []string{"mlx5_0:1"}}
	if backend == "LIBFABRIC" {
		res.Transport = &parsers.Transport{Kind: parsers.TransportRDMA, Source: "nixl", Detail: "verbs;ofi_rxm", Devices: []string{"mlx5_0"}}
	}
	res.Commands = []string{"nixlbench --etcd_endpoints ${etcd} --backend " + backend + " --initiator_seg_type VRAM --target_seg_type VRAM --op_type WRITE"}
	// A noisy backend spreads its repetitions evenly around the curve
	// (−noise, 0, +noise), so that its spread is exactly known.
	call, sizes := 0, sweep(4<<10, 64<<20)
	b.repeated(&res, reps, sizes, func(sz int64) parsers.Sample {
		f := b.noise(noise)
		if noise >= 0.1 {
			f = 1 + noise*float64(call/len(sizes)-1)
		}
		call++
		bw := round(bwCurve(peakGBs*8e9, 256<<10, sz)*f, 0)
		lat := round(float64(sz)*8/bw*1e6, 1)
		return parsers.Sample{Bytes: sz, Batch: 1, BWAvgBps: &bw, LatAvgUS: &lat}
	}, parsers.MetricBandwidth)
	judge(&res, nicLineRate(), parsers.MetricBandwidth)
	return res
}

// nccl is alltoall_perf across 16 ranks on 2 nodes; bus bandwidth in the
// samples, judged against the NIC line rate.
func (b *fixtureBuilder) nccl(peakGBs float64) Result {
	res := b.newResult("ep-alltoall", "alltoall_perf", "", "", 95)
	res.Pattern = "all-to-all"
	for i := 0; i < 16; i++ {
		res.Ranks = append(res.Ranks, fmt.Sprintf("ep-%d/gpu%d", i/8, i%8))
	}
	res.Transport = &parsers.Transport{Kind: parsers.TransportRDMA, Source: "nccl", Detail: "NET/IB", GDR: boolp(true),
		Devices: []string{"mlx5_0:1/RoCE", "mlx5_1:1/RoCE"}, Evidence: []string{"NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE"}}
	res.Commands = []string{"mpirun -np 16 alltoall_perf -b 8 -e 8G -f 2 -g 1"}
	b.repeated(&res, 2, sweep(1<<10, 8<<30), func(sz int64) parsers.Sample {
		bus := round(bwCurve(peakGBs*8e9, 4<<20, sz)*b.noise(0.02), 0)
		alg := round(bus*16/15, 0)
		t := round(float64(sz)*8/alg*1e6, 2)
		ibus := round(bus*b.noise(0.01)*1.01, 0)
		ialg := round(ibus*16/15, 0)
		it := round(float64(sz)*8/ialg*1e6, 2)
		return parsers.Sample{Bytes: sz, TimeUS: &t, AlgBWBps: &alg, BusBWBps: &bus, Wrong: new(int64),
			InplaceTimeUS: &it, InplaceAlgBWBps: &ialg, InplaceBusBWBps: &ibus, InplaceWrong: new(int64)}
	}, parsers.MetricBusBW)
	judge(&res, &LineRate{Bps: 2 * ndr, Source: LineRateNIC, Detail: "2 × mlx5 port: 400 Gb/sec per node"}, parsers.MetricBusBW)
	return res
}

func boolp(v bool) *bool { return &v }

// latency is ib_write_lat over a size sweep; no line rate applies.
func (b *fixtureBuilder) latency(base float64) Result {
	res := b.newResult("write-latency", "ib_write_lat", "prefill-0", "decode-0", 12)
	res.Pattern, res.Op = "pairwise", "WRITE"
	res.Transport = rdmaEvidence("mlx5_0")
	b.repeated(&res, 3, sweep(2, 64<<10), func(sz int64) parsers.Sample {
		avg := round((base+float64(sz)*8/ndr*1e6)*b.noise(0.02), 2)
		return parsers.Sample{Bytes: sz, Iterations: 1000, LatMinUS: parsers.F(round(avg*0.93, 2)),
			LatMaxUS: parsers.F(round(avg*4.1, 2)), LatTypicalUS: parsers.F(round(avg*0.99, 2)), LatAvgUS: &avg,
			LatStdevUS: parsers.F(round(avg*0.04, 2)), LatP99US: parsers.F(round(avg*1.22, 2)), LatP999US: parsers.F(round(avg*1.9, 2))}
	}, parsers.MetricLatency)
	res.Verdict, res.Expectation = VerdictPass, "p99 <= 10 µs"
	return res
}

// tcpFallback is ucx_perftest that ran over TCP where RDMA was required.
func (b *fixtureBuilder) tcpFallback() Result {
	res := b.newResult("ucx-put-bw", "ucx_perftest", "decode-0", "decode-1", 15)
	res.Backend, res.Pattern = "rc_x,ud_x", "pairwise"
	res.Transport = &parsers.Transport{Kind: parsers.TransportTCP, Source: "ucx", Detail: "tcp/eth0",
		Evidence: []string{"UCX  INFO  ucp_ep: tcp/eth0 for lane[0] (rc_x unavailable: no IB devices)"}}
	b.repeated(&res, 1, sweep(4<<10, 4<<20), func(sz int64) parsers.Sample {
		bw := round(bwCurve(21e9, 64<<10, sz)*b.noise(0.03), 0)
		return parsers.Sample{Bytes: sz, Iterations: 1000, BWAvgBps: &bw}
	}, parsers.MetricBandwidth)
	judge(&res, nicLineRate(), parsers.MetricBandwidth)
	res.Verdict, res.ErrorClass = VerdictFail, parsers.ClassTCPFallback
	res.Reason = "ran over TCP (tcp/eth0) where RDMA was required; " + res.Reason
	return res
}

// failed is a nixlbench job whose peer never came up.
func (b *fixtureBuilder) failed() Result {
	res := b.newResult("kv-transfer-read", "nixlbench", "prefill-1", "decode-1", 120)
	res.Backend, res.Op, res.Verdict = "UCX", "READ", VerdictError
	res.ErrorClass = parsers.ClassTimeout
	res.Reason = "timed out after 120s waiting for 2 ranks in etcd (only rank 0 registered)"
	return res
}

// skipped is rping where the endpoint has no RDMA device.
func (b *fixtureBuilder) skipped() Result {
	res := b.newResult("rdma-cm-ping", "rping", "prefill-0", "decode-1", 0)
	res.Verdict, res.ErrorClass, res.RawOutputs = VerdictSkipped, parsers.ClassNoDevice, nil
	res.Reason = "no RDMA device in pod decode-1 (rdma/roce_gdr not allocated)"
	return res
}

// knobs change a fixture run the way a real change of the fabric would.
type knobs struct {
	writeBW   float64 // peak of write-bw prefill-0 → decode-0, fraction of line rate
	ucclGBs   float64 // UCCL peak, GB/s (noisy: ±12% spread)
	libfabGBs float64 // LIBFABRIC peak, GB/s
	noReadBW  bool    // read-bw was not run
	firmware  string
}

var baselineKnobs = knobs{writeBW: 0.982, ucclGBs: 46.6, libfabGBs: 38.0, firmware: "28.43.1014"}

// fullReport is every kind of result a run produces.
func fullReport(seed uint64) *Report { return buildReport(seed, baselineKnobs) }

func buildReport(seed uint64, k knobs) *Report {
	b := newBuilder(seed)
	r := &Report{SchemaVersion: SchemaVersion, Run: baseMeta(fmt.Sprintf("run-%d", seed))}
	r.Run.Fingerprint["nic.firmware"] = k.firmware
	r.Endpoints = append(append(endpoints("prefill", 2), endpoints("decode", 2)...), endpoints("ep", 8)...)
	r.Results = append(r.Results,
		b.perftestSweep("write-bw", "ib_write_bw", "prefill-0", "decode-0", k.writeBW*ndr),
		b.perftestSweep("write-bw", "ib_write_bw", "prefill-1", "decode-1", 0.979*ndr),
	)
	if !k.noReadBW {
		r.Results = append(r.Results, b.perftestSweep("read-bw", "ib_read_bw", "prefill-0", "decode-0", 0.962*ndr))
	}
	r.Results = append(r.Results, b.matrix("fabric-a2a", 8, 3, 5, 0.46, []int64{64 << 10, 1 << 20})...)
	r.Results = append(r.Results, b.nixl("UCX", 48.2, 3, 0.015), b.nixl("UCCL", k.ucclGBs, 3, 0.12),
		b.nixl("LIBFABRIC", k.libfabGBs, 3, 0.015))
	r.Results = append(r.Results, b.nccl(93.5), b.latency(1.85), b.tcpFallback(), b.failed(), b.skipped())
	finish(r, b)
	return r
}

// compareFixtures are a baseline and a current run holding each decision
// compare must make: write-bw prefill-0 → decode-0 regressed 15%; UCCL
// dropped 6% inside its ±12% spread; LIBFABRIC improved 12%; read-bw is
// missing; the NIC firmware changed.
func compareFixtures() (base, cur *Report) {
	k := baselineKnobs
	k.writeBW, k.ucclGBs, k.libfabGBs, k.noReadBW, k.firmware = 0.982*0.85, 46.6*0.94, 38.0*1.12, true, "28.44.1036"
	base, cur = fullReport(1), buildReport(2, k)
	base.Run.ID, cur.Run.ID = "nightly-2026-11-19", "nightly-2026-11-20"
	cur.Run.Start = cur.Run.Start.Add(24 * 3600e9)
	return base, cur
}

// finish closes a fixture report: end time, nodes, each result's endpoints
// and the verdict counts.
func finish(r *Report, b *fixtureBuilder) {
	r.Run.End = b.clock
	byName := map[string]EndpointInfo{}
	for _, e := range r.Endpoints {
		byName[e.Name] = e
		r.Run.Nodes = append(r.Run.Nodes, e.Node)
	}
	for i := range r.Results {
		res := &r.Results[i]
		for _, side := range []struct{ role, name string }{{"client", res.From}, {"server", res.To}} {
			if e, ok := byName[side.name]; ok {
				res.Endpoints = append(res.Endpoints, ResultEndpoint{Role: side.role, Name: e.Name, Node: e.Node, Device: e.Device, Address: e.Address})
			}
		}
	}
	r.Summary = CountVerdicts(r.Results)
}
