package nic

import (
	"strconv"

	"github.com/rdmabench/rdmabench/report/schema"
)

// Fingerprint is the environment record every backend writes for an
// endpoint: the kernel, and the firmware and active MTU of its RDMA device
// (from inv, which may be nil). compare warns when any of them changed
// between runs. Nil when nothing is known.
func Fingerprint(kernel string, inv *Inventory, device string) map[string]string {
	fp := map[string]string{}
	if kernel != "" {
		fp[schema.FingerprintKernel] = kernel
	}
	if inv != nil {
		if d, p, err := inv.Pick(device); err == nil {
			if d.FWVer != "" {
				fp[schema.FingerprintNICFirmware] = d.FWVer
			}
			if p.ActiveMTU > 0 {
				fp[schema.FingerprintMTU] = strconv.Itoa(p.ActiveMTU)
			}
		}
	}
	if len(fp) == 0 {
		return nil
	}
	return fp
}
