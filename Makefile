# perdure -- the repository's entry points. `make` (or `make help`) lists them.
#
#   make setup            install what is missing (tools/setup.sh; idempotent, fast when done)
#   make verify           setup, then every check the tree has (tools/verify.py) -> out/verify.json
#   make verify DEPTH=deep    the same with the *_deep.cfg models and unbounded loom
#   make test             what CI runs (.ci/run): setup + the same checks as verify
#   make bench            setup, then the Rust benchmarks; output under out/bench/
#   make bench-peers REDODB_SRC=<dir> MEMENTO_SRC=<dir> [POINTS=...]   perdure against RedoDB and Memento
#   make mutants [SHARD=k/n] [LIST=1]   cargo-mutants on the constructions (docs/MUTANTS.md)
#   make genmc            the GenMC models of modelcheck/genmc/ (needs genmc: tools/genmc.sh)
#   make clean            remove out/, impl/target/ and Coq build products (keeps .cache/)
#   make distclean        clean, and remove .cache/ (downloaded TLC, setup stamps)

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# ci | deep: which configurations tools/verify.py runs (exported so the scripts see it).
DEPTH ?= ci
export DEPTH

PYTHON ?= python3

.PHONY: help setup verify test bench bench-peers mutants genmc clean distclean

help:
	@echo "perdure make targets:"
	@echo "  setup      install what is missing (Coq+Iris+stdpp via apt, TLC via Maven, cargo fetch)"
	@echo "  verify     setup, then run every check present: cargo fmt/clippy/test, loom, shuttle,"
	@echo "             TLC on specs/**/*.cfg, the Coq build + Admitted/axiom scan -> out/verify.json"
	@echo "             (DEPTH=deep: *_deep.cfg models, unbounded loom)"
	@echo "  test       what CI runs (.ci/run): setup + the same checks as verify"
	@echo "  bench      setup, then 'cargo bench --workspace' in impl/ and perdure-kv's db_bench beside"
	@echo "             redb, sled and fjall (impl/kv-peers); output in out/bench/"
	@echo "  bench-peers  perdure against the published RedoDB PTMs and Memento queues, point by point,"
	@echo "             interleaved (tools/bench_peers.py; docs/bench/peers.md): REDODB_SRC=<checkout>"
	@echo "             MEMENTO_SRC=<checkout>, a peer not given is skipped; POINTS=<filters>; SECS, ROUNDS"
	@echo "             -> out/bench-peers/ (table, bench-peers.json, bench-peers.svg). Not part of test"
	@echo "  mutants    cargo-mutants on the protocol modules of pm, memento, ptm, relax, tested by"
	@echo "             their explorer/loom/shuttle checks -> out/mutants/summary.md (docs/MUTANTS.md)"
	@echo "             SHARD=k/n: one shard (0 <= k < n); none: every shard, resuming; LIST=1: counts"
	@echo "  genmc      the GenMC C11 models of modelcheck/genmc/ under RC11, IMM and TSO (the genmc:*"
	@echo "             rows of verify; needs genmc on PATH: GENMC_SRC=<checkout> tools/genmc.sh)"
	@echo "  clean      remove out/, impl/target/ and Coq build products"
	@echo "  distclean  clean, and remove .cache/ (downloaded TLC jar, setup stamps)"
	@echo "  help       this list"

setup:
	@bash tools/setup.sh

verify: setup
	@$(PYTHON) tools/verify.py

# CI's entry point. Today it is exactly verify; it stays a separate target so that CI-only
# steps can be added without changing what a developer's `make verify` does.
test: setup
	@$(PYTHON) tools/verify.py

# Benches are `harness = false` binaries printing tables. Their stdout is kept in
# out/bench/cargo-bench-<time>.txt; PERDURE_BENCH_OUT tells them where to put files of their own.
bench: setup
	@if [ ! -f impl/Cargo.toml ]; then \
	  echo "bench: impl/Cargo.toml does not exist yet, there is nothing to benchmark" >&2; exit 1; fi
	@mkdir -p out/bench
	@log="$(CURDIR)/out/bench/cargo-bench-$$(date +%Y%m%d-%H%M%S).txt"; \
	  cd impl && PERDURE_OUT="$(CURDIR)/out" PERDURE_BENCH_OUT="$(CURDIR)/out/bench" \
	  cargo bench --workspace 2>&1 | tee "$$log"; \
	  cargo bench -p perdure-ptm --features breakdown --bench ptm_breakdown 2>&1 | tee -a "$$log"; \
	  (cd kv-peers && cargo build --release && PERDURE_OUT="$(CURDIR)/out" ./target/release/kv-peers) 2>&1 | tee -a "$$log"; \
	  echo "bench: output saved in $${log#$(CURDIR)/}"

# perdure against its peers (issue 17): builds RedoDB's PTMs with tools/peers/redodb_point.cpp and
# Memento's queue bench from the checkouts named by REDODB_SRC and MEMENTO_SRC (environment or make
# variables), runs each point on both sides interleaved. Not part of verify/test; needs no peer for
# `make bench`. POINTS: substrings of point ids (python3 tools/bench_peers.py --list).
bench-peers: setup
	@$(PYTHON) tools/bench_peers.py $(POINTS)

# Mutation testing (issue 15 §2). Not part of verify/test: a full run takes days on two cores.
# tools/mutants.sh installs cargo-mutants into .cache/ on first use; results in out/mutants/.
mutants:
	@bash tools/mutants.sh $(if $(LIST),--list) $(SHARD)

# The GenMC rows alone (verify runs them too, or reports them skipped where genmc is missing).
# Not part of setup: GenMC is built from source by tools/genmc.sh (modelcheck/genmc/README.md).
genmc:
	@command -v genmc >/dev/null || { echo "genmc: not on PATH; build it with GENMC_SRC=<GenMC checkout> tools/genmc.sh" \
	  "(modelcheck/genmc/README.md)" >&2; exit 1; }
	@$(PYTHON) tools/verify.py genmc:

clean:
	rm -rf out impl/target
	@if [ -d proofs ]; then \
	  find proofs \( -name '*.vo' -o -name '*.vok' -o -name '*.vos' -o -name '*.glob' \
	    -o -name '.*.aux' -o -name '.lia.cache' -o -name '.nia.cache' \) -type f -delete; \
	  rm -f proofs/Makefile.coq proofs/Makefile.coq.conf proofs/.Makefile.coq.d; fi

distclean: clean
	rm -rf .cache
