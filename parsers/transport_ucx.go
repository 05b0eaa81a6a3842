package parsers

import (
	"slices"
	"strconv"
	"strings"
)

// ucxTLKind maps UCX transport names, as UCX_PROTO_INFO tables and UCX logs
// print them ("rc_mlx5/mlx5_0:1", "tcp/eth0", "sysv/memory"), to a kind.
var ucxTLKind = map[string]string{
	"rc_mlx5": TransportRDMA, "rc_verbs": TransportRDMA, "rc": TransportRDMA,
	"dc_mlx5": TransportRDMA, "dc": TransportRDMA,
	"ud_mlx5": TransportRDMA, "ud_verbs": TransportRDMA, "ud": TransportRDMA,
	"srd": TransportRDMA, "gga_mlx5": TransportRDMA,
	"tcp":  TransportTCP,
	"sysv": TransportShm, "posix": TransportShm, "cma": TransportShm, "knem": TransportShm,
	"xpmem": TransportShm, "self": TransportShm, "cuda_copy": TransportShm,
	"rocm_copy": TransportShm, "gdr_copy": TransportShm, "ze_copy": TransportShm,
	// GPU to GPU over NVLink or PCIe peer-to-peer (NCCL's P2P, in UCX's words)
	"cuda_ipc": TransportP2P, "rocm_ipc": TransportP2P, "ze_ipc": TransportP2P,
}

// ucxKindRank orders the kinds a UCX output may show, the most telling
// first: a path over the network beats one between GPUs, which beats
// host shared memory.
var ucxKindRank = []string{TransportRDMA, TransportTCP, TransportP2P, TransportShm}

// ucxLine looks for "tl/device" words in a UCX log line or protocol table
// row, noting which table (or log group) each is in.
func (ts *transportScan) ucxLine(raw string) {
	if strings.Contains(raw, " by ucp_") { // a UCX_PROTO_INFO table's title
		ts.ucxTable, ts.ucxPathKey = "other", ""
		switch {
		case strings.Contains(raw, "remote memory read by"):
			ts.ucxTable = "rma-read"
		case strings.Contains(raw, "remote memory write by"):
			ts.ucxTable = "rma-write"
		}
		if strings.HasPrefix(ts.ucxTable, "rma-") {
			ts.ucxPathKey = ucxPathKeyOf(raw)
		}
		return
	}
	if !strings.Contains(raw, "|") { // not a table row: whatever table was open has ended
		ts.ucxTable, ts.ucxPathKey = "", ""
	}
	inRMATable := strings.HasPrefix(ts.ucxTable, "rma-")
	if inRMATable {
		r, desc, ok := ucxRow(raw)
		// "copy-in", "copy-out", "multi-frag copy-in": bounce buffers.
		if ok && (strings.HasSuffix(desc, "copy-in") || strings.HasSuffix(desc, "copy-out")) {
			op := map[string]string{"rma-read": "READ", "rma-write": "WRITE"}[ts.ucxTable]
			if ts.ucxCopy == nil {
				ts.ucxCopy = map[string][]ByteRange{}
			}
			ts.ucxCopy[op] = append(ts.ucxCopy[op], r)
		}
		if ok && ts.ucxPathKey != "" {
			ts.ucxPathRow(raw, desc)
		}
	}
	rest := raw
	for len(rest) > 0 {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return
		}
		start := i
		for start > 0 && trTLByte(rest[start-1]) {
			start--
		}
		tl := rest[start:i]
		rest = rest[i+1:]
		kind, ok := ucxTLKind[tl]
		if !ok || len(rest) == 0 || rest[0] == ' ' {
			continue
		}
		if ts.ucxTLs == nil {
			ts.ucxTLs = map[string]bool{}
		}
		ts.seen = true
		if !ts.ucxTLs[tl] {
			ts.ucxTLs[tl] = true
			ts.keep("ucx-"+kind, raw)
		}
		ts.ucxDevice(kind, tl, rest)
		before := raw[:len(raw)-len(rest)-1-len(tl)]
		if inRMATable || strings.HasSuffix(before, "rma(") || strings.HasSuffix(before, "rma_bw(") {
			if ts.ucxRMA == nil {
				ts.ucxRMA = map[string]bool{}
			}
			if !ts.ucxRMA[tl] {
				ts.ucxRMA[tl] = true
				// The data path's line is evidence even past the cap,
				// unless it is the line just kept.
				if n := len(ts.evidence); n == 0 || ts.evidence[n-1] != strings.TrimSpace(strings.TrimRight(raw, "\r")) {
					ts.keepAlways("ucx-rma-"+tl, raw)
				}
			}
			if dev := ucxDev(rest); dev != "" && dev != "memory" && !contains(ts.ucxRMADevs[kind], dev) {
				if ts.ucxRMADevs == nil {
					ts.ucxRMADevs = map[string][]string{}
				}
				ts.ucxRMADevs[kind] = append(ts.ucxRMADevs[kind], dev)
			}
		}
	}
}

// ucxPath is one RMA table's protocols: the transports of its rows, and
// whether any row is UCX's software emulation of the operation.
type ucxPath struct {
	tls      map[string]bool
	devs     []string
	emulated string // the emulating transport ("tcp"), when a row emulates
	evidence []string
}

// ucxPathKeyOf reads an RMA table's title: "remote memory write by
// ucp_put*(multi) from cuda/GPU0 to cuda/dev[0]" is "WRITE cuda->cuda",
// "remote memory read by ucp_get* into host memory from host" is "READ
// host<-host"; the local buffer first, as nixlbench's initiator sees it.
func ucxPathKeyOf(title string) string {
	words := strings.Fields(strings.Trim(strings.TrimSpace(title[strings.Index(title, " by ucp_"):]), "|"))
	mem := func(after string) string {
		for i, w := range words {
			if w == after && i+1 < len(words) {
				m, _, _ := strings.Cut(words[i+1], "/")
				return m
			}
		}
		return ""
	}
	if strings.Contains(title, "remote memory read by") {
		return "READ " + mem("into") + "<-" + mem("from")
	}
	return "WRITE " + mem("from") + "->" + mem("to")
}

// UCXPathKey is the key of nixlbench's data path in UCX's tables: its op,
// the initiator's memory, the target's ("READ cuda<-cuda").
func UCXPathKey(op, initiatorSeg, targetSeg string) string {
	mem := func(seg string) string {
		if strings.EqualFold(seg, "VRAM") {
			return "cuda"
		}
		return "host"
	}
	if strings.EqualFold(op, "READ") {
		return "READ " + mem(initiatorSeg) + "<-" + mem(targetSeg)
	}
	return "WRITE " + mem(initiatorSeg) + "->" + mem(targetSeg)
}

// ucxPathRow notes a row of the open RMA table.
func (ts *transportScan) ucxPathRow(raw, desc string) {
	if ts.ucxPaths == nil {
		ts.ucxPaths = map[string]*ucxPath{}
	}
	p := ts.ucxPaths[ts.ucxPathKey]
	if p == nil {
		p = &ucxPath{tls: map[string]bool{}}
		ts.ucxPaths[ts.ucxPathKey] = p
	}
	cells := strings.Split(raw[strings.IndexByte(raw, '|')+1:], "|")
	if len(cells) < 3 {
		return
	}
	line := strings.TrimSpace(strings.TrimRight(raw, "\r"))
	for _, lane := range ucxConfigLanes(cells[2]) {
		tl, dev := lane[0], lane[1]
		if !p.tls[tl] && len(p.evidence) < 4 {
			p.evidence = append(p.evidence, line)
		}
		p.tls[tl] = true
		if dev != "" && dev != "memory" && dev != "cuda" && !contains(p.devs, dev) {
			p.devs = append(p.devs, dev)
		}
		if desc == "software emulation" {
			p.emulated = tl
		}
	}
}

// ucxConfigMax is the longest Config cell UCX writes (its 128-byte
// UCP_PROTO_CONFIG_STR_MAX buffer, less the NUL): a longer one is cut
// there, mid-word.
const ucxConfigMax = 127

// ucxConfigLanes reads a protocol row's Config cell into its lanes'
// transport and device: "rc_mlx5/mlx5_0:1"; several lanes as UCX's
// ucp_proto_multi_query writes them, "30% on A, 40% on B and 30% on C";
// one device over several paths, "A 50% on path0 and 50% on path1" or
// "50% on A/path0 and …". Percentages and paths are not devices.
func ucxConfigLanes(cell string) [][2]string {
	var lanes [][2]string
	text := strings.TrimSpace(cell)
	words := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == ',' })
	// UCX cuts a cell at ucxConfigMax, mid-word: the last word's device
	// is whole only where its "/pathN" had begun ("rc_mlx5/mlx5_13:1/pat"),
	// not in "rc_mlx5/mlx5_1" (mlx5_13, or mlx5_1?).
	cut := len(text) >= ucxConfigMax && !strings.HasSuffix(text, ",")
	for i, word := range words {
		tl, rest, ok := strings.Cut(word, "/")
		if _, known := ucxTLKind[tl]; !ok || !known {
			continue
		}
		dev, _, hasPath := strings.Cut(rest, "/") // "mlx5_0:1/path1"
		if cut && i == len(words)-1 && !hasPath {
			dev = ""
		}
		if !slices.Contains(lanes, [2]string{tl, dev}) {
			lanes = append(lanes, [2]string{tl, dev})
		}
	}
	return lanes
}

// ucxDev is the device after "tl/" in rest.
func ucxDev(rest string) string {
	end := strings.IndexAny(rest, " |),;/") // "mlx5_0:1/path1": the path is not the device
	if end < 0 {
		end = len(rest)
	}
	return rest[:end]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ucxDevice remembers the device after "tl/" once per kind and name.
func (ts *transportScan) ucxDevice(kind, tl, rest string) {
	end := strings.IndexAny(rest, " |),;/")
	if end < 0 {
		end = len(rest)
	}
	dev := rest[:end]
	if dev == "" || dev == "memory" || dev == "cuda" || len(ts.ucxDevs[kind]) >= 8 {
		return
	}
	if ts.ucxDevs == nil {
		ts.ucxDevs = map[string][]string{}
	}
	for _, d := range ts.ucxDevs[kind] {
		if d == dev {
			return
		}
	}
	ts.ucxDevs[kind] = append(ts.ucxDevs[kind], dev)
}

func trTLByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
}

// ucxResult ranks what UCX selected: any verbs transport means the fabric
// carried data; tcp without verbs is the silent fallback to flag; only
// shared-memory or copy transports mean the peers were on one host. When
// the output shows the remote-memory-access path (NIXL's data), the
// ranking is of that path alone, and the detail says what carried the
// data and what the control messages.
func (ts *transportScan) ucxResult() *Transport {
	if len(ts.ucxRMA) > 0 {
		return ts.ucxRMAResult()
	}
	t := &Transport{Kind: TransportUnknown, Source: "ucx", Evidence: ts.evidence}
	byKind := map[string]map[string]bool{}
	for tl := range ts.ucxTLs {
		k := ucxTLKind[tl]
		if byKind[k] == nil {
			byKind[k] = map[string]bool{}
		}
		byKind[k][tl] = true
	}
	for _, k := range ucxKindRank {
		if len(byKind[k]) > 0 {
			t.Kind, t.Devices = k, ts.ucxDevs[k]
			break
		}
	}
	t.Detail = trJoin(ts.ucxTLs)
	return t
}

// ucxRMAResult is the verdict from the data path's transports.
func (ts *transportScan) ucxRMAResult() *Transport {
	t := &Transport{Kind: TransportUnknown, Source: "ucx", Evidence: ts.evidence}
	for _, k := range ucxKindRank {
		for tl := range ts.ucxRMA {
			if ucxTLKind[tl] == k {
				t.Kind, t.Devices = k, ts.ucxRMADevs[k]
				break
			}
		}
		if t.Kind != TransportUnknown {
			break
		}
	}
	t.Detail = trJoin(ts.ucxRMA) + " (data)"
	// Which op's copies apply is the tool's to say (ForOp); until then,
	// any copy row counts.
	t.copyByOp = ts.ucxCopy
	t.paths = ts.ucxPaths
	for _, rs := range ts.ucxCopy {
		t.Copy = t.Copy || len(rs) > 0
	}
	control := map[string]bool{}
	for tl := range ts.ucxTLs {
		if !ts.ucxRMA[tl] {
			control[tl] = true
		}
	}
	if len(control) > 0 {
		t.control = trJoin(control) + " (control)"
		t.Detail += ", " + t.control
	}
	return t
}

// ucxRow reads a UCX_PROTO_INFO row's size range and description:
// "| 81..477 | copy-in | rc_verbs/rxe0:1 |", "| 0..inf | …", "| 33 | …"
// (one size). Titles and the header row are not rows.
func ucxRow(raw string) (ByteRange, string, bool) {
	i := strings.IndexByte(raw, '|')
	if i < 0 {
		return ByteRange{}, "", false
	}
	cells := strings.Split(raw[i+1:], "|")
	if len(cells) < 3 {
		return ByteRange{}, "", false
	}
	r, ok := ucxRange(strings.TrimSpace(cells[0]))
	return r, strings.TrimSpace(cells[1]), ok
}

// ucxRange reads "81..477", "0..inf" or "33".
func ucxRange(cell string) (ByteRange, bool) {
	lo, hi, found := strings.Cut(cell, "..")
	if !found {
		hi = lo
	}
	from, err := strconv.ParseInt(lo, 10, 64)
	if err != nil {
		return ByteRange{}, false
	}
	to := int64(-1)
	if hi != "inf" {
		if to, err = strconv.ParseInt(hi, 10, 64); err != nil {
			return ByteRange{}, false
		}
	}
	return ByteRange{From: from, To: to}, true
}
