package nic

import "sort"

// Pair is the PCIe relation between a GPU a test uses and the NIC it uses,
// as `nvidia-smi topo -m` says (PIX, PXB, PHB, NODE, SYS: nearest to
// farthest); Nearest is a nearer NIC of the host, where there is one.
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

// Affinity pairs each of the first gpus GPUs (a pod sees its own as
// GPU0…) with the NIC it uses among devices, the pod's: the one device of
// a one-NIC pod, with the host's nearer NIC named where the matrix lists
// one (a VF of it would serve the GPU better); on a multi-rail pod the
// nearest of its rails, as NCCL picks given them all. Nil when no GPU is
// used or the matrix lists none of devices.
func (inv *Inventory) Affinity(gpus int, devices []string) []Pair {
	own := make([]int, gpus)
	for i := range own {
		own[i] = i
	}
	return inv.AffinityOf(own, devices)
}

// AffinityOf is Affinity for the GPUs of the matrix at the indexes given
// (GPU0 is 0): a process of a host's whose own GPUs are not the first
// (the local backend's decode on GPU 1, by CUDA_VISIBLE_DEVICES).
func (inv *Inventory) AffinityOf(gpus []int, devices []string) []Pair {
	var out []Pair
	for _, i := range gpus {
		if i < 0 || i >= len(inv.GPUs) {
			continue
		}
		g := inv.GPUs[i]
		dev := inv.NearestNIC(g.Name, devices)
		if dev == "" {
			continue
		}
		p := Pair{GPU: g.Name, Device: dev, Relation: g.NICs[dev]}
		if len(devices) == 1 {
			if n := inv.NearestNIC(g.Name, g.nicNames()); relRank[g.NICs[n]] < relRank[p.Relation] {
				p.Nearest, p.NearestRelation = n, g.NICs[n]
			}
		}
		out = append(out, p)
	}
	return out
}

// nicNames are the NICs of the GPU's row, sorted.
func (g GPU) nicNames() []string {
	names := make([]string, 0, len(g.NICs))
	for n := range g.NICs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
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
