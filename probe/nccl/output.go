package nccl

import (
	"fmt"
	"os"
	"strings"
)

// Program is the probe's name in its banner and in report.json.
const Program = "rdmabench-nccl"

// deviceRecord is one rank's line of the device list, gathered to rank 0
// with an all_gather (the ranks may be in different pods).
const deviceRecord = 256

// header prints the banner (the probe and the NCCL it loaded), the run's
// parameters in nccl-tests' words, the device list and the column header.
func (p *prober) header() error {
	ver, code := p.nc.version()
	devices, err := p.devices()
	if err != nil {
		return err
	}
	api := ""
	if p.coll.name == "alltoall" {
		api = " alltoall-api=send/recv"
		if p.nc.ncclAlltoAll != nil {
			api = " alltoall-api=ncclAlltoAll"
		}
	}
	lines := []string{
		fmt.Sprintf("# %s version %s nccl-library=%d nccl-version=%s nccl-path=%s nccl-found-by=%s cuda-driver=%d%s",
			Program, Version, code, ver, p.lib.Path, p.lib.FoundBy, p.cu.driverVersion(), api),
		"# Collective test starting: " + p.coll.name + " (" + Program + ")",
		fmt.Sprintf("# nThread 1 nGpus 1 minBytes %d maxBytes %d step: %d(factor) warmup iters: %d iters: %d agg iters: 1 validation: %d graph: 0 unalign: 0",
			p.o.MinBytes, p.o.MaxBytes, p.o.StepFactor, p.o.Warmup, p.o.Iters, b2i(p.o.Check)),
		"#",
		"# Using devices",
	}
	lines = append(lines, devices...)
	lines = append(lines, columnHeader()...)
	for _, l := range lines {
		if err := p.println(l); err != nil {
			return err
		}
	}
	return nil
}

// columnHeader is nccl-tests' column header, after the device list.
func columnHeader() []string {
	return []string{"#",
		fmt.Sprintf("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          ", "", "", "", "", ""),
		fmt.Sprintf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s ", "size", "count", "type", "redop", "root",
			"time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"),
		fmt.Sprintf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s ", "(B)", "(elements)", "", "", "",
			"(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "")}
}

// devices gathers every rank's device line ("#  Rank  0 Group  0 Pid …").
func (p *prober) devices() ([]string, error) {
	host := p.o.Host
	if host == "" {
		host = hostname()
	}
	mine := fmt.Sprintf("#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] %s",
		p.o.Rank, os.Getpid(), host, p.o.Device, pciShort(p.cu.busID()), p.cu.name())
	rec := make([]byte, deviceRecord)
	copy(rec[:deviceRecord-1], mine)
	all := make([]byte, deviceRecord*p.o.Ranks)
	buf, err := p.cu.alloc(uint64(len(all)))
	if err != nil {
		return nil, err
	}
	defer p.cu.cuMemFree(buf)
	mineAt := buf + uint64(deviceRecord*p.o.Rank)
	if err := p.cu.check("cuMemcpyHtoD", p.cu.cuMemcpyHtoD(mineAt, ptr(rec), deviceRecord)); err != nil {
		return nil, err
	}
	if err := p.nc.check("ncclAllGather", p.nc.ncclAllGather(mineAt, buf, deviceRecord, 1 /* ncclUint8 */, p.nc.comm, p.stream)); err != nil {
		return nil, err
	}
	if err := p.cu.check("cuStreamSynchronize", p.cu.cuStreamSynchronize(p.stream)); err != nil {
		return nil, err
	}
	if err := p.cu.check("cuMemcpyDtoH", p.cu.cuMemcpyDtoH(ptr(all), buf, uintptr(len(all)))); err != nil {
		return nil, err
	}
	out := make([]string, p.o.Ranks)
	for r := range out {
		out[r] = cut(all[r*deviceRecord : (r+1)*deviceRecord])
	}
	return out, nil
}

// pciShort is nccl-tests' [domain:bus:device] of a bus id 0000:06:00.0.
func pciShort(busID string) string {
	f := strings.Split(strings.ToLower(busID), ":")
	if len(f) < 3 {
		return "0000:00:00"
	}
	dom := f[len(f)-3]
	if len(dom) > 4 {
		dom = dom[len(dom)-4:]
	}
	dev, _, _ := strings.Cut(f[len(f)-1], ".")
	return dom + ":" + f[len(f)-2] + ":" + dev
}

// footer is nccl-tests' summary: wrong elements, the average bus
// bandwidth over every size, in and out of place.
func (p *prober) footer() error {
	for _, l := range footerLines(p.coll.name, p.wrongRuns, p.sumBusBW, p.nBusBW) {
		if err := p.println(l); err != nil {
			return err
		}
	}
	if p.wrong > 0 {
		return fmt.Errorf("%d wrong elements: %s returned wrong data", p.wrong, p.coll.name)
	}
	return nil
}

// footerLines are nccl-tests' summary lines: the runs with wrong
// elements, the average bus bandwidth over every size, in and out of
// place, and the closing banner.
func footerLines(name string, wrongRuns int, sumBusBW float64, nBusBW int) []string {
	status := "OK"
	if wrongRuns > 0 {
		status = "FAILED"
	}
	avg := 0.0
	if nBusBW > 0 {
		avg = sumBusBW / float64(nBusBW)
	}
	return []string{
		fmt.Sprintf("# %-20s : %d %s", "Out of bounds values", wrongRuns, status),
		fmt.Sprintf("# %-20s : %.6g ", "Avg bus bandwidth", avg),
		"#",
		"# Collective test concluded: " + name + " (" + Program + ")",
		"#",
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
