package parsers

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestPerftestTransport reads the transport from real soft-RoCE output
// (testdata/softroce, recorded between the two VMs of the RDMA lane).
func TestPerftestTransport(t *testing.T) {
	cases := []struct {
		file string
		want *Transport
	}{
		{"ib_write_bw_64k_client.txt", &Transport{Kind: TransportRDMA, Source: "perftest", Detail: "RoCE RC", Devices: []string{"rxe0"},
			Evidence: []string{"Connection type : RC", "Device : rxe0", "GID index : 1", "Link type : Ethernet", "Transport type : IB"}}},
		{"ib_read_lat_64_client.txt", &Transport{Kind: TransportRDMA, Source: "perftest", Detail: "RoCE RC", Devices: []string{"rxe0"},
			Evidence: []string{"Connection type : RC", "Device : rxe0", "GID index : 1", "Link type : Ethernet", "Transport type : IB"}}},
		{"error_wrong_gid_client.txt", nil},
	}
	for _, c := range cases {
		f, err := os.Open(filepath.Join("..", "testdata", "softroce", c.file))
		if err != nil {
			t.Fatal(err)
		}
		ms, err := ParsePerftest(f)
		f.Close()
		if err != nil || len(ms) == 0 {
			t.Fatalf("%s: %v", c.file, err)
		}
		if got := PerftestTransport(ms[0]); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v; want %+v", c.file, got, c.want)
		}
	}
	ib := Measurement{OK: true, Info: map[string]string{"device": "mlx5_0", "transport_type": "IB", "link_type": "IB"}}
	if got := PerftestTransport(ib); got == nil || got.Detail != "InfiniBand" {
		t.Errorf("IB link: %+v", got)
	}
}
