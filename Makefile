# Thin wrapper over CMake. `make run`: install what is missing, build, run the
# default scenarios and write a report. `make test`: the same set-up, then ctest.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
CTEST_ARGS ?=
# ETCD=1: `make deps` also installs etcd-server and etcd-client (the live etcd tests).
ETCD ?= 0

.PHONY: all deps configure build run test asan fuzz clean

all: build

deps:
	@FL_DEPS_ETCD=$(ETCD) ./scripts/deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@./scripts/run-default.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

asan:
	@$(MAKE) test BUILD=build-asan CMAKE_FLAGS="-DFL_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug" \
		CTEST_ARGS="$(CTEST_ARGS)"

# `make fuzz`: builds the libFuzzer targets with clang (build-fuzz/) and fuzzes each for
# FUZZ_SECONDS (default 60), one after the other, niced, one process each. Seeds come
# from fuzz/corpus/NAME (never written); what the fuzzer finds new goes to
# build-fuzz/fuzz-work/NAME and crashes to build-fuzz/fuzz-artifacts/ (fuzz/README.md).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= jsonl jepsen porcupine frame histdb lua
fuzz:
	@FL_DEPS_FUZZ=1 ./scripts/deps.sh
	@CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFL_FUZZ=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	@mkdir -p build-fuzz/fuzz-artifacts
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p build-fuzz/fuzz-work/$$t; \
		echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
		nice ./build-fuzz/fuzz/fuzz_$$t build-fuzz/fuzz-work/$$t fuzz/corpus/$$t \
			-max_total_time=$(FUZZ_SECONDS) -timeout=25 -rss_limit_mb=4096 -print_final_stats=1 \
			-artifact_prefix=build-fuzz/fuzz-artifacts/$$t- || exit 1; \
	done

clean:
	rm -rf $(BUILD) build-asan build-fuzz
