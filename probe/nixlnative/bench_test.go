package nixlnative

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkCAPICall is what one NIXL C API call costs the native loop on
// top of the call itself: the stand-in's get_xfer_status on no request
// returns at once, so the figure is purego's. The hot loops call through
// purego.SyscallN with their arguments bound once (boundCall, no
// allocation); RegisterLibFunc's reflective functions (the setup's) for
// comparison.
//
//	go test ./probe/nixlnative -run - -bench CAPICall
func BenchmarkCAPICall(b *testing.B) {
	cc, err := exec.LookPath("gcc")
	if err != nil {
		b.Skip("no gcc")
	}
	lib := filepath.Join(b.TempDir(), "libnixl_capi.so")
	if out, err := exec.Command(cc, "-O2", "-shared", "-fPIC", "-o", lib, filepath.Join("..", "nixl", "testdata", "standin", "nixl_capi.c")).CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	c, err := loadCAPI(lib)
	if err != nil {
		b.Fatal(err)
	}
	status := c.statusCall(0, 0)
	b.Run("SyscallN", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			status.call()
		}
	})
	b.Run("RegisterLibFunc", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			c.destroyOptArgs(0)
		}
	})
}
