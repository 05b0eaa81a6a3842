package preflight

import (
	"slices"
	"strings"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
)

// What a pod's spec already says, for when its facts cannot be read (an
// exec that got no answer within --preflight-timeout on a slow node): the
// kube backend drops every capability and adds only the placement's, so a
// pod whose spec adds no IPC_LOCK (and is not privileged) holds none. Its
// RDMA tests would then run only to fail in memory registration ("Couldn't
// allocate MR") under any finite memlock limit, as a container runtime's
// is (containerd's 8 MiB): they are skipped with this reason instead.

// specNoIPCLock is the evidence that ep's pod is made without IPC_LOCK,
// "" where it may hold it (no placement: not a pod of the kube backend;
// privileged; IPC_LOCK or ALL added).
func specNoIPCLock(sc *scenarios.Scenario, ep endpoint.Endpoint) string {
	if ep.Placement == nil || (sc != nil && sc.Cluster != nil && sc.Cluster.Privileged) {
		return ""
	}
	caps := ep.Placement.Capabilities
	if slices.ContainsFunc(caps, func(c string) bool {
		c = strings.TrimPrefix(strings.ToUpper(c), "CAP_")
		return c == "IPC_LOCK" || c == "ALL"
	}) {
		return ""
	}
	added := "none"
	if len(caps) > 0 {
		added = strings.Join(caps, ", ")
	}
	return "the pod's spec drops every capability and adds " + added + ": IPC_LOCK is not held"
}

// fixIPCLock is the ipc-lock check's fix in a pod.
const fixIPCLock = "add IPC_LOCK to the pod: securityContext.capabilities.add: [IPC_LOCK] (scenario: capabilities: [IPC_LOCK])"

// unreadIPCLock is the ipc-lock check of a pod whose facts could not be
// read (why), judged from its spec alone: failed where the spec grants no
// IPC_LOCK and its tests register memory; else none.
func unreadIPCLock(w Want, why error) (schema.PreflightCheck, bool) {
	if !w.Pod || !w.RDMA || w.SpecNoIPCLock == "" {
		return schema.PreflightCheck{}, false
	}
	return fail(IPCLock, schema.DoomsRDMA, w.SpecNoIPCLock+", and the memlock limit could not be read ("+why.Error()+
		"): memory registration fails under any finite limit (a container runtime's default is 8 MiB)", fixIPCLock), true
}
