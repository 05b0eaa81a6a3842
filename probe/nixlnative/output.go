package nixlnative

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/probe/dl"
)

// banner is the Python probe's, with loop=native and the C API's path in
// place of python's version and the script's digest.
func (in *initiator) banner() string {
	fields := [][2]string{{"role", in.role}, {"loop", "native"}, {"nixl", in.libnixl.version}, {"ucx", in.ucx},
		{"backend", strings.ToUpper(in.o.backend)}, {"plugins", strings.Join(in.plugins, ",")},
		{"nixl-capi", in.lib.path}, {"go", runtime.Version()}}
	if in.libnixl.libnixl != "" {
		fields = append(fields, [2]string{"nixl-lib", filepath.Dir(in.libnixl.libnixl)})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s version %s", Program, formatVersion)
	for _, f := range fields {
		fmt.Fprintf(&b, " %s=%s", f[0], strings.ReplaceAll(cmpOr(f[1], "none"), " ", "_"))
	}
	return b.String()
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// printConfig is the Python probe's configuration block, its rows named
// alike so that the parser keys them alike.
func (in *initiator) printConfig(tgt *peerInfo) {
	o := in.o
	batch := o.regions * o.blocks
	var params []string
	for _, kv := range o.backendParams {
		params = append(params, kv[0]+"="+kv[1])
	}
	rows := [][2]any{
		{"Backend (--backend)", strings.ToUpper(o.backend)}, {"Op type (--op_type=[READ,WRITE])", o.op},
		{"Initiator seg type (--initiator_seg_type=[DRAM,VRAM])", o.initiatorSeg},
		{"Target seg type (--target_seg_type=[DRAM,VRAM])", o.targetSeg},
		{"Regions (--regions=N)", o.regions}, {"Blocks per request (--blocks=N)", o.blocks},
		{"Bytes per region (--buffer-size)", in.mem.capacity},
		{"Transfer (--reuse-xfer)", "reused"}, {"Notification per request", nixlbenchNote},
		{"Start block size (--start_block_size=N)", o.minBlock}, {"Max block size (--max_block_size=N)", o.maxBlock},
		{"Start batch size (--start_batch_size=N)", batch}, {"Max batch size (--max_batch_size=N)", batch},
		{"Num iter (--num_iter=N)", o.iters}, {"Warmup iter (--warmup_iter=N)", o.warmup},
		{"Large block iter factor (--large_blk_iter_ftr=N)", o.lbf},
		{"Initiator device (--device=N)", o.device}, {"Target device", tgt.Device},
		{"Check consistency (--check_consistency=[0,1])", 1},
		{"Progress thread", 0},
		{"Loop (--as-nixlbench)", "nixlbench's"},
		{"Timed calls", "NIXL's C API (nixl_capi_post_xfer_req, nixl_capi_get_xfer_status) from Go"},
		{"Initiator (--native)", "Go, through " + in.lib.path},
		{"Backend parameters (--backend-param)", cmpOr(strings.Join(params, ","), "NIXL's defaults")},
	}
	if o.initiatorSeg == "VRAM" || o.targetSeg == "VRAM" {
		rows = append(rows, [2]any{"VRAM allocation (--vram-alloc)", "driver"})
	}
	w := in.out
	fmt.Fprintln(w, strings.Repeat("*", 160))
	fmt.Fprintln(w, Program+" Configuration")
	fmt.Fprintln(w, strings.Repeat("*", 160))
	for _, r := range rows {
		fmt.Fprintf(w, "%-60s: %v\n", r[0], r[1])
	}
	fmt.Fprintln(w, strings.Repeat("-", 160))
}

func printHeader(w io.Writer) {
	cols := []string{"Block Size (B)", "Batch Size", "B/W (GB/Sec)", "Avg Lat. (us)", "Avg Prep (us)", "P99 Prep (us)",
		"Avg Post (us)", "P99 Post (us)", "Avg Tx (us)", "P99 Tx (us)"}
	fmt.Fprintf(w, "%-20s", cols[0])
	for _, c := range cols[1:] {
		fmt.Fprintf(w, "%-15s", c)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, strings.Repeat("-", 160))
}

// printRow is nixlbench's row: GB/s is 1e9 B/s over the whole timed loop,
// "Avg Lat." that loop's time per descriptor; then the mean and p99 of
// each request's prep (zero: made once), post and completion, in µs.
func printRow(w io.Writer, block int64, batch, iters int, stamps []int64, total interface{ Seconds() float64 }) {
	secs := total.Seconds()
	gbs := float64(block) * float64(batch) * float64(iters) / 1e9 / secs
	lat := secs * 1e6 / float64(iters*batch)
	post, tx := make([]float64, 0, iters), make([]float64, 0, iters)
	for i := 0; i+2 < len(stamps); i += 3 {
		post = append(post, float64(stamps[i+1]-stamps[i])/1e3)
		tx = append(tx, float64(stamps[i+2]-stamps[i+1])/1e3)
	}
	fmt.Fprintf(w, "%-20d%-15d%-15.6f%-15.1f", block, batch, gbs, lat)
	fmt.Fprintf(w, "%-15.1f%-15.1f", 0.0, 0.0)
	for _, xs := range [][]float64{post, tx} {
		fmt.Fprintf(w, "%-15.1f%-15.1f", mean(xs), p99(xs))
	}
	fmt.Fprintln(w)
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// p99 is the Python probe's: the sorted value at index ⌊0.99·n⌋.
func p99(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*0.99))]
}

// ucxVersion is the loaded libucp's (the backend's plugin loads UCX), or
// "not-loaded".
func ucxVersion() string {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		p := f[len(f)-1]
		// libucp.so, or a wheel's bundled libucp-<hash>.so
		if b := filepath.Base(p); !strings.HasPrefix(b, "libucp.so") && !strings.HasPrefix(b, "libucp-") {
			continue
		}
		lib, err := dl.Open(p)
		if err != nil {
			return "unknown"
		}
		var get func() *byte
		if dl.Bind(lib, p, map[string]any{"ucp_get_version_string": &get}) != nil {
			return "unknown"
		}
		return dl.GoString(get())
	}
	return "not-loaded"
}
