package nixlnative

import (
	"fmt"
	"syscall"
	"unsafe"
)

// regions are the initiator's KV regions: count buffers of capacity bytes
// in DRAM (anonymous mappings: page-aligned, never moved by Go's collector)
// or in VRAM (cuMemAlloc, as nixlbench's cudaMalloc).
type regions struct {
	seg      string
	capacity int64
	used     int64 // what the largest request touches: filled, zeroed, checked
	device   int
	addrs    []uintptr
	host     [][]byte // DRAM
	cu       *cuda    // VRAM
}

func newRegions(seg string, count int, capacity, used int64, device int, cu *cuda) (*regions, error) {
	r := &regions{seg: seg, capacity: capacity, used: min(used, capacity), device: device, cu: cu}
	for range count {
		if seg == "VRAM" {
			var p uint64
			if err := cudaCheck(fmt.Sprintf("cuMemAlloc of %d B on device %d", capacity, device), cu.cuMemAlloc(&p, uintptr(capacity))); err != nil {
				r.free()
				return nil, err
			}
			r.addrs = append(r.addrs, uintptr(p))
			continue
		}
		b, err := syscall.Mmap(-1, 0, int(capacity), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			r.free()
			return nil, fmt.Errorf("%d B of DRAM: %w", capacity, err)
		}
		r.host = append(r.host, b)
		r.addrs = append(r.addrs, uintptr(unsafe.Pointer(&b[0])))
	}
	return r, r.zero()
}

// patternByte is the probe's pattern (rdmabench_nixl.py's pattern_byte):
// a reader checks what it got without a copy of the source.
func patternByte(i int64, region int) byte { return byte((i%251 + int64(region)) % 256) }

// set fills (or zeroes) the used part of every region: a --buffer-size
// past it is never read or written.
func (r *regions) set(fill bool) error {
	buf := make([]byte, r.used)
	for i, addr := range r.addrs {
		clear(buf)
		if fill {
			for j := range buf {
				buf[j] = patternByte(int64(j), i)
			}
		}
		if r.seg == "VRAM" {
			if err := cudaCheck("cuMemcpyHtoD", r.cu.cuMemcpyHtoD(uint64(addr), unsafe.Pointer(&buf[0]), uintptr(r.used))); err != nil {
				return err
			}
			continue
		}
		copy(r.host[i], buf)
	}
	return nil
}

func (r *regions) fill() error { return r.set(true) }
func (r *regions) zero() error { return r.set(false) }

// check says where the first blocks blocks of a region differ from the
// pattern ("" when the data arrived), sampling every 4093rd byte (a
// stride prime to 251 sees every phase), as the Python probe does.
func (r *regions) check(block int64, blocks int) (string, error) {
	n := block * int64(blocks)
	got := make([]byte, n)
	for i, addr := range r.addrs {
		if r.seg == "VRAM" {
			if err := cudaCheck("cuMemcpyDtoH", r.cu.cuMemcpyDtoH(unsafe.Pointer(&got[0]), uint64(addr), uintptr(n))); err != nil {
				return "", err
			}
		} else {
			copy(got, r.host[i][:n])
		}
		for j := int64(0); j < n; j += 4093 {
			if want := patternByte(j, i); got[j] != want {
				return fmt.Sprintf("region %d byte %d: got %d, want %d", i, j, got[j], want), nil
			}
		}
	}
	return "", nil
}

func (r *regions) free() {
	for _, b := range r.host {
		_ = syscall.Munmap(b)
	}
	if r.seg == "VRAM" {
		for _, a := range r.addrs {
			_ = r.cu.cuMemFree(uint64(a))
		}
	}
	r.host, r.addrs = nil, nil
}
