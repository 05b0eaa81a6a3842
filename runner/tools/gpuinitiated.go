package tools

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/scenarios"
)

// GPUInitiatedID names the GPU-initiated RDMA readiness check in the report.
const GPUInitiatedID = "gpu-initiated"

// Verdicts of the GPU-initiated RDMA readiness check, one per pod.
const (
	VerdictIBGDANative  = "IBGDA native"
	VerdictCPUAssisted  = "CPU-assisted"
	VerdictGPUInitNone  = "none"
	minNVSHMEMForDeepEP = "3.3.9"  // DeepEP V1 (legacy) needs it
	minNVSHMEMAutoCPU   = "3.4.5"  // falls back to CPU-assisted IBGDA by itself
	minNCCLForGIN       = "2.30.4" // DeepEP V2's GPU-initiated networking
	capSysRawIO         = 17       // CAP_SYS_RAWIO's bit in CapEff
	capSysAdmin         = 21
)

// AsksGPUInitiated says whether a test asks for GPU-initiated RDMA (NVSHMEM's
// IBGDA, as llm-d's wide-EP guide configures DeepEP): its env sets
// NVSHMEM_REMOTE_TRANSPORT=ibgda or NVSHMEM_IB_ENABLE_IBGDA to a true value.
// Nothing else runs the check: it reads driver settings only such a test needs.
func AsksGPUInitiated(t *scenarios.Test) bool {
	if t == nil {
		return false
	}
	if strings.EqualFold(strings.TrimSpace(t.Env["NVSHMEM_REMOTE_TRANSPORT"]), "ibgda") {
		return true
	}
	switch strings.ToLower(strings.TrimSpace(t.Env["NVSHMEM_IB_ENABLE_IBGDA"])) {
	case "1", "true", "yes", "on", "y", "t":
		return true
	}
	return false
}

// gpuInitiatedScript prints, one "key=value" a line, what GPU-initiated
// RDMA needs of a pod. Every file is read under $RDMABENCH_FACT_ROOT (unset:
// /), so fixture trees test it; python3 and ldconfig come from PATH, each
// bounded to 8 s (RDMABENCH_FACT_TIMEOUT).
const gpuInitiatedScript = `R=${RDMABENCH_FACT_ROOT:-}
bounded() { if command -v timeout >/dev/null 2>&1; then timeout "${RDMABENCH_FACT_TIMEOUT:-8}" "$@"; else "$@"; fi; }
if [ -r "$R/proc/driver/nvidia/params" ]; then
 while IFS= read -r l; do case $l in RegistryDwords:*|GrdmaPciTopoCheckOverride:*|RmProfilingAdminOnly:*) echo "param=$l";; esac; done < "$R/proc/driver/nvidia/params"
else echo "params=missing"; fi
[ -r "$R/proc/driver/nvidia/version" ] && echo "nvidia=$(head -n 1 "$R/proc/driver/nvidia/version")"
[ -r "$R/proc/modules" ] && while read -r m _; do case $m in nvidia_peermem|nv_peer_mem|gdrdrv) echo "module=$m";; esac; done < "$R/proc/modules"
if [ -r "$R/proc/sys/kernel/osrelease" ]; then echo "kernel=$(cat "$R/proc/sys/kernel/osrelease")"; elif [ -z "$R" ]; then echo "kernel=$(uname -r)"; fi
if [ -e "$R/dev/gdrdrv" ]; then a=; [ -r "$R/dev/gdrdrv" ] && a=r; [ -w "$R/dev/gdrdrv" ] && a=${a}w; echo "gdrdrv=$a"; fi
[ -r "$R/sys/module/nvidia_uvm/parameters/uvm_disable_hmm" ] && echo "uvm_disable_hmm=$(cat "$R/sys/module/nvidia_uvm/parameters/uvm_disable_hmm")"
[ -r "$R/proc/self/status" ] && while read -r k v; do [ "$k" = CapEff: ] && echo "capeff=$v"; done < "$R/proc/self/status"
echo "uid=$(id -u 2>/dev/null)"
if command -v python3 >/dev/null 2>&1; then bounded python3 -c '
import importlib.metadata as m
for d in m.distributions():
    n = (d.metadata["Name"] or "").lower().replace("_", "-")
    if n.startswith("nvidia-nvshmem"): print("nvshmem_pip=" + d.version)
    elif n.startswith("nvidia-nccl"): print("nccl_pip=" + d.version)
    elif n in ("deep-ep", "deepep"): print("deep_ep=" + d.version)
' 2>/dev/null; else echo "python3=missing"; fi
if command -v ldconfig >/dev/null 2>&1; then ldconfig -p 2>/dev/null | while read -r l r; do case $l in libnvshmem_host.so*|libnccl.so.2) ;; *) continue;; esac
 p=$(readlink -f "${r##* }" 2>/dev/null)
 case ${p##*/} in libnvshmem_host.so.*.*) echo "nvshmem_lib=${p##*/libnvshmem_host.so.}";; libnccl.so.2.*) echo "nccl_lib=${p##*/libnccl.so.}";; esac; done; fi
true`

// GPUInitiatedProbe reads a pod's readiness for GPU-initiated RDMA (DeepEP
// V1 over NVSHMEM IBGDA) and gives one verdict: IBGDA native (pass),
// CPU-assisted through gdrcopy (warn: it works, with a CPU proxy in the
// path), or none (fail: the test is skipped), with the fix for each missing
// piece. GIN's NCCL, profiling and HMM are said beside it.
func GPUInitiatedProbe() Probe {
	return Probe{ID: GPUInitiatedID, Script: gpuInitiatedScript, Judge: func(out string) (ProbeStatus, string, string) {
		g := ParseGPUInitiated(out)
		verdict, ev, fixes := g.Judge()
		status := map[string]ProbeStatus{VerdictIBGDANative: ProbePass, VerdictCPUAssisted: ProbeUnknown, VerdictGPUInitNone: ProbeFail}[verdict]
		return status, "GPU-initiated RDMA: " + verdict + "; " + ev, strings.Join(fixes, "; ")
	}}
}

// GPUInitiated is what gpuInitiatedScript read on one pod.
type GPUInitiated struct {
	ParamsMissing bool
	// RegistryDwords, GrdmaPciTopoCheckOverride, RmProfilingAdminOnly are
	// /proc/driver/nvidia/params' values ("" where not listed).
	RegistryDwords, GrdmaTopo, ProfilingAdminOnly string
	Nvidia, Kernel                                string
	PeerMem, GdrdrvModule                         bool
	// Gdrdrv is /dev/gdrdrv's access ("rw"); nil where absent.
	Gdrdrv        *string
	DisableHMM    string
	CapEff        *uint64
	UID           string
	NVSHMEM, NCCL string // versions: pip's first, else the library's
	DeepEP        string
}

// ParseGPUInitiated reads gpuInitiatedScript's output.
func ParseGPUInitiated(out string) GPUInitiated {
	var g GPUInitiated
	var nvPip, nvLib, ncPip, ncLib string
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(strings.TrimRight(line, "\r"), "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "params":
			g.ParamsMissing = true
		case "param":
			name, val, _ := strings.Cut(v, ":")
			val = strings.Trim(strings.TrimSpace(val), `"`)
			switch name {
			case "RegistryDwords":
				g.RegistryDwords = val
			case "GrdmaPciTopoCheckOverride":
				g.GrdmaTopo = val
			case "RmProfilingAdminOnly":
				g.ProfilingAdminOnly = val
			}
		case "nvidia":
			g.Nvidia = v
		case "kernel":
			g.Kernel = v
		case "module":
			g.PeerMem = g.PeerMem || v == "nvidia_peermem" || v == "nv_peer_mem"
			g.GdrdrvModule = g.GdrdrvModule || v == "gdrdrv"
		case "gdrdrv":
			g.Gdrdrv = &v
		case "uvm_disable_hmm":
			g.DisableHMM = v
		case "capeff":
			if n, err := strconv.ParseUint(v, 16, 64); err == nil {
				g.CapEff = &n
			}
		case "uid":
			g.UID = v
		case "nvshmem_pip":
			nvPip = v
		case "nvshmem_lib":
			nvLib = v
		case "nccl_pip":
			ncPip = v
		case "nccl_lib":
			ncLib = v
		case "deep_ep":
			g.DeepEP = v
		}
	}
	g.NVSHMEM, g.NCCL = firstOf(nvPip, nvLib), firstOf(ncPip, ncLib)
	return g
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// PeerMappingOverride says whether the driver lets the NIC map GPU memory for IBGDA's
// doorbells and queues (NVreg_RegistryDwords="PeerMappingOverride=1;").
func (g GPUInitiated) PeerMappingOverride() bool {
	for _, kv := range strings.Split(g.RegistryDwords, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		if strings.EqualFold(k, "PeerMappingOverride") {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64)
			return err == nil && n != 0
		}
	}
	return false
}

// Registration says how the NIC can register GPU memory: "nvidia_peermem",
// "dma-buf" (open kernel module, kernel ≥ 5.12), or "" (it cannot).
func (g GPUInitiated) Registration() string {
	switch {
	case g.PeerMem:
		return "nvidia_peermem"
	case strings.Contains(g.Nvidia, "Open Kernel Module") && KernelAtLeast(g.Kernel, 5, 12):
		return "dma-buf"
	}
	return ""
}

func (g GPUInitiated) gdrcopy() bool { return g.Gdrdrv != nil && *g.Gdrdrv == "rw" }

func (g GPUInitiated) hasCap(bit uint) bool { return g.CapEff != nil && *g.CapEff&(1<<bit) != 0 }

const (
	fixPeerMapping = `for IBGDA native, load the nvidia module with NVreg_RegistryDwords="PeerMappingOverride=1;" (/etc/modprobe.d: options nvidia NVreg_RegistryDwords="PeerMappingOverride=1;"; the GPU Operator's driver kernel module config) and reload the driver`
	fixRegister    = "let the NIC register GPU memory: modprobe nvidia_peermem (GPU Operator: driver.rdma.enabled=true), or use NVIDIA's open kernel module on kernel 5.12+ for DMA-BUF"
	fixGdrcopy     = "for CPU-assisted IBGDA, load gdrcopy's gdrdrv on the node (GPU Operator: gdrcopy.enabled=true) and give the pod /dev/gdrdrv read-write (NVIDIA_GDRCOPY=enabled)"
	fixRawIO       = "add SYS_RAWIO to the pod's capabilities (scenario: capabilities: [IPC_LOCK, SYS_RAWIO]), as llm-d's wide-EP guide does"
	fixProfiling   = "DeepEP's tests time kernels with the CUDA profiler: load nvidia with NVreg_RestrictProfilingToAdminUsers=0, or run as root"
)

// Judge gives the verdict, the evidence and the fix for each missing piece.
func (g GPUInitiated) Judge() (verdict, evidence string, fixes []string) {
	if g.ParamsMissing && g.Nvidia == "" {
		return VerdictGPUInitNone, "no NVIDIA driver here (/proc/driver/nvidia)", []string{"run on a node with NVIDIA's driver and give the pod a GPU (nvidia.com/gpu)"}
	}
	ev := []string{g.paramsWords()}
	reg := g.Registration()
	ev = append(ev, "GPU memory registration: "+orWord(reg, "none ("+g.driverWords()+")"))
	ev = append(ev, "/dev/gdrdrv: "+g.gdrdrvWords())
	if reg == "" {
		fixes = append(fixes, fixRegister)
	}
	nv := g.NVSHMEM
	ev = append(ev, "NVSHMEM "+orWord(nv, "not found (pip nvidia-nvshmem-*, libnvshmem_host.so)"))
	nvOK := nv != "" && VersionAtLeast(nv, minNVSHMEMForDeepEP)
	if !nvOK {
		fixes = append(fixes, "use an image with NVSHMEM "+minNVSHMEMForDeepEP+"+ (pip nvidia-nvshmem-cu12 or -cu13), as DeepEP V1 needs")
	}
	rawIO := g.CapEff == nil || g.hasCap(capSysRawIO)
	if g.CapEff != nil {
		ev = append(ev, "SYS_RAWIO "+map[bool]string{true: "held", false: "not held"}[rawIO])
	}
	native := g.PeerMappingOverride() && reg != "" && nvOK && rawIO
	cpu := g.gdrcopy() && reg != "" && nvOK
	switch {
	case native:
		verdict = VerdictIBGDANative
	case cpu:
		verdict = VerdictCPUAssisted
		if !VersionAtLeast(nv, minNVSHMEMAutoCPU) {
			ev = append(ev, "NVSHMEM before "+minNVSHMEMAutoCPU+" does not fall back to CPU-assisted IBGDA by itself")
			fixes = append(fixes, "use NVSHMEM "+minNVSHMEMAutoCPU+"+, which falls back to CPU-assisted IBGDA by itself")
		}
	default:
		verdict = VerdictGPUInitNone
	}
	if !native {
		if !g.PeerMappingOverride() {
			fixes = append(fixes, fixPeerMapping)
		}
		if !rawIO {
			fixes = append(fixes, fixRawIO)
		}
		if !cpu && !g.gdrcopy() {
			fixes = append(fixes, fixGdrcopy)
		}
	}
	ev = append(ev, g.sideWords()...)
	if g.ProfilingAdminOnly == "1" && g.UID != "0" && !g.hasCap(capSysAdmin) {
		fixes = append(fixes, fixProfiling)
	}
	return verdict, strings.Join(ev, "; "), fixes
}

// sideWords are the facts beside the verdict: GIN (DeepEP V2), HMM, profiling.
func (g GPUInitiated) sideWords() []string {
	gin := "NCCL not found: no GIN (DeepEP V2 needs NCCL " + minNCCLForGIN + "+)"
	if g.NCCL != "" {
		gin = "NCCL " + g.NCCL + ": GIN (DeepEP V2) "
		if VersionAtLeast(g.NCCL, minNCCLForGIN) {
			gin += "available"
		} else {
			gin += "needs " + minNCCLForGIN + "+"
		}
	}
	s := []string{gin}
	if g.DeepEP != "" {
		s = append(s, "deep_ep "+g.DeepEP)
	}
	if g.DisableHMM != "" {
		s = append(s, "uvm_disable_hmm "+g.DisableHMM)
	}
	if g.ProfilingAdminOnly != "" {
		s = append(s, "RmProfilingAdminOnly "+g.ProfilingAdminOnly)
	}
	return s
}

func (g GPUInitiated) paramsWords() string {
	if g.ParamsMissing {
		return "/proc/driver/nvidia/params not readable"
	}
	s := fmt.Sprintf("RegistryDwords %q", g.RegistryDwords)
	if g.PeerMappingOverride() {
		s += " (PeerMappingOverride on)"
	} else {
		s += " (no PeerMappingOverride)"
	}
	if g.GrdmaTopo != "" {
		s += ", GrdmaPciTopoCheckOverride " + g.GrdmaTopo
	}
	return s
}

func (g GPUInitiated) driverWords() string {
	if g.Nvidia == "" {
		return "no nvidia_peermem; driver version unknown"
	}
	return "no nvidia_peermem; " + g.Nvidia + ", kernel " + orWord(g.Kernel, "unknown") + "; DMA-BUF needs the open kernel module and kernel 5.12+"
}

func (g GPUInitiated) gdrdrvWords() string {
	switch {
	case g.Gdrdrv == nil && g.GdrdrvModule:
		return "missing (gdrdrv is loaded on the node: mount /dev/gdrdrv in the pod)"
	case g.Gdrdrv == nil:
		return "missing"
	case *g.Gdrdrv == "rw":
		return "rw"
	}
	return "present, access " + orWord(*g.Gdrdrv, "none")
}

func orWord(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// VersionAtLeast compares dotted versions numerically ("3.4.5" ≥ "3.3.9");
// a suffix after a part's digits ("2.30.4+cuda13.0", "4-1") is ignored.
func VersionAtLeast(v, min string) bool {
	a, b := versionParts(v), versionParts(min)
	if a == nil {
		return false
	}
	for i := range b {
		x := 0
		if i < len(a) {
			x = a[i]
		}
		if x != b[i] {
			return x > b[i]
		}
	}
	return true
}

func versionParts(v string) []int {
	var out []int
	for _, p := range strings.Split(strings.TrimSpace(v), ".") {
		end := strings.IndexFunc(p, func(r rune) bool { return r < '0' || r > '9' })
		if end == 0 {
			break
		}
		if end > 0 {
			p = p[:end]
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			break
		}
		out = append(out, n)
		if end > 0 {
			break
		}
	}
	return out
}

// KernelAtLeast says whether a kernel release ("6.8.0-1015-aws") is at
// least maj.min.
func KernelAtLeast(k string, maj, min int) bool {
	p := versionParts(k)
	return len(p) >= 2 && (p[0] > maj || (p[0] == maj && p[1] >= min))
}
