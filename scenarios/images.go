package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/tool"
)

// ImageOf is the image a pool's tools of family run in (ImageFamily): the
// pool's images entry, else the cluster's, else the tools image for the
// families it can stand in for (perftest without CUDA); "" when a family
// the tools image lacks (nixl, nccl) is named nowhere.
func (s *Scenario) ImageOf(pool *Pool, family string) string {
	c := s.Cluster
	if c == nil {
		return ""
	}
	if family == "" {
		return c.Image
	}
	if pool != nil && pool.Images[family] != "" {
		return pool.Images[family]
	}
	if c.Images[family] != "" {
		return c.Images[family]
	}
	if imageRequired(family) {
		return ""
	}
	return c.Image
}

// NeedsGPU says whether a test cannot run without a GPU on its endpoints
// (the tool table's decision: nccl-tests, nixlbench with a VRAM segment,
// perftest with useCuda). The GPUs of a pod go to the container that runs
// these.
func NeedsGPU(t *Test) bool { return tool.NeedsGPU(t.Tool, t.Settings()) }

// IsGPUResource says whether an extended resource is a GPU (a device
// plugin's, given to one container of a pod only): nvidia.com/gpu and
// NVIDIA's MIG slices (nvidia.com/mig-1g.10gb), amd.com/gpu, any
// VENDOR/gpu. Not every nvidia.com name: the Network Operator's RDMA
// resources are nvidia.com/ too (nvidia.com/sriov_rdma, nvidia.com/rdma_shared_device_a).
func IsGPUResource(name string) bool {
	return strings.HasSuffix(name, "/gpu") || strings.HasPrefix(name, "nvidia.com/mig-")
}

// imageHints say where each family's image comes from: the upstream
// images known to carry its tools (docs/user-guide/images.md).
var imageHints = map[string]string{
	ImageNixl:     "an image with nixlbench, NIXL and UCX: NIXL's nixlbench container (github.com/ai-dynamo/nixl benchmark/nixlbench/contrib/Dockerfile), or your serving image if it carries nixlbench",
	ImageNCCL:     "an image with nccl-tests (built with MPI=1 for ranks on several pods), NCCL, Open MPI and sshd: your serving image with nccl-tests added (docs/user-guide/images.md)",
	ImagePerftest: "an image with perftest built with CUDA: e.g. llm-d's rdma-tools image (github.com/llm-d/llm-d docker/Dockerfile.rdma-tools)",
}

// checkImages checks an images section: known families, each naming an
// image.
func (v *validator) checkImages(path string, images map[string]string) {
	for _, k := range sortedStringKeys(images) {
		p := joinPath(path, k)
		if !slices.Contains(ImageFamilies, k) {
			v.keyErrf(p, suggest(k, "image families", ImageFamilies), "unknown image family %q", k)
			continue
		}
		if strings.TrimSpace(images[k]) == "" {
			v.errf(p, "name "+imageHints[k]+"; or remove the key", "the %s image is empty", k)
		}
	}
}

// testImages: on kube, a test's tool must have an image in each of its
// pools (nixlbench and nccl-tests are not in the tools image).
func (v *validator) testImages(path string, t *Test) {
	family := ImageFamily(t.Tool)
	if v.s.Backend != BackendKube || v.s.Cluster == nil || !imageRequired(family) {
		return
	}
	var missing []string
	for _, name := range []string{t.From, t.To} {
		p := v.pool(name)
		if p != nil && !slices.Contains(missing, name) && v.s.ImageOf(p, family) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return
	}
	what := "pool " + quoteList(missing) + " names"
	if len(missing) > 1 {
		what = "pools " + quoteList(missing) + " name"
	}
	spec, _ := tool.Lookup(t.Tool)
	binary, hint := string(spec.Family), imageHints[family] // the family names the tools (nccl-tests)
	if spec.Source == tool.SourceBundle {
		// rdmabench's own program drives the image's libraries: the image
		// needs those, not the classic tools.
		binary, hint = "NCCL", "your serving image ("+spec.Install+")"
	}
	v.errf(path+".tool", fmt.Sprintf("set cluster.images.%s (or a pool's images.%s) to %s", family, family, hint),
		"%s runs in the %s image (the tools image has no %s), and %s none", t.Tool, family, binary, what)
}

// poolGPUImages: a pool's GPUs (a device plugin's resource) can be given
// to one container of its pods only, so its GPU tests must run in one
// image.
func (v *validator) poolGPUImages(path string, p *Pool) {
	if !v.hasGPUResource(p) {
		return
	}
	byImage := map[string][]string{} // image → the families using it
	var order []string
	for i := range v.s.Tests {
		t := &v.s.Tests[i]
		if (t.From != p.Name && t.To != p.Name) || !NeedsGPU(t) {
			continue
		}
		family := ImageFamily(t.Tool)
		img := v.s.ImageOf(p, family)
		if img == "" {
			continue // reported at the test
		}
		if family == "" {
			family = t.Tool
		}
		if _, seen := byImage[img]; !seen {
			order = append(order, img)
		}
		if !slices.Contains(byImage[img], family) {
			byImage[img] = append(byImage[img], family)
		}
	}
	if len(order) < 2 {
		return
	}
	var parts []string
	for _, img := range order {
		part := strings.Join(byImage[img], "+") + ": " + img
		if img == v.s.Cluster.Image {
			part += " (the tools image)"
		}
		parts = append(parts, part)
	}
	at := path
	if v.written(path+".images", p, "images") {
		at = path + ".images"
	}
	v.errf(at, "a GPU goes to one container of a pod: name one image that carries these tools for each of their families, or run them in separate pools",
		"pool %q runs GPU tests in %d images (%s)", p.Name, len(order), strings.Join(parts, ", "))
}

// hasGPUResource: the pool's pods get GPUs by an extended resource.
func (v *validator) hasGPUResource(p *Pool) bool {
	if p.GPUs.N > 0 || p.GPUs.All {
		return true
	}
	for _, res := range []map[string]string{v.s.Cluster.Resources, p.Resources} {
		for name := range res {
			if IsGPUResource(name) {
				return true
			}
		}
	}
	return false
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, " and ")
}
