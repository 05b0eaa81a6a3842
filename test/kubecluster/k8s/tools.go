//go:build tools

// Package k8s pins the Kubernetes control-plane commands that the kube test
// lane builds: kube-apiserver, kube-scheduler and kube-controller-manager
// (its garbage collector and namespace controller make ownerReference and
// namespace deletion behave as on a real cluster). Nothing here is compiled
// into the product; test/kubecluster/cluster.EnsureBinaries runs
// `go build k8s.io/kubernetes/cmd/...` in this module.
package k8s

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
)
