# Strongroom: `make demo` runs the main job end to end, `make test` the whole suite.
# Both install the system packages they need on a fresh Debian 12 machine.

SHELL := /bin/bash
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PACKAGES := libsqlcipher-dev libssl-dev sqlcipher pkg-config sqlite3 python3 python3-pip
SWIFT_BUILD_FLAGS ?=

.PHONY: setup build test demo bench clean

## setup: install libsqlcipher-dev, libssl-dev, the sqlcipher shell and pkg-config when missing;
## for the tests also the system sqlite3 (3.40, the oracle for column changes) and Python's
## sqlcipher3-binary (SQLCipher 4 on a recent SQLite, to replay what the migration runner ran)
setup:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@python3 -c 'import sqlcipher3' 2>/dev/null || { echo "Installing: sqlcipher3-binary (PyPI)"; \
	  $(SUDO) python3 -m pip install --quiet sqlcipher3-binary 2>/dev/null \
	  || $(SUDO) python3 -m pip install --quiet --break-system-packages sqlcipher3-binary; }

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
