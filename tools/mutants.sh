#!/usr/bin/env bash
# tools/mutants.sh -- mutation testing of the constructions with cargo-mutants (`make mutants`).
#
#   tools/mutants.sh [--list] [SHARD]       SHARD is k/n with 0 <= k < n (cargo-mutants' --shard)
#
#   (no SHARD)   every shard 0/N .. N-1/N in turn (N = $MUTANTS_SHARDS, default 200), skipping
#                the shards already complete: interrupt it and run it again to resume
#   k/n          that one shard (re-run from its start if it was not complete)
#   --list       how many mutants each crate has (and the given shard, if any), nothing run
#
# Then tools/mutants_merge.py merges the shards present into out/mutants/summary.{json,md}.
#
# What is mutated and why: impl/.cargo/mutants.toml. The test command: tools/mutants_cargo.py
# (each crate's explorer, loom and shuttle checks). How to read the results: docs/MUTANTS.md.
#
# Environment:
#   MUTANTS_SHARDS=N      shard count when no SHARD is given (default 200)
#   MUTANTS_TIMEOUT=s     per-mutant time limit of the test phase (default 900)
#   MUTANTS_BUILD_TIMEOUT=s   per-mutant time limit of the build phase (default 1800; the first
#                         mutant of a shard builds the whole workspace in cargo-mutants' copy)
#   MUTANTS_BASELINE=auto|run|skip   auto (default): test the unmutated tree once per source
#                         state and crate (recorded in .cache/mutants/baseline.json), skip it
#                         in later shards. This script runs it before cargo-mutants, with no
#                         time limit (MUTANTS_TIMEOUT bounds the mutants only)
#   MUTANTS_PACKAGE=crate only the mutants of one crate (cargo-mutants --package), e.g.
#                         perdure-relax; use it with its own MUTANTS_OUT
#   MUTANTS_RE=regex      only the mutants whose name matches (cargo-mutants --re), e.g. one
#                         function, to try a mutant by hand. cargo-mutants 27.1 applies neither
#                         this nor exclude_re to its "delete field" mutants (6, all in
#                         perdure-ptm): give MUTANTS_PACKAGE too
#   MUTANTS_SOURCE=id     the source state to record results under, instead of the one computed
#                         from impl/ and the test command: to continue a campaign after changing
#                         files that no mutant is in and no verdict depends on (a faster explorer
#                         that explores the same images). The caller vouches for that; say so in
#                         docs/MUTANTS.md, and run the baseline again (MUTANTS_BASELINE=run)
#   MUTANTS_OUT=dir       where the shards and the summary go (default out/mutants)
#   MUTANTS_LEDGER=file   the committed record of complete shards (default docs/mutants/ledger.tsv;
#                         none when MUTANTS_RE or MUTANTS_PACKAGE filter the list, unless set): a
#                         shard it records for this source state counts as complete, and every
#                         merge adds the complete shards of MUTANTS_OUT to it. Commit it: a full
#                         run spans days and machines, out/ does not survive them
#
# cargo-mutants is installed on first use into .cache/cargo-mutants (cargo install --locked,
# from crates.io); `make setup` and `make test` do not need it. Each cargo-mutants run works in
# its own copy of impl/ (never in the source tree); the copies share the build cache
# .cache/mutants/target/{plain,shuttle,loom}, so dependencies are compiled once.
set -euo pipefail
exec </dev/null

# shellcheck source=tools/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$PERDURE_ROOT"

CM_VERSION=27.1.0
CM_ROOT="$PERDURE_CACHE/cargo-mutants"
CM="$CM_ROOT/bin/cargo-mutants"
OUT=${MUTANTS_OUT:-$PERDURE_OUT/mutants}
case $OUT in /*) ;; *) OUT="$PERDURE_ROOT/$OUT" ;; esac
RE=${MUTANTS_RE:-}
PACKAGE=${MUTANTS_PACKAGE:-}
SHARDS=${MUTANTS_SHARDS:-200}
TIMEOUT=${MUTANTS_TIMEOUT:-900}
BUILD_TIMEOUT=${MUTANTS_BUILD_TIMEOUT:-1800}
BASELINE=${MUTANTS_BASELINE:-auto}
if [ -n "${MUTANTS_LEDGER:-}" ]; then
  LEDGER=$MUTANTS_LEDGER
elif [ -z "$RE$PACKAGE" ]; then
  LEDGER=$PERDURE_ROOT/docs/mutants/ledger.tsv
else
  LEDGER=""
fi
case $LEDGER in /* | "") ;; *) LEDGER="$PERDURE_ROOT/$LEDGER" ;; esac

die() {
  echo "mutants: ERROR: $*" >&2
  exit 1
}

list=0
shard=""
for a in "$@"; do
  case $a in
    --list) list=1 ;;
    */*) shard=$a ;;
    *) die "unknown argument '$a' (usage: tools/mutants.sh [--list] [k/n])" ;;
  esac
done
if [ -n "$shard" ]; then
  [[ $shard =~ ^([0-9]+)/([0-9]+)$ ]] || die "SHARD must be k/n, e.g. 0/200 (got '$shard')"
  [ "${BASH_REMATCH[1]}" -lt "${BASH_REMATCH[2]}" ] || die "SHARD k/n needs 0 <= k < n (got '$shard')"
fi
[[ $SHARDS =~ ^[1-9][0-9]*$ ]] || die "MUTANTS_SHARDS must be a positive integer (got '$SHARDS')"
[ -f impl/.cargo/mutants.toml ] || die "impl/.cargo/mutants.toml is missing"
command -v cargo >/dev/null || die "cargo not on PATH (install Rust with rustup)"

# --- cargo-mutants, installed on first use -----------------------------------------------------
if [ ! -x "$CM" ] || [ "$("$CM" mutants --version 2>/dev/null)" != "cargo-mutants $CM_VERSION" ]; then
  mkdir -p "$CM_ROOT"
  echo "mutants: installing cargo-mutants $CM_VERSION into ${CM_ROOT#"$PERDURE_ROOT"/} (log: install.log)"
  if ! nice -n 15 cargo install --locked --version "$CM_VERSION" --root "$CM_ROOT" cargo-mutants \
    >"$CM_ROOT/install.log" 2>&1; then
    tail -n 30 "$CM_ROOT/install.log" >&2
    die "cargo install cargo-mutants failed (network? see ${CM_ROOT#"$PERDURE_ROOT"/}/install.log)"
  fi
fi

# cargo-mutants calls $CARGO for every cargo command; tools/mutants_cargo.py turns `cargo test`
# into the crates' checks and passes everything else to the real cargo.
export MUTANTS_REAL_CARGO
MUTANTS_REAL_CARGO=$(command -v cargo)
export CARGO="$PERDURE_ROOT/tools/mutants_cargo.py"
export MUTANTS_TARGET_DIR="$PERDURE_CACHE/mutants/target"
mkdir -p "$MUTANTS_TARGET_DIR" "$OUT"

# Round-robin sharding (mutant i goes to shard i mod n): every shard is a sample across all the
# crates and files, so a few shards already say something about each crate.
cm() {
  local re=()
  [ -z "$RE" ] || re+=(--re "$RE")
  [ -z "$PACKAGE" ] || re+=(--package "$PACKAGE")
  (cd impl && nice -n 15 "$CM" mutants --no-shuffle "${re[@]}" "$@")
}

# --- --list -------------------------------------------------------------------------------------
if [ "$list" = 1 ]; then
  all=$(cm --list --json) || die "cargo-mutants --list failed"
  sel=$all
  [ -z "$shard" ] || sel=$(cm --list --json --sharding round-robin --shard "$shard") || die "cargo-mutants --list --shard failed"
  python3 - "$shard" "$SHARDS" <<'PY' 3<<<"$all" 4<<<"$sel"
import collections, json, os, sys
shard, n = sys.argv[1], int(sys.argv[2])
every = json.load(os.fdopen(3))
chosen = json.load(os.fdopen(4))
per = collections.Counter(m["package"] for m in every)
in_shard = collections.Counter(m["package"] for m in chosen)
print(f"{'crate':<18}{'mutants':>9}" + (f"{'in ' + shard:>12}" if shard else ""))
for pkg in sorted(per):
    print(f"{pkg:<18}{per[pkg]:>9}" + (f"{in_shard[pkg]:>12}" if shard else ""))
print(f"{'total':<18}{len(every):>9}" + (f"{len(chosen):>12}" if shard else ""))
if not shard:
    print(f"(make mutants runs them as {n} shards of about {-(-len(every) // n)} mutants each)")
PY
  exit 0
fi

# --- one shard ------------------------------------------------------------------------------------
# The source state a result belongs to: impl/ (mutants.toml included) and the test command.
# A shard's results also depend on the MUTANTS_RE/MUTANTS_PACKAGE filters (a shard of a filtered list is another
# set of mutants); the baseline does not (it is the unmutated tree), so it is shared by all runs.
source_id() {
  local t
  t=$(git rev-parse HEAD:impl)
  if ! git diff --quiet HEAD -- impl tools/mutants_cargo.py || [ -n "$(git ls-files -o --exclude-standard impl)" ]; then
    t="$t+dirty-$( (git diff HEAD -- impl tools/mutants_cargo.py; git ls-files -o --exclude-standard impl) | sha1sum | cut -c1-12)"
  fi
  echo "$t-$(git hash-object tools/mutants_cargo.py | cut -c1-12)"
}
SOURCE=${MUTANTS_SOURCE:-$(source_id)}
# Checks at another depth than the mutation tier (PERDURE_DEPTH=ci) are another experiment.
[ "${PERDURE_DEPTH:-mutants}" = mutants ] || SOURCE="$SOURCE-depth-$PERDURE_DEPTH"
TREE=$SOURCE
[ -z "$RE$PACKAGE" ] || TREE="$TREE-only-$(printf '%s\n%s' "$RE" "$PACKAGE" | sha1sum | cut -c1-12)"
BASELINE_JSON="$PERDURE_CACHE/mutants/baseline.json"

shard_complete() { # k n -> 0 if out/mutants/shard-k-of-n or the ledger holds a finished run of this tree
  python3 - "$OUT/shard-$1-of-$2" "$TREE" "$LEDGER" "$1/$2" <<'PY'
import json, sys
from pathlib import Path
d, tree, ledger, kn = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
if ledger and Path(ledger).is_file():
    for line in Path(ledger).read_text().splitlines():
        f = line.split("\t")
        if not line.startswith("#") and len(f) == 6 and f[0] == tree and f[1] == kn:
            sys.exit(0)
try:
    meta = json.loads((d / "shard.json").read_text())
    planned = len(json.loads((d / "mutants.out" / "mutants.json").read_text()))
    if planned == 0:  # nothing to test: complete once cargo-mutants ended normally
        sys.exit(0 if meta.get("tree") == tree and meta.get("exit") in (0, 2, 3) else 1)
    lab = json.loads((d / "mutants.out" / "outcomes.json").read_text())
except (OSError, ValueError):
    sys.exit(1)
done = sum(1 for o in lab["outcomes"] if o["scenario"] != "Baseline")
sys.exit(0 if meta.get("tree") == tree and lab.get("end_time") and done == planned else 1)
PY
}

shard_packages() { # k n -> the crates of the shard's mutants, one per line
  cm --list --json --sharding round-robin --shard "$1/$2" |
    python3 -c 'import json,sys; print("\n".join(sorted({m["package"] for m in json.load(sys.stdin)})))'
}

# 0 if .cache/mutants/baseline.json says the unmutated tree passed the checks of every crate of
# shard k/n.
baseline_passed() { # k n
  [ -f "$BASELINE_JSON" ] || return 1
  shard_packages "$1" "$2" | python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))
need = set(sys.stdin.read().split())
sys.exit(0 if b.get("tree") == sys.argv[2] and need <= set(b.get("packages", [])) else 1)' "$BASELINE_JSON" "$SOURCE"
}

record_baseline() { # k n: the shard's baseline passed; add its crates to baseline.json
  shard_packages "$1" "$2" | python3 -c '
import json, sys
path, tree = sys.argv[1], sys.argv[2]
try:
    b = json.load(open(path))
except (OSError, ValueError):
    b = {}
pkgs = set(b.get("packages", [])) if b.get("tree") == tree else set()
pkgs |= set(sys.stdin.read().split())
json.dump({"tree": tree, "packages": sorted(pkgs)}, open(path, "w"))' "$BASELINE_JSON" "$SOURCE"
}

run_baseline() { # k n dir: the checks of the shard's crates on the unmutated tree, no time limit
  local p
  for p in $(shard_packages "$1" "$2"); do
    echo "mutants: baseline: $p's checks on the unmutated tree (log: ${3#"$PERDURE_ROOT"/}/baseline-$p.log)"
    (cd impl && nice -n 15 "$CARGO" test --package="$p") >"$3/baseline-$p.log" 2>&1 ||
      die "the unmutated tree fails $p's checks (baseline): see ${3#"$PERDURE_ROOT"/}/baseline-$p.log"
  done
}

run_shard() { # k n
  local k=$1 n=$2 dir="$OUT/shard-$1-of-$2" base_arg rc
  RAN=0
  if shard_complete "$k" "$n"; then
    echo "mutants: shard $k/$n already complete for this tree, skipped"
    return 0
  fi
  RAN=1
  case $BASELINE in
    run) base_arg=run ;;
    skip) base_arg=skip ;;
    auto) if baseline_passed "$k" "$n"; then base_arg=skip; else base_arg=run; fi ;;
    *) die "MUTANTS_BASELINE must be auto, run or skip (got '$BASELINE')" ;;
  esac
  rm -rf "$dir"
  mkdir -p "$dir"
  if [ "$base_arg" = run ]; then
    # The unmutated tree's checks run here, not in cargo-mutants, whose --timeout (meant for a
    # mutant that makes a loop spin) would also bound them: on a loaded machine the baseline of
    # four crates takes longer than one mutant's tier may.
    run_baseline "$k" "$n" "$dir"
    record_baseline "$k" "$n"
    base_arg=skip
  fi
  printf '{"k": %d, "n": %d, "tree": "%s", "started": "%s", "baseline": "%s", "timeout": %s}\n' \
    "$k" "$n" "$TREE" "$(date -u +%FT%TZ)" "$base_arg" "$TIMEOUT" >"$dir/shard.json"
  echo "mutants: shard $k/$n (baseline: $base_arg, timeout ${TIMEOUT}s) -> ${dir#"$PERDURE_ROOT"/}"
  rc=0
  cm --sharding round-robin --shard "$k/$n" --baseline "$base_arg" --timeout "$TIMEOUT" --build-timeout "$BUILD_TIMEOUT" \
    --jobs 1 --output "$dir" --no-times --colors never >"$dir/cargo-mutants.log" 2>&1 || rc=$?
  tail -n 3 "$dir/cargo-mutants.log"
  # When cargo-mutants ended and how; a shard with no mutants (possible under MUTANTS_RE) writes
  # no outcomes.json, and this is what says it is complete nonetheless.
  python3 -c '
import json, sys, time
p = sys.argv[1]
meta = json.load(open(p))
meta.update(finished=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), exit=int(sys.argv[2]))
json.dump(meta, open(p, "w"))' "$dir/shard.json" "$rc"
  # cargo-mutants' exit codes: 0 all caught, 2 some missed, 3 some timed out, 4 baseline failed.
  case $rc in
    0 | 2 | 3) ;;
    4) die "the unmutated tree fails its checks (baseline): see ${dir#"$PERDURE_ROOT"/}/mutants.out/log/baseline.log" ;;
    *) die "cargo-mutants exited with $rc: see ${dir#"$PERDURE_ROOT"/}/cargo-mutants.log" ;;
  esac
}

if [ -n "$shard" ]; then
  run_shard "${shard%/*}" "${shard#*/}"
  python3 tools/mutants_merge.py --shards "${shard#*/}" --out "$OUT" ${LEDGER:+--ledger "$LEDGER"}
else
  for ((k = 0; k < SHARDS; k++)); do
    run_shard "$k" "$SHARDS"
    # After every shard that ran, so that an interrupted run has its finished shards in the
    # ledger (a skipped one is there already; merging after each skip made a resume slow).
    [ -z "$LEDGER" ] || [ "$RAN" = 0 ] ||
      python3 tools/mutants_merge.py --shards "$SHARDS" --out "$OUT" --ledger "$LEDGER" >/dev/null
  done
  python3 tools/mutants_merge.py --shards "$SHARDS" --out "$OUT" ${LEDGER:+--ledger "$LEDGER"}
fi
