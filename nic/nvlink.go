package nic

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// NVLink is one GPU's active NVLink links as `nvidia-smi nvlink --status`
// prints them ("GPU 0: NVIDIA H200 (UUID: …)" then "Link 0: 26.562 GB/s"
// per link; an inactive link prints "<inactive>" and is not counted).
type NVLink struct {
	GPU   int
	Name  string
	Links int
	// Down counts the links listed <inactive>.
	Down int
	// GBps is the sum of the active links' rates, per direction (GB/s).
	GBps float64
	// PerLink is the rate of one link when all are alike, else 0.
	PerLink float64
}

// ParseNVLinkStatus reads `nvidia-smi nvlink --status` (-s).
func ParseNVLinkStatus(out string) []NVLink {
	var gpus []NVLink
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "GPU "); ok {
			idx, name, _ := strings.Cut(rest, ": ")
			n, err := strconv.Atoi(idx)
			if err != nil {
				continue
			}
			name, _, _ = strings.Cut(name, " (UUID")
			gpus = append(gpus, NVLink{GPU: n, Name: name, PerLink: -1})
			continue
		}
		rest, ok := strings.CutPrefix(line, "Link ")
		if !ok || len(gpus) == 0 {
			continue
		}
		_, rate, _ := strings.Cut(rest, ": ")
		gb, ok := strings.CutSuffix(strings.TrimSpace(rate), " GB/s")
		v, err := strconv.ParseFloat(gb, 64)
		g := &gpus[len(gpus)-1]
		if !ok || err != nil || v <= 0 {
			g.Down++ // <inactive>
			continue
		}
		g.Links++
		g.GBps += v
		switch g.PerLink {
		case -1:
			g.PerLink = v
		case v:
		default:
			g.PerLink = 0
		}
	}
	for i := range gpus {
		if gpus[i].PerLink < 0 {
			gpus[i].PerLink = 0
		}
	}
	return gpus
}

// NVLinkRate is the NVLink bandwidth every GPU of a host has per direction:
// the lowest of the GPUs that list active links, with words saying it; ok
// is false when none has one, or a GPU's links are all inactive (PCIe
// carries its part). A GPU listing no link at all is not counted.
func NVLinkRate(gpus []NVLink) (gbps float64, detail string, ok bool) {
	var low *NVLink
	n := 0
	for i := range gpus {
		if gpus[i].Links == 0 && gpus[i].Down > 0 {
			return 0, "", false
		}
		if gpus[i].Links == 0 {
			continue
		}
		n++
		if low == nil || gpus[i].GBps < low.GBps {
			low = &gpus[i]
		}
	}
	if low == nil {
		return 0, "", false
	}
	per := fmt.Sprintf("%.3f GB/s links", low.GBps/float64(low.Links))
	if low.PerLink > 0 {
		per = fmt.Sprintf("%.3f GB/s", low.PerLink)
	}
	detail = fmt.Sprintf("NVLink: %d links × %s per direction (GPU %d, %s; the lowest of %d GPU(s), nvidia-smi nvlink --status)",
		low.Links, per, low.GPU, low.Name, n)
	return low.GBps, detail, true
}
