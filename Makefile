# Thin wrapper over CMake. `make run`: install what is missing, build, run the
# default scenarios and write a report. `make test`: the same set-up, then ctest.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
CTEST_ARGS ?=

.PHONY: all deps configure build run test asan clean

all: build

deps:
	@./scripts/deps.sh

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

clean:
	rm -rf $(BUILD) build-asan
