package main

import (
	"fmt"
	"math"
	"strings"
)

// Output formats of nixlbench's rank 0 (src/utils/utils.cpp), byte for byte.

var (
	stars  = strings.Repeat("*", 160)
	dashes = strings.Repeat("-", 160)
)

// configLines are the configuration block's descriptions and flag names.
var configLines = []struct{ desc, flag string }{
	{"Runtime (--runtime_type=[ETCD,ASIO])", "runtime_type"},
	{"ETCD Endpoint ", "etcd_endpoints"},
	{"Worker type (--worker_type=[nixl,nvshmem])", "worker_type"},
	{"Backend (--backend=[UCX,GDS,GDS_MT,POSIX,Mooncake,HF3FS,OBJ,AZURE_BLOB])", "backend"},
	{"Enable pt (--enable_pt=[0,1])", "enable_pt"},
	{"Progress threads (--progress_threads=N)", "progress_threads"},
	{"Device list (--device_list=dev1,dev2,...)", "device_list"},
	{"Enable VMM (--enable_vmm=[0,1])", "enable_vmm"},
	{"Recreate xfer each iteration (--recreate_xfer=[0,1])", "recreate_xfer"},
	{"Re-register memory each iteration (--reregister_mem=[0,1])", "reregister_mem"},
	{"Prepared xfer (prep+make) (--prepared_xfer=[0,1])", "prepared_xfer"},
	{"Pipeline depth (--pipeline_depth=N)", "pipeline_depth"},
	{"Use hugepages (--use_hugepages=[0,1])", "use_hugepages"},
	{"Initiator seg type (--initiator_seg_type=[DRAM,VRAM])", "initiator_seg_type"},
	{"Target seg type (--target_seg_type=[DRAM,VRAM])", "target_seg_type"},
	{"Scheme (--scheme=[pairwise,manytoone,onetomany,tp])", "scheme"},
	{"Mode (--mode=[SG,MG])", "mode"},
	{"Op type (--op_type=[READ,WRITE])", "op_type"},
	{"Check consistency (--check_consistency=[0,1])", "check_consistency"},
	{"Total buffer size (--total_buffer_size=N)", "total_buffer_size"},
	{"Num initiator dev (--num_initiator_dev=N)", "num_initiator_dev"},
	{"Num target dev (--num_target_dev=N)", "num_target_dev"},
	{"Start block size (--start_block_size=N)", "start_block_size"},
	{"Max block size (--max_block_size=N)", "max_block_size"},
	{"Start batch size (--start_batch_size=N)", "start_batch_size"},
	{"Max batch size (--max_batch_size=N)", "max_batch_size"},
	{"Num iter (--num_iter=N)", "num_iter"},
	{"Warmup iter (--warmup_iter=N)", "warmup_iter"},
	{"Large block iter factor (--large_blk_iter_ftr=N)", "large_blk_iter_ftr"},
	{"Num threads (--num_threads=N)", "num_threads"},
	{"Use Device API (--use_device_api=[0,1])", "use_device_api"},
}

// configBlock is printed by rank 0 before the table; booleans as 0/1.
func configBlock(f flags) string {
	var b strings.Builder
	b.WriteString(stars + "\nNIXLBench Configuration\n" + stars + "\n")
	for _, l := range configLines {
		if l.flag == "etcd_endpoints" && f.str("runtime_type") == "ASIO" {
			fmt.Fprintf(&b, "%-60s: %s\n", "ASIO Address (--asio_address) ", f.str("asio_address"))
			fmt.Fprintf(&b, "%-60s: %s\n", "ASIO Port (--asio_port) ", f.str("asio_port"))
			continue
		}
		v := f.str(l.flag)
		if flagDefs[l.flag].kind == kBool {
			v = "0"
			if f.on(l.flag) {
				v = "1"
			}
		}
		fmt.Fprintf(&b, "%-60s: %s\n", l.desc, v)
	}
	b.WriteString(dashes + "\n\n")
	return b.String()
}

// tableHeader: every column left-justified and padded, then 160 dashes.
func tableHeader() string {
	cols := []string{"Block Size (B)", "Batch Size", "B/W (GB/Sec)", "Avg Lat. (us)", "Avg Prep (us)",
		"P99 Prep (us)", "Avg Post (us)", "P99 Post (us)", "Avg Tx (us)", "P99 Tx (us)"}
	var b strings.Builder
	for i, c := range cols {
		fmt.Fprintf(&b, "%-*s", width(i), c)
	}
	return b.String() + "\n" + dashes + "\n"
}

func width(col int) int {
	if col == 0 {
		return 20
	}
	return 15
}

// stats of one (block, batch) step, measured by the initiator.
type stats struct {
	block, batch     int64
	gbps, avgLat     float64
	avgPrep, p99Prep float64
	avgPost, p99Post float64
	avgTx, p99Tx     float64
}

// row: block/batch integers, B/W with 6 decimals, times with 1. The real
// tool's P99 columns are whole microseconds (always "N.0" in the H200
// captures, testdata/gpu/h200-nixl*): rounded the same way here.
func row(s stats) string {
	s.p99Prep, s.p99Post, s.p99Tx = math.Round(s.p99Prep), math.Round(s.p99Post), math.Round(s.p99Tx)
	cells := []string{
		fmt.Sprint(s.block), fmt.Sprint(s.batch), fmt.Sprintf("%.6f", s.gbps), fmt.Sprintf("%.1f", s.avgLat),
		fmt.Sprintf("%.1f", s.avgPrep), fmt.Sprintf("%.1f", s.p99Prep), fmt.Sprintf("%.1f", s.avgPost),
		fmt.Sprintf("%.1f", s.p99Post), fmt.Sprintf("%.1f", s.avgTx), fmt.Sprintf("%.1f", s.p99Tx),
	}
	var b strings.Builder
	for i, c := range cells {
		fmt.Fprintf(&b, "%-*s", width(i), c)
	}
	return b.String() + "\n"
}
