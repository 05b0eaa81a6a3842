package tool

import (
	"fmt"
	"strings"
)

// Arguments several tools read, with the same meaning and checks.
var (
	argSizes         = Arg{Key: "sizes", Kind: KindSizes}
	argMinSize       = Arg{Key: "minSize", Kind: KindSize}
	argMaxSize       = Arg{Key: "maxSize", Kind: KindSize}
	argIterations    = Arg{Key: "iterations", Kind: KindInt, Min: 1, Hint: "iterations per size, 1 or more"}
	argDuration      = Arg{Key: "duration", Kind: KindDuration}
	argBidirectional = Arg{Key: "bidirectional", Kind: KindBool}
	argExtra         = Arg{Key: "extra", Kind: KindStrings, Hint: "one command-line word per item"}
	// argTransports is UCX_TLS (ucx_perftest, nixlbench over UCX).
	argTransports = Arg{Key: "transports", Kind: KindString, Check: checkUCXTLS}
)

// checkUCXTLS refuses an empty item of a UCX_TLS list, which UCX reads as
// no transport at all.
func checkUCXTLS(x Value) (msg, hint string) {
	for _, tl := range strings.Split(x.Text, ",") {
		if strings.TrimSpace(tl) == "" {
			return fmt.Sprintf("transports %q has an empty item", x.Text), "a UCX_TLS list such as tcp, rc,sm,self or rc_x"
		}
	}
	return "", ""
}

// sizeRange: a sweep's first size is not larger than its last.
func sizeRange(v Values) []Problem {
	lo, hi := v.Size("minSize"), v.Size("maxSize")
	if !v.Has("minSize") || !v.Has("maxSize") || !lo.OK || !hi.OK || lo.Bytes <= hi.Bytes {
		return nil
	}
	return []Problem{{Key: "minSize", Msg: fmt.Sprintf("minSize %s is larger than maxSize %s", lo.Raw, hi.Raw),
		Hint: "minSize is the first size of the sweep, maxSize the last"}}
}
