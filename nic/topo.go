package nic

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// TopoFile is the name under the root of a recorded `nvidia-smi topo -m`
// output; on a live host ("/") nvidia-smi itself is run instead.
const TopoFile = "nvidia-smi-topo-m.txt"

// readTopo returns the GPU to NIC affinity, or nil on hosts without GPUs.
func readTopo(fs sysfs) ([]GPU, error) {
	text, err := topoText(fs)
	if err != nil || text == "" {
		return nil, err
	}
	if fs.rec != "" {
		if err := fs.save(TopoFile, []byte(text)); err != nil {
			return nil, err
		}
	}
	return ParseTopo(text)
}

func topoText(fs sysfs) (string, error) {
	if b, err := os.ReadFile(filepath.Join(fs.root, TopoFile)); err == nil {
		return string(b), nil
	}
	if filepath.Clean(fs.root) != "/" {
		return "", nil
	}
	bin, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "topo", "-m").Output()
	if err != nil {
		return "", fmt.Errorf("nvidia-smi topo -m: %w (run it by hand to see why, or use --no-gpu)", err)
	}
	return string(out), nil
}

var (
	ansi      = regexp.MustCompile(`\x1b\[[0-9;]*m`)
	nicLegend = regexp.MustCompile(`^\s*(NIC\d+):\s*(\S+)\s*$`)
	gpuRow    = regexp.MustCompile(`^GPU\d+$`)
)

// relRank orders topology relations from nearest to farthest.
var relRank = map[string]int{"X": 0, "PIX": 2, "PXB": 3, "PHB": 4, "NODE": 5, "SYS": 6}

// ParseTopo reads the matrix of `nvidia-smi topo -m`: one row per GPU with
// its relation to every NIC column, and the NIC legend that names each
// NIC's RDMA device. A text with no GPU rows yields nil.
func ParseTopo(text string) ([]GPU, error) {
	var header []string
	legend := map[string]string{}
	var rows [][]string
	for _, raw := range strings.Split(ansi.ReplaceAllString(text, ""), "\n") {
		line := strings.TrimRight(raw, "\r ")
		cells := splitCells(line)
		switch {
		case header == nil && strings.HasPrefix(line, "\t") && len(cells) > 1 && strings.HasPrefix(cells[1], "GPU"):
			header = cells
		case len(cells) > 1 && gpuRow.MatchString(cells[0]):
			rows = append(rows, cells)
		default:
			if m := nicLegend.FindStringSubmatch(line); m != nil {
				legend[m[1]] = m[2]
			}
		}
	}
	if len(rows) == 0 {
		return nil, nil
	}
	if header == nil {
		return nil, fmt.Errorf("nvidia-smi topo -m: GPU rows but no header line (a line starting with a tab and GPU0)")
	}
	gpus := make([]GPU, 0, len(rows))
	for _, r := range rows {
		gpus = append(gpus, topoGPU(header, r, legend))
	}
	return gpus, nil
}

// splitCells splits a matrix line on tabs, trimming each cell.
func splitCells(line string) []string {
	parts := strings.Split(line, "\t")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func topoGPU(header, row []string, legend map[string]string) GPU {
	g := GPU{Name: row[0], NICs: map[string]string{}}
	best := 1 << 30
	last := 0
	for i := 1; i < len(header) && i < len(row); i++ {
		col := header[i]
		if !strings.HasPrefix(col, "GPU") && !strings.HasPrefix(col, "NIC") {
			break
		}
		last = i
		if !strings.HasPrefix(col, "NIC") {
			continue
		}
		dev := legend[col]
		if dev == "" {
			dev = col
		}
		rel := row[i]
		g.NICs[dev] = rel
		rank, ok := relRank[rel]
		if !ok {
			continue
		}
		if rank < best {
			best, g.Nearest, g.Relation = rank, nil, rel
		}
		if rank == best {
			g.Nearest = append(g.Nearest, dev)
		}
	}
	var rest []string
	for _, c := range row[last+1:] {
		if c != "" {
			rest = append(rest, c)
		}
	}
	if len(rest) > 0 {
		g.CPUs = rest[0]
	}
	if len(rest) > 1 {
		g.NUMA = rest[1]
	}
	return g
}
