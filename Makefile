# zkraft — the two set-up commands are `make run` and `make test`.
GO      ?= go
BIN     ?= bin/zkraft
PKGS    ?= ./...

.PHONY: all build release deb image run test test-all test-soak test-e2e-clients test-e2e-rest test-core-race test-race test-short test-faults soak difftest model vet fuzz bench overload watchmem gobench clean

all: build

# bin/zkraft, stamped as the release binaries are (zkraft version shows the
# version and revision even when GOFLAGS has -buildvcs=false).
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(STAMP)' -o $(BIN) ./cmd/zkraft

# Release binaries: static (no cgo), -trimpath, one per platform, with
# the version (git describe) and the commit stamped into
# internal/base/buildinfo, and SHA256SUMS of every release binary of this
# version in $(DIST) (a later make deb or make image, which build one
# platform again, keep the others' lines). Check them with:
# cd dist && sha256sum -c SHA256SUMS
ifeq ($(origin VERSION),undefined)
VERSION   := $(shell git describe --tags --always --dirty 2>/dev/null || echo unknown)
endif
REVISION    := $(shell git rev-parse HEAD 2>/dev/null)
COMMIT_TIME := $(shell git log -1 --format=%cI 2>/dev/null)
BUILDINFO   := github.com/zkraft/zkraft/internal/base/buildinfo
STAMP       := -X $(BUILDINFO).Version=$(VERSION) -X $(BUILDINFO).Revision=$(REVISION) \
	-X $(BUILDINFO).CommitTime=$(COMMIT_TIME) -X $(BUILDINFO).Dirty=$(if $(findstring -dirty,$(VERSION)),true,false)
DIST      ?= dist
PLATFORMS ?= linux/amd64 linux/arm64
LDFLAGS   := -s -w $(STAMP)
release:
	@mkdir -p $(DIST)
	@set -e; for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; out=$(DIST)/zkraft-$(VERSION)-$$os-$$arch; \
		echo "go build $$out"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $$out ./cmd/zkraft; \
	done
	cd $(DIST) && sha256sum zkraft-$(VERSION)-*-* > SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS

# The Debian package (packaging/: binary, systemd unit, /etc/zkraft/zoo.cfg,
# the zkraft system user), built with nfpm as a Go library, in $(DIST),
# for this host's architecture unless DEB_ARCH=amd64 or arm64. mkdeb is in
# packaging/'s own Go module (nfpm stays out of the server's go.mod), so it
# runs there, given absolute paths.
DEB_ARCH ?= $(shell $(GO) env GOARCH)
deb:
	$(MAKE) release PLATFORMS=linux/$(DEB_ARCH)
	$(GO) -C packaging run ./mkdeb -bin $(abspath $(DIST))/zkraft-$(VERSION)-linux-$(DEB_ARCH) -arch $(DEB_ARCH) -version $(VERSION) -out $(abspath $(DIST))

# The FROM scratch image (packaging/docker/Dockerfile) for this host's
# architecture, tagged zkraft:$(VERSION) and zkraft:latest;
# packaging/docker/compose.yml runs three members of it.
IMAGE      ?= zkraft
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
image:
	$(MAKE) release PLATFORMS=linux/$(IMAGE_ARCH)
	rm -rf $(DIST)/image && mkdir -p $(DIST)/image/data $(DIST)/image/tmp
	cp $(DIST)/zkraft-$(VERSION)-linux-$(IMAGE_ARCH) $(DIST)/image/zkraft
	docker build -f packaging/docker/Dockerfile -t $(IMAGE):$(VERSION) -t $(IMAGE):latest $(DIST)/image

# A working server on 127.0.0.1:2181 with data under ./zkraft-data.
run: build
	./$(BIN) server

vet:
	$(GO) vet $(PKGS)

# Every test: unit, raw-frame, end-to-end with real clients, TESTP
# packages at a time, the longest first (SLOWPKGS, by their time in
# docs/testing.md) so that none of them starts last; and side by side with
# it the server's concurrent core once more under the race detector (its
# output comes in one piece when it ends). Most of a package's time is
# waiting (elections, timeouts, a JVM or a container starting), so more
# packages than cores keep both cores busy.
# The race pass skips RACESKIP: tests of one goroutine (the tree's model
# and oracle, sizes) in which it has no race to find; the first pass runs
# them. Every package stays under 40% of its 10 minutes (docs/testing.md).
TESTP    ?= 4
SLOWPKGS ?= ./e2e/following/ ./scripts/overload/ ./e2e/migration/ ./e2e/cli/ ./e2e/cluster/ \
	./e2e/packaging/ ./e2e/stress/ ./ensemble/ ./e2e/console/ ./bench/ ./scripts/benchcompare/ ./session/ \
	./console/ ./e2e/overload/load/ ./shell/ ./internal/zookeeper/learner/ ./znode/
RACEPKGS ?= ./jute/ ./acl/ ./znode/ ./watches/ ./session/ ./ensemble/ ./ensemble/storage/ ./operator/ ./console/ ./operator/metrics/ ./internal/zookeeper/learner/
RACESKIP ?= ^(TestOracle|TestModel|TestChildNamesLockWorkIsConstant|TestPackedLogFileStaysNearItsLiveSize)$$
test: vet
	@$(MAKE) --no-print-directory -j5 test-all test-core-race $(if $(filter ./...,$(PKGS)),test-soak test-e2e-clients test-e2e-rest)

# make test's parts run side by side: every package but e2e and the soak,
# the race pass, and (with PKGS=./...) the soak and e2e in two halves.
# The soak's five containers under faults must acknowledge a minimum of
# writes (5 a second of faults); among four other packages and the race
# pass at the same priority they were starved of it in three runs of four.
# So the passes run at a lower priority (TESTNICE): the soak's test binary
# and its containers (which Docker starts outside this process tree, so at
# the default priority) take the CPU they need first, and the passes take
# the rest, which is most of it.
# e2e, the longest package, runs as two test binaries: the tests that run
# real clients' programs against zkraft and ZooKeeper (E2ECLIENTS: the
# Java client, Curator, kazoo, zkCli, the C client, the differential
# runs) and the rest. As one it took 560-595 s of its 600 s under a
# second make test. The first half runs two tests at a time: each starts
# JVMs (a ZooKeeper server, a client), and all of them starting at once
# under a second make test kept a ZooKeeper from serving within 30 s.
TESTNICE ?= nice -n 10
SOAKPKG  := ./e2e/soak/
E2EPKG   := ./e2e/
E2ECLIENTS := ^(TestCompat|TestDifferential)
# e2e's two binaries get 15 minutes, the rest 10: on a slower day of this
# VM they took 227-262 s quiet (44% of 10 minutes) and 509-573 s beside a
# second make test.
E2ETIMEOUT ?= 15m
test-all:
	GO=$(GO) $(TESTNICE) scripts/gotest.sh -count=1 -p $(TESTP) -timeout 10m \
		$(if $(filter ./...,$(PKGS)),$(SLOWPKGS) $(shell $(GO) list ./... | grep -v -e '/e2e/soak$$' -e '/e2e$$'),$(PKGS))
test-e2e-clients:
	GO=$(GO) ZKRAFT_TEST_FAILED_LOG=$${TMPDIR:-/tmp}/zkraft-test-e2e-clients-failed.log \
		$(TESTNICE) scripts/gotest.sh -count=1 -timeout $(E2ETIMEOUT) -parallel 2 -run '$(E2ECLIENTS)' $(E2EPKG)
test-e2e-rest:
	GO=$(GO) ZKRAFT_TEST_FAILED_LOG=$${TMPDIR:-/tmp}/zkraft-test-e2e-rest-failed.log \
		$(TESTNICE) scripts/gotest.sh -count=1 -timeout $(E2ETIMEOUT) -skip '$(E2ECLIENTS)' $(E2EPKG)
test-soak:
	@echo "go test $(SOAKPKG): its output when it ends"; \
	log=$$(mktemp); \
	GO=$(GO) ZKRAFT_TEST_FAILED_LOG=$${TMPDIR:-/tmp}/zkraft-test-soak-failed.log \
		scripts/gotest.sh -count=1 -timeout 10m $(SOAKPKG) >$$log 2>&1; rc=$$?; \
	echo "==== go test $(SOAKPKG):"; cat $$log; rm -f $$log; exit $$rc
test-core-race:
	@echo "go test -race $(RACEPKGS): its output when it ends"; \
	log=$$(mktemp); \
	GO=$(GO) ZKRAFT_TEST_FAILED_LOG=$${TMPDIR:-/tmp}/zkraft-test-race-failed.log \
		$(TESTNICE) scripts/gotest.sh -race -count=1 -timeout 10m -skip '$(RACESKIP)' $(RACEPKGS) >$$log 2>&1; rc=$$?; \
	echo "==== go test -race $(RACEPKGS):"; cat $$log; rm -f $$log; exit $$rc

# Every test under the race detector, the zkraft processes the tests start
# included (built with -race; any report they write fails the run).
test-race:
	ZKRAFT_RACE=1 $(GO) test -race -count=1 -timeout 30m $(PKGS)

# Fault tests (partitions, leader kills, linearizability) repeated COUNT times.
COUNT ?= 5
test-faults:
	$(GO) test -count=$(COUNT) -timeout 60m -run 'Cluster|Linearizable|Ensemble' ./ensemble/ ./e2e/cluster/

# The soak (e2e/soak): five members in Docker containers under kill -9,
# SIGSTOP, pauses, partitions and, on member 5, a full disk and EIO, with
# the history checked for linearizability and lost writes. make test runs
# it for 75s; SOAK_SEED=N replays a run's faults and operations; the
# report (logs, fault timeline, history) is kept on failure, or always
# with SOAK_KEEP=1. Needs root and a Docker engine.
SOAK_DURATION ?= 30m
SOAK_SEED ?=
SOAK_KEEP ?=
SOAK_TIMEOUT ?= 4h
soak: build
	ZKRAFT_SOAK_DURATION=$(SOAK_DURATION) ZKRAFT_SOAK_SEED=$(SOAK_SEED) ZKRAFT_SOAK_KEEP=$(SOAK_KEEP) \
		$(GO) test -count=1 -timeout $(SOAK_TIMEOUT) -run '^TestSoak$$' -v ./e2e/soak/

# Long differential runs against Apache ZooKeeper: make difftest SEEDS=1-500 OPS=1000
SEEDS ?= 1-100
OPS ?= 500
difftest:
	ZKRAFT_COMPAT_STRICT=1 ZKRAFT_DIFF_SEEDS=$(SEEDS) ZKRAFT_DIFF_OPS=$(OPS) $(GO) test -count=1 -timeout 180m -run 'TestDifferentialSessions' -v ./e2e/

# The znode model test over many seeds (znode/model_test.go): random
# writes through the FSM's Apply entry, each step checked against a
# snapshot round trip, a restarted tree and Tree.Verify.
# make model MODEL_SEEDS=1-5000 MODEL_STEPS=400
MODEL_SEEDS ?= 1-2000
MODEL_STEPS ?= 300
model:
	ZKRAFT_MODEL_SEEDS=$(MODEL_SEEDS) ZKRAFT_MODEL_STEPS=$(MODEL_STEPS) $(GO) test -count=1 -timeout 600m -run '^TestModel$$' ./znode/

test-short:
	$(GO) test -short -count=1 $(PKGS)

# Short fuzzing pass over every fuzz target, one after another: the Jute,
# log-entry transaction, log-pack, AppendEntries and snapshot decoders, the request dispatcher,
# the SASL DIGEST-MD5 and GSSAPI exchanges, ACL IP, DN and Kerberos-name parsing, the
# watch registry against a model, the znode tree against its snapshots
# (FuzzModel: fuzz bytes choose the writes), the bench client's reply reader and the
# readers of ZooKeeper's snapshots, transaction logs and quorum streams, the import's replay of them, and
# the learner's side of quorum SASL (its DIGEST-MD5 and GSSAPI clients, the auth exchange)
# (FUZZTIME=5m for longer runs). scripts/fuzz.sh runs a target once more if
# it failed only by Go's fuzzing-coordinator race at -fuzztime's end.
FUZZTIME ?= 30s
FUZZPKGS ?= ./jute/ ./acl/ ./znode/ ./watches/ ./ensemble/ ./ensemble/storage/ ./session/ ./bench/ ./internal/zookeeper/datadir/ ./internal/zookeeper/importer/ ./internal/zookeeper/learner/ ./internal/security/saslmd5/ ./internal/security/saslgssapi/
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/fuzz.sh $(FUZZPKGS)

# The side-by-side benchmark against Apache ZooKeeper (docs/performance.md):
# the workloads through zkraft bench, the leader kill, memory and restart
# with 1M znodes; beside them setData through go-zookeeper at 1, 4 and 96
# in flight with the write's floor on this machine (fsync + loopback round
# trip), and Apache ZooKeeper's Java client (async, 16 sessions x 32 in
# flight); writes docs/bench-latest.md and its latency plots, docs/bench/*.svg.
BENCH_DURATION ?= 10s
BENCH_NODES ?= 1000000
bench: build
	scripts/bench-deps.sh
	$(GO) run ./scripts/benchcompare -zkraft $(BIN) -duration $(BENCH_DURATION) -nodes $(BENCH_NODES) -out docs/bench-latest.md
	$(MAKE) overload

# The load the service must hold (issue 37), against Apache ZooKeeper
# on the same machine: a thundering herd of watchers, a reconnect storm
# after a kill -9, three times the write capacity, and a table of idle
# sessions; writes docs/overload-latest.md. OVERLOAD_ARGS=-quick for a
# run of a few minutes, or e.g. OVERLOAD_ARGS='-classes herd -herd 10000'.
OVERLOAD_ARGS ?=
overload: build
	scripts/bench-deps.sh
	$(GO) run ./scripts/overload -zkraft $(BIN) -out docs/overload-latest.md $(OVERLOAD_ARGS)

# Memory per watch: 1,000,000 exists watches (100 sessions x 10,000
# znodes) on a standalone zkraft, then on a standalone ZooKeeper.
WATCH_SESSIONS ?= 100
WATCH_NODES ?= 10000
watchmem: build
	$(GO) run ./scripts/memprobe -workload watches -n $(WATCH_SESSIONS) -nodes $(WATCH_NODES) -bin $(BIN) -pprof 127.0.0.1:6061
	$(GO) run ./scripts/memprobe -workload watches -n $(WATCH_SESSIONS) -nodes $(WATCH_NODES) -kind zookeeper

# Go micro-benchmarks.
gobench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

clean:
	rm -rf bin zkraft-data dist
