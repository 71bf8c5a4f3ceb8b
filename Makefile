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

build: ## build the apiconform binary into ./apiconform
	$(GO) build -o apiconform ./cmd/apiconform

test: fmt-check vet unit ## everything CI gates on: gofmt, go vet, go test -race

fmt-check:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

unit:
	$(GO) test -race -timeout 30m $(PKGS)

bench: ## benchmarks of the store, server, paging, watch and static checker
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 3x $(PKGS)

fuzz: ## run each fuzz target for a short while
	@for spec in $$($(GO) test -list '^Fuzz' $(PKGS) 2>/dev/null | grep -E '^(Fuzz|ok)'); do :; done
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeRequest$$' -fuzztime 20s ./refserver/... || true

conformance: ## run every suite against the embedded reference server
	$(GO) run ./cmd/apiconform run --out $(OUT)/refserver

oracle-build: ## build kube-apiserver, kubectl and etcd from the Go modules pinned in oracle/go.mod
	cd oracle && bash build.sh

oracle: oracle-build ## build and start etcd + kube-apiserver on 127.0.0.1, write $(ORACLE_DIR)/kubeconfig
	bash oracle/up.sh

oracle-stop: ## stop the oracle processes started by `make oracle`
	bash oracle/down.sh

conformance-oracle: ## run the suites against the oracle; fails on any failure not catalogued as a kube-apiserver deviation
	$(GO) run ./cmd/apiconform run --kubeconfig $(ORACLE_DIR)/kubeconfig --target-name kube-apiserver \
	  --allow-known-deviations --out $(OUT)/oracle
	$(GO) run ./cmd/apiconform run --target-name refserver --out $(OUT)/refserver
	$(GO) run ./cmd/apiconform report $(OUT)/refserver/result.json $(OUT)/oracle/result.json \
	  --format md --out $(OUT)/matrix.md
	$(GO) run ./cmd/apiconform report $(OUT)/refserver/result.json $(OUT)/oracle/result.json \
	  --format html --out $(OUT)/matrix.html

bench-compare: ## same bounded load against the reference server and the oracle, with ratios
	$(GO) run ./cmd/apiconform bench --kubeconfig $(ORACLE_DIR)/kubeconfig

report-screenshot: ## render a sample HTML report and screenshot it with headless Chromium
	$(GO) run ./reports/cmd/screenshot $(OUT)/report.png

clean:
	rm -rf $(OUT) apiconform
