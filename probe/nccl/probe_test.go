package nccl

import "testing"

// TestFloatStrIsNCCLTests: numbers print as nccl-tests' getFloatStr prints
// them (the most decimals that fit the column), values from real rows.
func TestFloatStrIsNCCLTests(t *testing.T) {
	for _, c := range []struct {
		v     float64
		width int
		want  string
	}{
		{13.48, 7, "  13.48"}, {1620.05, 7, "1620.05"}, {12881.3, 7, "12881.3"}, {123456.7, 7, " 123457"},
		{12345678, 7, "1.2e+07"}, {77.76, 6, " 77.76"}, {662.78, 6, "662.78"}, {1234.5, 6, "1234.5"}, {1e6, 6, " 1e+06"},
	} {
		if got := floatStr(c.v, c.width); got != c.want {
			t.Errorf("floatStr(%v, %d) = %q, want %q", c.v, c.width, got, c.want)
		}
	}
}

// TestCountsAreNCCLTests: element counts and bandwidth factors as
// nccl-tests' GetCollByteCount and GetBw define them (src/*.cu), for a 1 MiB
// float test over 4 ranks; alltoall's per-peer part aligned to 16 bytes.
func TestCountsAreNCCLTests(t *testing.T) {
	want := map[string]struct{ send, recv, param, factorX100, algMul int }{
		"all_reduce":     {262144, 262144, 262144, 150, 1},
		"all_gather":     {65536, 262144, 65536, 75, 4},
		"reduce_scatter": {262144, 65536, 65536, 75, 4},
		"alltoall":       {262144, 262144, 65536, 75, 4},
		"sendrecv":       {262144, 262144, 262144, 100, 1},
		"broadcast":      {262144, 262144, 262144, 100, 1},
	}
	for name, w := range want {
		c, err := lookupCollective(name)
		if err != nil {
			t.Fatal(err)
		}
		s, r, p, _, _ := c.counts(262144, 4, 4)
		if s != w.send || r != w.recv || p != w.param || int(c.factor(4)*100+0.5) != w.factorX100 || c.algMul(4) != w.algMul {
			t.Errorf("%s: send %d recv %d param %d factor %v algMul %d, want %+v", name, s, r, p, c.factor(4), c.algMul(4), w)
		}
	}
	if _, _, p, _, _ := collectives[3].counts(1000, 4, 3); p != 332 {
		t.Errorf("alltoall of 1000 floats over 3 ranks: %d per peer, want 332 (16-byte aligned)", p)
	}
}

func TestVersionAndBusID(t *testing.T) {
	for code, want := range map[int]string{22809: "2.28.9", 21903: "2.19.3", 2708: "2.7.8"} {
		if got := versionString(code); got != want {
			t.Errorf("versionString(%d) = %q, want %q", code, got, want)
		}
	}
	for id, want := range map[string]string{"0000:06:00.0": "0000:06:00", "00000000:C1:00.0": "0000:c1:00", "junk": "0000:00:00"} {
		if got := pciShort(id); got != want {
			t.Errorf("pciShort(%q) = %q, want %q", id, got, want)
		}
	}
}
