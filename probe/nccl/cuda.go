package nccl

import (
	"fmt"
	"unsafe"
)

// cuda is the part of the CUDA driver API (libcuda.so.1) the probe uses:
// a device's primary context (the one NCCL's runtime calls use too), its
// memory, a stream, and its name and PCI address for the device list.
type cuda struct {
	cuInit                    func(flags uint32) int32
	cuDriverGetVersion        func(v *int32) int32
	cuDeviceGetCount          func(n *int32) int32
	cuDeviceGet               func(dev *int32, ordinal int32) int32
	cuDeviceGetName           func(name *byte, size int32, dev int32) int32
	cuDeviceGetPCIBusId       func(id *byte, size int32, dev int32) int32
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease func(dev int32) int32
	cuCtxSetCurrent           func(ctx uintptr) int32
	cuMemAlloc                func(ptr *uint64, size uintptr) int32
	cuMemFree                 func(ptr uint64) int32
	cuMemsetD32               func(ptr uint64, v uint32, n uintptr) int32
	cuMemcpyDtoH              func(dst unsafe.Pointer, src uint64, size uintptr) int32
	cuMemcpyHtoD              func(dst uint64, src unsafe.Pointer, size uintptr) int32
	cuStreamCreate            func(s *uintptr, flags uint32) int32
	cuStreamSynchronize       func(s uintptr) int32
	cuStreamDestroy           func(s uintptr) int32
	cuGetErrorString          func(res int32, str **byte) int32

	// The peer calls, bound by loadPeer for the copy alone.
	cuDeviceCanAccessPeer func(can *int32, dev, peer int32) int32
	cuCtxEnablePeerAccess func(peerCtx uintptr, flags uint32) int32
	cuMemcpyPeerAsync     func(dst uint64, dstCtx uintptr, src uint64, srcCtx uintptr, size uintptr, stream uintptr) int32

	lib uintptr
	dev int32
	ctx uintptr // dev's primary context
}

func loadCUDA(path string) (*cuda, error) {
	lib, err := openLib(path)
	if err != nil {
		return nil, err
	}
	c := &cuda{lib: lib}
	err = bind(lib, path, map[string]any{
		"cuInit": &c.cuInit, "cuDriverGetVersion": &c.cuDriverGetVersion,
		"cuDeviceGetCount": &c.cuDeviceGetCount, "cuDeviceGet": &c.cuDeviceGet,
		"cuDeviceGetName": &c.cuDeviceGetName, "cuDeviceGetPCIBusId": &c.cuDeviceGetPCIBusId,
		"cuDevicePrimaryCtxRetain": &c.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRelease_v2": &c.cuDevicePrimaryCtxRelease,
		"cuCtxSetCurrent": &c.cuCtxSetCurrent,
		"cuMemAlloc_v2":   &c.cuMemAlloc, "cuMemFree_v2": &c.cuMemFree, "cuMemsetD32_v2": &c.cuMemsetD32,
		"cuMemcpyDtoH_v2": &c.cuMemcpyDtoH, "cuMemcpyHtoD_v2": &c.cuMemcpyHtoD,
		"cuStreamCreate": &c.cuStreamCreate, "cuStreamSynchronize": &c.cuStreamSynchronize,
		"cuStreamDestroy_v2": &c.cuStreamDestroy, "cuGetErrorString": &c.cuGetErrorString,
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// loadPeer binds the calls of a copy between two GPUs (the copy
// collective); the collectives never need them.
func (c *cuda) loadPeer(path string) error {
	return bind(c.lib, path, map[string]any{
		"cuDeviceCanAccessPeer": &c.cuDeviceCanAccessPeer, "cuCtxEnablePeerAccess": &c.cuCtxEnablePeerAccess,
		"cuMemcpyPeerAsync": &c.cuMemcpyPeerAsync,
	})
}

// check turns a CUresult into an error naming the call.
func (c *cuda) check(call string, res int32) error {
	if res == 0 {
		return nil
	}
	var s *byte
	msg := "unknown error"
	if c.cuGetErrorString(res, &s) == 0 && s != nil {
		msg = goString(s)
	}
	return fmt.Errorf("%s: CUDA error %d: %s", call, res, msg)
}

// open initialises the driver and makes GPU ordinal current on this OS
// thread (the caller holds runtime.LockOSThread).
func (c *cuda) open(ordinal int) error {
	if err := c.check("cuInit", c.cuInit(0)); err != nil {
		return err
	}
	var n int32
	if err := c.check("cuDeviceGetCount", c.cuDeviceGetCount(&n)); err != nil {
		return err
	}
	if ordinal < 0 || ordinal >= int(n) {
		return fmt.Errorf("GPU %d asked for, this process sees %d (CUDA_VISIBLE_DEVICES=%q)", ordinal, n, getenv("CUDA_VISIBLE_DEVICES"))
	}
	if err := c.check("cuDeviceGet", c.cuDeviceGet(&c.dev, int32(ordinal))); err != nil {
		return err
	}
	if err := c.check("cuDevicePrimaryCtxRetain", c.cuDevicePrimaryCtxRetain(&c.ctx, c.dev)); err != nil {
		return err
	}
	return c.check("cuCtxSetCurrent", c.cuCtxSetCurrent(c.ctx))
}

func (c *cuda) close() { c.cuDevicePrimaryCtxRelease(c.dev) }

// name and busID describe the device for the device list.
func (c *cuda) name() string {
	buf := make([]byte, 256)
	if c.cuDeviceGetName(&buf[0], int32(len(buf)), c.dev) != 0 {
		return "unknown"
	}
	return cut(buf)
}

func (c *cuda) busID() string {
	buf := make([]byte, 64)
	if c.cuDeviceGetPCIBusId(&buf[0], int32(len(buf)), c.dev) != 0 {
		return ""
	}
	return cut(buf)
}

func (c *cuda) driverVersion() int {
	var v int32
	c.cuDriverGetVersion(&v)
	return int(v)
}

func (c *cuda) alloc(size uint64) (uint64, error) {
	var p uint64
	if size == 0 {
		size = 16
	}
	return p, c.check(fmt.Sprintf("cuMemAlloc(%d)", size), c.cuMemAlloc(&p, uintptr(size)))
}

func cut(b []byte) string {
	for i, x := range b {
		if x == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
