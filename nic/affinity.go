package nic

import "sort"

// Pair is the PCIe relation between a GPU a test uses and the NIC it is
// given, as `nvidia-smi topo -m` says (PIX, PXB, PHB, NODE, SYS: nearest to
// farthest); Nearest is another of the pod's NICs when one is nearer.
type Pair struct {
	GPU             string `json:"gpu"`
	Device          string `json:"device"`
	Relation        string `json:"relation"`
	Nearest         string `json:"nearest,omitempty"`
	NearestRelation string `json:"nearestRelation,omitempty"`
}

// Relations are the GPU–NIC relations, nearest first.
var Relations = []string{"PIX", "PXB", "PHB", "NODE", "SYS"}

// ValidRelation says whether rel is one of Relations.
func ValidRelation(rel string) bool { _, ok := relRank[rel]; return ok && rel != "X" }

// FartherThan says whether rel is farther than limit; an unknown relation
// is not (there is nothing to judge).
func FartherThan(rel, limit string) bool {
	r, ok := relRank[rel]
	l, lok := relRank[limit]
	return ok && lok && r > l
}

// Affinity pairs the first gpus GPUs (a pod sees its own as GPU0…) with
// device, the NIC the test is given, and names a nearer one among devices
// (the pod's NICs, its rails). Nil when no GPU is used or the matrix does
// not list device.
func (inv *Inventory) Affinity(gpus int, device string, devices []string) []Pair {
	var out []Pair
	for i := 0; i < gpus && i < len(inv.GPUs); i++ {
		g := inv.GPUs[i]
		rel, ok := g.NICs[device]
		if !ok {
			continue
		}
		p := Pair{GPU: g.Name, Device: device, Relation: rel}
		if n := inv.NearestNIC(g.Name, devices); n != "" && relRank[g.NICs[n]] < relRank[rel] {
			p.Nearest, p.NearestRelation = n, g.NICs[n]
		}
		out = append(out, p)
	}
	return out
}

// NearestNIC is the nearest of devices to the GPU ("" when the matrix
// lists none of them); ties keep the order of devices.
func (inv *Inventory) NearestNIC(gpu string, devices []string) string {
	for _, g := range inv.GPUs {
		if g.Name != gpu {
			continue
		}
		var known []string
		for _, d := range devices {
			if _, ok := relRank[g.NICs[d]]; ok {
				known = append(known, d)
			}
		}
		sort.SliceStable(known, func(i, j int) bool { return relRank[g.NICs[known[i]]] < relRank[g.NICs[known[j]]] })
		if len(known) > 0 {
			return known[0]
		}
	}
	return ""
}
