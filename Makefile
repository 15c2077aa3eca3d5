# weir — the two commands that matter:
#   make run    install build dependencies, build a release binary, start a broker on localhost:9092
#   make test   install test dependencies, build, run every test in the default suite
SHELL := /bin/bash
BUILD ?= build
FUZZ_BUILD ?= build-fuzz
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 30
PYTEST_ARGS ?=
VENV := .cache/venv
# ccache: paths relative to the checkout, so clones in other folders (CI) share cache entries.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

.PHONY: run build deps test-deps test unit compat fuzz scenario test-all clean format tidy bench bench-storage bench-cluster bench-scale bench-groups \
        sim-slow librdkafka-tests peer-librdkafka peer-librdkafka-smoke peer-librdkafka-cluster peer-librdkafka-all

deps:
	@scripts/install-build-deps.sh

test-deps: deps
	@scripts/install-test-deps.sh

$(BUILD)/build.ninja: CMakeLists.txt
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEIR_WERROR=ON

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

run: build
	mkdir -p data
	$(BUILD)/weir serve --config config/server.properties

unit: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

compat: build
	scripts/run-compat.sh $(BUILD)

fuzz:
	scripts/run-fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

scenario: build
	WEIR_BIN=$(CURDIR)/$(BUILD)/weir $(VENV)/bin/pytest -q tests/scenario -m "not slow" --durations=30 $(PYTEST_ARGS)

test: test-deps build
	$(MAKE) --no-print-directory unit
	$(MAKE) --no-print-directory compat
	$(MAKE) --no-print-directory fuzz
	$(MAKE) --no-print-directory scenario
	$(MAKE) --no-print-directory peer-librdkafka-smoke
	$(MAKE) --no-print-directory peer-librdkafka-cluster

# The replication simulation's long run (tests/sim/README.md): 10,000 seeded schedules, ~11 minutes.
# `make test` runs seeds 1..1500 (ctest sim.schedules). e.g. make sim-slow SIM_ARGS="--first 20001"
SIM_ARGS ?=
sim-slow: build
	$(BUILD)/tests/sim/weir_sim --seeds 10000 $(SIM_ARGS)

# Longer runs: the full differential suite and peer suites.
test-all: test-deps build unit compat fuzz
	WEIR_BIN=$(CURDIR)/$(BUILD)/weir $(VENV)/bin/pytest -q tests/scenario $(PYTEST_ARGS)

# librdkafka's own integration suite (tests/0xxx-*.c from `apt-get source librdkafka`) against weir;
# see tests/peer/librdkafka/README.md. `make test` runs its [smoke] part (peer-librdkafka-smoke, ~50 s
# once librdkafka is built: the first run builds it from Debian source, ~2 minutes with ccache).
# e.g. make peer-librdkafka LIBRDKAFKA_ARGS="--timeout 120"
LIBRDKAFKA_ARGS ?=

librdkafka-tests:
	@scripts/setup-librdkafka-tests.sh >/dev/null

# the allowlist (tests/peer/librdkafka/allowlist.txt): fails if an allowlisted test does not pass
peer-librdkafka: build librdkafka-tests
	WEIR_BIN=$(CURDIR)/$(BUILD)/weir scripts/run-librdkafka-tests.sh --allowlist $(LIBRDKAFKA_ARGS)

# the allowlist entries tagged [smoke]: a representative part, in `make test`
peer-librdkafka-smoke: build librdkafka-tests
	WEIR_BIN=$(CURDIR)/$(BUILD)/weir scripts/run-librdkafka-tests.sh --smoke $(LIBRDKAFKA_ARGS)

# the tests that need three brokers (tests/peer/librdkafka/allowlist-cluster.txt) against a 3-broker weir
# cluster under one Kafka 4.3.1 controller; in `make test` (~40 s)
peer-librdkafka-cluster: build librdkafka-tests
	WEIR_BIN=$(CURDIR)/$(BUILD)/weir scripts/run-librdkafka-tests.sh --cluster weir --allowlist $(LIBRDKAFKA_ARGS)

# every test, report only; writes .cache/librdkafka/results-all.tsv
peer-librdkafka-all: build librdkafka-tests
	WEIR_BIN=$(CURDIR)/$(BUILD)/weir scripts/run-librdkafka-tests.sh --all $(LIBRDKAFKA_ARGS)

# The storage layer alone (partition log, group-commit flusher) against the raw disk, same run;
# writes bench/results/storage.{md,json}. e.g. make bench-storage STORAGE_BENCH_ARGS="--bytes 1073741824"
STORAGE_BENCH_ARGS ?=
bench-storage: build
	mkdir -p bench/results .cache/bench-storage
	$(BUILD)/bench/weir_storage_bench .cache/bench-storage --json bench/results/storage.json $(STORAGE_BENCH_ARGS) \
	  2>.cache/bench-storage/log.txt | tee bench/results/storage.md

BENCH_ARGS ?=

# Benchmarks against Apache Kafka on this machine (not part of `make test`);
# writes bench/results/latest.{json,md}. e.g. make bench BENCH_ARGS="-n 5 --records 500000"
bench: test-deps build
	WEIR_BIN=$(CURDIR)/$(BUILD)/weir $(VENV)/bin/python bench/run.py $(BENCH_ARGS)

# Replication: 3 weir brokers vs 3 Kafka brokers (bench/cluster_bench.py, ~25 min on 2 cores).
bench-cluster: test-deps build
	WEIR_BIN=$(CURDIR)/$(BUILD)/weir $(VENV)/bin/python bench/cluster_bench.py $(BENCH_ARGS)

# Scale: partitions (1,000 and 10,000 by default) and 5,000 idle connections, weir vs Kafka
# (bench/scale_bench.py); writes bench/results/scale.{json,md}.
bench-scale: test-deps build
	WEIR_BIN=$(CURDIR)/$(BUILD)/weir $(VENV)/bin/python bench/scale_bench.py $(BENCH_ARGS)

# Consumer groups: time to a stable assignment after a join and after a kill -9, heartbeat CPU,
# N = 10, 50, 200 members, consumer and both classic protocols (bench/group_bench.py, ~30 min on
# 2 cores); writes bench/results/groups.{json,md}.
bench-groups: test-deps build
	WEIR_BIN=$(CURDIR)/$(BUILD)/weir $(VENV)/bin/python bench/group_bench.py $(BENCH_ARGS)

format:
	clang-format-19 -i $$(git ls-files 'src/*.cpp' 'src/*.h' 'tests/*.cpp' 'tests/*.h')

tidy: build
	run-clang-tidy-19 -p $(BUILD) -quiet 'src/.*' || clang-tidy-19 -p $(BUILD) $$(git ls-files 'src/*.cpp')

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD)
