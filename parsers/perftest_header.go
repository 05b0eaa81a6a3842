package parsers

import (
	"strings"
)

// keyValues records "Key : value" header facts; a line may hold two,
// separated by TABs (or the spaces a terminal rendered them as).
func (p *ptParser) keyValues(line string) {
	for _, half := range splitHeaderHalves(line) {
		if half == "" {
			continue
		}
		i := strings.IndexByte(half, ':')
		if i <= 0 || i > 40 {
			continue
		}
		k, v := p.infoKey(half[:i]), strings.TrimSpace(half[i+1:])
		if k != "" && v != "" {
			p.sess.writableInfo()[k] = p.intern(v)
		}
	}
}

// ptHeaderLabels are the header-block labels perftest and its forks print
// (formats.md §1.5); lines starting with one skip the error checks.
var ptHeaderLabels = map[string]bool{
	"Dual-port": true, "Number of qps": true, "Connection type": true, "PCIe relax order": true,
	"ibv_wr* API": true, "TX depth": true, "RX depth": true, "CQ Moderation": true, "CQE Poll Batch": true,
	"Mtu": true, "Link type": true, "GID index": true, "Max inline data": true, "Outstand reads": true,
	"rdma_cm QPs": true, "Data ex. method": true, "Post List": true, "CPU freq": true, "NUMA node": true,
	"Use ROCm memory": true, "Use MUSA memory": true, "Using DDP": true,
}

// ptKnownLabel reports a line that starts with a known header label.
func ptKnownLabel(line string) bool {
	i := strings.IndexByte(line, ':')
	return i > 0 && ptHeaderLabels[strings.TrimRight(line[:i], " \t")]
}

// splitHeaderHalves splits " Dual-port : OFF\t\tDevice : mlx5_0" in two:
// at a TAB, or at a run of 3+ spaces that follows a value.
func splitHeaderHalves(line string) [2]string {
	if i := strings.IndexByte(line, '\t'); i >= 0 && strings.Contains(line[:i], ":") {
		return [2]string{line[:i], strings.TrimSpace(line[i:])}
	}
	c := strings.IndexByte(line, ':')
	if c < 0 {
		return [2]string{}
	}
	rest := line[c+1:]
	val := strings.TrimLeft(rest, " ")
	if j := strings.Index(val, "   "); j > 0 && strings.Contains(val[j:], ":") {
		cut := c + 1 + (len(rest) - len(val)) + j
		return [2]string{line[:cut], strings.TrimSpace(line[cut:])}
	}
	return [2]string{line}
}

// infoKey is infoKey with a cache.
func (p *ptParser) infoKey(label string) string {
	if k, ok := p.keys[label]; ok {
		return k
	}
	if p.keys == nil {
		p.keys = map[string]string{}
	}
	k := infoKey(label)
	p.keys[strings.Clone(label)] = k
	return k
}

// intern returns a kept copy of v, shared by every run that prints it.
func (p *ptParser) intern(v string) string {
	if c, ok := p.strs[v]; ok {
		return c
	}
	if p.strs == nil {
		p.strs = map[string]string{}
	}
	c := strings.Clone(v)
	if len(p.strs) < 4096 {
		p.strs[c] = c
	}
	return c
}

// layout parses a table header, once per distinct header text.
func (p *ptParser) layout(line string) (ptLayout, bool) {
	if l, ok := p.layouts[line]; ok {
		return l, true
	}
	l, ok := parsePtHeader(line)
	if ok && len(p.layouts) < 64 {
		if p.layouts == nil {
			p.layouts = map[string]ptLayout{}
		}
		p.layouts[strings.Clone(line)] = l
	}
	return l, ok
}

// ptVerbs are the verb names perftest puts in its banner, longest first.
var ptVerbs = []struct{ prefix, verb string }{
	{"RDMA_Write_imm", "write"},
	{"RDMA_Write", "write"},
	{"RDMA_Read", "read"},
	{"Send_imm", "send"},
	{"Send", "send"},
	{"Atomic", "atomic"},
}

// ptTitle recognises the banner, e.g. "RDMA_Write Bidirectional BW Test".
func ptTitle(line string) (string, bool) {
	if !strings.HasSuffix(line, " Test") || !(strings.Contains(line, " BW ") || strings.Contains(line, " Latency ")) {
		return "", false
	}
	for _, v := range ptVerbs {
		if strings.HasPrefix(line, v.prefix+" ") {
			return line, true
		}
	}
	return "", false
}

// ptToolFromTitle names the binary that prints a banner ("Send Latency
// Test" → ib_send_lat); "perftest" when the banner is missing.
func ptToolFromTitle(title string, l ptLayout) string {
	for _, v := range ptVerbs {
		if strings.HasPrefix(title, v.prefix+" ") {
			if strings.Contains(title, " Latency ") {
				return "ib_" + v.verb + "_lat"
			}
			return "ib_" + v.verb + "_bw"
		}
	}
	return "perftest"
}
