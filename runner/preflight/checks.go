package preflight

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/nic"
	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/tool"
)

// Check ids: stable names a reason, a script or a dashboard can rely on.
const (
	RDMADevice    = "rdma-device"
	NCCLNetPlugin = "nccl-net-plugin"
	PortActive    = "port-active"
	LinkLayer     = "link-layer"
	DevInfiniband = "dev-infiniband"
	Memlock       = "memlock"
	IPCLock       = "ipc-lock"
	MTUMatch      = "mtu-match"
	RoCEGID       = "roce-gid"
	GPUCount      = "gpu-count"
	GPUDirect     = "gpudirect"
	PCIeLinkCheck = "pcie-link"
)

// DefaultMinMemlockKiB is the memlock limit checked when the caller does
// not say what its tests pin (NCCL and NIXL register far more than
// perftest, whose -a sweep pins 2 × 8 MiB and its queues): 64 MiB.
const DefaultMinMemlockKiB = 64 * 1024

// capIPCLock is CAP_IPC_LOCK's bit in CapEff.
const capIPCLock = 14

// Want is what the scenario expects of one endpoint.
type Want struct {
	Endpoint string
	// Device is the RDMA device the tests name ("" or "auto": any).
	Device   string
	GIDIndex *int
	// NoDevice says why no RDMA device serves the endpoint's data
	// interface, where its device was to be chosen from it: the
	// rdma-device check fails with it (another device is no substitute).
	NoDevice string
	// DataDevice is the data interface's device when the scenario named
	// another (Device): the tests may run, over that device's network.
	DataDevice string
	// NCCLNet: NCCL runs between nodes over a fabric only a net plugin
	// drives (AWS EFA: aws-ofi-nccl).
	NCCLNet bool
	// Address is the endpoint's data address (the RoCE GID must carry it).
	Address string
	// GPUs the scenario gives the endpoint; HostGPUs, where endpoints
	// share one host's GPUs (each its own), what they use together.
	GPUs, HostGPUs int
	// RDMA, GPU, GPUDirect: some test on the endpoint needs RDMA, GPU
	// memory, GPU memory over RDMA.
	RDMA, GPU, GPUDirect bool
	// Pod: the endpoint is a Kubernetes pod (IPC_LOCK is its to ask for).
	Pod bool
	// SpecNoIPCLock, in a pod, says why its spec grants no IPC_LOCK ("":
	// it may hold it): the ipc-lock check's evidence when the pod's own
	// facts cannot be read (specNoIPCLock).
	SpecNoIPCLock string
	// MinMemlockKiB is the least memlock limit the tools need (0: default).
	MinMemlockKiB int64
	// Probes are the checks of the tools' builds the endpoint's tests need
	// (tools.ProbesOf), at most one per id.
	Probes []tools.Probe
}

// Input is one endpoint's facts and wants.
type Input struct {
	Want  Want
	Facts Facts
	// Err is set when the facts could not be read.
	Err error
}

// EvaluateAll evaluates every endpoint and then compares MTUs across
// endpoints that run RDMA tests: a path runs at the smaller MTU, and a
// frame larger than the peer's netdev carries is dropped.
func EvaluateAll(in []Input) []schema.PreflightEndpoint {
	out := make([]schema.PreflightEndpoint, len(in))
	for i := range in {
		out[i] = schema.PreflightEndpoint{Endpoint: in[i].Want.Endpoint, Device: in[i].Want.Device}
		if in[i].Err != nil {
			out[i].Error = in[i].Err.Error()
			if c, ok := unreadIPCLock(in[i].Want, in[i].Err); ok {
				out[i].Checks = append(out[i].Checks, c)
			}
			continue
		}
		out[i].Checks = Evaluate(in[i].Facts, in[i].Want)
		if d, _, ok := pick(in[i].Facts.Inv, in[i].Want.Device); ok {
			out[i].Device = d.Name
		}
	}
	peerMTU(in, out)
	return out
}

// Evaluate runs the checks that apply to one endpoint.
func Evaluate(f Facts, w Want) []schema.PreflightCheck {
	var cs []schema.PreflightCheck
	if w.RDMA || (w.Device != "" && w.Device != "auto") {
		cs = append(cs, rdmaChecks(f, w)...)
	}
	cs = append(cs, gpuChecks(f, w)...)
	if w.NCCLNet {
		cs = append(cs, ncclNetPlugin(f))
	}
	return append(cs, probeChecks(f, w)...)
}

// gpuChecks: the GPU count, then GPU memory over RDMA where there is a
// GPU (with none, the count is the one reason its tests are skipped).
func gpuChecks(f Facts, w Want) []schema.PreflightCheck {
	var cs []schema.PreflightCheck
	if w.GPU || w.GPUs > 0 {
		c := gpuCount(f, w)
		if c.Status == schema.PreflightFail {
			return []schema.PreflightCheck{c}
		}
		cs = append(cs, c)
	}
	if w.GPUDirect {
		cs = append(cs, softenGPU(gpuDirect(f), w))
	}
	return cs
}

// probeChecks judge the tools' probes; a failure that repeats an earlier
// one's evidence (nccl-loads-X after binary-X: "X is not on PATH") is
// said once. On a host the fix is a host's, not an image's.
func probeChecks(f Facts, w Want) []schema.PreflightCheck {
	var cs []schema.PreflightCheck
	for _, p := range w.Probes {
		c := probeCheck(p, f.Probes)
		if c.Status == schema.PreflightFail && slices.ContainsFunc(cs, func(d schema.PreflightCheck) bool {
			return d.Status == schema.PreflightFail && d.Evidence == c.Evidence
		}) {
			continue
		}
		if !w.Pod {
			c.Fix = hostFix(c.Fix)
		}
		cs = append(cs, c)
	}
	return cs
}

// hostFix is a tool's install advice for a host where its own speaks of
// images (tool.Spec.HostInstall).
func hostFix(fix string) string {
	for _, s := range tool.All() {
		if s.HostInstall != "" && fix == s.Install {
			return s.HostInstall
		}
	}
	return fix
}

// ncclNetPlugin: NCCL between nodes over EFA goes through libfabric by the
// aws-ofi-nccl plugin (libnccl-net-ofi.so); without one NCCL falls back to
// sockets (or its IB verbs transport, which EFA does not serve).
func ncclNetPlugin(f Facts) schema.PreflightCheck {
	if len(f.NCCLNet) > 0 {
		return pass(NCCLNetPlugin, "NCCL net plugin: "+strings.Join(f.NCCLNet, ", "))
	}
	return fail(NCCLNetPlugin, schema.DoomsNCCLNet,
		"no NCCL net plugin (libnccl-net*.so) in /opt/amazon/ofi-nccl, /opt/aws-ofi-nccl or the linker's path: NCCL between nodes over EFA needs aws-ofi-nccl",
		"use an image with aws-ofi-nccl (AWS's deep learning containers carry it at /opt/amazon/ofi-nccl), or install it from github.com/aws/aws-ofi-nccl with libfabric's efa provider")
}

// probeCheck judges one probe's output; a failure dooms the tests that
// need the probe (schema.DoomsTool, by id).
func probeCheck(p tools.Probe, outs map[string]string) schema.PreflightCheck {
	out, ran := outs[p.ID]
	if !ran {
		return warn(p.ID, "the probe did not run", "")
	}
	status, ev, fix := p.Judge(out)
	switch status {
	case tools.ProbePass:
		return pass(p.ID, ev)
	case tools.ProbeFail:
		return fail(p.ID, schema.DoomsTool, ev, fix)
	}
	return warn(p.ID, ev, fix)
}

// softenGPU makes a GPUDirect failure a warning outside pods: on hosts
// (local, ssh) the GPU tool itself says whether GPU memory moves over
// RDMA (dma-buf needs no module preflight can see). In a pod it is the
// node's setup, and dooms the test.
func softenGPU(c schema.PreflightCheck, w Want) schema.PreflightCheck {
	if c.Status == schema.PreflightFail && !w.Pod {
		c.Status, c.Dooms = schema.PreflightWarn, ""
		c.Evidence += " (on a host the GPU tool decides: not skipped)"
	}
	return c
}

func pass(id, ev string) schema.PreflightCheck {
	return schema.PreflightCheck{ID: id, Status: schema.PreflightPass, Evidence: ev}
}

func warn(id, ev, fix string) schema.PreflightCheck {
	return schema.PreflightCheck{ID: id, Status: schema.PreflightWarn, Evidence: ev, Fix: fix}
}

func fail(id, dooms, ev, fix string) schema.PreflightCheck {
	return schema.PreflightCheck{ID: id, Status: schema.PreflightFail, Evidence: ev, Fix: fix, Dooms: dooms}
}

// pick is the endpoint's device and port: the named one, else the first
// with an ACTIVE port, else the first there is.
func pick(inv *nic.Inventory, name string) (*nic.Device, *nic.Port, bool) {
	if inv == nil || len(inv.Devices) == 0 {
		return nil, nil, false
	}
	if name != "" && name != "auto" {
		for i := range inv.Devices {
			if inv.Devices[i].Name == name {
				return &inv.Devices[i], activeOrFirst(&inv.Devices[i]), true
			}
		}
		return nil, nil, false
	}
	if d, p, err := inv.Pick("auto"); err == nil {
		return d, p, true
	}
	return &inv.Devices[0], activeOrFirst(&inv.Devices[0]), true
}

func activeOrFirst(d *nic.Device) *nic.Port {
	for i := range d.Ports {
		if d.Ports[i].State == "ACTIVE" {
			return &d.Ports[i]
		}
	}
	if len(d.Ports) > 0 {
		return &d.Ports[0]
	}
	return nil
}

func devNames(inv *nic.Inventory) string {
	if inv == nil || len(inv.Devices) == 0 {
		return "none"
	}
	var s []string
	for _, d := range inv.Devices {
		st := "no ports"
		if p := activeOrFirst(&d); p != nil {
			st = fmt.Sprintf("port %d %s", p.Port, p.State)
		}
		s = append(s, d.Name+" ("+st+")")
	}
	return strings.Join(s, ", ")
}

// rdmaChecks are the checks of the RDMA device the tests use.
func rdmaChecks(f Facts, w Want) []schema.PreflightCheck {
	if w.NoDevice != "" {
		fix := "give the endpoint's data network an RDMA device: an SR-IOV or host-device network whose CNI reports device-info, the RDMA device plugin's resource, or name the device in the scenario"
		return []schema.PreflightCheck{fail(RDMADevice, schema.DoomsRDMA, w.NoDevice, fix)}
	}
	d, p, ok := pick(f.Inv, w.Device)
	if !ok {
		ev := "no RDMA device under /sys/class/infiniband"
		fix := "load the NIC's RDMA driver (mlx5_ib, or rdma_rxe: rdma link add rxe0 type rxe netdev eth0) or run where the NIC is"
		if f.Inv != nil && len(f.Inv.Devices) > 0 {
			ev = fmt.Sprintf("RDMA device %q not found; this endpoint has %s", w.Device, devNames(f.Inv))
			fix = "set the endpoint's device to one of these (or device: auto)"
		}
		if w.Pod {
			fix += "; in a pod, request the RDMA resource (e.g. rdma/roce_gdr) or a host-device/SR-IOV network"
		}
		return []schema.PreflightCheck{fail(RDMADevice, schema.DoomsRDMA, ev, fix)}
	}
	cs := []schema.PreflightCheck{pass(RDMADevice, d.Name+" present")}
	if p == nil {
		return append(cs, fail(PortActive, schema.DoomsRDMA, d.Name+" has no ports", "check the driver (dmesg)"))
	}
	cs = append(cs, portActive(d, p), linkLayer(p), devInfiniband(f, d.Name), memlock(f, w))
	if c, ok := ipcLock(f, w); ok {
		cs = append(cs, c)
	}
	if p.LinkLayer == "Ethernet" {
		cs = append(cs, mtuMatch(f, d, p), roceGID(p, w))
	}
	return append(cs, pcieLink(f, d))
}

func portActive(d *nic.Device, p *nic.Port) schema.PreflightCheck {
	ev := fmt.Sprintf("%s port %d: state %s, physical state %s", d.Name, p.Port, p.State, p.PhysState)
	if p.State != "ACTIVE" {
		return fail(PortActive, schema.DoomsRDMA, ev, "bring the link up (cable, switch port, ip link set "+orDash(p.Netdev)+" up); check ibstat / rdma link")
	}
	return pass(PortActive, ev)
}

func linkLayer(p *nic.Port) schema.PreflightCheck {
	switch p.LinkLayer {
	case "Ethernet":
		return pass(LinkLayer, "Ethernet (RoCE) on "+orDash(p.Netdev))
	case "InfiniBand":
		return pass(LinkLayer, "InfiniBand")
	}
	return warn(LinkLayer, "link layer unknown ("+orDash(p.LinkLayer)+")", "check /sys/class/infiniband/DEV/ports/N/link_layer")
}

func devInfiniband(f Facts, dev string) schema.PreflightCheck {
	if !f.DevDir {
		return fail(DevInfiniband, schema.DoomsRDMA, "/dev/infiniband does not exist here",
			"load ib_uverbs (modprobe ib_uverbs); in a pod, the RDMA device plugin or a privileged pod mounts it")
	}
	u := f.Uverbs[dev]
	if u == "" {
		return fail(DevInfiniband, schema.DoomsRDMA, "no uverbs device for "+dev+" under /sys/class/infiniband_verbs",
			"load ib_uverbs (modprobe ib_uverbs)")
	}
	acc, ok := f.DevFiles[u]
	ev := fmt.Sprintf("/dev/infiniband/%s (%s): %s", u, dev, accessWords(acc, ok))
	if !ok || acc != "rw" {
		return fail(DevInfiniband, schema.DoomsRDMA, ev,
			"give the user read and write access to /dev/infiniband/"+u+" (udev rule, group rdma) or run the pod with the RDMA device plugin's resource")
	}
	if cm, ok := f.DevFiles["rdma_cm"]; ok && cm == "rw" {
		ev += "; rdma_cm rw"
	}
	return pass(DevInfiniband, ev)
}

func accessWords(acc string, ok bool) string {
	switch {
	case !ok:
		return "missing"
	case acc == "rw":
		return "rw"
	case acc == "":
		return "no access"
	}
	return acc + " only"
}

func hasIPCLock(f Facts) bool { return f.CapEff != nil && *f.CapEff&(1<<capIPCLock) != 0 }

func memlock(f Facts, w Want) schema.PreflightCheck {
	need := w.MinMemlockKiB
	if need <= 0 {
		need = DefaultMinMemlockKiB
	}
	if f.Memlock == nil {
		return warn(Memlock, "ulimit -l could not be read", "check ulimit -l where the tools run")
	}
	if *f.Memlock < 0 {
		return pass(Memlock, "ulimit -l unlimited")
	}
	ev := fmt.Sprintf("ulimit -l %d KiB, tools need %d KiB", *f.Memlock, need)
	if *f.Memlock >= need {
		return pass(Memlock, ev)
	}
	if hasIPCLock(f) {
		return pass(Memlock, ev+"; CAP_IPC_LOCK is held, so the limit does not apply")
	}
	return fail(Memlock, schema.DoomsRDMA, ev+" and CAP_IPC_LOCK is not held: memory registration fails",
		"raise the limit (ulimit -l unlimited; LimitMEMLOCK=infinity for a service; memlock in /etc/security/limits.conf) or grant IPC_LOCK")
}

// ipcLock is checked for pods, and wherever the memlock limit is finite.
func ipcLock(f Facts, w Want) (schema.PreflightCheck, bool) {
	unlimited := f.Memlock != nil && *f.Memlock < 0
	if !w.Pod && (unlimited || f.CapEff == nil) {
		return schema.PreflightCheck{}, false
	}
	if f.CapEff == nil {
		return warn(IPCLock, "CapEff could not be read from /proc/self/status", "check the pod's securityContext"), true
	}
	ev := fmt.Sprintf("CapEff %016x: IPC_LOCK %s", *f.CapEff, map[bool]string{true: "held", false: "not held"}[hasIPCLock(f)])
	switch {
	case hasIPCLock(f):
		return pass(IPCLock, ev), true
	case unlimited:
		return pass(IPCLock, ev+"; memlock is unlimited, so it is not needed"), true
	case w.Pod:
		return fail(IPCLock, schema.DoomsRDMA, ev+" and memlock is limited", fixIPCLock), true
	}
	return warn(IPCLock, ev, "grant IPC_LOCK or raise ulimit -l if registration fails"), true
}

func mtuMatch(f Facts, d *nic.Device, p *nic.Port) schema.PreflightCheck {
	active, ok := f.ActiveMTU[d.Name+"/"+strconv.Itoa(p.Port)]
	if !ok || active == 0 {
		why := "ibv_devinfo gave no active_mtu"
		if f.IbvDevinfo != "" {
			why = "ibv_devinfo: " + f.IbvDevinfo
		}
		return warn(MTUMatch, fmt.Sprintf("netdev %s MTU %d; active IB MTU unknown (%s)", orDash(p.Netdev), p.NetdevMTU, why),
			"install ibverbs-utils (ibv_devinfo) where the tools run")
	}
	allowed := p.ActiveMTU // the IB MTU the netdev MTU carries (RoCE headers counted)
	ev := fmt.Sprintf("netdev %s MTU %d carries IB MTU %d; active IB MTU %d", orDash(p.Netdev), p.NetdevMTU, allowed, active)
	switch {
	case p.NetdevMTU == 0:
		return warn(MTUMatch, fmt.Sprintf("active IB MTU %d; netdev MTU unknown", active), "check the port's netdev (ibdev2netdev)")
	case active > allowed:
		return fail(MTUMatch, schema.DoomsRDMA, ev+": frames larger than the netdev carries are dropped",
			fmt.Sprintf("raise the netdev MTU (ip link set %s mtu %d) or lower the port's MTU", orDash(p.Netdev), active+96))
	case active < allowed:
		return warn(MTUMatch, ev+": the RDMA path uses smaller packets than the netdev allows",
			"raise the port's MTU on the NIC and switch to match the netdev")
	}
	return pass(MTUMatch, ev)
}

// peerMTU compares active MTUs across the endpoints that run RDMA tests
// and fails mtu-match where they differ.
func peerMTU(in []Input, out []schema.PreflightEndpoint) {
	type mtu struct{ active, netdev int }
	seen := map[string]mtu{}
	var names []string
	for i := range in {
		d, p, ok := pick(in[i].Facts.Inv, in[i].Want.Device)
		if !ok || p == nil || p.LinkLayer != "Ethernet" || !in[i].Want.RDMA {
			continue
		}
		a := in[i].Facts.ActiveMTU[d.Name+"/"+strconv.Itoa(p.Port)]
		if a == 0 {
			continue
		}
		seen[in[i].Want.Endpoint] = mtu{a, p.NetdevMTU}
		names = append(names, in[i].Want.Endpoint)
	}
	sort.Strings(names)
	for i := range out {
		me, ok := seen[out[i].Endpoint]
		if !ok {
			continue
		}
		var diff []string
		for _, n := range names {
			if o := seen[n]; n != out[i].Endpoint && o.active != me.active {
				diff = append(diff, fmt.Sprintf("%s has active IB MTU %d (netdev MTU %d)", n, o.active, o.netdev))
			}
		}
		if len(diff) == 0 {
			continue
		}
		for j := range out[i].Checks {
			c := &out[i].Checks[j]
			if c.ID != MTUMatch {
				continue
			}
			c.Status, c.Dooms = schema.PreflightFail, schema.DoomsRDMA
			c.Evidence = fmt.Sprintf("%s; but %s", c.Evidence, strings.Join(diff, ", "))
			c.Fix = "give every endpoint's netdev the same MTU (ip link set DEV mtu N), so the RDMA ports run the same MTU"
		}
	}
}

func roceGID(p *nic.Port, w Want) schema.PreflightCheck {
	var v2 *nic.GID
	addr := w.Address
	loop := addr == "" || strings.HasPrefix(addr, "127.")
	for i := range p.GIDs {
		g := &p.GIDs[i]
		if g.Type == "RoCE v2" && (loop && g.IPv4 != "" || !loop && g.Holds(addr)) {
			v2 = g
			break
		}
	}
	if v2 == nil && w.DataDevice != "" && w.GIDIndex != nil && hasGID(p, *w.GIDIndex) {
		// The scenario named another device than the data interface's:
		// the tool can run over that device's own network; the path proof
		// on the data interface's device judges where the traffic went.
		return warn(RoCEGID, fmt.Sprintf("no RoCE v2 GID of %s on %s (the data address is on %s); the tests use GID index %d; GIDs: %s",
			orDash(addr), orDash(p.Netdev), w.DataDevice, *w.GIDIndex, gidList(p)),
			"name the data interface's device ("+w.DataDevice+"), or leave the device out so that each endpoint's is chosen from its data interface")
	}
	if v2 == nil {
		ev := fmt.Sprintf("no RoCE v2 GID of %s on %s", orDash(addr), orDash(p.Netdev))
		if loop {
			ev = "no RoCE v2 IPv4 GID on " + orDash(p.Netdev)
		}
		return fail(RoCEGID, schema.DoomsRDMA, ev+"; GIDs: "+gidList(p),
			"put the data address on the port's netdev (ip addr add ADDR dev "+orDash(p.Netdev)+"), or use the endpoint's address that has the GID")
	}
	ev := fmt.Sprintf("RoCE v2 GID %d is %s (%s)", v2.Index, orDash(v2.IPv4), v2.GID)
	if v2.IPv4 == "" {
		ev = fmt.Sprintf("RoCE v2 GID %d is %s", v2.Index, v2.GID)
	}
	if w.GIDIndex == nil {
		return pass(RoCEGID, ev+"; the tests use it")
	}
	if *w.GIDIndex == v2.Index {
		return pass(RoCEGID, ev+fmt.Sprintf("; the tests use GID index %d", *w.GIDIndex))
	}
	for _, g := range p.GIDs {
		if g.Index == *w.GIDIndex {
			return warn(RoCEGID, ev+fmt.Sprintf("; but the tests use GID index %d (%s %s)", g.Index, g.Type, orDash(g.IPv4)),
				fmt.Sprintf("set gidIndex: %d (or remove it)", v2.Index))
		}
	}
	return fail(RoCEGID, schema.DoomsRDMA, ev+fmt.Sprintf("; the tests use GID index %d, which is empty", *w.GIDIndex),
		fmt.Sprintf("set gidIndex: %d (or remove it)", v2.Index))
}

func hasGID(p *nic.Port, idx int) bool {
	for _, g := range p.GIDs {
		if g.Index == idx {
			return true
		}
	}
	return false
}

func gidList(p *nic.Port) string {
	if len(p.GIDs) == 0 {
		return "none"
	}
	var s []string
	for _, g := range p.GIDs {
		s = append(s, fmt.Sprintf("%d %s %s", g.Index, g.Type, orDash(g.IPv4)))
	}
	return strings.Join(s, ", ")
}

func pcieLink(f Facts, d *nic.Device) schema.PreflightCheck {
	l := f.PCIe[d.Name]
	if l == nil || (l.MaxSpeed == "" && l.MaxWidth == 0) {
		if d.PCIAddress == "" {
			return pass(PCIeLinkCheck, d.Name+" is a software device: no PCIe link")
		}
		return warn(PCIeLinkCheck, "max_link_speed/width not readable for "+d.Name, "check lspci -vv (LnkCap vs LnkSta)")
	}
	ev := fmt.Sprintf("%s: %s x%d of %s x%d", d.Name, l.Speed, l.Width, l.MaxSpeed, l.MaxWidth)
	cur, max := nic.PCIeBandwidth(l.Speed, l.Width), nic.PCIeBandwidth(l.MaxSpeed, l.MaxWidth)
	if (max > 0 && cur > 0 && cur < max) || (l.MaxWidth > 0 && l.Width < l.MaxWidth) {
		return warn(PCIeLinkCheck, ev+": downtrained, the NIC gets less PCIe bandwidth than it can use",
			"reseat the card or check the slot and BIOS (lspci -vv: LnkSta vs LnkCap)")
	}
	return pass(PCIeLinkCheck, ev)
}

func gpuCount(f Facts, w Want) schema.PreflightCheck {
	n, src := f.GPUFiles, "/dev/nvidiaN"
	if f.GPUSmi >= 0 {
		n, src = f.GPUSmi, "nvidia-smi -L"
	}
	need := max(w.GPUs, w.HostGPUs, 1)
	ev := fmt.Sprintf("%d GPU(s) (%s), scenario gives %d", n, src, w.GPUs)
	if w.HostGPUs > w.GPUs && w.HostGPUs <= n {
		ev += fmt.Sprintf(" (%d to the endpoints on this host, each its own)", w.HostGPUs)
	}
	if w.HostGPUs > n && n >= max(w.GPUs, 1) {
		// Each endpoint fits alone, not all together: they share GPU 0 up
		// (the planner gave them none of their own).
		return warn(GPUCount, ev+fmt.Sprintf(" (%d to the endpoints on this host in all): they share GPUs, so a collective "+
			"or DeepEP across them puts two ranks on one GPU (NCCL refuses) and a KV transfer between them stays in one GPU", w.HostGPUs),
			"lower the pools' gpus: so that they add up to this host's GPUs, or run where there are more")
	}
	if n < need {
		fix := "run where the GPUs are (nvidia-smi -L lists them), or lower gpus: in the scenario; check the NVIDIA driver"
		if w.Pod {
			fix = "request nvidia.com/gpu for the pool, or lower gpus: in the scenario; check nvidia-smi"
		}
		return fail(GPUCount, schema.DoomsGPU, ev, fix)
	}
	if n > need {
		// Not wrong, but the GPUs left out are not measured: a green that
		// says nothing about them.
		return warn(GPUCount, fmt.Sprintf("%s: %d GPU(s) here are not measured", ev, n-need),
			"give the pool gpus: all (local backend) or the host's count, to measure between every GPU")
	}
	return pass(GPUCount, ev)
}

func gpuDirect(f Facts) schema.PreflightCheck {
	if f.PeerMem != "" {
		return pass(GPUDirect, f.PeerMem+" loaded")
	}
	open := strings.Contains(f.NvidiaVersion, "Open Kernel Module")
	if open && kernelAtLeast(f.Kernel, 5, 12) {
		return pass(GPUDirect, "dma-buf: NVIDIA open kernel module on kernel "+f.Kernel)
	}
	ev := "nvidia_peermem not loaded"
	if f.NvidiaVersion == "" {
		ev += "; no NVIDIA driver (/proc/driver/nvidia/version)"
	} else {
		ev += "; driver: " + f.NvidiaVersion + ", kernel " + f.Kernel + " (dma-buf needs the open kernel module and kernel 5.12+)"
	}
	return fail(GPUDirect, schema.DoomsGPUDirect, ev, "modprobe nvidia_peermem (GPU Operator: driver.rdma.enabled=true), or use the open kernel module for dma-buf")
}

// kernelAtLeast is the one reading of a kernel release, shared with the
// gpu-initiated check (tools.GPUInitiatedProbe), which judges DMA-BUF alike.
func kernelAtLeast(k string, maj, min int) bool { return tools.KernelAtLeast(k, maj, min) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Needs is what a test needs of its endpoints, for Doomed.
type Needs struct {
	RDMA, GPU, GPUDirect bool
	// NCCLNet: NCCL between nodes on EKS (aws-ofi-nccl over EFA).
	NCCLNet bool
	// Probes are the ids of the tool-build checks it needs.
	Probes []string
}

// Doomed says whether a failing check on an endpoint dooms a test with
// these needs, and names the first such check (for the skip reason).
func Doomed(ep schema.PreflightEndpoint, n Needs) (schema.PreflightCheck, bool) {
	for _, c := range ep.Checks {
		if c.Status != schema.PreflightFail {
			continue
		}
		switch {
		case c.Dooms == schema.DoomsRDMA && n.RDMA,
			c.Dooms == schema.DoomsGPU && n.GPU,
			c.Dooms == schema.DoomsGPUDirect && n.GPUDirect,
			c.Dooms == schema.DoomsNCCLNet && n.NCCLNet,
			c.Dooms == schema.DoomsTool && slices.Contains(n.Probes, c.ID):
			return c, true
		}
	}
	return schema.PreflightCheck{}, false
}

// ActiveMTU is the active IB MTU of the endpoint's device (0: unknown).
func ActiveMTU(f Facts, device string) int {
	d, p, ok := pick(f.Inv, device)
	if !ok || p == nil {
		return 0
	}
	return f.ActiveMTU[d.Name+"/"+strconv.Itoa(p.Port)]
}
