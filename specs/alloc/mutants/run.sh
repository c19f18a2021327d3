#!/usr/bin/env bash
# specs/alloc/mutants/run.sh -- run every mutant model of ../Heap.tla and check that each one
# FAILS with the invariant its cfg names on its "EXPECTED RESULT: VIOLATION of X" line.
#
#   bash specs/alloc/mutants/run.sh [NAME...]     (default: every mutants/*.cfg)
#
# Prints one line per mutant: expected invariant, what TLC reported, the length of the
# counterexample trace and the distinct states found. Exit 0 iff every mutant failed as
# expected; 1 otherwise (a mutant that passes means the model can no longer see its mistake).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../../tools/env.sh
source "$here/../../../tools/env.sh"
[ -s "$TLA_JAR" ] || { echo "mutants/run.sh: TLC jar not found at $TLA_JAR (run make setup)" >&2; exit 1; }

if [ $# -gt 0 ]; then names=("$@"); else
  names=(); for f in "$here"/*.cfg; do names+=("$(basename "${f%.cfg}")"); done; fi

status=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for n in "${names[@]}"; do
  cfg="$here/$n.cfg"
  expected=$(sed -n 's/.*EXPECTED RESULT: VIOLATION of \([A-Za-z]*\).*/\1/p' "$cfg" | head -1)
  log="$work/$n.log"
  # the model: the cfg's "\* MODEL: ../X.tla" line (HeapInd*.cfg run HeapInd.tla, HeapInd2.tla), else Heap.tla
  model=$(sed -n 's|^\\\* MODEL: \.\./\([A-Za-z0-9]*\.tla\).*|\1|p' "$cfg" | head -1)
  (cd "$here/.." && java -XX:+UseParallelGC -Djava.io.tmpdir="$work" -cp "$TLA_JAR" tlc2.TLC \
      -workers "${TLC_WORKERS:-2}" -metadir "$work/$n.meta" -config "$cfg" "${model:-Heap.tla}") >"$log" 2>&1
  got=$(sed -n 's/^Error: Invariant \([A-Za-z]*\) is violated.*/\1/p' "$log" | head -1)
  trace=$(grep -c '^State [0-9]*:' "$log")
  states=$(sed -n 's/.* \([0-9,]*\) distinct states found.*/\1/p' "$log" | tail -1)
  if [ -n "$expected" ] && [ "$got" = "$expected" ]; then
    echo "ok    $n: $got violated as expected (trace of $trace states, $states distinct states)"
  else
    echo "FAIL  $n: expected a violation of '${expected:-?}', TLC reported '${got:-no violation}'"
    tail -5 "$log" | sed 's/^/      /'
    status=1
  fi
done
exit $status
