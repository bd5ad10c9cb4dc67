# Strongroom: `make demo` runs the main job end to end, `make test` the whole suite.
# Both install the system packages they need on a fresh Debian 12 machine.

SHELL := /bin/bash
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PACKAGES := libsqlcipher-dev libssl-dev sqlcipher pkg-config
TEST_PACKAGES := sqlite3 libsqlite3-dev python3 python3-pip python3-cryptography strace gdb valgrind wrk systemd
PYTHON_TEST_VERSION := 0.6.0
PYTHON_TEST_PACKAGE := sqlcipher3-binary==$(PYTHON_TEST_VERSION)
SWIFT_BUILD_FLAGS ?=
PREFIX ?= /usr/local
# Swift Testing starts every test of a run at once unless told otherwise; a test that awaits then
# waits behind hundreds of others for one of the cooperative pool's two threads, and an async test
# with a time limit ran past it (issue 51, item 5). In every swift test this Makefile runs (make test,
# stress, the example's tests), at most TEST_WIDTH tests run at a time.
TEST_WIDTH ?= 6
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH ?= $(TEST_WIDTH)
CLI := .build/release/strongroom

.PHONY: setup test-setup apt-packages build install install-check test test-sqlcipher4 test-example docs demo bench bench-service bench-readme stress reliability-page sanitize soak fuzz clean

## setup: install libsqlcipher-dev, libssl-dev, the sqlcipher shell and pkg-config when missing
setup:
	@$(MAKE) --no-print-directory apt-packages APT_PACKAGES="$(PACKAGES)"

## test-setup: what only the tests need: the system sqlite3 (3.40, the oracle for column
## changes), strace (to watch that key files are synced), gdb (gcore: a core dump searched for keys), valgrind (the benchmark
## harness's instruction counter, tested by its own tests), Python's cryptography (a second,
## independent decoder of sealed values), and Python's sqlcipher3-binary,
## pinned (SQLCipher 4 on a recent SQLite, to replay the statements the migration runner issued)
test-setup: setup
	@$(MAKE) --no-print-directory apt-packages APT_PACKAGES="$(TEST_PACKAGES)"
	@python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("sqlcipher3-binary") != "$(PYTHON_TEST_VERSION)")' 2>/dev/null \
	|| { echo "Installing: $(PYTHON_TEST_PACKAGE) (PyPI)"; \
	  $(SUDO) python3 -m pip install --quiet "$(PYTHON_TEST_PACKAGE)" 2>/dev/null \
	  || $(SUDO) python3 -m pip install --quiet --break-system-packages "$(PYTHON_TEST_PACKAGE)"; }

apt-packages:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

## build: compile the `strongroom` command, optimized, at .build/release/strongroom
build: setup
	swift build -c release --product strongroom
	@echo "built $(CLI)"

## install: build, then install the command, its man page (man strongroom) and its bash, zsh and fish
## completions under $(PREFIX) (default /usr/local)
install: build
	@SUDO="$(SUDO)" bash Scripts/install.sh release "$(DESTDIR)$(PREFIX)"

## install-check: what install lays down, from the debug build into a scratch prefix (make test runs it)
install-check: setup
	@bash Scripts/check-install.sh

## test: the whole suite (real SQLCipher files, real processes, the debug build) on both engines: the system's
## SQLCipher (Debian 12: 3.4.1 on SQLite 3.15.2), then SQLCipher 4.6.1 on SQLite 3.46.1 (make test-sqlcipher4);
## the benchmark harness must still compile, the documentation must build (make docs), and what make install lays
## down must check out (make install-check)
test: setup test-setup
	swift build --package-path Benchmarks
	swift build --package-path Benchmarks/GRDBPeer
	cd Benchmarks && .build/debug/StrongroomBenchmarks --quick --out .build/quick-report --grdb-peer GRDBPeer/.build/debug/GRDBPeer
	cd Benchmarks && .build/debug/StrongroomBenchmarks --readme-check
	swift test --package-path Benchmarks
	swift test $(SWIFT_BUILD_FLAGS)
	@$(MAKE) --no-print-directory test-example
	@$(MAKE) --no-print-directory docs
	@$(MAKE) --no-print-directory install-check
	@$(MAKE) --no-print-directory test-sqlcipher4

## test-sqlcipher4: the whole suite on SQLCipher 4.6.1, Debian's bookworm-backports packages (libsqlcipher1,
## libsqlcipher-dev, sqlcipher) fetched with apt and unpacked into .build/sqlcipher4, the system's packages left
## as they are; the suite's objects in .build linked again against 4.6.1's library (nothing compiled twice), after
## a check that 4.6.1's header declares every SQLite name the sources use. ARGS: options for swift test (--filter X)
test-sqlcipher4: setup test-setup
	SWIFT_BUILD_FLAGS="$(SWIFT_BUILD_FLAGS)" bash Scripts/test-sqlcipher4.sh $(ARGS)

## test-example: the customer service example (Examples/CustomerService, a package of its own on Hummingbird 2): its debug
## build and its tests, the built service run as a process: routes, bad input, keys and credentials, shutdown, 503 and
## 507, 5 SIGKILLs under load (CUSTOMER_SERVICE_KILLS=N), one 10 s wrk load, the systemd units. ENGINE: sqlcipher3
## (default) or sqlcipher4 (its own build in Examples/CustomerService/.build-sqlcipher4); ARGS: options for swift test
test-example: setup test-setup
	bash Scripts/test-example.sh $(if $(filter sqlcipher4,$(ENGINE)),sqlcipher4,sqlcipher3) $(ARGS)

## docs: the DocC archive of every library module, warnings as errors (a broken symbol link fails),
## and a doc comment on every public symbol; archives in .build/plugins/Swift-DocC/outputs/
docs: setup
	@bash Scripts/build-docs.sh

## demo: key, import the Chinook sample into an encrypted database, status, proof it is unreadable,
## migrations, then sealed columns: personal data unreadable with the database key alone, read by an app
demo: build
	swift build -c release --product customer-lookup
	swift build --product chinook-model
	@bash Examples/demo.sh "$(CURDIR)/$(CLI)" "$(CURDIR)/.build/debug/chinook-model"

## bench: every workload against C, GRDB (its own package and process, plaintext system SQLite, beside the same C loop
## on that SQLite), the sqlcipher shell and openssl speed (release builds); writes Benchmarks/report/ (report.json,
## report.md, report.svg). The reads (decode, lookups) are also counted in instructions per row with valgrind's callgrind.
## QUICK=1: every workload at a tiny size in seconds (no counts); CHECK=1: fail when a ratio to C is >15% worse than the
## baseline, or a count of instructions (over the C loop on its engine) >3% worse: Benchmarks/baseline.json, and
## Benchmarks/baseline-sqlcipher4.json for SQLCipher 4.6.1; BASELINE=1: write both baselines from this run;
## PUBLISH=1: copy the report to Benchmarks/results/ (committed) and rewrite the
## README's performance section from it; OUT=DIR: the report elsewhere (relative to Benchmarks/); ARGS: more options (--help lists them)
## First the reads and the engine-sensitive groups (core, encryption, open, pool, fields, service) on SQLCipher 4.6.1 (Scripts/sqlcipher4.sh;
## its own build in Benchmarks/.build-sqlcipher4, report in Benchmarks/report-sqlcipher4/), then every workload on the
## system's SQLCipher, whose report shows both engines side by side (--engine-report).
## The service group (make bench-service) builds Examples/CustomerService for each engine and Benchmarks/GRDBService,
## and loads them with wrk for about 5 minutes per engine; SERVICE=0 leaves it out.
SERVICE ?= 1
## The customer service's release build, and the service group's options for the harness (run from Benchmarks/).
SERVICE_BUILD = swift build -c release --package-path Examples/CustomerService --product CustomerService
SERVICE_OPTIONS = --customer-service ../Examples/CustomerService/$(1)/release/CustomerService --grdb-service GRDBService/.build/release/GRDBService
## The engine-4 service build, checked to load SQLCipher 4's libsqlcipher.so.1 and not the system's .so.0.
SERVICE_BUILD_4 = $(SERVICE_BUILD) --scratch-path Examples/CustomerService/.build-sqlcipher4 $$SQLCIPHER4_SWIFT_FLAGS \
	  && ! ldd Examples/CustomerService/.build-sqlcipher4/release/CustomerService | grep -q 'libsqlcipher\.so\.0'
## GRDB's service links the system's libsqlite3, never libsqlcipher.
GRDB_SERVICE_BUILD = swift build -c release --package-path Benchmarks/GRDBService \
	  && ! ldd Benchmarks/GRDBService/.build/release/GRDBService | grep -q libsqlcipher
bench: setup
	@$(MAKE) --no-print-directory apt-packages APT_PACKAGES="libsqlite3-dev sqlite3 openssl valgrind binutils $(if $(filter 1,$(SERVICE)),wrk)"
	swift build -c release --package-path Benchmarks/GRDBPeer
	$(if $(filter 1,$(SERVICE)),$(GRDB_SERVICE_BUILD) && $(SERVICE_BUILD),@true)
	bash Scripts/sqlcipher4.sh
	source .build/sqlcipher4/env && $(if $(filter 1,$(SERVICE)),$(SERVICE_BUILD_4) &&) cd Benchmarks \
	  && swift build -c release --scratch-path .build-sqlcipher4 $$SQLCIPHER4_SWIFT_FLAGS \
	  && ! ldd .build-sqlcipher4/release/StrongroomBenchmarks | grep -q 'libsqlcipher\.so\.0' \
	  && .build-sqlcipher4/release/StrongroomBenchmarks --only core encryption open pool fields $(if $(filter 1,$(SERVICE)),service) --out $(or $(OUT),report)-sqlcipher4 \
	  --grdb-peer GRDBPeer/.build/release/GRDBPeer $(if $(filter 1,$(QUICK)),--quick) $(if $(filter 1,$(SERVICE)),$(call SERVICE_OPTIONS,.build-sqlcipher4)) \
	  $(if $(filter 1,$(CHECK)),--check --baseline baseline-sqlcipher4.json) $(if $(filter 1,$(BASELINE)),--write-baseline --baseline baseline-sqlcipher4.json)
	cd Benchmarks && swift run -c release StrongroomBenchmarks --out $(or $(OUT),report) \
	  --engine-report $(or $(OUT),report)-sqlcipher4/report.json \
	  --grdb-peer GRDBPeer/.build/release/GRDBPeer $(if $(filter 1,$(QUICK)),--quick) $(if $(filter 1,$(CHECK)),--check) \
	  $(if $(filter 1,$(SERVICE)),$(call SERVICE_OPTIONS,.build)) \
	  $(if $(filter 1,$(BASELINE)),--write-baseline) $(if $(filter 1,$(PUBLISH)),--publish) $(ARGS)


## bench-readme: rewrite the README's performance section, report.md and report.svg from Benchmarks/results/report.json
bench-readme: setup
	cd Benchmarks && swift run StrongroomBenchmarks --readme-write

## stress: the reliability suite at full strength: 200 SIGKILLs in each crash trial (STRESS_TRIALS=N for another
## count), the pool under load for 60 s (LOAD_SECONDS=N), the WAL under constant reads for 300 s (WAL_SECONDS=N), faults, tampering and leaks,
## and the customer service SIGKILLed 50 times under load (SERVICE_KILLS=N); each test writes its results
## to Reliability/results/$(ENGINE)/, from which Scripts/reliability.py writes RELIABILITY.md, dated with the machine
STRESS_TRIALS ?= 200
## SERVICE_KILLS: SIGKILLs of the customer service under load (Examples/CustomerService's KillTests; make test runs 5)
SERVICE_KILLS ?= 50
LOAD_SECONDS ?= 60
## WAL_SECONDS: how long the WAL-growth load runs (1 writer, 8 overlapping readers; make test runs 20 s)
WAL_SECONDS ?= 300
## ENGINE: the engine make stress, make sanitize and make soak build and run on: sqlcipher3 (the system's SQLCipher 3.4.1, the
## default) or sqlcipher4 (SQLCipher 4.6.1 from bookworm-backports, Scripts/sqlcipher4.sh: the tests' build in .build
## linked again against it by Scripts/test-sqlcipher4.sh; sanitize and soak build their own). Each engine has its own folder of results; RELIABILITY.md shows both, each row naming its engine.
## On SQLCipher 4 there is a seventh crash trial: the upgrade of a SQLCipher 3 file (on 3 there is nothing to upgrade).
ENGINE ?= sqlcipher3
override ENGINE := $(strip $(ENGINE))
## 3 and 4 name the same engines.
ifeq ($(ENGINE),3)
override ENGINE := sqlcipher3
endif
ifeq ($(ENGINE),4)
override ENGINE := sqlcipher4
endif
## Checked only for the targets that use it, so an unrelated ENGINE in the environment breaks nothing else.
ifneq ($(filter stress sanitize bench-service soak,$(MAKECMDGOALS)),)
ifneq ($(words $(ENGINE))$(filter $(ENGINE),sqlcipher3 sqlcipher4),1$(strip $(ENGINE)))
$(error ENGINE is sqlcipher3 (the system's SQLCipher 3.4.1) or sqlcipher4 (SQLCipher 4.6.1), not "$(ENGINE)")
endif
ifeq ($(ENGINE)$(STRONGROOM_ENGINE),sqlcipher3sqlcipher4)
$(error This shell is set up for SQLCipher 4 (.build/sqlcipher4/env): run make $(filter stress sanitize bench-service soak,$(MAKECMDGOALS)) ENGINE=sqlcipher4, or run it for SQLCipher 3 from a shell without that environment)
endif
endif
## Relative, and quoted where a shell reads it: the checkout's path may hold spaces.
ENGINE_RESULTS := Reliability/results/$(ENGINE)
ifeq ($(ENGINE),sqlcipher4)
ENGINE_SHELL := bash Scripts/sqlcipher4.sh .build/sqlcipher4 >/dev/null && . .build/sqlcipher4/env &&
ENGINE_TEST := bash Scripts/test-sqlcipher4.sh
STRESS_OPERATIONS := 8
else
ENGINE_SHELL :=
ENGINE_TEST := swift test
STRESS_OPERATIONS := 7
endif

## (bench-service is here, after ENGINE: its recipe depends on the engine.)
## bench-service: the service workload alone (issue 38): Examples/CustomerService on an encrypted database (sealed e-mail
## and note) and on a plaintext file, and the same API on GRDB 7.10 (Benchmarks/GRDBService, the system's plaintext SQLite),
## each its own process, seeded with 10,000 customers, loaded with wrk on loopback (Examples/CustomerService/Load): the mix
## (80% get by id, 10% lookup by e-mail, 10% create) for 30 s, then each endpoint alone for 10 s, 64 connections; release
## builds; requests/s, p50, p99, p99.9 and failed requests per endpoint. ENGINE=sqlcipher3 (or 3; the default: the system's
## SQLCipher 3.4.1) or ENGINE=sqlcipher4 (or 4: SQLCipher 4.6.1, the service and the harness built under .build-sqlcipher4).
## Report: Benchmarks/report-service/ (or report-service-sqlcipher4/), or OUT=DIR; ARGS: more options
## (--service-rounds N, --service-seconds S, --service-endpoint-seconds S, --service-rows N, --service-connections N)
bench-service: setup
	@$(MAKE) --no-print-directory apt-packages APT_PACKAGES="libsqlite3-dev wrk"
	$(GRDB_SERVICE_BUILD)
ifeq ($(ENGINE),sqlcipher4)
	$(ENGINE_SHELL) $(SERVICE_BUILD_4) && cd Benchmarks \
	  && swift build -c release --scratch-path .build-sqlcipher4 $$SQLCIPHER4_SWIFT_FLAGS \
	  && ! ldd .build-sqlcipher4/release/StrongroomBenchmarks | grep -q 'libsqlcipher\.so\.0' \
	  && .build-sqlcipher4/release/StrongroomBenchmarks --only service --out $(or $(OUT),report-service-sqlcipher4) \
	  $(call SERVICE_OPTIONS,.build-sqlcipher4) $(if $(filter 1,$(QUICK)),--quick) $(ARGS)
else
	$(SERVICE_BUILD)
	cd Benchmarks && swift run -c release StrongroomBenchmarks --only service --out $(or $(OUT),report-service) \
	  $(call SERVICE_OPTIONS,.build) $(if $(filter 1,$(QUICK)),--quick) $(ARGS)
endif

## The engine as its own sqlcipher shell reports it, for the run's stamp (the tests' binaries link the same library:
## Scripts/test-sqlcipher4.sh and Scripts/sanitize.sh check that with ldd).
ENGINE_VERSION = STRONGROOM_ENGINE_VERSION="SQLCipher $$(sqlcipher :memory: 'PRAGMA cipher_version;') on SQLite $$(sqlcipher :memory: 'SELECT sqlite_version();')"
## A run's id (STRONGROOM_RELIABILITY_RUN) goes into every result file; its stamp is removed first and written only when
## it passed, so the page never shows what a failed run left. No test is exempted here (STRONGROOM_SANITIZER unset).
## The commit measured, read when make starts, with -dirty when files other than the results had changed.
RELIABILITY_RUN := $(shell date -u +%Y%m%dT%H%M%SZ)-$(shell echo $$$$)
RELIABILITY_COMMIT := $(shell git rev-parse --short=7 HEAD 2>/dev/null || echo unknown)$(shell git status --porcelain -- . ':!Reliability/results' ':!RELIABILITY.md' 2>/dev/null | grep -q . && echo -dirty)
RELIABILITY_ENV := STRONGROOM_RELIABILITY_RUN=$(RELIABILITY_RUN) STRONGROOM_RELIABILITY_COMMIT=$(RELIABILITY_COMMIT)
## The async-serving tests (thread counts, timings, 2-minute limits) run on their own, after the crash trials: inside that
## run, on 2 cores, all four once ran out of time at one instant, though alone or beside 3 CPU hogs they take 5-8 s.
stress: setup test-setup
	rm -rf $(foreach kind,crashes faults tampering leaks load wal service/kills.json stress.run.json,"$(ENGINE_RESULTS)/$(kind)")
	env -u STRONGROOM_SANITIZER $(RELIABILITY_ENV) STRONGROOM_STRESS_TRIALS=$(STRESS_TRIALS) \
	  STRONGROOM_LOAD_SECONDS=$(LOAD_SECONDS) STRONGROOM_WAL_SECONDS=$(WAL_SECONDS) STRONGROOM_STRESS_RESULTS="$(CURDIR)/$(ENGINE_RESULTS)" \
	  $(ENGINE_TEST) --filter 'sigkillDuringAMigrationNeverDamagesTheDatabase|StrongroomReliabilityTests' --skip 'AsyncServingTests'
	env -u STRONGROOM_SANITIZER $(RELIABILITY_ENV) $(ENGINE_TEST) --filter 'AsyncServingTests'
	env -u STRONGROOM_SANITIZER $(RELIABILITY_ENV) CUSTOMER_SERVICE_KILLS=$(SERVICE_KILLS) STRONGROOM_STRESS_RESULTS="$(CURDIR)/$(ENGINE_RESULTS)" \
	  bash Scripts/test-example.sh $(ENGINE) --filter KillTests
	$(ENGINE_SHELL) $(ENGINE_VERSION) $(RELIABILITY_ENV) python3 Scripts/reliability.py --engine $(ENGINE) \
	  --stress $(STRESS_TRIALS) $(STRESS_OPERATIONS) > RELIABILITY.md.new && mv RELIABILITY.md.new RELIABILITY.md
	@echo "RELIABILITY.md written from Reliability/results/"

## reliability-page: write RELIABILITY.md again from Reliability/results/ (no run)
reliability-page:
	python3 Scripts/reliability.py > RELIABILITY.md.new && mv RELIABILITY.md.new RELIABILITY.md

## fuzz: the libFuzzer targets of Fuzz/ (envelopes, key files, keyrings, migration files, the DDL parser, the row
## decoder) under AddressSanitizer, FUZZ_RUNS executions each (default 1,000,000) on a copy of the committed corpus
## (Fuzz/Corpus/), merged back; a crash saves its input under Fuzz/Crashes/ and fails; writes
## Reliability/results/fuzz/ and RELIABILITY.md from them (Scripts/reliability.py)
FUZZ_RUNS ?= 1000000
FUZZ_TARGETS := 6
fuzz: setup
	rm -f Reliability/results/fuzz.run.json
	$(RELIABILITY_ENV) FUZZ_RUNS=$(FUZZ_RUNS) bash Scripts/fuzz.sh
	$(RELIABILITY_ENV) python3 Scripts/reliability.py --fuzz $(FUZZ_RUNS) $(FUZZ_TARGETS) > RELIABILITY.md.new && mv RELIABILITY.md.new RELIABILITY.md
	@echo "RELIABILITY.md written from Reliability/results/fuzz/"

## sanitize: the whole suite (swift test) under ThreadSanitizer, then under AddressSanitizer with LeakSanitizer, each in
## its own build (.build/tsan, .build/asan; with ENGINE=sqlcipher4 under .build/sqlcipher4/); a report from the tests or from any process they start fails it
## (Scripts/sanitize.sh; suppressions, each justified: Scripts/tsan.supp, Scripts/lsan.supp); writes
## Reliability/results/$(ENGINE)/sanitizers/thread.json and address.json, then RELIABILITY.md
sanitize: setup test-setup
	rm -f "$(ENGINE_RESULTS)/sanitizers.run.json"
	$(ENGINE_SHELL) STRONGROOM_ENGINE=$(ENGINE) $(RELIABILITY_ENV) bash Scripts/sanitize.sh thread
	$(ENGINE_SHELL) STRONGROOM_ENGINE=$(ENGINE) $(RELIABILITY_ENV) bash Scripts/sanitize.sh address
	$(ENGINE_SHELL) $(ENGINE_VERSION) $(RELIABILITY_ENV) python3 Scripts/reliability.py --engine $(ENGINE) --sanitizers \
	  > RELIABILITY.md.new && mv RELIABILITY.md.new RELIABILITY.md

## soak: hours of uptime (issue 38, item 7; not part of make test): the release CustomerService, seeded with 10,000
## customers, under wrk's mix (Examples/CustomerService/Load: 80% get, 10% lookup, 10% create) at half the peak it
## measured first, for DURATION (seconds, default 1800; 30m and 2h are read too) in one wrk process
## (Load/paced.lua); every 10 s its RSS, open descriptors, threads and -wal are sampled from /proc. Fails when RSS
## grows 5% or more after the first minute, descriptors or threads grow by more than 4, the -wal reaches its
## documented bound (32 MiB, twice CheckpointPolicy's limit), an answer is not a 2xx, SIGTERM does not end it with
## exit 0 in 5 s, or the database does not pass integrity_check and strongroom verify (Scripts/soak.py). Built and run
## on ENGINE (SQLCipher 4: builds in Examples/CustomerService/.build-sqlcipher4 and .build/sqlcipher4/release, checked
## with ldd to link SQLCipher 4.6.1 alone); writes Reliability/results/$(ENGINE)/service/soak.json and soak.svg, then
## RELIABILITY.md
DURATION ?= 1800
ifeq ($(ENGINE),sqlcipher4)
SOAK_CLI_SCRATCH := .build/sqlcipher4/release
SOAK_SERVICE_SCRATCH := Examples/CustomerService/.build-sqlcipher4
SOAK_BUILD_FLAGS := $$SQLCIPHER4_SWIFT_FLAGS
else
SOAK_CLI_SCRATCH := .build
SOAK_SERVICE_SCRATCH := Examples/CustomerService/.build
SOAK_BUILD_FLAGS :=
endif
soak: setup
	@$(MAKE) --no-print-directory apt-packages APT_PACKAGES="wrk python3"
	rm -f "$(ENGINE_RESULTS)/soak.run.json" "$(ENGINE_RESULTS)/service/soak.json" "$(ENGINE_RESULTS)/service/soak.svg"
	$(ENGINE_SHELL) swift build -c release --product strongroom --scratch-path "$(SOAK_CLI_SCRATCH)" $(SOAK_BUILD_FLAGS)
	$(ENGINE_SHELL) swift build -c release --package-path Examples/CustomerService --scratch-path "$(SOAK_SERVICE_SCRATCH)" $(SOAK_BUILD_FLAGS)
	@for binary in "$(SOAK_CLI_SCRATCH)/release/strongroom" "$(SOAK_SERVICE_SCRATCH)/release/CustomerService"; do \
	  libraries=$$(ldd "$$binary"); \
	  if [ "$(ENGINE)" = sqlcipher4 ]; then \
	    ! grep -q 'libsqlcipher\.so\.0' <<<"$$libraries" && grep -qF "libsqlcipher.so.1 => $$(cd .build/sqlcipher4/lib && pwd)/" <<<"$$libraries"; \
	  else \
	    grep -q 'libsqlcipher\.so\.0 ' <<<"$$libraries" && ! grep -q 'libsqlcipher\.so\.1' <<<"$$libraries"; \
	  fi || { echo "soak: $$binary does not link the $(ENGINE) library alone:"; grep -i sqlcipher <<<"$$libraries"; exit 1; } >&2; \
	done
	$(ENGINE_SHELL) $(ENGINE_VERSION) $(RELIABILITY_ENV) python3 Scripts/soak.py --duration $(DURATION) --engine $(ENGINE) \
	  --service "$(SOAK_SERVICE_SCRATCH)/release/CustomerService" --strongroom "$(SOAK_CLI_SCRATCH)/release/strongroom" \
	  --results "$(ENGINE_RESULTS)"
	$(ENGINE_SHELL) $(ENGINE_VERSION) $(RELIABILITY_ENV) python3 Scripts/reliability.py --engine $(ENGINE) --soak $(DURATION) \
	  > RELIABILITY.md.new && mv RELIABILITY.md.new RELIABILITY.md
	@echo "RELIABILITY.md written from Reliability/results/"

clean:
	rm -rf .build Benchmarks/.build Benchmarks/GRDBPeer/.build Benchmarks/GRDBService/.build Benchmarks/report Benchmarks/report-service demo Fuzz/.build Examples/CustomerService/.build Examples/CustomerService/.build-sqlcipher4
