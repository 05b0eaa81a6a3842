/* Stand-in for the CUDA driver (libcuda.so.1), rdmabench's own: the calls the
 * NCCL probe (probe/nccl) makes, with "device" memory in host memory, so that
 * CI can run the probe's launch, rendezvous and output without a GPU. It is
 * never the proof: the probe's real runs are under testdata/gpu. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;

static int gpus(void) {
	const char *v = getenv("RDMABENCH_STANDIN_GPUS");
	return v ? atoi(v) : 4;
}
CUresult cuInit(unsigned flags) { (void)flags; return 0; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = gpus(); return 0; }
CUresult cuDeviceGet(int *dev, int ordinal) {
	if (ordinal < 0 || ordinal >= gpus()) return 101; /* CUDA_ERROR_INVALID_DEVICE */
	*dev = ordinal;
	return 0;
}
CUresult cuDeviceGetName(char *name, int len, int dev) { snprintf(name, len, "rdmabench stand-in GPU %d", dev); return 0; }
CUresult cuDeviceGetPCIBusId(char *id, int len, int dev) { snprintf(id, len, "0000:%02x:00.0", 0x10 + dev); return 0; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { *ctx = (void *)(uintptr_t)(dev + 1); return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { (void)ctx; return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t size) {
	void *m = malloc(size);
	if (!m) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
	*p = (CUdeviceptr)(uintptr_t)m;
	return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)(uintptr_t)p); return 0; }
CUresult cuMemsetD32_v2(CUdeviceptr p, unsigned v, size_t n) {
	unsigned *d = (unsigned *)(uintptr_t)p;
	for (size_t i = 0; i < n; i++) d[i] = v;
	return 0;
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) { memcpy(dst, (void *)(uintptr_t)src, n); return 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) { memcpy((void *)(uintptr_t)dst, src, n); return 0; }
CUresult cuStreamCreate(void **s, unsigned flags) { (void)flags; *s = (void *)1; return 0; }
CUresult cuStreamSynchronize(void *s) { (void)s; return 0; }
CUresult cuStreamDestroy_v2(void *s) { (void)s; return 0; }
CUresult cuGetErrorString(CUresult r, const char **s) {
	*s = r == 101 ? "invalid device ordinal (stand-in)" : r == 2 ? "out of memory (stand-in)" : "stand-in error";
	return 0;
}
/* Peer access between any two stand-in GPUs, unless RDMABENCH_STANDIN_NO_P2P
 * is set (cuMemcpyPeer then stages through host memory, as a real driver
 * does); the copy is a memcpy. */
CUresult cuDeviceCanAccessPeer(int *can, int dev, int peer) {
	*can = getenv("RDMABENCH_STANDIN_NO_P2P") ? 0 : dev != peer;
	return 0;
}
CUresult cuCtxEnablePeerAccess(void *peer, unsigned flags) { (void)peer; (void)flags; return 0; }
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, void *dstCtx, CUdeviceptr src, void *srcCtx, size_t n, void *s) {
	(void)dstCtx; (void)srcCtx; (void)s;
	memcpy((void *)(uintptr_t)dst, (void *)(uintptr_t)src, n);
	return 0;
}
