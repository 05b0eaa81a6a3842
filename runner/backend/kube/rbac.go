package kube

import rbacv1 "k8s.io/api/rbac/v1"

// Rules are the least privilege the kube backend needs in a run's
// namespace: pods with exec and logs, the run's ConfigMap, events for
// scheduler and kubelet failures, Multus NetworkAttachmentDefinitions, and
// nixlbench's etcd (a pod and a Service, reached through a port-forward).
// deploy/rbac.yaml's Role and the one `plan -o cronjob` prints are these
// rules; a test keeps the shipped file equal to them.
func Rules() []rbacv1.PolicyRule {
	core := func(resource string, verbs ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{resource}, Verbs: verbs}
	}
	return []rbacv1.PolicyRule{
		core("pods", "create", "get", "list", "watch", "delete"),
		core("pods/exec", "create", "get"),
		core("pods/log", "get"),
		core("pods/portforward", "create", "get"),
		core("services", "create", "get", "list", "delete"),
		core("configmaps", "create", "get", "list", "delete"),
		core("events", "get", "list", "watch"),
		{APIGroups: []string{"k8s.cni.cncf.io"}, Resources: []string{"network-attachment-definitions"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceclaims"}, Verbs: []string{"get"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: []string{"create", "list", "delete"}},
	}
}
