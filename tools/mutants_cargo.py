#!/usr/bin/env python3
"""tools/mutants_cargo.py -- the test command of `make mutants`, in cargo's clothes.

cargo-mutants runs `$CARGO test --no-run ... --package=P@V` to build a mutant and
`$CARGO test ... --package=P@V` to test it. tools/mutants.sh sets CARGO to this script, which
passes every other cargo command (metadata, locate-project, ...) to the real cargo
($MUTANTS_REAL_CARGO) and replaces those two by the crate's explorer, loom and shuttle checks:

    stage    RUSTFLAGS                  test binaries (impl/<crate>/tests/<name>.rs)
    plain    (none)                     explore_*, mutants_* (their unmutated halves), relax's crash_sim,
                                        sets_crash_sim and lazy (recovery on first access, after a restart)
    shuttle  --cfg perdure_shuttle      shuttle_*
    loom     --cfg perdure_loom         loom_*  (LOOM_MAX_PREEMPTIONS=3, as `make verify` at DEPTH=ci)

Each stage builds in its own target directory under $MUTANTS_TARGET_DIR (one per cfg, so the
three configurations never invalidate each other's build), in release like `make verify`, with
incremental compilation on and no debug info (a mutant changes one function: incremental
rebuilds are what makes a mutant cost seconds rather than minutes).

To kill a mutant fast the stages run in the order of STAGES, and the test binaries in each
stage in the order listed (the quickest to fail first); the first failure ends the run, so a
caught mutant pays only for the checks up to the one that caught it. The build phase
(`--no-run`) builds the first stage only: a mutant that does not compile there is "unviable".
Later stages are built in the test phase; a mutant that compiles in the plain build but not
under a cfg (code gated by perdure_loom/perdure_shuttle) would count as "caught" -- the examined
modules have no such code today.

The checks run in the mutation tier, PERDURE_DEPTH=mutants (docs/MUTANTS.md, "The test command"):
the first schedules of each explorer, shuttle and crash test, loom at a preemption bound of 1 (2
for the binaries of LOOM_TIER_BOUND, cheap enough for it), so
that a mutant costs seconds, not minutes; and a mutant runs only the checks that can reach the
file it mutates (SELECT: a structure's scenarios for a structure's file; everything for the
shared modules).

Every test file of the crate named explore_*, loom_*, shuttle_*, mutants_* must appear in
STAGES (and every name in STAGES must exist): the script fails otherwise, so a new check cannot
be silently left out of the mutation run.
"""
from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
import time
from pathlib import Path

# Per crate: (stage, test binaries in run order). Orders are by measured time, fastest first
# (docs/MUTANTS.md gives the measurements).
STAGES: dict[str, list[tuple[str, list[str]]]] = {
    "perdure-pm": [
        ("shuttle", ["shuttle_heap", "shuttle_dram_tso"]),
        ("loom", ["loom_log", "loom_heap"]),
    ],
    "perdure-memento": [
        ("plain", ["explore_memento_layout", "mutants_memento", "explore_memento",
                   "explore_memento_tcrash", "explore_memento_zero", "explore_memento_x86"]),
        ("shuttle", ["shuttle_tso_mutants_memento"]),
    ],
    "perdure-ptm": [
        ("plain", ["mutants_ptm"]),
        ("shuttle", ["shuttle_redo", "shuttle_cx", "shuttle_explore_ptm", "shuttle_mutants_ptm",
                     "shuttle_tso_mutants_ptm"]),
        ("loom", ["loom_redo_consensus", "loom_rwlock", "loom_cx_queue"]),
    ],
    "perdure-relax": [
        ("plain", ["mutants_relax", "lazy", "crash_sim", "sets_crash_sim"]),
        ("shuttle", ["shuttle_relax", "shuttle_explore_relax", "shuttle_sets",
                     "shuttle_tso_mutants_relax"]),
    ],
}
# Which of a crate's checks a mutant runs, by the file it mutates: (glob under the crate's folder,
# {test binary: libtest name filters}). A binary a rule does not name is not run for that file;
# [] runs it whole; with filters, only the tests whose names contain one of them. A file no
# rule matches (the primitives every structure uses, the shared protocol modules) runs every
# check. The rules only leave out checks that cannot reach the file: a structure's mutant is
# checked by that structure's scenarios, CX's by the CX checks, Redo's by the Redo ones.
MEMENTO_ALL = ["explore_memento_layout", "mutants_memento", "explore_memento", "explore_memento_tcrash",
               "explore_memento_zero",
               "explore_memento_x86", "shuttle_tso_mutants_memento"]
RELAX_SETS = {"sets_crash_sim": [], "shuttle_sets": [], "shuttle_explore_relax": [], "mutants_relax": []}
RELAX_FIELDS = {"lazy": [], "crash_sim": [], "shuttle_explore_relax": [], "mutants_relax": []}
SELECT: dict[str, list[tuple[str, dict[str, list[str]]]]] = {
    "perdure-memento": [
        ("src/ds/soft.rs", {b: ["soft"] for b in MEMENTO_ALL}),
        ("src/ds/combq.rs", {b: ["combq"] for b in MEMENTO_ALL}),
        ("src/ds/msq.rs", {b: ["msq"] for b in MEMENTO_ALL}),
        ("src/ds/treiber.rs", {b: ["treiber", "elim"] for b in MEMENTO_ALL}),
        ("src/ds/elim.rs", {b: ["elim"] for b in MEMENTO_ALL}),
        ("src/ds/exchanger.rs", {b: ["elim"] for b in MEMENTO_ALL}),
    ],
    "perdure-ptm": [
        ("src/cx/queue.rs", {"mutants_ptm": [], "shuttle_cx": [], "shuttle_explore_ptm": ["cx_", "depth_"],
                             "shuttle_mutants_ptm": [], "loom_cx_queue": []}),
        ("src/cx/*.rs", {"mutants_ptm": [], "shuttle_cx": [], "shuttle_explore_ptm": ["cx_", "depth_"],
                         "shuttle_mutants_ptm": []}),
        ("src/redo/*.rs", {"mutants_ptm": [], "shuttle_redo": [], "shuttle_explore_ptm": ["redo_", "depth_"],
                           "shuttle_mutants_ptm": [], "shuttle_tso_mutants_ptm": [],
                           "loom_redo_consensus": []}),
    ],
    "perdure-relax": [
        ("src/ds/skiplist.rs", RELAX_SETS),
        ("src/ds/bst.rs", RELAX_SETS),
        ("src/ds/list.rs", RELAX_FIELDS),
        ("src/ds/hash.rs", RELAX_FIELDS),
        ("src/ds/array.rs", RELAX_FIELDS),
    ],
}
CHECK_PREFIXES = ("explore_", "loom_", "shuttle_", "mutants_")
# loom binaries cheap enough to keep a higher preemption bound in the mutation tier than its
# default of 1: the strong trylock's models take 0.9 s at bound 2 (12 s at 3), and a writer's
# HLOCK attempt renewed by another writer (the ABA its sequence number prevents) needs two.
LOOM_TIER_BOUND = {"loom_rwlock": "2"}
CFG = {"plain": None, "shuttle": "perdure_shuttle", "loom": "perdure_loom"}


def log(msg: str) -> None:
    print(f"mutants_cargo: {msg}", file=sys.stderr, flush=True)


def real_cargo() -> str:
    c = os.environ.get("MUTANTS_REAL_CARGO")
    if not c:
        sys.exit("mutants_cargo: MUTANTS_REAL_CARGO is not set (run through tools/mutants.sh)")
    return c


def packages(args: list[str]) -> list[str]:
    """The package names of `--package=P@V` / `--package P` / `-p P`; --workspace = all four."""
    names, it = [], iter(args)
    for a in it:
        if a.startswith("--package="):
            names.append(a.split("=", 1)[1])
        elif a in ("--package", "-p"):
            names.append(next(it, ""))
        elif a == "--workspace":
            names += list(STAGES)
    return [n.split("@", 1)[0] for n in names]


def check_table(workspace: Path, pkg: str) -> None:
    tests = workspace / pkg / "tests"
    listed = {t for _, ts in STAGES[pkg] for t in ts}
    present = {f.stem for f in tests.glob("*.rs")}
    missing = sorted(listed - present)
    unlisted = sorted(t for t in present - listed if t.startswith(CHECK_PREFIXES))
    if missing or unlisted:
        sys.exit(f"mutants_cargo: tools/mutants_cargo.py's STAGES is out of date for {pkg}: "
                 f"listed but absent {missing}, present but not listed {unlisted}")


def mutated_files(workspace: Path, pkg: str) -> list[str]:
    """The files of pkg's src/ that differ from the source tree's: cargo-mutants runs this
    script in its copy of impl/ with one file mutated (none in the baseline run)."""
    original = Path(__file__).resolve().parent.parent / "impl" / pkg
    copy = workspace / pkg
    if original.resolve() == copy.resolve():
        return []
    changed = []
    for f in sorted((copy / "src").rglob("*.rs")):
        rel = f.relative_to(copy)
        o = original / rel
        if not o.is_file() or o.read_bytes() != f.read_bytes():
            changed.append(rel.as_posix())
    return changed


def selection(workspace: Path, pkg: str) -> dict[str, list[str]] | None:
    """The checks a mutant of pkg runs (SELECT), or None: all of them."""
    changed = mutated_files(workspace, pkg)
    if len(changed) != 1:
        return None
    for pattern, checks in SELECT.get(pkg, []):
        if fnmatch.fnmatch(changed[0], pattern):
            log(f"{changed[0]} is mutated: {', '.join(f'{b}{chr(32) + str(fs) if fs else chr(32)}'.strip() for b, fs in checks.items())}")
            return checks
    return None


def cargo(args: list[str], stage: str, target_root: Path, test: str | None = None) -> int:
    env = dict(os.environ)
    env.pop("CARGO", None)
    flags = os.environ.get("MUTANTS_RUSTFLAGS", "").split()
    if CFG[stage]:
        flags += ["--cfg", CFG[stage]]
    env["RUSTFLAGS"] = " ".join(flags)
    env.pop("CARGO_ENCODED_RUSTFLAGS", None)
    env["CARGO_INCREMENTAL"] = "1"
    env["CARGO_PROFILE_RELEASE_DEBUG"] = "0"
    # The mutation tier (docs/MUTANTS.md): the explorer, shuttle and crash tests run their
    # first schedules only (PERDURE_DEPTH=mutants), loom a preemption bound of 1.
    # PERDURE_DEPTH=ci in the environment runs the checks at make verify's depth instead.
    env.setdefault("PERDURE_DEPTH", "mutants")
    if stage == "loom":
        tier = LOOM_TIER_BOUND.get(test or "", "1")
        env.setdefault("LOOM_MAX_PREEMPTIONS", tier if env["PERDURE_DEPTH"] == "mutants" else "3")
    cmd = [real_cargo(), "test", "--release", "--target-dir", str(target_root / stage)] + args
    log(f"[{stage}] {' '.join(cmd[1:])}")
    start = time.monotonic()
    rc = subprocess.run(cmd, env=env).returncode
    log(f"[{stage}] exit {rc} after {time.monotonic() - start:.1f} s")
    return rc


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "test":
        os.execv(real_cargo(), [real_cargo()] + argv)
    args = argv[1:]
    no_run = "--no-run" in args
    pkgs = packages(args)
    unknown = [p for p in pkgs if p not in STAGES]
    if not pkgs or unknown:
        log(f"no checks defined for packages {unknown or '(none given)'}; "
            f"mutate only {', '.join(STAGES)} (impl/.cargo/mutants.toml)")
        return 2
    workspace = Path.cwd()
    target_root = Path(os.environ.get("MUTANTS_TARGET_DIR", workspace / "target" / "mutants"))
    for pkg in pkgs:
        check_table(workspace, pkg)
    for pkg in pkgs:
        stages = STAGES[pkg][:1] if no_run else STAGES[pkg]
        chosen = None if no_run else selection(workspace, pkg)
        for stage, tests in stages:
            filters: dict[str, list[str]] = {}
            if chosen is not None:
                tests = [t for t in tests if t in chosen]
                filters = chosen
                if not tests:
                    continue
            sel = ["-p", pkg] + [a for t in tests for a in ("--test", t)]
            # Build the whole stage at once (parallel), then run its binaries in order.
            rc = cargo(sel + ["--no-run"], stage, target_root)
            if no_run:
                if rc != 0:
                    return rc
                continue
            if rc != 0:
                return rc
            for t in tests:
                rc = cargo(["-p", pkg, "--test", t, "--", "--nocapture"] + filters.get(t, []),
                           stage, target_root, t)
                if rc != 0:
                    return rc
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
