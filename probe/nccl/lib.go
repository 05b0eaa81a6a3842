package nccl

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
)

// openLib opens a shared library by path or soname (the loader's search).
func openLib(name string) (uintptr, error) {
	h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return 0, fmt.Errorf("cannot load %s: %w", name, err)
	}
	return h, nil
}

// bind resolves each symbol into its function pointer; the first missing
// symbol is the error (an NCCL or driver too old for the probe).
func bind(lib uintptr, libName string, fns map[string]any) error {
	for sym, fn := range fns {
		if _, err := purego.Dlsym(lib, sym); err != nil {
			return fmt.Errorf("%s has no %s: %w", libName, sym, err)
		}
		purego.RegisterLibFunc(fn, lib, sym)
	}
	return nil
}

// goString copies a C string the library owns.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// ptr is a byte slice's first element, for a copy to or from the GPU.
func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(&b[0]) }
