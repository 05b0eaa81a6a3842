package nixlnative

import (
	"fmt"
	"unsafe"

	"github.com/rdmabench/rdmabench/probe/dl"
)

// cuda is the part of the CUDA driver API the initiator's VRAM regions
// need: the device's primary context (the one UCX's cuda_ipc and torch use),
// cuMemAlloc as nixlbench's cudaMalloc, and copies to fill and check them.
type cuda struct {
	cuInit                   func(flags uint32) int32
	cuDeviceGet              func(dev *int32, ordinal int32) int32
	cuDevicePrimaryCtxRetain func(ctx *uintptr, dev int32) int32
	cuCtxSetCurrent          func(ctx uintptr) int32
	cuMemAlloc               func(ptr *uint64, size uintptr) int32
	cuMemFree                func(ptr uint64) int32
	cuMemcpyHtoD             func(dst uint64, src unsafe.Pointer, size uintptr) int32
	cuMemcpyDtoH             func(dst unsafe.Pointer, src uint64, size uintptr) int32
	ctx                      uintptr
}

// openCUDA loads libcuda.so.1 and makes device's primary context current
// on the calling thread (the caller keeps to that thread).
func openCUDA(device int) (*cuda, error) {
	lib, err := dl.Open("libcuda.so.1")
	if err != nil {
		return nil, fmt.Errorf("VRAM needs the CUDA driver: %w", err)
	}
	c := &cuda{}
	if err := dl.Bind(lib, "libcuda.so.1", map[string]any{
		"cuInit": &c.cuInit, "cuDeviceGet": &c.cuDeviceGet, "cuDevicePrimaryCtxRetain": &c.cuDevicePrimaryCtxRetain,
		"cuCtxSetCurrent": &c.cuCtxSetCurrent, "cuMemAlloc_v2": &c.cuMemAlloc, "cuMemFree_v2": &c.cuMemFree,
		"cuMemcpyHtoD_v2": &c.cuMemcpyHtoD, "cuMemcpyDtoH_v2": &c.cuMemcpyDtoH,
	}); err != nil {
		return nil, err
	}
	var dev int32
	if err := cudaCheck("cuInit", c.cuInit(0)); err != nil {
		return nil, err
	}
	if err := cudaCheck(fmt.Sprintf("cuDeviceGet(%d)", device), c.cuDeviceGet(&dev, int32(device))); err != nil {
		return nil, err
	}
	if err := cudaCheck("cuDevicePrimaryCtxRetain", c.cuDevicePrimaryCtxRetain(&c.ctx, dev)); err != nil {
		return nil, err
	}
	return c, cudaCheck("cuCtxSetCurrent", c.cuCtxSetCurrent(c.ctx))
}

func cudaCheck(call string, res int32) error {
	if res == 0 {
		return nil
	}
	return fmt.Errorf("%s: CUDA error %d", call, res)
}
