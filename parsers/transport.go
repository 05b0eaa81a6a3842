package parsers

import (
	"sort"
	"strings"
)

// DetectTransport reads debug output (NCCL_DEBUG=INFO lines, UCX_PROTO_INFO
// tables, UCX log lines) and says what actually carried the data, so that a
// run which silently fell back to TCP is flagged instead of trusted. It
// returns nil when the text holds no transport evidence at all.
func DetectTransport(text string) *Transport {
	var ts transportScan
	for len(text) > 0 {
		i := strings.IndexByte(text, '\n')
		var line string
		if i < 0 {
			line, text = text, ""
		} else {
			line, text = text[:i], text[i+1:]
		}
		ts.observe(line)
	}
	return ts.result()
}

// maxEvidence bounds the lines kept as evidence: enough to convince a
// reader, few enough to keep results small.
const maxEvidence = 6

// maxChannelEvidence bounds the channel lines kept past maxEvidence (one
// each of P2P, SHM, NVLS).
const maxChannelEvidence = 3

// transportScan accumulates transport evidence one line at a time, so that
// parsers can collect it in the same pass as their tables.
type transportScan struct {
	seen     bool
	nccl     bool
	netRDMA  map[string]bool // NET/IB, NET/OFI, COLLNET … named in "via" lines
	netTCP   bool            // "via NET/Socket"
	local    map[string]bool // P2P, SHM, NVLS
	network  string          // "Using network X"
	nNodes   int
	nRanks   int // largest "comm … nRanks N" seen; 0 when none
	ibDevs   []string
	sockDevs []string
	gdr      *bool
	ringGDR  *bool // "Connected all rings … GDR n"
	ucxTLs   map[string]bool
	ucxDevs  map[string][]string // kind → devices after "tl/"
	// ucxRMA are the transports UCX chose for remote memory access (the
	// rows of UCX_PROTO_INFO's "remote memory read/write" tables, rma(…)
	// in its ep_cfg log lines): NIXL's data path. The others carry active
	// messages, tags and keep-alive: control.
	ucxRMA     map[string]bool
	ucxRMADevs map[string][]string
	ucxTable   string // the UCX_PROTO_INFO table being read: "rma-read", "rma-write", "other" or ""
	// ucxCopy are the sizes remote memory is copied at (copy-in/copy-out
	// rows), by the table's op: "READ", "WRITE".
	ucxCopy map[string][]ByteRange
	// ucxPaths are the RMA tables by op and memory ("READ cuda<-cuda"):
	// UCX picks a protocol per memory type, and VRAM's may differ from
	// DRAM's (cuda_ipc, or software emulation over tcp).
	ucxPaths   map[string]*ucxPath
	ucxPathKey string // the open RMA table's key
	// ofiProvider is the libfabric provider NIXL's LIBFABRIC plugin
	// built its rails on ("Created 1 rails using provider=tcp").
	ofiProvider string
	evidence    []string
	keys        map[string]bool // evidence already kept, by category
}

// observe feeds one raw line; it is cheap for lines that carry no evidence.
func (ts *transportScan) observe(raw string) {
	if i := strings.Index(raw, "NCCL INFO "); i >= 0 {
		ts.observeInfo(raw, i)
		return
	}
	if strings.Contains(raw, "UCX") || strings.Contains(raw, " | ") || strings.Contains(raw, "ep_cfg[") {
		ts.ucxLine(raw)
		return
	}
	if i := strings.Index(raw, "rails using provider="); i >= 0 {
		ts.ofiLine(raw, raw[i+len("rails using provider="):])
	}
}

// ofiLine reads NIXL's LIBFABRIC plugin's INFO line naming the provider its
// rails use (libfabric_rail_manager.cpp: "Created N rails using
// provider=tcp").
func (ts *transportScan) ofiLine(raw, provider string) {
	if end := strings.IndexAny(provider, " \t\r,;"); end >= 0 {
		provider = provider[:end]
	}
	if provider == "" {
		return
	}
	ts.seen, ts.ofiProvider = true, provider
	ts.keepAlways("ofi-provider", raw)
}

// ofiKind is the transport kind of a libfabric provider: the RDMA ones
// (efa's SRD, verbs and its rxm/rxd layers, cxi, psm, opx), TCP (tcp,
// sockets, udp) and shared memory.
func ofiKind(provider string) string {
	p := strings.ToLower(provider)
	switch {
	case strings.Contains(p, "efa"), strings.Contains(p, "verbs"), strings.Contains(p, "cxi"),
		strings.Contains(p, "psm"), strings.Contains(p, "opx"), strings.Contains(p, "ucx"):
		return TransportRDMA
	case strings.Contains(p, "tcp"), strings.Contains(p, "sockets"), strings.Contains(p, "udp"):
		return TransportTCP
	case strings.Contains(p, "shm"), strings.Contains(p, "sm2"):
		return TransportShm
	}
	return TransportUnknown
}

// observeInfo handles a line whose "NCCL INFO " marker is at index i.
func (ts *transportScan) observeInfo(raw string, i int) {
	msg := raw[i+len("NCCL INFO "):]
	if n := len(msg); n > 0 && msg[n-1] == '\r' {
		msg = msg[:n-1]
	}
	ts.ncclInfo(msg, raw)
}

// ncclInfo handles the text after "NCCL INFO ". Channel lines, by far the
// most frequent, are recognised by their prefix before anything is searched.
func (ts *transportScan) ncclInfo(msg, raw string) {
	switch {
	case strings.HasPrefix(msg, "Channel ") || strings.HasPrefix(msg, "CollNet "):
		if strings.Contains(msg, " via ") {
			ts.ncclVia(msg, raw)
		}
	case strings.HasPrefix(msg, "Trees ") || strings.HasPrefix(msg, "P2P Chunksize") || strings.HasPrefix(msg, "["):
	case strings.Contains(msg, " via "):
		ts.ncclVia(msg, raw)
	case strings.HasPrefix(msg, "Using network "):
		ts.mark("network", raw)
		ts.network = strings.TrimSpace(msg[len("Using network "):])
	case strings.HasPrefix(msg, "NET/IB : Using "):
		ts.mark("ibdev", raw)
		if ts.ibDevs == nil {
			ts.ibDevs = trNetDevices(msg[len("NET/IB : Using "):])
		}
	case strings.HasPrefix(msg, "NET/Socket : Using "):
		ts.mark("sockdev", raw)
		if ts.sockDevs == nil {
			ts.sockDevs = trNetDevices(msg[len("NET/Socket : Using "):])
		}
	case strings.HasPrefix(msg, "NET/IB : No device found"):
		ts.mark("noib", raw)
	case strings.Contains(msg, "GPU Direct RDMA Enabled"):
		ts.setGDR(true)
		ts.mark("gdr", raw)
	case strings.Contains(msg, "GPU Direct RDMA Disabled"):
		if ts.gdr == nil {
			ts.setGDR(false)
		}
		ts.mark("gdr", raw)
	case strings.HasPrefix(msg, "Connected all rings"):
		// The ring's GDR flag also covers GPU peer-to-peer, so it only
		// speaks for GPUDirect RDMA when the ring uses the network.
		if i := strings.Index(msg, " GDR "); i >= 0 && ts.ringGDR == nil {
			v := strings.HasPrefix(msg[i+5:], "1")
			ts.ringGDR = &v
		}
	case strings.HasPrefix(msg, "comm ") && strings.Contains(msg, " nNodes "):
		ts.nccl, ts.seen = true, true
		ts.nNodes = max(ts.nNodes, trField(msg, " nNodes "))
		if n := trField(msg, " nRanks "); n > ts.nRanks {
			ts.nRanks = n
			ts.keep("nranks", raw)
		}
	case strings.Contains(msg, " nvls channels"):
		// "24 coll channels, 24 collnet channels, 0 nvls channels, …"
		f := strings.Fields(msg[:strings.Index(msg, " nvls channels")])
		if n, ok := trAtoi(f[len(f)-1]); ok && n > 0 {
			ts.addLocal("NVLS", "via-nvls", raw)
		}
	case strings.HasPrefix(msg, "NCCL version "):
		ts.nccl = true
	}
}

// ncclVia handles channel connection lines such as
// "Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA".
func (ts *transportScan) ncclVia(msg, raw string) {
	via := msg[strings.Index(msg, " via ")+5:]
	if strings.Contains(via, "GDRDMA") {
		ts.setGDR(true)
	}
	switch {
	case strings.HasPrefix(via, "NET/"):
		name := via[4:]
		if j := strings.IndexByte(name, '/'); j >= 0 {
			name = name[:j]
		}
		if name == "Socket" {
			ts.netTCP = true
			ts.mark("via-tcp", raw)
			return
		}
		if ts.netRDMA == nil {
			ts.netRDMA = map[string]bool{}
		}
		ts.netRDMA["NET/"+name] = true
		ts.mark("via-rdma", raw)
	case strings.HasPrefix(via, "COLLNET"):
		if ts.netRDMA == nil {
			ts.netRDMA = map[string]bool{}
		}
		ts.netRDMA["COLLNET"] = true
		ts.mark("via-rdma", raw)
	default:
		// "P2P/CUMEM", "P2P/IPC/read", "P2P/direct pointer", "SHM/direct/direct"
		// P2P keeps its mechanism (CUMEM, IPC, direct pointer), SHM and
		// the rest their first word.
		parts := strings.SplitN(strings.TrimSpace(via), "/", 3)
		name, key := parts[0], "via-shm"
		if name == "P2P" && len(parts) > 1 {
			name, key = "P2P/"+parts[1], "via-p2p"
		} else if j := strings.IndexByte(name, ' '); j >= 0 {
			name = name[:j]
		}
		if name == "" {
			return
		}
		ts.addLocal(name, key, raw)
	}
}

// addLocal records an intra-host transport (P2P, SHM, NVLS) named by NCCL.
func (ts *transportScan) addLocal(name, key, raw string) {
	if ts.local == nil {
		ts.local = map[string]bool{}
	}
	ts.local[name] = true
	ts.nccl, ts.seen = true, true
	ts.keepAlways(key, raw)
}

// trField is the number after label in msg ("comm 0x… rank 0 nRanks 2
// nNodes 1 …"); 0 when absent.
func trField(msg, label string) int {
	i := strings.Index(msg, label)
	if i < 0 {
		return 0
	}
	f := strings.Fields(msg[i+len(label):])
	if len(f) == 0 {
		return 0
	}
	n, _ := trAtoi(f[0])
	return n
}

func (ts *transportScan) setGDR(v bool) {
	ts.gdr = &v
	ts.nccl, ts.seen = true, true
}

// mark records that NCCL evidence was seen and keeps the line as evidence
// the first time its category appears.
func (ts *transportScan) mark(key, raw string) {
	ts.nccl, ts.seen = true, true
	ts.keep(key, raw)
}

func (ts *transportScan) keep(key, raw string) {
	if len(ts.evidence) >= maxEvidence {
		return
	}
	ts.keepAlways(key, raw)
}

// keepAlways keeps the first line of a category even past maxEvidence:
// the channel lines that name the transport must not be crowded out by
// the network probing printed before them (a few categories at most).
func (ts *transportScan) keepAlways(key, raw string) {
	if ts.keys[key] || len(ts.evidence) >= maxEvidence+maxChannelEvidence {
		return
	}
	if ts.keys == nil {
		ts.keys = map[string]bool{}
	}
	ts.keys[key] = true
	ts.evidence = append(ts.evidence, strings.TrimSpace(strings.TrimRight(raw, "\r")))
}

// trNetDevices turns "[0]mlx5_0:1/RoCE [1]mlx5_1:1/IB ; OOB eth0:…" or
// "[0]eth0:192.0.2.2<0>" into device names.
func trNetDevices(s string) []string {
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	var devs []string
	for _, f := range strings.Fields(s) {
		if !strings.HasPrefix(f, "[") {
			continue
		}
		j := strings.IndexByte(f, ']')
		if j < 0 || !isDigits(f[1:j]) {
			continue
		}
		d := f[j+1:]
		if k := strings.IndexByte(d, '<'); k >= 0 {
			d = d[:k]
		}
		if d != "" {
			devs = append(devs, d)
		}
	}
	return devs
}

func trAtoi(s string) (int, bool) {
	if !isDigits(s) || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// result turns the evidence into a verdict; nil when nothing was seen.
func (ts *transportScan) result() *Transport {
	if !ts.seen {
		return nil
	}
	if ts.nccl {
		return ts.ncclResult()
	}
	if ts.ofiProvider != "" && len(ts.ucxTLs) == 0 {
		return &Transport{Kind: ofiKind(ts.ofiProvider), Source: "libfabric", Detail: ts.ofiProvider, Evidence: ts.evidence}
	}
	return ts.ucxResult()
}

func (ts *transportScan) ncclResult() *Transport {
	t := &Transport{Kind: TransportUnknown, Source: "nccl", GDR: ts.gdr, Evidence: ts.evidence}
	if t.GDR == nil && (len(ts.netRDMA) > 0 || ts.netTCP) {
		t.GDR = ts.ringGDR
	}
	switch {
	case len(ts.netRDMA) > 0:
		t.Kind, t.Detail, t.Devices = TransportRDMA, trJoin(ts.netRDMA), ts.ibDevs
		if ts.netTCP {
			t.Detail += "+NET/Socket"
		}
	case ts.netTCP:
		t.Kind, t.Detail, t.Devices = TransportTCP, "NET/Socket", ts.sockDevs
	case len(ts.local) > 0:
		t.Kind, t.Detail = TransportShm, trJoin(ts.local)
		for name := range ts.local {
			if strings.HasPrefix(name, "P2P") || name == "NVLS" {
				t.Kind = TransportP2P
			}
		}
	case ts.nRanks == 1:
		t.Kind, t.Detail = TransportNone, "single rank: no inter-GPU transport"
	case ts.network != "" && ts.nNodes != 1:
		t.Detail = "NET/" + ts.network
		if ts.network == "Socket" {
			t.Kind, t.Devices = TransportTCP, ts.sockDevs
		} else {
			t.Kind, t.Devices = TransportRDMA, ts.ibDevs
		}
	case ts.network != "":
		t.Detail = "NET/" + ts.network + " (single node, no channel lines)"
	case len(ts.ibDevs) > 0:
		t.Kind, t.Detail, t.Devices = TransportRDMA, "NET/IB", ts.ibDevs
	}
	return t
}

func trJoin(set map[string]bool) string {
	names := make([]string, 0, len(set))
	for k := range set {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, "+")
}
