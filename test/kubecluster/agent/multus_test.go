package agent

import (
	"encoding/json"
	"net"
	"reflect"
	"testing"
)

func TestParseNetworks(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{"", nil, false},
		{"rdma-net", []string{"ns/rdma-net"}, false},
		{"a, other/b ,c@net5", []string{"ns/a", "other/b", "ns/c"}, false},
		{`[{"name":"a"},{"name":"b","namespace":"x","interface":"r1"}]`, []string{"ns/a", "x/b"}, false},
		{`[{"namespace":"x"}]`, nil, true},
		{`[{"name":`, nil, true},
	} {
		got, err := ParseNetworks(tc.in, "ns")
		if (err != nil) != tc.err || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseNetworks(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestNetworkStatusFormat: the fields and order Multus publishes.
func TestNetworkStatusFormat(t *testing.T) {
	s := NetworkStatus([]Attachment{
		{Network: "cbr0", Interface: "eth0", IP: net.ParseIP("10.244.0.2"), MAC: "02:00:00:00:00:01", Default: true},
		{Network: "default/rdma-net", Interface: "net1", IP: net.ParseIP("10.245.0.2"), MAC: "02:00:00:00:00:02"},
	})
	var got []map[string]any
	if err := json.Unmarshal([]byte(s), &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"name": "cbr0", "interface": "eth0", "ips": []any{"10.244.0.2"}, "mac": "02:00:00:00:00:01", "default": true, "dns": map[string]any{}},
		{"name": "default/rdma-net", "interface": "net1", "ips": []any{"10.245.0.2"}, "mac": "02:00:00:00:00:02", "dns": map[string]any{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("network-status:\n%s\nwant %v", s, want)
	}
}

func TestAddr(t *testing.T) {
	_, n, _ := net.ParseCIDR("10.245.0.0/16")
	if got := addr(n, 1).String(); got != "10.245.0.2" {
		t.Errorf("addr 1 = %s", got)
	}
	if got := addr(n, 300).String(); got != "10.245.1.45" {
		t.Errorf("addr 300 = %s", got)
	}
}
