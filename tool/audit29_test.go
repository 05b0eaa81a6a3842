package tool

import "testing"

// UCX_TLS "^ud" (all but UD) still selects rc and dc: RDMA. Only an
// exclusion of every IB transport ("^ib") leaves TCP.
func TestAudit29PartialExclusionsAreNotTCP(t *testing.T) {
	for _, tls := range []string{"^ud", "^rc", "^dc"} {
		if TransportsAreTCP(tls) {
			t.Errorf("TransportsAreTCP(%q) = true: UCX still picks an RDMA transport", tls)
		}
	}
}
