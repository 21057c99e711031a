# qactd — see README.md. `make demo` starts the daemon on the demo contacts,
# `make check` runs every test; both install what they need first.

SHELL := /bin/bash

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(DESTDIR)$(PREFIX)/bin
# Empty: scripts/install-extras picks PREFIX/lib/systemd/user, or ~/.local/share/systemd/user for PREFIX=~/.local.
USERUNITDIR ?=
# Empty: PREFIX/etc and PREFIX/share/zsh/site-functions (the Debian package uses /etc and
# /usr/share/zsh/vendor-completions).
SYSCONFDIR ?=
ZSHCOMPDIR ?=
export USERUNITDIR SYSCONFDIR ZSHCOMPDIR
CONFIGURATION ?= release
# SKIP_BUILD=1 installs products that are already built (tests install the debug build this way;
# running `swift build` from inside `swift test` would wait forever on SwiftPM's .build lock).
SKIP_BUILD ?=
BUILDDIR ?= .build/$(CONFIGURATION)

# The toolchain's usual home on these machines, for shells that did not source /etc/profile.d.
export PATH := $(PATH):/opt/swift/usr/bin
SWIFT ?= swift
BUILD_LOG = .build/check-build.log

.PHONY: all build deps test-deps demo screenshot check test stress fuzz sanitize bench install uninstall deb clean

all: build

deps:
	scripts/install-deps

test-deps:
	scripts/install-deps --test

# One executable: `qactl` is a link to `qactd`, which runs the client when started by that name.
# The release one is built by scripts/build-release (every module for size, a section per function).
build: deps
ifeq ($(CONFIGURATION),release)
	scripts/build-release >/dev/null
else
	$(SWIFT) build -c $(CONFIGURATION) --product qactd
	ln -sfn qactd $(BUILDDIR)/qactl
endif

demo: deps
	scripts/demo

# docs/dock.png: Plank's menu with the demo's quick actions (favorites from the live quicklist,
# static items from the desktop entry), under Xvfb; see Tests/integration/plank-dock.py.
screenshot: test-deps
	$(SWIFT) build --product qactd
	ln -sfn qactd "$$($(SWIFT) build --show-bin-path)/qactl"
	/usr/bin/python3 Tests/integration/plank-dock.py --bin "$$($(SWIFT) build --show-bin-path)" --mode quicklist --screenshot docs/dock.png

# ThreadSanitizer's build folder (a build of its own: about one more debug build), shared by
# `make check` and `make sanitize`.
TSAN_SCRATCH ?= .build/sanitize-thread
# What `make check` runs under ThreadSanitizer: the concurrency-heavy suites (the Varlink server
# with its connection limits and hostile clients, the blocking client, the watcher's thread,
# the core actor, the launcher exporters, logging from many threads). A report fails the run.
TSAN_SUITES = VarlinkNIOServerTests|VarlinkTests|QuickActionsDaemonTests

# Build first so that compiler warnings in our own sources fail the check
# (the package must build warning-free in Swift 6 mode), then the Debian package
# (the release products, which DebianPackageTests installs and the benchmark's quick
# mode below measures, so one release build serves both), then every test tier,
# then the concurrency-heavy suites under ThreadSanitizer,
# then the benchmark's quick mode as a smoke check (every row must produce a
# figure; no timing is asserted).
check: test-deps
	@mkdir -p .build
	$(SWIFT) build --build-tests 2>&1 | tee $(BUILD_LOG); test $${PIPESTATUS[0]} -eq 0
	@if grep -E '/(Sources|Tests)/.*: warning:' $(BUILD_LOG); then echo "check: the build has warnings (above)" >&2; exit 1; fi
	scripts/make-deb
	$(SWIFT) test --skip-build --disable-swift-testing
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path $(TSAN_SCRATCH)
	$(SWIFT) test --skip-build --sanitize=thread --scratch-path $(TSAN_SCRATCH) --disable-swift-testing --filter '$(TSAN_SUITES)'
	scripts/fuzz --seconds 5 --unoptimized
	scripts/bench --quick

test: check

# The long versions of the crash, convergence and load loops: thousands of kill -9s,
# tens of thousands of file operations, and a minute of 64 clients under churn. `make check`
# runs their short versions.
stress: test-deps
	$(SWIFT) build --build-tests
	STRESS=1 $(SWIFT) test --skip-build --disable-swift-testing --filter 'CrashSafetyEndToEndTests|ConvergenceStressEndToEndTests|LoadEndToEndTests'

# libFuzzer over the parsers (vCard, JSON contacts, property lists, InfoPlist.strings, the
# configuration, Varlink framing and parameters), FUZZ_SECONDS each; `make check` runs 5 s each.
FUZZ_SECONDS ?= 600
fuzz:
	scripts/fuzz --seconds $(FUZZ_SECONDS)

# Every test under AddressSanitizer, then ThreadSanitizer, each in a build folder of its own.
sanitize: test-deps
	$(SWIFT) test --scratch-path .build/sanitize-address --sanitize=address --disable-swift-testing
	$(SWIFT) test --scratch-path $(TSAN_SCRATCH) --sanitize=thread --disable-swift-testing

# Prints figures, floors measured in the same run, ratios and targets (release build) and writes
# BENCHMARKS.md. BENCH=quick: small sizes, few rounds, no file (what `make check` runs).
BENCH ?=
bench: deps
	scripts/bench $(if $(filter quick,$(BENCH)),--quick)

install: $(if $(SKIP_BUILD),,build)
	install -d $(BINDIR)
	install -m 0755 $(BUILDDIR)/qactd $(BINDIR)/
	ln -sfn qactd $(BINDIR)/qactl
	scripts/install-extras "$(DESTDIR)" "$(PREFIX)" "$(BUILDDIR)"

# out/qactd_VERSION-REVISION_ARCH.deb: the release products with the Swift runtime linked in,
# staged by `make install PREFIX=/usr`, checked by lintian; see scripts/make-deb.
deb:
	scripts/install-deps --deb
	scripts/make-deb

uninstall:
	scripts/install-extras --uninstall "$(DESTDIR)" "$(PREFIX)"
	rm -f $(BINDIR)/qactd $(BINDIR)/qactl

clean:
	rm -rf .build demo out
