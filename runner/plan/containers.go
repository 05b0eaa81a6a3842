package plan

import (
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// containers are a pool's pod containers when its tests run in images
// beside the tools image: the tools container, then one per further
// distinct image (two families naming one image share it, and a family
// naming the tools image runs in the tools container). nil when every
// test runs in the tools image: the pod is as it always was.
//
// The GPUs go to the container whose tests need GPU memory (validation
// refuses a pool that would need them in two); the other extended
// resources (RDMA devices) and hugepages to each container whose tests
// move RDMA traffic, else to the tools container.
func containers(s *scenarios.Scenario, pool *scenarios.Pool, gpus bool) []endpoint.Container {
	toolsC := endpoint.Container{Name: endpoint.ToolsContainer, Image: s.Cluster.Image, Families: []string{""}}
	out := []endpoint.Container{toolsC}
	at := func(img string) *endpoint.Container {
		if img == s.Cluster.Image {
			return &out[0]
		}
		for i := range out {
			if out[i].Image == img {
				return &out[i]
			}
		}
		out = append(out, endpoint.Container{Image: img})
		return &out[len(out)-1]
	}
	for i := range s.Tests {
		t := &s.Tests[i]
		if t.From != pool.Name && t.To != pool.Name {
			continue
		}
		family := scenarios.ImageFamily(t.Tool)
		img := s.ImageOf(pool, family)
		if family == "" || img == "" { // the tools image's own, or refused by validation
			continue
		}
		c := at(img)
		if !slices.Contains(c.Families, family) {
			c.Families = append(c.Families, family)
		}
		c.GPU = c.GPU || (gpus && scenarios.NeedsGPU(t))
		c.RDMA = c.RDMA || tools.NeedsRDMA(t, t.Tool)
	}
	for i := range s.Tests { // the tools container's own tests
		t := &s.Tests[i]
		if (t.From == pool.Name || t.To == pool.Name) && s.ImageOf(pool, scenarios.ImageFamily(t.Tool)) == s.Cluster.Image {
			out[0].GPU = out[0].GPU || (gpus && scenarios.NeedsGPU(t))
			out[0].RDMA = out[0].RDMA || tools.NeedsRDMA(t, t.Tool)
		}
	}
	if len(out) == 1 {
		return nil
	}
	for i := range out[1:] {
		c := &out[i+1]
		slices.SortFunc(c.Families, func(a, b string) int {
			return slices.Index(scenarios.ImageFamilies, a) - slices.Index(scenarios.ImageFamilies, b)
		})
		c.Name = strings.Join(c.Families, "-")
	}
	if !slices.ContainsFunc(out, func(c endpoint.Container) bool { return c.GPU }) {
		out[0].GPU = gpus // nothing needs GPU memory: where they always were
	}
	if !slices.ContainsFunc(out, func(c endpoint.Container) bool { return c.RDMA }) {
		out[0].RDMA = true
	}
	return out
}

// hasGPUs: the placement's extended resources include a GPU.
func hasGPUs(res map[string]string) bool {
	for name := range res {
		if scenarios.IsGPUResource(name) {
			return true
		}
	}
	return false
}
