// Package dl opens the serving image's shared libraries without cgo
// (github.com/ebitengine/purego): libcuda and libnccl for the NCCL probe,
// libnixl_capi for the NIXL probe's native initiator. A binary that
// imports it needs the system's dynamic loader, so rdmabench's main binary
// never does.
package dl

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Open opens a shared library by path or soname (the loader's search),
// its symbols global so that a library loaded later links against it.
func Open(name string) (uintptr, error) {
	h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return 0, fmt.Errorf("cannot load %s: %w", name, err)
	}
	return h, nil
}

// Bind resolves each symbol into its function pointer; the first missing
// symbol is the error (a library too old for the probe).
func Bind(lib uintptr, libName string, fns map[string]any) error {
	for sym, fn := range fns {
		if _, err := purego.Dlsym(lib, sym); err != nil {
			return fmt.Errorf("%s has no %s: %w", libName, sym, err)
		}
		purego.RegisterLibFunc(fn, lib, sym)
	}
	return nil
}

// Sym is a symbol's address, for the calls made through purego.SyscallN
// in a timed loop (RegisterLibFunc's functions go through reflection).
func Sym(lib uintptr, libName, sym string) (uintptr, error) {
	p, err := purego.Dlsym(lib, sym)
	if err != nil {
		return 0, fmt.Errorf("%s has no %s: %w", libName, sym, err)
	}
	return p, nil
}

// GoString copies a C string the library owns.
func GoString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
