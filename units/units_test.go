package units

import (
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"65536", 65536, true}, {"4KiB", 4096, true}, {"8MiB", 8 << 20, true}, {"1GiB", 1 << 30, true},
		{"4KB", 4000, true}, {"64K", 65536, true}, {"2 MiB", 2 << 20, true}, {"1.5KiB", 1536, true},
		{"0", 0, true}, {"-4KiB", -4096, true}, {"64k", 65536, true}, {"1GB", 1e9, true},
		{"", 0, false}, {"KiB", 0, false}, {"4XB", 0, false}, {"0.3B", 0, false}, {"1e30GiB", 0, false},
		// As strict as rates: the case of a unit means something (b is a
		// bit), and a stray space is a typo, not part of the size.
		{"1GB ", 0, false}, {" 2 MiB", 0, false}, {"1Gb", 0, false}, {"4kib", 0, false}, {"8mb", 0, false}, {"64b", 0, false},
	} {
		got, err := ParseSize(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseSize(%q) = %d, %v; want %d ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestParseRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"400Gb/s", 400e9, true}, {"200Gbps", 200e9, true}, {"100Gbit/s", 100e9, true},
		{"25GB/s", 200e9, true}, {"12.5GBps", 100e9, true}, {"1GiB/s", 8 << 30, true}, {"10 Mb/s", 10e6, true},
		{"400 Gb/sec", 400e9, true}, {"100Gbit/sec", 100e9, true}, {"50GB/sec", 400e9, true}, {"1GiB/sec", 8 << 30, true},
		{"fast", 0, false}, {"400", 0, false}, {"400G", 0, false}, {"400Gbit", 0, false},
		{"400 Gb/sec (4X NDR)", 0, false}, {"400gb/s", 0, false}, {"400Gb/se", 0, false},
		{"400Gb/s ", 0, false}, {" 400Gb/s", 0, false},
	} {
		got, err := ParseRate(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseRate(%q) = %g, %v; want %g ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

// A stray space names itself; a size in bits says a size is bytes.
func TestParseSizeSaysWhy(t *testing.T) {
	for in, want := range map[string]string{
		"1GB ": `"1GB " has a space at its end: write "1GB"`,
		"1Gb":  `"1Gb" is in bits (b): a size is in bytes (B, KiB, MiB, GiB, KB, MB, GB)`,
		"4kib": `"4kib" has an unknown size unit "kib" (did you mean KiB? use B, KiB, MiB, GiB, KB, MB, GB)`,
	} {
		if _, err := ParseSize(in); err == nil || err.Error() != want {
			t.Errorf("ParseSize(%q): %v, want %s", in, err, want)
		}
	}
}

// A rate without a unit asks which one was meant, with the number in both.
func TestParseRateNoUnit(t *testing.T) {
	_, err := ParseRate("400")
	if want := `"400" has no unit: bits (400Gb/s) or bytes (400GB/s)?`; err == nil || err.Error() != want {
		t.Errorf("ParseRate(400): %v, want %s", err, want)
	}
}

func TestParsePercent(t *testing.T) {
	for in, want := range map[string]float64{"90%": 90, "90": 90, " 99.5 % ": 99.5, "0%": 0} {
		if got, err := ParsePercent(in); err != nil || got != want {
			t.Errorf("ParsePercent(%q) = %g, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "ninety", "90%%", "NaN"} {
		if _, err := ParsePercent(in); err == nil {
			t.Errorf("ParsePercent(%q): want an error", in)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"10s": 10 * time.Second, "2m": 2 * time.Minute, "500us": 500 * time.Microsecond,
		"1m30s": 90 * time.Second, "10": 10 * time.Second, "0.5": 500 * time.Millisecond,
	} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "10 sec", "ten", "1e10", "1e400", "Inf"} {
		if d, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v: want an error", in, d)
		}
	}
	for in, want := range map[string]string{
		"99999999999h":      `"99999999999h" is too long (at most about 2562047h)`,
		"1h99999999999999m": `"1h99999999999999m" is too long (at most about 2562047h)`,
		"10sec":             `"10sec" is not a duration, like 10s or 2m`,
		"1d":                `"1d" is not a duration, like 10s or 2m`,
	} {
		if _, err := ParseDuration(in); err == nil || err.Error() != want {
			t.Errorf("ParseDuration(%q): error %v, want %s", in, err, want)
		}
	}
}
