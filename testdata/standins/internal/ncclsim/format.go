package ncclsim

import (
	"fmt"
	"strconv"
	"strings"
)

// fixed renders v in width like nccl-tests: %.2f, else %.1f, else %.0f,
// else exponent (%.1e for times, %.0e for bandwidths), whichever fits.
func fixed(v float64, width int, expPrec int) string {
	for _, prec := range []int{2, 1, 0} {
		if s := strconv.FormatFloat(v, 'f', prec, 64); len(s) <= width {
			return s
		}
	}
	return cExp(v, expPrec)
}

// cExp is C's %.Ne (two-digit exponent at least, like glibc).
func cExp(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'e', prec, 64) // Go: 1.2e+07
	mant, exp, _ := strings.Cut(s, "e")
	sign := exp[0]
	digits := strings.TrimLeft(exp[1:], "0")
	for len(digits) < 2 {
		digits = "0" + digits
	}
	return mant + "e" + string(sign) + digits
}

// cG is C's %g (6 significant digits, trailing zeros dropped).
func cG(v float64) string {
	s := strconv.FormatFloat(v, 'g', 6, 64)
	if mant, exp, ok := strings.Cut(s, "e"); ok {
		sign := exp[0]
		digits := strings.TrimLeft(exp[1:], "0")
		for len(digits) < 2 {
			digits = "0" + digits
		}
		return mant + "e" + string(sign) + digits
	}
	return s
}

func headerLines() string {
	h1 := fmt.Sprintf("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "", "", "", "")
	row := "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n"
	h2 := fmt.Sprintf(row, "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", 0, "")
	h3 := fmt.Sprintf(row, "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", 0, "")
	return h1 + h2 + h3
}

// result of one placement (out-of-place or in-place) of one size.
type placeResult struct {
	timeUS, algbw, busbw float64
	wrong                int64
}

func (r placeResult) cells(check bool) string {
	s := fmt.Sprintf("  %7s  %6s  %6s", fixed(r.timeUS, 7, 1), fixed(r.algbw, 6, 0), fixed(r.busbw, 6, 0))
	if !check {
		return s + "    N/A"
	}
	return s + fmt.Sprintf("  %6s", cG(float64(r.wrong)))
}

func rowLine(size, count int64, dtype, redop string, root int, oop, ip placeResult, oopCheck, ipCheck bool) string {
	return fmt.Sprintf("%12d  %12d  %8s  %6s  %6s", size, count, dtype, redop, fmt.Sprintf("%6d", root)) +
		oop.cells(oopCheck) + ip.cells(ipCheck) + "\n"
}
