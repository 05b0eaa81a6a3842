package tools

import "strings"

// UsesGIB says whether NCCL runs through Google's gIB net plugin on GKE
// (NCCL_NET=gIB, as /usr/local/gib/scripts/set_nccl_env.sh and Google's
// images set it, beside NCCL_IB_GID_INDEX, NCCL_CROSS_NIC and a tuner
// config): the plugin picks its NICs, rails and GID, so rdmabench names
// none (no NCCL_IB_HCA, NCCL_IB_GID_INDEX or NCCL_SOCKET_IFNAME), and the
// transport shows as NET/gIB in NCCL's channel lines.
func UsesGIB(env map[string]string) bool {
	return strings.EqualFold(strings.TrimSpace(env["NCCL_NET"]), "gIB")
}
