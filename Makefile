# rdmabench — build and test. `make test` runs every test lane that can run
# on this machine (see README "Tests").
GO      ?= go
BIN     := bin/rdmabench
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: build test test-unit lint e2e clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/rdmabench

# Unit tests: parsers, scenarios, planner, report (fast, no tools needed).
test-unit:
	$(GO) test -count=1 ./...

test: build test-unit e2e-rdma

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

e2e: build

clean:
	rm -rf bin results

# The soft-RoCE lane: two QEMU VMs with rdma_rxe, built from Debian packages
# (images/), driven over ssh: real ib_write_bw, ib_read_lat, rping and
# ucx_perftest between two kernels. Needs qemu-system-x86 (./.ci/setup).
.PHONY: e2e-rdma
e2e-rdma: build
	$(MAKE) -C images softroce
	RDMABENCH_SOFTROCE=$(CURDIR)/.work/softroce $(GO) test -count=1 -timeout 20m -v ./test/e2erdma/
