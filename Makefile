# rdmabench — build and test. `make test` runs every test lane that can run on
# this machine (docs/development/lanes.md); `./.ci/setup --tests` installs what the lanes need.
GO       ?= go
BIN      := bin/rdmabench
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
FUZZTIME ?= 60s

# `make image`: the tools image, an OCI archive (images/tools, docs/user-guide/images.md).
.PHONY: kube-up kube-down release lint-tools image kubelet build assets test test-go test-report e2e e2e-local e2e-rdma e2e-nodes e2e-gpu e2e-kube e2e-nixl kube-bins lint clean \
	fuzz fuzz-scenarios fuzz-parsers bench bench-plan bench-parsers bench-runner bench-report bench-kube bench-kube-scale

build: assets
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/rdmabench
	CGO_ENABLED=0 $(GO) build -o bin/rdmabench-nccl ./cmd/rdmabench-nccl
	CGO_ENABLED=0 $(GO) build -o bin/rdmabench-nixl ./cmd/rdmabench-nixl
	CGO_ENABLED=0 $(GO) build -o bin/rdmabench-deepep ./cmd/rdmabench-deepep

# ECharts is embedded in the binary from the npm package pinned in
# report/assets/package-lock.json; the library itself is not committed.
ECHARTS := report/assets/dist/echarts.min.js
assets: $(ECHARTS)
$(ECHARTS): report/assets/package.json report/assets/package-lock.json
	cd report/assets && npm ci --no-audit --no-fund --loglevel=error
	cp report/assets/node_modules/echarts/dist/echarts.min.js $@

image:
	$(MAKE) -C images tools GO="$(GO)"

# `make release VERSION=v0.4.0`: static binaries for every platform below,
# named without the version (so .../releases/latest/download/rdmabench-linux-amd64
# always names the newest) with ECharts embedded, and SHA256SUMS over them, in
# dist/. Plain `go build` cross-compiles them all (CGO_ENABLED=0, -trimpath),
# so a release needs no tool beyond Go and npm (the assets).
# .github/workflows/release.yml runs it on a version tag.
DIST              := dist
RELEASE_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
release: assets
	rm -rf $(DIST) && mkdir -p $(DIST)
	set -e; for p in $(RELEASE_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; echo "rdmabench $(VERSION) $$os/$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" \
			-o $(DIST)/rdmabench-$$os-$$arch ./cmd/rdmabench; \
	done
	cd $(DIST) && sha256sum rdmabench-* > SHA256SUMS && cat SHA256SUMS

# ---- test lanes -------------------------------------------------------------
# Every lane is real where it can be (docs/development/lanes.md):
#   unit       parsers on real captures and ../shared/corpus, scenario errors,
#              planner properties, report goldens            (go test ./...)
#   local e2e  real ucx_perftest + iperf3 over TCP, embedded etcd, stand-ins
#                                                            (go test ./runner/... ./cmd/...)
#   browser    the HTML report in headless Chromium          (go test ./report/...)
#   rdma e2e   soft-RoCE between two QEMU VMs over ssh       (make e2e-rdma)
#   kube e2e   real apiserver/scheduler/controller-manager, node agents
#              running pods in network namespaces            (make e2e-kube)
# Each lane runs through .ci/lane (a banner with its name, then its result
# and time); the summary of every lane that ran follows, also after a failure
# (make test stops at the first failing lane, as before).
LANES_LOG := $(CURDIR)/.work/lanes.log
test:
	@rm -f $(LANES_LOG)
	@export LANES_LOG=$(LANES_LOG); \
	./.ci/lane build $(MAKE) --no-print-directory build && \
	./.ci/lane unit+local $(MAKE) --no-print-directory test-go && \
	./.ci/lane kube $(MAKE) --no-print-directory e2e-kube && \
	./.ci/lane softroce $(MAKE) --no-print-directory e2e-rdma; \
	rc=$$?; ./.ci/lanes-summary $(LANES_LOG); exit $$rc

# Everything but the kube lane, which e2e-kube runs once with its binaries.
test-go: assets
	$(GO) test -count=1 $$($(GO) list ./... | grep -v -e '/test/kubecluster' -e '/test/e2ekube')

# One lane at a time.
e2e: e2e-local e2e-rdma
e2e-local: build
	$(GO) test -count=1 ./runner/... ./cmd/rdmabench/...
test-report: assets
	$(GO) test -count=1 ./report/... ./cmd/rdmabench/...

# The soft-RoCE lane: two QEMU VMs with rdma_rxe, built from Debian packages
# (images/), driven over ssh: real ib_write_bw, ib_read_lat, rping and
# ucx_perftest between two kernels. Needs qemu-system-x86 (./.ci/setup --tests).
# The VMs are also joined as nodes to the kube lane's control plane (kube-bins)
# for the kube backend over rxe (TestKubeOnVMs).
# The VMs as real nodes (kubelet, containerd, runc, the CNI bridge, the lane's
# RDMA device plugin) are their own lane, e2e-nodes, below.
e2e-rdma: build kube-bins
	$(MAKE) -C images softroce GO="$(GO)"
	RDMABENCH_SOFTROCE=$(CURDIR)/.work/softroce RDMABENCH_KUBE_BIN=$(CURDIR)/$(KUBE_BIN) $(GO) test -count=1 -timeout 20m -v ./test/e2erdma/

# The soft-RoCE VMs as real Kubernetes nodes (kubelet, containerd, runc, the
# CNI bridge, the lane's RDMA device plugin; the lane's image imported into
# containerd): by hand, not in `make test` (the join alone takes minutes
# under emulation). Root. The lane measures the host's pace (the VMs' boot,
# the image import) and scales its bounds by it, each fitted into
# NODES_TIMEOUT (go test -timeout): a host too slow for it fails early,
# saying what it would need, rather than being killed with nothing said.
NODES_TIMEOUT ?= 60m
e2e-nodes: build kube-bins kubelet image
	$(MAKE) -C images softroce softroce-node GO="$(GO)" KUBELET=$(CURDIR)/$(KUBE_BIN)/kubelet
	RDMABENCH_VM_NODES=1 RDMABENCH_SOFTROCE=$(CURDIR)/.work/softroce RDMABENCH_KUBE_BIN=$(CURDIR)/$(KUBE_BIN) $(GO) test -count=1 -timeout $(NODES_TIMEOUT) -v -run TestKubeOnVMNodes ./test/e2erdma/

# The real-nixlbench lane (not in `make test`: CI's machines cannot fetch NIXL's
# sources; CI replays this lane's captures in testdata/nixl). NIXL_PREFIX names
# a NIXL + nixlbench build with the ETCD runtime and the UCX and LIBFABRIC
# plugins, made outside the repository (testdata/nixl/README.md states what
# the captured one had). Local: two processes through `rdmabench run` and raw
# (test/e2enixl); the VMs: prefill on vm1, decode on vm2, over rc_verbs and
# libfabric's tcp provider (test/e2erdma TestNixl*). Without NIXL_PREFIX the
# tests skip and say why.
NIXL_PREFIX ?=
e2e-nixl: build kube-bins
	RDMABENCH_NIXL_PREFIX=$(NIXL_PREFIX) RDMABENCH_BIN=$(CURDIR)/$(BIN) RDMABENCH_KUBE_BIN=$(CURDIR)/$(KUBE_BIN) $(GO) test -count=1 -timeout 30m -v ./test/e2enixl/
	$(MAKE) -C images softroce GO="$(GO)"
	RDMABENCH_NIXL_PREFIX=$(NIXL_PREFIX) RDMABENCH_SOFTROCE=$(CURDIR)/.work/softroce RDMABENCH_KUBE_BIN=$(CURDIR)/$(KUBE_BIN) $(GO) test -count=1 -timeout 40m -v -run 'Nixl' ./test/e2erdma/

# The GPU lane (not in `make test`: CI has no GPU). On a host with NVIDIA GPUs and
# nccl-tests on the PATH: rdmabench runs scenarios/gpu-single-host.yaml, the same
# nccl-tests commands run raw, and the figures are compared (test/e2egpu).
e2e-gpu: build
	RDMABENCH_E2E_GPU=1 RDMABENCH_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -v -timeout 20m ./test/e2egpu/

# The kube lane (test/kubecluster): kube-apiserver, kube-scheduler and
# kube-controller-manager built from the k8s.io/kubernetes module in their own
# go.mod (test/kubecluster/k8s), cached in .work/bin and rebuilt only when that
# module changes; the product's embedded etcd; node agents on virtual-kubelet.
# Needs root and `ip netns` (iproute2); the tests skip otherwise.
KUBE_BIN  := .work/bin
KUBE_CMDS := kube-apiserver kube-scheduler kube-controller-manager
kube-bins: $(addprefix $(KUBE_BIN)/,$(KUBE_CMDS))
$(addprefix $(KUBE_BIN)/,$(KUBE_CMDS)) &: test/kubecluster/k8s/go.mod test/kubecluster/k8s/go.sum
	mkdir -p $(KUBE_BIN)
	cd test/kubecluster/k8s && GOWORK=off $(GO) build -o $(CURDIR)/$(KUBE_BIN)/ $(addprefix k8s.io/kubernetes/cmd/,$(KUBE_CMDS))
	touch $(addprefix $(KUBE_BIN)/,$(KUBE_CMDS))
# The VM nodes' kubelet, from the same module and version, static (the VMs
# have Debian's libc but no more), stamped with the module's version.
K8S_VERSION := $(shell sed -n 's/^require k8s.io\/kubernetes \(v[0-9.]*\)$$/\1/p' test/kubecluster/k8s/go.mod)
K8S_LDFLAGS := -s -w -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) \
	-X k8s.io/component-base/version.gitMajor=$(word 2,$(subst ., ,$(subst v,v ,$(K8S_VERSION)))) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(K8S_VERSION)))
kubelet: $(KUBE_BIN)/kubelet
$(KUBE_BIN)/kubelet: test/kubecluster/k8s/go.mod test/kubecluster/k8s/go.sum
	mkdir -p $(KUBE_BIN)
	cd test/kubecluster/k8s && GOWORK=off CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(K8S_LDFLAGS)" -o $(CURDIR)/$@ k8s.io/kubernetes/cmd/kubelet
# `make kube-up`: the test control plane to try the kube backend on, in the
# foreground (Ctrl-C removes it): four nodes (pd-disagg's and wideep's pods,
# one per node), the NetworkAttachmentDefinition API and the NAD the shipped
# kube scenarios name (rdmabench/rdma-sriov); progress every 10 s while it
# starts; then the kubeconfig (.work/kubeconfig) and the next command. Needs
# root and `ip netns` (iproute2), as the kube lane does.
# `make kube-down` stops one started in the background (make kube-up &) as
# Ctrl-C would: everything it started is removed.
KUBE_UP_CONFIG := $(CURDIR)/.work/kubeconfig
KUBE_UP_PID    := $(CURDIR)/.work/kube-up.pid
kube-up: build kube-bins
	$(GO) run ./test/kubecluster up --nodes 4 --bin $(CURDIR)/$(KUBE_BIN) --kubeconfig $(KUBE_UP_CONFIG) --pidfile $(KUBE_UP_PID) \
		--nad rdmabench/rdma-sriov --next "./bin/rdmabench run kube-check --kubeconfig KUBECONFIG_FILE"
kube-down:
	$(GO) run ./test/kubecluster down --pidfile $(KUBE_UP_PID)

# The cluster's own tests, then `rdmabench run` against it (test/e2ekube).
# Its pods run in the tools image (make image, cached: rebuilt only when
# images/tools or rdmabench's sources change), with the stand-ins bound in.
e2e-kube: kube-bins image
	RDMABENCH_KUBE_BIN=$(CURDIR)/$(KUBE_BIN) RDMABENCH_TOOLS_IMAGE=$(CURDIR)/.work/images/rdmabench-tools.oci.tar $(GO) test -count=1 -timeout 20m -v ./test/kubecluster/... ./test/e2ekube/

# `make lint`: golangci-lint with .golangci.yml (staticcheck, errcheck, govet,
# ineffassign, unused, gofmt) at the version .ci/setup installs, and
# shellcheck over every shell script of the repository (.ci/shellcheck; the
# scripts in Go strings are checked by the TestScriptsPassShellcheck tests).
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := .work/bin/golangci-lint-$(GOLANGCI_LINT_VERSION)
lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run ./...
	./.ci/shellcheck
# The pinned golangci-lint, built from the Go module proxy into .work/bin.
lint-tools: $(GOLANGCI_LINT)
$(GOLANGCI_LINT):
	mkdir -p .work/bin
	GOBIN=$(CURDIR)/.work/bin $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv .work/bin/golangci-lint $@

# ---- fuzzing (bounded by FUZZTIME each; not part of `make test`) -----------
fuzz: fuzz-scenarios fuzz-parsers
fuzz-scenarios:
	$(GO) test ./scenarios -run '^$$' -fuzz FuzzLoad -fuzztime $(FUZZTIME) -fuzzminimizetime 5s
fuzz-parsers:
	for f in FuzzParsePerftest FuzzParsePerftestJSON FuzzParseRping FuzzParseUCXPerftest FuzzParseIperf3 \
		FuzzDetect FuzzFastDecimal FuzzParseNCCL FuzzParseNCCLJSON FuzzParseNixlbench FuzzDetectTransport \
		FuzzParseDeepEP FuzzParseNVSHMEMPerf FuzzParseEPBench; do \
		$(GO) test ./parsers -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s || exit 1; done

# ---- benchmarks (figures in docs/development/benchmarks.md) ----------------
bench: bench-plan bench-parsers bench-runner bench-report bench-kube
# Planning a 512-endpoint all-to-all (time, memory, allocations).
bench-plan:
	$(GO) test -run '^$$' -bench 'Compile/' -benchmem -benchtime 3x ./runner/plan/
	$(GO) test -run '^$$' -bench 'StreamRounds/' -benchmem -benchtime 1x -timeout 30m ./runner/plan/
# Parse throughput: 10 MB perftest sweep capture, 100 MB NCCL_DEBUG=INFO log.
bench-parsers:
	$(GO) test ./parsers -run '^$$' -bench 'ParsePerftest|ParseNCCLInfoLog100MB' -benchmem
# The harness's own overhead per job (100-job plans).
bench-runner:
	$(GO) test -run '^$$' -bench HarnessOverhead -benchtime 3x ./runner/
# HTML size and Chromium render time of a 64-endpoint all-to-all report.
bench-report: assets
	$(GO) test -run '^$$' -bench 'HTML' -benchtime 5x ./report/html/

# Pods to Ready (8, 64): bare on the 3-node cluster, and through the kube
# backend on 4 nodes; harness overhead per job on pods.
bench-kube: kube-bins
	RDMABENCH_KUBE_BIN=$(CURDIR)/$(KUBE_BIN) $(GO) test -count=1 -run '^$$' -bench PodsReady -benchtime 3x ./test/kubecluster/cluster/
	RDMABENCH_KUBE_BIN=$(CURDIR)/$(KUBE_BIN) $(GO) test -count=1 -run '^$$' -bench '^(BenchmarkPodsToReady|BenchmarkKubeHarnessOverhead)$$' -benchtime 2x -timeout 20m ./test/e2ekube/
	$(MAKE) bench-kube-scale
# 64 and 256 endpoints on BENCH_NODES virtual nodes (default 256): pods to
# Ready, per-round harness overhead, API requests (docs/development/benchmarks.md).
BENCH_NODES ?= 256
bench-kube-scale: kube-bins
	RDMABENCH_KUBE_BIN=$(CURDIR)/$(KUBE_BIN) RDMABENCH_BENCH_NODES=$(BENCH_NODES) $(GO) test -count=1 -run '^$$' -bench '^BenchmarkScale' -benchtime 1x -timeout 60m ./test/e2ekube/

clean:
	rm -rf bin results .work $(DIST)
	$(MAKE) -C images clean
