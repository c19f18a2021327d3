#!/usr/bin/env bash
# tools/trace-check.sh SPEC.tla TRACE.ndjson [--expect accept|reject]
#
# Trace validation: replays an implementation trace inside TLC.
#   1. converts TRACE (ndjson, traces/SCHEMA.md) into a TLA+ module TraceData
#      with `perdure trace-to-tla` (built if needed);
#   2. runs TLC on a copy of SPEC (a trace-validation spec such as
#      traces/tutorial/CommitLogTrace.tla, with its .cfg) next to TraceData;
#   3. reports ACCEPTED (TLC replayed every step: the spec's NotAccepted
#      invariant was violated) or REJECTED at step k (no behaviour takes step
#      k), printing that step and the spec's state just before it (from TLC's
#      state dump). With --expect reject, the run also checks the spec's
#      Diagnosis invariant, which prints, for every state that cannot take
#      its next step, why (the spec's `Why`: "no <action> step" when the event
#      is no protocol step there, else the spec's checked conditions that
#      every matching step breaks); the REASON line gives, for the rejected
#      step, the conditions every matching stuck state breaks (or the
#      "no ... step" when no state matches).
# Exit status: without --expect, 0 accepted / 1 rejected; with --expect, 0 if
# the outcome is the expected one, else 1. 2 on usage or tool errors.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/tools/env.sh"

die() { echo "trace-check: $*" >&2; exit 2; }
[ $# -ge 2 ] || die "usage: tools/trace-check.sh SPEC.tla TRACE.ndjson [--expect accept|reject]"
spec=$1; trace=$2; expect=""
if [ $# -ge 4 ] && [ "$3" = "--expect" ]; then expect=$4; fi
case "$expect" in ""|accept|reject) ;; *) die "--expect takes accept or reject";; esac
[ -f "$spec" ] || die "no spec $spec"
cfg="${spec%.tla}.cfg"
[ -f "$cfg" ] || die "no config $cfg next to the spec"
[ -f "$trace" ] || die "no trace $trace"

perdure="$root/impl/target/release/perdure"
if [ ! -x "$perdure" ]; then
  (cd "$root/impl" && cargo build --release -q -p perdure) || die "cannot build perdure"
fi

mkdir -p "$root/out"
tmp=$(mktemp -d "$root/out/trace-check.XXXXXX")
trap '[ -n "${KEEP_TRACE_TMP:-}" ] || rm -rf "$tmp"' EXIT
cp "$spec" "$cfg" "$tmp/"
if [ "$expect" = reject ]; then
  # Why a rejected trace is rejected: the spec's Diagnosis (see above).
  printf '\nINVARIANT Diagnosis\n' >> "$tmp/$(basename "$cfg")"
fi
"$perdure" trace-to-tla "$trace" --module TraceData --out "$tmp" >/dev/null || die "trace-to-tla failed on $trace"
steps=$(grep -c '[^[:space:]]' "$trace" || true)
name=$(basename "$spec")
set +e
bash "$root/tools/tlc.sh" "$tmp/$name" "$tmp/$(basename "$cfg")" -dump "$tmp/states" >"$tmp/tlc.log" 2>&1
set -e
summary=$(grep '^TLC-SUMMARY' "$tmp/tlc.log" | tail -1 || true)
if grep -q "Invariant NotAccepted is violated" "$tmp/tlc.log"; then
  outcome=accept
  echo "trace-check: ACCEPTED: all $steps steps of $trace replayed by $spec"
elif echo "$summary" | grep -q '"status":"pass"'; then
  outcome=reject
  # The highest step any reachable state got to: the first it could not take.
  python3 - "$tmp/states.dump" "$trace" "$steps" <<'PY'
import re, sys
dump, trace, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
states = open(dump).read().split("\nState ")
best, best_state = 0, ""
for st in states:
    m = re.search(r"^/\\ k = (\d+)\s*$", st, re.M)
    if m and int(m.group(1)) > best:
        best, best_state = int(m.group(1)), st
lines = [l for l in open(trace) if l.strip()]
step = lines[best - 1].strip() if 0 < best <= len(lines) else "?"
print(f"trace-check: REJECTED at step {best} of {steps}: {step}")
print("  the spec's state before that step (one of them):")
# A variable's value may span several lines: join continuations.
joined = []
for l in best_state.splitlines()[1:]:
    if l.startswith("/\\"):
        joined.append(l)
    elif joined and l.strip():
        joined[-1] += " " + l.strip()
for l in sorted(joined):
    print("   ", l)
# The Diagnosis lines of that step: <<"trace-stuck", k, {"reason", ...}>> (TLC may
# spread one over several lines).
import os
log = os.path.join(os.path.dirname(dump), "tlc.log")
reasons = []
if os.path.exists(log):
    for m in re.finditer(r'<<\s*"trace-stuck",\s*(\d+),\s*\{(.*?)\}\s*>>', open(log).read(), re.S):
        if int(m.group(1)) == best:
            reasons.append(frozenset(re.findall(r'"([^"]*)"', m.group(2))))
if reasons:
    matched = [r for r in reasons if not any(x.startswith("no ") and x.endswith(" step") for x in r)]
    if matched:
        common = frozenset.intersection(*matched)
        why = sorted(common) if common else sorted(frozenset.union(*matched))
    else:
        why = sorted(frozenset.union(*reasons))
    print(f"trace-check: REASON: {', '.join(why)} ({len(reasons)} stuck states)")
PY
else
  echo "trace-check: TLC failed without a verdict: $summary" >&2
  tail -20 "$tmp/tlc.log" >&2
  exit 2
fi
if [ -z "$expect" ]; then
  [ "$outcome" = accept ] && exit 0 || exit 1
fi
if [ "$outcome" = "$expect" ]; then exit 0; fi
echo "trace-check: expected the trace to be ${expect}ed" >&2
exit 1
