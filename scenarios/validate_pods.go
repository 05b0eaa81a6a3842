package scenarios

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Defaults of what each pod gets (cluster.cpu, memory, shmSize).
const (
	DefaultCPU     = "2"
	DefaultMemory  = "4Gi"
	DefaultShmSize = "1Gi"
)

// quantityPattern is a Kubernetes quantity: a number and a suffix (SI,
// binary, or an exponent).
var quantityPattern = regexp.MustCompile(`^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][-+]?[0-9]+)?$`)

var quantitySuffix = map[string]float64{"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
	"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}

// QuantityValue is a Kubernetes quantity's value ("4Gi" → 4294967296),
// false when it is not one.
func QuantityValue(q string) (float64, bool) {
	m := quantityPattern.FindStringSubmatch(q)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, false
	}
	suffix := m[3]
	if mult, ok := quantitySuffix[suffix]; ok {
		return n * mult, true
	}
	exp, err := strconv.Atoi(suffix[1:])
	if err != nil {
		return 0, false
	}
	return n * math.Pow(10, float64(exp)), true
}

// HugepageSizes are the page sizes a pod may ask hugepages of.
var HugepageSizes = []string{"2Mi", "1Gi"}

// checkQuantity checks a Kubernetes quantity written at path, > 0.
func (v *validator) checkQuantity(path, q, example string) (float64, bool) {
	if q == "" {
		return 0, false
	}
	n, ok := QuantityValue(strings.TrimSpace(q))
	switch {
	case !ok:
		v.errf(path, "write a Kubernetes quantity such as "+example+" (suffixes m, k, M, G, Ki, Mi, Gi …)", "%q is not a quantity", q)
	case n <= 0:
		v.errf(path, "write an amount above 0, such as "+example, "%q is not above 0", q)
		ok = false
	}
	return n, ok
}

// podResources checks cpu, memory, shmSize and hugepages of the cluster
// (prefix "cluster") or a pool, and that /dev/shm fits in memory.
func (v *validator) podResources(prefix, cpu, memory, shm string, huge map[string]string, cMemory, cShm string) {
	v.checkQuantity(prefix+".cpu", cpu, "2 or 500m")
	_, memOK := v.checkQuantity(prefix+".memory", memory, "8Gi")
	_, shmOK := v.checkQuantity(prefix+".shmSize", shm, "1Gi")
	for _, k := range sortedStringKeys(huge) {
		p := joinPath(prefix+".hugepages", k)
		if !slices.Contains(HugepageSizes, k) {
			v.keyErrf(p, "page sizes are "+strings.Join(HugepageSizes, " and ")+", as the nodes' kubelets advertise them (hugepages-2Mi)", "unknown page size %q", k)
		}
		if n, ok := v.checkQuantity(p, huge[k], "1Gi"); ok {
			if size, _ := QuantityValue(k); size > 0 && math.Mod(n, size) != 0 {
				v.errf(p, "ask for a whole number of pages", "%s is not a multiple of the %s page size", huge[k], k)
			}
		}
	}
	// Judged where it is written: a pool that sets neither inherits the
	// cluster's verdict, and a value already refused is not judged again.
	if !memOK && !shmOK || memory != "" && !memOK || shm != "" && !shmOK {
		return
	}
	mem, shmSize := firstNonEmpty(memory, cMemory), firstNonEmpty(shm, cShm)
	m, okM := QuantityValue(mem)
	s, okS := QuantityValue(shmSize)
	if okM && okS && s >= m {
		at := prefix + ".shmSize"
		if shm == "" {
			at = prefix + ".memory"
		}
		v.errf(at, "/dev/shm is memory the pod's limit counts: give memory more than shmSize, or shrink shmSize",
			"shmSize %s does not fit in memory %s", shmSize, mem)
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// resourceClaims checks DRA claims: each named once (with the cluster's),
// with exactly one of resourceClaimName and resourceClaimTemplateName.
func (v *validator) resourceClaims(path string, claims []ResourceClaim, taken map[string]bool) {
	for i := range claims {
		c := &claims[i]
		p := fmt.Sprintf("%s[%d]", path, i)
		if v.checkLabel(p+".name", c.Name, "resource claim") {
			if taken[c.Name] {
				v.errf(p+".name", "each claim of a pod has its own name", "claim %q is already defined", c.Name)
			}
			taken[c.Name] = true
		}
		switch {
		case c.ResourceClaimName == "" && c.ResourceClaimTemplateName == "":
			v.errf(p, "name the claim (resourceClaimName: an existing ResourceClaim) or its template (resourceClaimTemplateName: one per pod)",
				"claim %q names neither a ResourceClaim nor a ResourceClaimTemplate", c.Name)
		case c.ResourceClaimName != "" && c.ResourceClaimTemplateName != "":
			v.errf(p+".resourceClaimTemplateName", "give one of them: a shared claim, or a template that makes one per pod",
				"resourceClaimName and resourceClaimTemplateName exclude each other")
		case c.ResourceClaimName != "":
			v.checkObjectName(p+".resourceClaimName", c.ResourceClaimName, "ResourceClaim", "the name of a ResourceClaim in the pods' namespace")
		default:
			v.checkObjectName(p+".resourceClaimTemplateName", c.ResourceClaimTemplateName, "ResourceClaimTemplate", "the name of a ResourceClaimTemplate in the pods' namespace")
		}
	}
}

// podPatchKeys are the top-level keys of a Pod a patch may set; rdmabench
// owns the rest (apiVersion, kind, status).
var podPatchKeys = []string{"metadata", "spec"}

// podPatch checks the patch's shape: a mapping of metadata and spec. Its
// fields are checked against the Pod API by the kube backend
// (kube.CheckScenario), which `validate` runs too.
func (v *validator) podPatch(c *Cluster) {
	for _, k := range slices.Sorted(mapKeys(c.PodPatch)) {
		p := joinPath("cluster.podPatch", k)
		if !slices.Contains(podPatchKeys, k) {
			v.keyErrf(p, "a pod patch sets metadata and spec; rdmabench writes apiVersion, kind and status", "unknown key %q", k)
		} else if _, ok := c.PodPatch[k].(map[string]any); !ok {
			v.errf(p, "write a mapping, as in a Pod manifest", "%s must be a mapping", k)
		}
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
