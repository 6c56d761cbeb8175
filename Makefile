# llmrelay Makefile. `make help` lists the targets.
#
# Every tool runs from a version pinned in go.mod (or tools/go.mod for buf,
# whose dependencies would otherwise pull ours forward), so a machine with only
# Go can build, test and regenerate.

SHELL := /bin/bash
.DEFAULT_GOAL := help

GO          ?= go
BUF         := $(GO) tool -modfile=tools/go.mod buf
BIN         := bin/llmrelay
PROTODEPS   := .cache/protodeps
# Proto dependencies, read from Go modules on the module proxy (the Buf Schema
# Registry is not reachable from our build machines).
PROTOVALIDATE_MOD := github.com/bufbuild/protovalidate@v1.2.2
GOOGLEAPIS_MOD    := github.com/grpc-ecosystem/grpc-gateway@v1.16.0
ARGS        ?=
FUZZTIME    ?= 30s
SOAK_CALLS  ?= 5000
BENCHFLAGS  ?=

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build the server to bin/llmrelay.
	$(GO) build -o $(BIN) ./cmd/server

.PHONY: run
run: build ## Build and start the server (embedded default: 127.0.0.1:50051, mock provider). ARGS="--config x.yaml" passes flags.
	./$(BIN) $(ARGS)

.PHONY: test
test: ## Run every test with the race detector.
	$(GO) test -race -count=1 ./...

.PHONY: bench
bench: build ## Benchmark llmrelay against direct provider calls (a real process on loopback); BENCHFLAGS="-h" lists its flags.
	$(GO) run ./bench -llmrelay $(BIN) $(BENCHFLAGS)

.PHONY: soak
soak: ## Fault soak: SOAK_CALLS streams (default 5000) at concurrency 64 through faults, then a provider outage.
	SOAK_CALLS=$(SOAK_CALLS) $(GO) test -count=1 -timeout 30m -run 'Soak' -v ./internal/soak/

.PHONY: fuzz
fuzz: ## Run every fuzz target (found with go test -list) for FUZZTIME each (default 30s).
	@set -euo pipefail; \
	pkgs=$$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); \
	for pkg in $$pkgs; do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg; \
		done; \
	done

.PHONY: vet
vet: ## Run go vet.
	$(GO) vet ./...

.PHONY: protodeps
protodeps: $(PROTODEPS)/.stamp ## Copy the imported protos out of Go modules into .cache/protodeps.

$(PROTODEPS)/.stamp: Makefile
	@set -euo pipefail; \
	pv=$$($(GO) mod download -json $(PROTOVALIDATE_MOD) | sed -n 's/^\s*"Dir": "\(.*\)",$$/\1/p'); \
	ga=$$($(GO) mod download -json $(GOOGLEAPIS_MOD) | sed -n 's/^\s*"Dir": "\(.*\)",$$/\1/p'); \
	test -n "$$pv" && test -n "$$ga"; \
	rm -rf $(PROTODEPS); \
	mkdir -p $(PROTODEPS)/protovalidate/buf/validate $(PROTODEPS)/googleapis/google/rpc; \
	cp $$pv/proto/protovalidate/buf/validate/validate.proto $(PROTODEPS)/protovalidate/buf/validate/; \
	cp $$ga/third_party/googleapis/google/rpc/{status,error_details,code}.proto $(PROTODEPS)/googleapis/google/rpc/; \
	chmod -R u+w $(PROTODEPS); \
	touch $@

.PHONY: lint-proto
lint-proto: protodeps ## Lint the protos (buf STANDARD).
	$(BUF) lint

.PHONY: generate
generate: protodeps ## Regenerate gen/ from proto/.
	$(BUF) lint
	rm -rf gen/go
	$(BUF) generate

.PHONY: checkgenerate
checkgenerate: generate ## Fail if the committed gen/ differs from what proto/ generates.
	@if [ -n "$$(git status --porcelain -- gen)" ]; then \
		echo "gen/ is out of date: run 'make generate' and commit the result"; \
		git status --porcelain -- gen; git --no-pager diff --stat -- gen; exit 1; \
	fi

.PHONY: clean
clean: ## Remove build outputs and caches.
	rm -rf bin .cache
