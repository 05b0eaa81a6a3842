package pathproof

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
)

// sysfsLines turns a `name:value` listing of hw_counters (as published)
// into Script's lines for port 1, with extra counters appended.
func sysfsLines(t *testing.T, file string, extra ...string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata/health", file))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"port=1", "counters/port_xmit_data=1000", "counters/port_rcv_data=1000"}
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		k, v, _ := strings.Cut(l, ":")
		out = append(out, "hw_counters/"+k+"="+v)
	}
	return strings.Join(append(out, extra...), "\n") + "\n"
}

// A leg whose congestion counters moved is "congested", one whose loss
// counters moved "lossy"; the verdict's proof is unchanged.
func TestHealthMlx5(t *testing.T) {
	base := []string{"hw_counters/np_cnp_sent=100", "hw_counters/rp_cnp_handled=7", "ethtool/rx_prio3_pause=142", "ethtool/rx_prio3_discards=0"}
	before := parse(t, sysfsLines(t, "mlx5-hw_counters.txt", base...))
	cases := []struct {
		name, after, health string
		congested, lossy    []string
	}{
		{"quiet", sysfsLines(t, "mlx5-hw_counters.txt", base...), schema.HealthClean, nil, nil},
		{"cnp and pause", sysfsLines(t, "mlx5-hw_counters.txt", "hw_counters/np_cnp_sent=112", "hw_counters/rp_cnp_handled=7", "ethtool/rx_prio3_pause=150", "ethtool/rx_prio3_discards=0"),
			schema.HealthCongested, []string{"ethtool/rx_prio3_pause", "hw_counters/np_cnp_sent"}, nil},
		{"out of sequence and discards", strings.Replace(sysfsLines(t, "mlx5-hw_counters.txt", "hw_counters/np_cnp_sent=100", "hw_counters/rp_cnp_handled=7", "ethtool/rx_prio3_pause=142", "ethtool/rx_prio3_discards=5"), "out_of_sequence=0", "out_of_sequence=3", 1),
			schema.HealthLossy, nil, []string{"ethtool/rx_prio3_discards", "hw_counters/out_of_sequence"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Delta("server-0", "mlx5_0", before, parse(t, tc.after))
			if _, ok := d.Health["hw_counters/rx_write_requests"]; ok {
				t.Errorf("rx_write_requests is traffic, not health: %v", d.Health)
			}
			p := Verify([]schema.PathCounters{d}, Expect{})
			if p.Health != tc.health || !slices.Equal(d.Congested, tc.congested) || !slices.Equal(d.Lossy, tc.lossy) {
				t.Fatalf("health %q congested %v lossy %v; want %q %v %v (%v)", p.Health, d.Congested, d.Lossy, tc.health, tc.congested, tc.lossy, d.Health)
			}
			for _, k := range slices.Concat(tc.congested, tc.lossy) {
				if !strings.Contains(p.HealthDetail, k+" +") {
					t.Errorf("detail %q does not name %s", p.HealthDetail, k)
				}
			}
		})
	}
}

// rxe's own loss counters are read; a device with none has no health.
func TestHealthRxe(t *testing.T) {
	b := parse(t, rxeBefore+"hw_counters/duplicate_request=0\nhw_counters/rcvd_seq_err=0\n")
	a := parse(t, rxeClient+"hw_counters/duplicate_request=2\nhw_counters/rcvd_seq_err=0\n")
	p := Verify([]schema.PathCounters{Delta("client-0", "rxe0", b, a)}, Expect{Packets: 1600})
	if p.Health != schema.HealthLossy || p.HealthDetail != "client-0 rxe0: hw_counters/duplicate_request +2" {
		t.Fatalf("%q %q", p.Health, p.HealthDetail)
	}
	p = Verify([]schema.PathCounters{Delta("client-0", "rxe0", parse(t, rxeBefore), parse(t, rxeClient))}, Expect{Packets: 1600})
	if p.Health != "" {
		t.Fatalf("no health counters read: health %q", p.Health)
	}
}

// The ethtool part of Script reads the port's netdev's per-priority pause
// and discards from ethtool -S, and nothing else (not the _duration ones).
func TestEthtoolScript(t *testing.T) {
	dir := t.TempDir()
	port := filepath.Join(dir, "port")
	if err := os.MkdirAll(filepath.Join(port, "gid_attrs/ndevs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(port, "gid_attrs/ndevs/0"), []byte("ens1f0np0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fixture, _ := filepath.Abs("testdata/health/mlx5-ethtool-S.txt")
	fake := "#!/bin/sh\n[ \"$1 $2\" = \"-S ens1f0np0\" ] || exit 1\ncat " + fixture + "\n"
	if err := os.WriteFile(filepath.Join(dir, "ethtool"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "P="+port+"; "+ethtoolScript())
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "ethtool/rx_discards_phy=0\nethtool/tx_discards_phy=0\nethtool/rx_prio3_discards=0\nethtool/rx_prio3_pause=142\nethtool/tx_prio3_pause=87\nethtool/rx_prio3_buf_discard=0\nethtool/rx_prio3_cong_discard=0\n"
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	c, err := Parse("port=1\nhw_counters/sent_pkts=1\n" + string(out))
	if err != nil || c.Health["ethtool/tx_prio3_pause"] != 87 {
		t.Fatalf("%v %v", c.Health, err)
	}
}
