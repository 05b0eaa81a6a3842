// Package units parses and formats the quantities people write in scenarios
// and read in reports: sizes (4KiB), rates (400Gb/s), percents (90%) and
// durations (10s). Rates are held in bits per second everywhere.
package units

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ParseSize reads a byte size: plain bytes ("65536"), binary suffixes
// ("4KiB", "8MiB", "1GiB"), decimal suffixes ("4KB" = 4000) and the short
// K/M/G forms the tools themselves take ("64K" or "64k" = 65536, as
// perftest and nccl-tests read them). As strict as ParseRate: a unit's
// case means something (b is a bit) and a stray space is refused.
func ParseSize(s string) (int64, error) {
	if err := noStraySpace(s); err != nil {
		return 0, err
	}
	if s == "" {
		return 0, fmt.Errorf("empty size")
	}
	num, suffix := splitNumber(s)
	if num == "" {
		return 0, fmt.Errorf("%q is not a size: it must start with a number", s)
	}
	mult, err := sizeUnit(s, strings.TrimSpace(suffix))
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	bytes := v * float64(mult)
	if bytes != math.Trunc(bytes) {
		return 0, fmt.Errorf("%q is not a whole number of bytes", s)
	}
	if bytes > float64(math.MaxInt64/2) {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(bytes), nil
}

// noStraySpace refuses a quantity with a space at either end: in a
// quoted YAML value it is a typo, not part of the quantity.
func noStraySpace(s string) error {
	t := strings.TrimSpace(s)
	switch {
	case t == s:
		return nil
	case strings.HasSuffix(s, t):
		return fmt.Errorf("%q has a space at its start: write %q", s, t)
	}
	return fmt.Errorf("%q has a space at its end: write %q", s, t)
}

// sizeUnit is a size suffix's multiplier, or why it is none.
func sizeUnit(s, suffix string) (int64, error) {
	if mult, ok := sizeSuffixes[suffix]; ok {
		return mult, nil
	}
	const known = "B, KiB, MiB, GiB, KB, MB, GB"
	if _, ok := sizeSuffixes[strings.Replace(suffix, "b", "B", 1)]; ok && strings.HasSuffix(suffix, "b") && !strings.HasSuffix(suffix, "ib") {
		return 0, fmt.Errorf("%q is in bits (b): a size is in bytes (%s)", s, known)
	}
	for unit := range sizeSuffixes {
		if len(unit) > 1 && strings.EqualFold(unit, suffix) {
			return 0, fmt.Errorf("%q has an unknown size unit %q (did you mean %s? use %s)", s, suffix, unit, known)
		}
	}
	return 0, fmt.Errorf("%q has an unknown size unit %q (use %s)", s, suffix, known)
}

var sizeSuffixes = map[string]int64{
	"": 1, "B": 1,
	"K": 1 << 10, "k": 1 << 10, "KiB": 1 << 10, "KB": 1000,
	"M": 1 << 20, "m": 1 << 20, "MiB": 1 << 20, "MB": 1000 * 1000,
	"G": 1 << 30, "g": 1 << 30, "GiB": 1 << 30, "GB": 1000 * 1000 * 1000,
	"T": 1 << 40, "t": 1 << 40, "TiB": 1 << 40, "TB": 1000 * 1000 * 1000 * 1000,
}

// ParseRate reads a link or bandwidth rate and returns bits per second.
// Bits: "400Gb/s", "200Gbps", "100Gbit/s", "25Mb/s". Bytes: "25GB/s",
// "12.5GBps" (decimal: 1 GB = 10^9 bytes), "1GiB/s" (binary).
func ParseRate(s string) (float64, error) {
	if err := noStraySpace(s); err != nil {
		return 0, err
	}
	num, suffix := splitNumber(s)
	if num == "" {
		return 0, fmt.Errorf("%q is not a rate: it must start with a number, like 400Gb/s", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a rate", s)
	}
	mult, ok := rateSuffixes[strings.TrimSpace(suffix)]
	if !ok && strings.TrimSpace(suffix) == "" {
		return 0, fmt.Errorf("%q has no unit: bits (%sGb/s) or bytes (%sGB/s)?", s, num, num)
	}
	if !ok {
		return 0, fmt.Errorf("%q has an unknown rate unit %q (use Gb/s, Gbps, GB/s, Mb/s …)", s, suffix)
	}
	return v * mult, nil
}

var rateSuffixes = func() map[string]float64 {
	m := map[string]float64{}
	prefixes := map[string]float64{"": 1, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
	binary := map[string]float64{"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}
	for p, f := range prefixes {
		// "/sec" is how sysfs, ibstat and ibv_devinfo print a port's
		// rate ("400 Gb/sec (4X NDR)"): people copy it from there.
		for _, bit := range []string{"b/s", "bps", "bit/s", "bits/s", "b/sec", "bit/sec", "bits/sec"} {
			m[p+bit] = f
		}
		for _, byt := range []string{"B/s", "Bps", "B/sec"} {
			m[p+byt] = f * 8
		}
	}
	for p, f := range binary {
		m[p+"B/s"], m[p+"B/sec"] = f*8, f*8
		m[p+"b/s"], m[p+"b/sec"] = f, f
	}
	return m
}()

// ParsePercent reads "90%" (or "90") and returns 90.
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a percent, like 90%%", s)
	}
	return v, nil
}

// maxDurationSeconds keeps plain seconds within time.Duration (about 292
// years); a larger number would wrap around to a negative duration.
const maxDurationSeconds = float64(math.MaxInt64/int64(time.Second)) - 1

// durationForm is a Go duration as written; one that still fails to parse
// overflowed time.Duration (about 292 years).
var durationForm = regexp.MustCompile(`^[-+]?([0-9]+(\.[0-9]*)?(ns|us|µs|μs|ms|s|m|h))+$`)

// ParseDuration reads a Go duration ("10s", "1m30s") or plain seconds ("10").
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(t, 64); err == nil {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > maxDurationSeconds {
			return 0, fmt.Errorf("%q is not a duration (plain numbers are seconds, at most %.0f)", s, maxDurationSeconds)
		}
		return time.Duration(v * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(t)
	if err != nil && durationForm.MatchString(t) {
		return 0, fmt.Errorf("%q is too long (at most about 2562047h)", s)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration, like 10s or 2m", s)
	}
	return d, nil
}

// splitNumber splits "400Gb/s" into "400" and "Gb/s".
func splitNumber(s string) (num, rest string) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || (i == 0 && (s[i] == '-' || s[i] == '+'))) {
		i++
	}
	// Allow an exponent such as 1e9.
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') && i+1 < len(s) && (s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-') {
		j := i + 2
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		i = j
	}
	return s[:i], s[i:]
}

// FormatRate renders bits per second for NICs: "392.1 Gb/s".
func FormatRate(bps float64) string {
	switch {
	case bps >= 1e12:
		return fmt.Sprintf("%.2f Tb/s", bps/1e12)
	case bps >= 1e9:
		return fmt.Sprintf("%.2f Gb/s", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.2f Mb/s", bps/1e6)
	case bps >= 1e3:
		return fmt.Sprintf("%.2f Kb/s", bps/1e3)
	}
	return fmt.Sprintf("%.0f b/s", bps)
}

// FormatByteRate renders bits per second as bytes for collectives: "45.20 GB/s".
func FormatByteRate(bps float64) string {
	Bps := bps / 8
	switch {
	case Bps >= 1e9:
		return fmt.Sprintf("%.2f GB/s", Bps/1e9)
	case Bps >= 1e6:
		return fmt.Sprintf("%.2f MB/s", Bps/1e6)
	}
	return fmt.Sprintf("%.2f KB/s", Bps/1e3)
}

// FormatSize renders bytes with binary units: "4KiB", "1MiB", "1536B".
func FormatSize(b int64) string {
	for _, u := range []struct {
		n    int64
		name string
	}{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if b >= u.n && b%u.n == 0 {
			return fmt.Sprintf("%d%s", b/u.n, u.name)
		}
	}
	return fmt.Sprintf("%dB", b)
}
