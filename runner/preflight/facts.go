// Package preflight checks every endpoint before the first test: RDMA
// device and port, /dev/infiniband, memlock, IPC_LOCK, MTU, RoCE GID, GPUs,
// GPUDirect and the NIC's PCIe link. Run reads the facts through the
// backend's command channel (one shell script, FactsScript, and NIC
// discovery), in each container an endpoint's tests use, and evaluates what
// the plan's tests need there; ParseFacts and Evaluate are pure, so recorded
// outputs test them.
package preflight

import (
	"bufio"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// FactsScript prints the raw facts discovery does not read, one
// "key=value" per line. The commands that can hang (a wedged GPU driver
// makes nvidia-smi wait; ucx_info loads every UCX module) run under
// timeout(1) where it exists, 8 s each (RDMABENCH_FACT_TIMEOUT), so one of
// them costs its own fact, not preflight's whole bound. It runs under busybox sh as well as bash and needs
// nothing but coreutils-like applets; ibv_devinfo and nvidia-smi are used
// where present.
const FactsScript = `bounded() { if command -v timeout >/dev/null 2>&1; then timeout "${RDMABENCH_FACT_TIMEOUT:-8}" "$@"; else "$@"; fi; }
echo "memlock=$(ulimit -l 2>/dev/null)"
echo "uid=$(id -u 2>/dev/null)"
while read -r k v; do [ "$k" = CapEff: ] && echo "capeff=$v"; done < /proc/self/status
[ -d /dev/infiniband ] && echo "devdir=yes"
for f in /dev/infiniband/*; do [ -e "$f" ] || continue; a=; [ -r "$f" ] && a=r; [ -w "$f" ] && a=${a}w; echo "devfile=${f##*/} $a"; done
for u in /sys/class/infiniband_verbs/uverbs*; do [ -r "$u/ibdev" ] && echo "uverbs=${u##*/} $(cat "$u/ibdev")"; done
for d in /sys/class/infiniband/*; do [ -d "$d" ] || continue
 for f in max_link_speed max_link_width current_link_speed current_link_width; do
  [ -r "$d/device/$f" ] && echo "pcie=${d##*/} $f $(cat "$d/device/$f" 2>/dev/null)"; done; done
if command -v ibv_devinfo >/dev/null 2>&1; then bounded ibv_devinfo 2>&1 | while read -r k v r; do case $k in
 hca_id:) echo "ibv_dev=$v";; port:) echo "ibv_port=$v";; active_mtu:) echo "ibv_active_mtu=$v";;
 Failed*|*rror*) echo "ibv_error=$k $v $r";; esac; done; else echo "ibv_devinfo=missing"; fi
n=0; for g in /dev/nvidia[0-9]*; do [ -e "$g" ] && n=$((n+1)); done; echo "gpu_files=$n"
command -v nvidia-smi >/dev/null 2>&1 && echo "gpu_smi=$(bounded nvidia-smi -L 2>/dev/null | grep -c '^GPU')"
[ -r /proc/modules ] && while read -r m r; do case $m in nvidia_peermem|nv_peer_mem) echo "peermem=$m";; esac; done < /proc/modules
[ -r /proc/driver/nvidia/version ] && echo "nvidia=$(head -n 1 /proc/driver/nvidia/version)"
echo "kernel=$(uname -r)"
for f in /opt/amazon/ofi-nccl/lib/libnccl-net*.so* /opt/amazon/ofi-nccl/lib64/libnccl-net*.so* /opt/aws-ofi-nccl/lib/libnccl-net*.so* /usr/local/lib/libnccl-net*.so* /usr/lib/x86_64-linux-gnu/libnccl-net*.so*; do [ -e "$f" ] && echo "ncclnet=$f"; done
if command -v ldconfig >/dev/null 2>&1; then ldconfig -p 2>/dev/null | while read -r l r; do case $l in libnccl-net*) echo "ncclnet=${r##* }";; esac; done; fi
u=; if n=$(command -v nixlbench 2>/dev/null); then [ -x "${n%/*}/ucx_info" ] && u="${n%/*}/ucx_info"; fi
[ -n "$u" ] || u=$(command -v ucx_info 2>/dev/null)
[ -n "$u" ] && bounded "$u" -v 2>/dev/null | while read -r h a b c; do case "$h $a $b" in "# Version "*) echo "ucx_version=$b";; "# Library version:") echo "ucx_version=$c";; "# UCT version="*) echo "ucx_version=${b#version=}";; esac; done
if command -v ldconfig >/dev/null 2>&1; then ldconfig -p 2>/dev/null | while read -r l r; do case $l in libnccl.so.2) p=$(readlink -f "${r##* }" 2>/dev/null); case ${p##*/} in libnccl.so.2.*) echo "nccl_version=${p##*/libnccl.so.}";; esac;; esac; done; fi
true`

// Facts is what one endpoint's machine (or pod) says about itself.
type Facts struct {
	// Inv is NIC discovery's inventory (devices, ports, GIDs, MTU).
	Inv *nic.Inventory
	// Memlock is `ulimit -l`: KiB, or -1 for unlimited; nil when unread.
	Memlock *int64
	UID     *int
	// CapEff is the effective capability set; nil when unread.
	CapEff *uint64
	// DevDir: /dev/infiniband exists; DevFiles its files and access ("rw").
	DevDir   bool
	DevFiles map[string]string
	// Uverbs maps an RDMA device to its uverbs character device.
	Uverbs map[string]string
	// PCIe is each device's PCIe link: current and max, from sysfs.
	PCIe map[string]*PCIeLink
	// ActiveMTU is "dev/port" → active IB MTU (ibv_devinfo).
	ActiveMTU map[string]int
	// IbvDevinfo is "missing" when ibv_devinfo is not installed, or the
	// error it printed.
	IbvDevinfo string
	// GPUFiles counts /dev/nvidiaN; GPUSmi is `nvidia-smi -L`'s count
	// (-1: no nvidia-smi).
	GPUFiles, GPUSmi int
	PeerMem          string // nvidia_peermem or nv_peer_mem when loaded
	NvidiaVersion    string // first line of /proc/driver/nvidia/version
	Kernel           string
	// UCXVersion is `ucx_info -v`'s (the ucx_info beside nixlbench first:
	// the UCX NIXL loads); NCCLVersion is libnccl.so.2's file name's, as
	// ldconfig resolves it. Empty where not found.
	UCXVersion, NCCLVersion string
	// NCCLNet are the NCCL net plugins found (libnccl-net*.so: on AWS,
	// aws-ofi-nccl's, which carries NCCL over EFA through libfabric).
	NCCLNet []string
	// Probes is each tool probe's output, by id (ProbeScript).
	Probes map[string]string
}

// sectionMarker starts each part of ReadScript's output.
const sectionMarker = "@@rdmabench-section "

// ReadScript is everything preflight reads on one endpoint, in one exec:
// the facts, NIC discovery's sysfs dump and nvidia-smi topo, then the tool
// probes, each part in a subshell after a marker line (SplitRead). One
// exec, not four: through the Kubernetes API at scale, or in a container
// under emulation, starting a command costs more than the reading.
func ReadScript(probes []tools.Probe) string {
	var b strings.Builder
	for _, part := range []struct{ name, script string }{{"facts", FactsScript}, {"sysfs", nic.DumpScript}, {"topo", nic.TopoScript}} {
		b.WriteString("echo '" + sectionMarker + part.name + "'\n(\n" + part.script + "\n)\n")
	}
	b.WriteString("echo '" + sectionMarker + "probes'\n" + ProbeScript(probes))
	return b.String()
}

// ReadOutput is ReadScript's output split into its parts.
type ReadOutput struct {
	Facts, Sysfs, Topo, Probes string
	// Complete: every part's marker was seen (an exec cut short is not).
	Complete bool
}

// SplitRead splits ReadScript's output at its markers.
func SplitRead(out string) ReadOutput {
	parts := map[string]*strings.Builder{}
	cur := ""
	for _, line := range strings.SplitAfter(out, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), sectionMarker); ok {
			cur = name
			parts[cur] = &strings.Builder{}
			continue
		}
		if b := parts[cur]; b != nil {
			b.WriteString(line)
		}
	}
	text := func(name string) string {
		if b := parts[name]; b != nil {
			return b.String()
		}
		return ""
	}
	return ReadOutput{Facts: text("facts"), Sysfs: text("sysfs"), Topo: text("topo"), Probes: text("probes"), Complete: len(parts) == 4}
}

// probeMarker starts each probe's section of ProbeScript's output.
const probeMarker = "@@rdmabench-probe "

// ProbeScript runs the probes one after the other, each in a subshell and
// after a marker line with its id (ParseProbes splits the output).
func ProbeScript(probes []tools.Probe) string {
	var b strings.Builder
	for _, p := range probes {
		b.WriteString("echo '" + probeMarker + p.ID + "'\n(\n" + p.Script + "\n) 2>&1\n")
	}
	b.WriteString("true")
	return b.String()
}

// ParseProbes splits ProbeScript's output by probe id.
func ParseProbes(out string) map[string]string {
	res := map[string]string{}
	id := ""
	var cur strings.Builder
	flush := func() {
		if id != "" {
			res[id] = cur.String()
		}
		cur.Reset()
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if next, ok := strings.CutPrefix(line, probeMarker); ok {
			flush()
			id = strings.TrimSpace(next)
			continue
		}
		if id != "" {
			cur.WriteString(line + "\n")
		}
	}
	flush()
	return res
}

// PCIeLink is a PCIe link's current and maximum speed and width.
type PCIeLink struct {
	Speed, MaxSpeed string
	Width, MaxWidth int
}

// ParseFacts reads FactsScript's output. Unknown lines are ignored, so an
// older or newer script still parses; nothing in it can make this fail.
func ParseFacts(out string) Facts {
	f := Facts{DevFiles: map[string]string{}, Uverbs: map[string]string{}, PCIe: map[string]*PCIeLink{},
		ActiveMTU: map[string]int{}, GPUSmi: -1}
	var dev, port string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "memlock":
			f.Memlock = parseMemlock(v)
		case "uid":
			if n, err := strconv.Atoi(v); err == nil {
				f.UID = &n
			}
		case "capeff":
			if n, err := strconv.ParseUint(v, 16, 64); err == nil {
				f.CapEff = &n
			}
		case "devdir":
			f.DevDir = true
		case "devfile":
			name, acc, _ := strings.Cut(v, " ")
			f.DevFiles[name] = acc
		case "uverbs":
			u, d, _ := strings.Cut(v, " ")
			f.Uverbs[d] = u
		case "pcie":
			parsePCIe(f.PCIe, v)
		case "ibv_dev":
			dev, port = v, ""
		case "ibv_port":
			port = v
		case "ibv_active_mtu":
			if n, err := strconv.Atoi(strings.Fields(v + " x")[0]); err == nil && dev != "" && port != "" {
				f.ActiveMTU[dev+"/"+port] = n
			}
		case "ibv_devinfo":
			f.IbvDevinfo = v
		case "ibv_error":
			if f.IbvDevinfo == "" {
				f.IbvDevinfo = v
			}
		case "gpu_files":
			f.GPUFiles, _ = strconv.Atoi(v)
		case "gpu_smi":
			if n, err := strconv.Atoi(v); err == nil {
				f.GPUSmi = n
			}
		case "peermem":
			f.PeerMem = v
		case "nvidia":
			f.NvidiaVersion = v
		case "kernel":
			f.Kernel = v
		case "ucx_version":
			f.UCXVersion = v
		case "nccl_version":
			if f.NCCLVersion == "" { // the first the loader's cache lists is the one loaded
				f.NCCLVersion = v
			}
		case "ncclnet":
			if v != "" && !slices.Contains(f.NCCLNet, v) {
				f.NCCLNet = append(f.NCCLNet, v)
			}
		}
	}
	return f
}

func parseMemlock(v string) *int64 {
	if v == "unlimited" {
		n := int64(-1)
		return &n
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

func parsePCIe(m map[string]*PCIeLink, v string) {
	parts := strings.SplitN(v, " ", 3)
	if len(parts) < 3 {
		return
	}
	l := m[parts[0]]
	if l == nil {
		l = &PCIeLink{}
		m[parts[0]] = l
	}
	val := strings.TrimSpace(parts[2])
	w, _ := strconv.Atoi(val)
	switch parts[1] {
	case "current_link_speed":
		l.Speed = val
	case "max_link_speed":
		l.MaxSpeed = val
	case "current_link_width":
		l.Width = w
	case "max_link_width":
		l.MaxWidth = w
	}
}
