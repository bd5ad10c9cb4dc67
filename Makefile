# Strongroom: `make demo` runs the main job end to end, `make test` the whole suite.
# Both install the system packages they need on a fresh Debian 12 machine.

SHELL := /bin/bash
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PACKAGES := libsqlcipher-dev libssl-dev sqlcipher pkg-config
SWIFT_BUILD_FLAGS ?=

.PHONY: setup build test demo bench clean

## setup: install libsqlcipher-dev, libssl-dev, the sqlcipher shell and pkg-config when missing
setup:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

## build: compile the library and the `strongroom` command
build: setup
	swift build $(SWIFT_BUILD_FLAGS)

## test: the whole suite (real SQLCipher files, real processes); the benchmark harness must still compile
test: build
	swift build --package-path Benchmarks
	swift test $(SWIFT_BUILD_FLAGS)

## demo: key, import the Chinook sample into an encrypted database, status, proof it is unreadable
demo: build
	@bash Examples/demo.sh "$$(swift build $(SWIFT_BUILD_FLAGS) --show-bin-path)/strongroom"

## bench: side-by-side figures against C, the sqlcipher shell and 1 worker (release build)
bench: setup
	cd Benchmarks && swift run -c release StrongroomBenchmarks --settings --migrations

clean:
	rm -rf .build Benchmarks/.build demo
