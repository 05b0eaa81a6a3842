package parsers

import "strings"

// ucxTLKind maps UCX transport names, as UCX_PROTO_INFO tables and UCX logs
// print them ("rc_mlx5/mlx5_0:1", "tcp/eth0", "sysv/memory"), to a kind.
var ucxTLKind = map[string]string{
	"rc_mlx5": TransportRDMA, "rc_verbs": TransportRDMA, "rc": TransportRDMA,
	"dc_mlx5": TransportRDMA, "dc": TransportRDMA,
	"ud_mlx5": TransportRDMA, "ud_verbs": TransportRDMA, "ud": TransportRDMA,
	"srd": TransportRDMA, "gga_mlx5": TransportRDMA,
	"tcp":  TransportTCP,
	"sysv": TransportShm, "posix": TransportShm, "cma": TransportShm, "knem": TransportShm,
	"xpmem": TransportShm, "self": TransportShm, "cuda_ipc": TransportShm, "cuda_copy": TransportShm,
	"rocm_ipc": TransportShm, "rocm_copy": TransportShm, "gdr_copy": TransportShm, "ze_copy": TransportShm,
	"ze_ipc": TransportShm,
}

// ucxLine looks for "tl/device" words in a UCX log line or protocol table row.
func (ts *transportScan) ucxLine(raw string) {
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
	}
}

// ucxDevice remembers the device after "tl/" once per kind and name.
func (ts *transportScan) ucxDevice(kind, tl, rest string) {
	end := strings.IndexAny(rest, " |),;")
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
// shared-memory or copy transports mean the peers were on one host.
func (ts *transportScan) ucxResult() *Transport {
	t := &Transport{Kind: TransportUnknown, Source: "ucx", Evidence: ts.evidence}
	byKind := map[string]map[string]bool{}
	for tl := range ts.ucxTLs {
		k := ucxTLKind[tl]
		if byKind[k] == nil {
			byKind[k] = map[string]bool{}
		}
		byKind[k][tl] = true
	}
	for _, k := range []string{TransportRDMA, TransportTCP, TransportShm} {
		if len(byKind[k]) > 0 {
			t.Kind, t.Devices = k, ts.ucxDevs[k]
			break
		}
	}
	t.Detail = trJoin(ts.ucxTLs)
	return t
}
