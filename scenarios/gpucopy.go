package scenarios

import "github.com/rdmabench/rdmabench/tool"

// gpuCopy checks a gpu_copy test: one process on the from endpoint reads
// the to endpoint's GPU of the same host. Each pool needs GPUs of its own
// (a local endpoint without any sees every GPU, so the copy would read
// other pools' GPUs), and no kube pod sees another pod's GPUs.
func (v *validator) gpuCopy(path string, t *Test) {
	if t.Tool != tool.GPUCopy {
		return
	}
	if v.s.Backend == BackendKube {
		v.errf(path+".tool", "use the local backend on the GPU host, or nccl_probe sendrecv between the pods",
			"gpu_copy copies between two GPUs of one process's host; a kube pod sees its own GPUs alone")
	}
	to := t.To
	if to == "" {
		to = t.From
	}
	for _, ref := range []struct{ key, name string }{{"from", t.From}, {"to", to}} {
		p := v.pool(ref.name)
		if p == nil || p.GPUs.N > 0 || p.GPUs.All {
			continue
		}
		key := path + "." + ref.key
		if !v.pos.Has(key) {
			key = path + ".from"
		}
		v.errf(key, "give pools \""+ref.name+"\" gpus: 1 or more", "pool %q has no GPUs, and gpu_copy copies between two GPUs", ref.name)
	}
}
