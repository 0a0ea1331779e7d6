# Parley build and test entry points. `make test` is what CI runs (.ci/run); it installs what it
# needs first: Debian packages for protoc, the Python agent and the browser tests, Node.js when
# the system's is too old, pinned Go tools.

SHELL := /bin/bash
GOBIN := $(shell go env GOPATH)/bin

# Node.js 20.11 or newer: the system's when it is new enough, else this one, from the npm
# registry's node-linux-<arch> package (which ships the binary), into .tools/node. Debian 12's
# own node is 18.
NODE_VERSION := 22.23.3
NODE_ARCH    := $(subst x86_64,x64,$(subst aarch64,arm64,$(shell uname -m)))
NODE_DIR     := $(CURDIR)/.tools/node
export PATH := $(NODE_DIR)/node_modules/node-linux-$(NODE_ARCH)/bin:$(GOBIN):$(PATH)
NODE_OK = node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 11) ? 0 : 1)' 2>/dev/null

BUF_VERSION                := v1.75.0
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
CONNECT_GO_VERSION         := v1.21.1
NATS_SERVER_VERSION        := v2.15.2

APT_PACKAGES := protobuf-compiler protobuf-compiler-grpc python3-grpcio python3-protobuf ruby-grpc ruby-grpc-tools chromium
FUZZTIME ?= 8s
FUZZ_BUDGET ?= 24s

.PHONY: test deps apt-packages node tools generate proto-check vet gotest gotest-race gotest-plain fuzz python-test ts-test minimal-bots-test demo build

## test: everything CI checks, from a fresh machine. Once the tools are in place, every part
## runs even when an earlier one fails, and the failures are listed together at the end
## (scripts/test-all.sh).
TEST_PARTS = proto-check vet ts-test gotest-race gotest-plain fuzz python-test
test: deps tools
	@MAKE="$(MAKE)" scripts/test-all.sh $(TEST_PARTS)

## deps: Debian packages (protoc, the Python gRPC plugin, Python's grpc and protobuf, Ruby's grpc
## and its code generator for the minimal Ruby bot, chromium for the web page's and the report's
## browser tests, node and npm when there are none), Node.js 20.11+
## (see node), then the TypeScript SDK's npm packages and the minimal Node.js bot's, exactly as
## their lockfiles pin them (protoc-gen-es among them)
deps: apt-packages node agents/typescript/node_modules/.package-lock.json examples/minimal-node/node_modules/.package-lock.json

## node: Node.js 20.11 or newer first on PATH: the system's, else NODE_VERSION from the npm registry
node: | apt-packages
	@$(NODE_OK) || { \
		echo "node $$(node --version) is older than 20.11: installing Node.js $(NODE_VERSION) from the npm registry into .tools/node"; \
		npm install --prefix $(NODE_DIR) --no-save --no-audit --no-fund node-linux-$(NODE_ARCH)@$(NODE_VERSION) >/dev/null; }
	@$(NODE_OK) || { echo "the TypeScript SDK needs node 20.11 or newer, found $$(node --version)"; exit 1; }

agents/typescript/node_modules/.package-lock.json: agents/typescript/package-lock.json | node
	npm ci --prefix agents/typescript --no-audit --no-fund

examples/minimal-node/node_modules/.package-lock.json: examples/minimal-node/package-lock.json | node
	npm ci --prefix examples/minimal-node --no-audit --no-fund

apt-packages:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	command -v node >/dev/null || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages: $$missing"; \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing >/dev/null; \
	fi

## tools: pinned Go tools (buf, protoc plugins incl. connect-go's, nats-server)
tools:
	go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	go install connectrpc.com/connect/cmd/protoc-gen-connect-go@$(CONNECT_GO_VERSION)
	go install github.com/nats-io/nats-server/v2@$(NATS_SERVER_VERSION)

## generate: regenerate gen/ from proto/
generate: agents/typescript/node_modules/.package-lock.json
	buf generate

## proto-check: format, lint, breaking-change check, and generated code in step with proto/
proto-check: agents/typescript/node_modules/.package-lock.json
	@buf format -d --exit-code proto || { echo "proto/ is not formatted: run 'buf format -w proto'"; exit 1; }
	buf lint
	scripts/buf-breaking.sh
	buf generate
	@if [ -n "$$(git status --porcelain -- gen agents/typescript/src/gen)" ]; then \
		echo "gen/ is out of date with proto/: run 'make generate' and commit the result"; \
		git status --porcelain -- gen agents/typescript/src/gen; exit 1; fi

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	go vet ./...
	scripts/check-pure-rules.sh
	scripts/check-layers.sh

## gotest: every Go test, once. The race detector runs where goroutines meet (services, gateway,
## bus, match runner, agents, commands); the pure game rules (referee/games: no goroutines, and
## the heaviest conformance suites) and the end-to-end tests of cmd/parley (which run the binary
## as separate processes, so race instrumentation there mostly slows every process down) run
## without it, as do the published-runs checks of the studies' log formats and the tables
## filled from them (research/reproduce starts no goroutine; one goroutine parses some 5,000
## NegotiationArena games and 419 deliberation runs, 4-5x slower raced; the importer's and the
## store's own concurrency is raced in research/imports and the bus).
## The two share one build cache.
gotest: gotest-race gotest-plain

PLAIN_PKGS = ./referee/games/... ./cmd/parley ./research/imports/negotiationarena ./research/imports/deliberation \
	./research/reproduce
## GOTEST_TIMEOUT: how long one package's tests may run before Go calls them hung. It is a hang
## detector, not a speed check: cmd/parley takes ~5 minutes on 2 idle cores and over 10 on a
## loaded machine, where Go's default of 10 minutes would report a hang that is not one.
GOTEST_TIMEOUT ?= 30m
gotest-race:
	go test -race -count=1 -timeout $(GOTEST_TIMEOUT) $$(go list ./... | grep -vxF "$$(go list $(PLAIN_PKGS))")

gotest-plain:
	go test -count=1 -timeout $(GOTEST_TIMEOUT) $(PLAIN_PKGS)

## fuzz: every fuzz target in the repository (scripts/fuzz.sh finds them), FUZZTIME each, or an
## equal share of FUZZ_BUDGET when there are too many targets for it
fuzz:
	FUZZTIME=$(FUZZTIME) FUZZ_BUDGET=$(FUZZ_BUDGET) scripts/fuzz.sh

## minimal-bots-test: the bots of examples/ (plain gRPC, no SDK), stubs generated from proto/
## now, through agent-check, served and dialling out to `parley up` (part of gotest too)
minimal-bots-test: deps
	go test -count=1 -run '^TestMinimalBots$$' ./cmd/parley/

python-test:
	/usr/bin/python3 -m unittest discover -s agents/python/tests

## ts-test: type-check and build the TypeScript SDK and example bot, then run their node tests
ts-test:
	cd agents/typescript && npm run --silent build && npm test --silent

## demo: one ultimatum match between two built-in agents, embedded NATS
demo:
	go run ./cmd/parley play ultimatum --agent builtin:fair --agent builtin:random

## build: the parley binary in bin/ (./bin/parley up, ./bin/parley admin ...)
build:
	go build -o bin/parley ./cmd/parley
