package nic

import (
	"math"
	"testing"
)

func TestParseRate(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		err  bool
	}{
		{"400 Gb/sec (4X NDR)", 400e9, false},
		{"2.5 Gb/sec (1X SDR)", 2.5e9, false},
		{"200 Gb/sec (2X HDR)", 200e9, false},
		{"100 Mb/sec", 100e6, false},
		{"", 0, true},
		{"fast Gb/sec", 0, true},
		{"10 furlongs", 0, true},
	}
	for _, c := range cases {
		got, err := ParseRate(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseRate(%q) = %g, %v; want %g err=%v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestPCIeBandwidth(t *testing.T) {
	cases := []struct {
		speed string
		width int
		want  float64
	}{
		{"32.0 GT/s PCIe", 16, 504.123e9},
		{"16.0 GT/s PCIe", 16, 252.062e9},
		{"8 GT/s", 8, 63.015e9},
		{"5.0 GT/s PCIe", 4, 16e9},
		{"2.5 GT/s", 1, 2e9},
		{"64.0 GT/s PCIe", 16, 967.999e9},
		{"Unknown", 16, 0},
		{"32.0 GT/s PCIe", 0, 0},
	}
	for _, c := range cases {
		got := PCIeBandwidth(c.speed, c.width)
		if math.Abs(got-c.want) > 1e6 {
			t.Errorf("PCIeBandwidth(%q, %d) = %g; want %g", c.speed, c.width, got, c.want)
		}
	}
}

func TestMappedIPv4AndMTU(t *testing.T) {
	if got := mappedIPv4("0000:0000:0000:0000:0000:ffff:0a09:0001"); got != "10.9.0.1" {
		t.Errorf("mappedIPv4 = %q", got)
	}
	if got := mappedIPv4("fe80:0000:0000:0000:5054:00ff:fe12:3401"); got != "" {
		t.Errorf("link-local mapped to %q", got)
	}
	for _, c := range []struct {
		layer    string
		mtu, out int
	}{{"Ethernet", 9000, 4096}, {"Ethernet", 4200, 4096}, {"Ethernet", 1500, 1024}, {"InfiniBand", 2044, 2048}, {"InfiniBand", 4092, 4096}, {"Ethernet", 100, 0}} {
		if got := activeMTU(c.layer, c.mtu); got != c.out {
			t.Errorf("activeMTU(%s,%d) = %d; want %d", c.layer, c.mtu, got, c.out)
		}
	}
}
