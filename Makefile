# apiconform — build, test and conformance targets. `make help` lists them.
GO       ?= go
PKGS     ?= ./...
OUT      ?= out
ORACLE_DIR ?= $(CURDIR)/.oracle
export ORACLE_DIR

.PHONY: help build test vet fmt-check unit bench fuzz oracle oracle-build oracle-stop \
        conformance conformance-oracle bench-compare report-screenshot clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-20s %s\n", $$1, $$2}'

build: ## build ./apiconform and ./apiconform-refserver (the reference server alone: same flags as apiconform serve, half the start-up)
	$(GO) build -o apiconform ./cmd/apiconform
	$(GO) build -o apiconform-refserver ./cmd/apiconform-refserver

test: fmt-check vet unit ## everything CI gates on: gofmt, go vet, go test -race

fmt-check:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

unit:
	$(GO) test -race -timeout 30m $(PKGS)

bench: ## benchmarks of the store, server, paging, watch, write path, static checker and the load's client/transport
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 3x ./refserver/... ./spec/... ./loadgen/...

.PHONY: robustness
robustness: build ## the reference server under hostile clients and damaged storage (≤ 90 s; servers on 127.0.0.1 only)
	APICONFORM_ROBUSTNESS=1 APICONFORM_REFSERVER_BIN=$(CURDIR)/apiconform-refserver $(GO) test -count=1 -timeout 5m -v -run . ./robustness/

.PHONY: robustness-scale
robustness-scale: build ## 100,000 × 1 KiB configmaps in a bbolt store through the server, restarted: RSS and time to /readyz (4–8 min, mostly fsyncs)
	APICONFORM_ROBUSTNESS=1 APICONFORM_ROBUSTNESS_SCALE=1 APICONFORM_REFSERVER_BIN=$(CURDIR)/apiconform-refserver $(GO) test -count=1 -timeout 20m -v -run TestStorageScale ./robustness/

FUZZTIME ?= 20s

fuzz: ## run every fuzz target of the module for FUZZTIME each (default 20s); FUZZ="FuzzA FuzzB" runs only those
	GO=$(GO) FUZZTIME=$(FUZZTIME) bash hack/fuzz.sh $(FUZZ)

conformance: build ## run every suite against the embedded reference server
	./apiconform run --out $(OUT)/refserver

oracle-build: ## build kube-apiserver, kubectl and etcd from the Go modules pinned in oracle/go.mod
	cd oracle && bash build.sh

oracle: oracle-build ## build and start etcd + kube-apiserver on 127.0.0.1, write $(ORACLE_DIR)/kubeconfig
	bash oracle/up.sh

oracle-stop: ## stop the oracle processes started by `make oracle`
	bash oracle/down.sh

conformance-oracle: build ## suites against the oracle (fails on any failure not catalogued as a deviation) and the reference server, side by side
	./apiconform run --kubeconfig $(ORACLE_DIR)/kubeconfig --target-name kube-apiserver -p 2 \
	  --fail-on may --allow-known-deviations --out $(OUT)/oracle
	./apiconform run --target-name refserver --fail-on may --out $(OUT)/refserver
	@for f in md html junit; do \
	  ./apiconform report $(OUT)/refserver/result.json $(OUT)/oracle/result.json --format $$f --out $(OUT)/matrix.$$f || exit 1; \
	done
	./apiconform report $(OUT)/refserver/result.json $(OUT)/oracle/result.json --format terminal

# BENCH_FLAGS sizes bigger runs, e.g. BENCH_FLAGS="--rounds 5 --objects 10000".
BENCH_FLAGS ?=
bench-compare: build ## reference server (own process, HTTPS), the oracle and the transport ceiling under one load, with ratios and CPU per op
	pids=$$(cat $(ORACLE_DIR)/kube-apiserver.pid $(ORACLE_DIR)/etcd.pid 2>/dev/null | paste -sd, -); \
	./apiconform bench --kubeconfig $(ORACLE_DIR)/kubeconfig $${pids:+--target-pids $$pids} --json $(OUT)/bench-compare.json $(BENCH_FLAGS)
	./apiconform bench --from $(OUT)/bench-compare.json --format markdown > $(OUT)/bench-compare.md

.PHONY: releases
releases: ## fetch the OpenAPI documents of the releases in spec/releases/versions.txt (Go module proxy, cached outside git) and check compat on every pair, swagger.json and v3
	bash spec/releases/fetch.sh
	APICONFORM_RELEASES_V3=1 $(GO) test -count=1 -run '^TestReleaseHistory$$' ./spec/compat/

report-screenshot: ## render a sample HTML report and screenshot it with headless Chromium
	mkdir -p $(OUT)
	$(GO) run ./reports/cmd/screenshot $(OUT)/report.png

clean:
	rm -rf $(OUT) apiconform
