package nic

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseRate reads a sysfs port rate such as "400 Gb/sec (4X NDR)" or
// "2.5 Gb/sec (1X SDR)" and returns bits per second.
func ParseRate(s string) (float64, error) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return 0, fmt.Errorf("port rate %q: want \"<number> Gb/sec (…)\"", s)
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("port rate %q: %q is not a number", s, f[0])
	}
	switch strings.ToLower(f[1]) {
	case "gb/sec", "gb/s":
		return v * 1e9, nil
	case "mb/sec", "mb/s":
		return v * 1e6, nil
	case "tb/sec", "tb/s":
		return v * 1e12, nil
	}
	return 0, fmt.Errorf("port rate %q: unknown unit %q", s, f[1])
}

// PCIeBandwidth is the data rate of a PCIe link in bits/s per direction:
// transfer rate × lanes × line-code efficiency (8b/10b up to 5 GT/s,
// 128b/130b for 8–32 GT/s, 242/256 FLIT for 64 GT/s). speed is sysfs
// current_link_speed ("32.0 GT/s PCIe", "8 GT/s"); 0 when unknown.
func PCIeBandwidth(speed string, width int) float64 {
	f := strings.Fields(speed)
	if len(f) < 2 || width <= 0 || !strings.EqualFold(f[1], "GT/s") {
		return 0
	}
	gt, err := strconv.ParseFloat(f[0], 64)
	if err != nil || gt <= 0 {
		return 0
	}
	eff := 128.0 / 130.0
	switch {
	case gt <= 5:
		eff = 8.0 / 10.0
	case gt >= 64:
		eff = 242.0 / 256.0
	}
	// Rounded to the Mb/s: the encoding fractions mean nothing finer.
	return math.Round(gt*1e3*float64(width)*eff) * 1e6
}
