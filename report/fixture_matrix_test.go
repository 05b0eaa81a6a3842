package report

import (
	"fmt"
	"testing"
)

// bigMatrixReport is a 64-endpoint all-to-all: 4,032 ordered pairs, each
// with a 12-size sweep (4KiB … 8MiB), one slow link.
func bigMatrixReport() *Report { return matrixReport(64, sweep(4<<10, 8<<20)) }

// matrixReport is an n-endpoint all-to-all, n×(n−1) ordered pairs over the
// given sizes, with the link ep-17 → ep-42 at half speed.
func matrixReport(n int, sizes []int64) *Report {
	b := newBuilder(uint64(n))
	r := &Report{SchemaVersion: SchemaVersion, Run: baseMeta(fmt.Sprintf("run-a2a-%d", n))}
	r.Endpoints = endpoints("ep", n)
	r.Results = b.matrix(fmt.Sprintf("fabric-a2a-%d", n), n, 17, 42, 0.5, sizes)
	finish(r, b)
	return r
}

func matrix256(b *testing.B) *Report {
	b.Helper()
	r := matrixReport(256, sweep(64<<10, 8<<20))
	if len(r.Results) != 65280 {
		b.Fatalf("%d results", len(r.Results))
	}
	return r
}
