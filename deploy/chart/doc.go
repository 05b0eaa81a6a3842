// Package chart renders rdmabench's Helm chart (rdmabench/ beside this
// file) with Helm's own Go library, as `helm template` and `helm install`
// do, so that tests can compare it with `plan -o cronjob`, lint it and
// apply it to the kube lane's cluster. The CLI does not import it.
package chart
