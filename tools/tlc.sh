#!/usr/bin/env bash
# tools/tlc.sh -- run TLC on one model, print its output, and end with one machine-readable line.
#
#   tools/tlc.sh MODEL.tla [CONFIG.cfg] [extra TLC arguments...]
#
# CONFIG defaults to MODEL.cfg next to MODEL.tla (TLC's own default). No -deadlock is passed:
# a spec whose behaviours may legitimately stop says CHECK_DEADLOCK FALSE in its cfg.
#
# The last line printed is always
#   TLC-SUMMARY {"status":"pass|fail","distinct":N,"generated":N,"depth":N,"seconds":S,"detail":"..."}
# status is "pass" iff TLC exits 0 and says "Model checking completed. No error has been found.";
# otherwise "fail" with detail = the first error TLC reported (invariant or property violated,
# deadlock, parse/semantic error, bad cfg, crash). Counts TLC did not print are null.
# Exit code: 0 on pass, 1 on fail, 2 on a usage error.
#
# Simulation mode: a cfg whose leading comment lines include
#   \* TLC-MODE: simulate depth=D traces=N seed=S
# is run in TLC's random simulation (-simulate num=N -depth D -seed S, one worker, so the traces
# are the seed's and the run is reproducible) instead of exhaustive model checking. It passes iff
# TLC exits 0 after its N traces of at most D states each with no error; the summary then also has
# "mode":"simulate","traces":N,"sim_depth":D,"seed":S, "distinct" and "depth" are null,
# "generated" is the number of states TLC checked, and the detail starts "simulation: ...", so the
# result never reads as an exhaustive one.
#
# Environment:
#   TLC_JAVA_OPTS   JVM options (default -XX:+UseParallelGC, which TLC asks for, and -Xss64m: the
#                   recursive history checks of specs/common overflow the default stack on longer
#                   histories; add e.g. -Xmx8g)
#   TLC_QUICK       1: the JVM compiles with C1 only (-XX:TieredStopAtLevel=1). For runs of a few
#                   seconds -- most mutant models and trace checks -- C2's compiler threads cost more
#                   CPU than they give back: a trace check took 6.2 s of CPU with both compilers
#                   and 3.2-3.7 s with C1 alone; but a 75-second model took 40% longer with C1 alone,
#                   so tools/verify.py sets it only for checks its last run timed under 10 s
#   TLC_WORKERS     TLC's -workers (default auto = one per core)
#   TLA_LIBRARY     extra ':'-separated folders to find EXTENDS/INSTANCE'd modules in
#
# Module lookup: besides the model's own folder, TLC searches specs/common, then every other
# folder under specs/ and traces/ that holds a .tla file (so specs/ptm/X.tla can EXTEND modules
# of specs/common, and a trace-validation spec under traces/ can EXTEND a protocol spec).
#
# TLC's working files (states/, the fingerprint set, the standard modules it unpacks) go to a
# fresh folder under out/tlc/ that is deleted afterwards, so nothing is left next to the specs.
set -euo pipefail

# shellcheck source=tools/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

usage() {
  echo "usage: tools/tlc.sh MODEL.tla [CONFIG.cfg] [extra TLC args...]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
case "$1" in -h | --help) usage ;; esac

abspath() { (cd "$(dirname "$1")" && echo "$(pwd)/$(basename "$1")"); }

model=$1
shift
[ -f "$model" ] || {
  echo "tools/tlc.sh: no such model file: $model" >&2
  exit 2
}
case "$model" in *.tla) ;; *)
  echo "tools/tlc.sh: the model must be a .tla file: $model" >&2
  exit 2
  ;;
esac
model=$(abspath "$model")
cfg=""
if [ $# -ge 1 ] && [[ "$1" == *.cfg ]]; then
  [ -f "$1" ] || {
    echo "tools/tlc.sh: no such config file: $1" >&2
    exit 2
  }
  cfg=$(abspath "$1")
  shift
elif [ -f "${model%.tla}.cfg" ]; then
  cfg="${model%.tla}.cfg"
fi

# The cfg's simulation directive (see the header), if any.
sim_traces="" sim_depth="" sim_seed=""
if [ -n "$cfg" ]; then
  directive=$(awk '/^[[:space:]]*$/ { next } !/^[[:space:]]*(\\\*|\(\*)/ { exit }
    /^[[:space:]]*\\\*[[:space:]]*TLC-MODE:/ { sub(/^[[:space:]]*\\\*[[:space:]]*TLC-MODE:[[:space:]]*/, ""); print; exit }' "$cfg")
  if [ -n "$directive" ]; then
    for word in $directive; do
      case "$word" in
      simulate) ;;
      depth=[0-9]*) sim_depth=${word#depth=} ;;
      traces=[0-9]*) sim_traces=${word#traces=} ;;
      seed=[0-9]*) sim_seed=${word#seed=} ;;
      *) sim_depth="" && break ;;
      esac
    done
    if [[ "$directive" != simulate* || ! "$sim_depth$sim_traces$sim_seed" =~ ^[0-9]+$ ||
      -z "$sim_depth" || -z "$sim_traces" || -z "$sim_seed" ]]; then
      echo "tools/tlc.sh: $cfg: malformed directive 'TLC-MODE: $directive'" \
        "(want 'TLC-MODE: simulate depth=D traces=N seed=S')" >&2
      echo 'TLC-SUMMARY {"status":"fail","distinct":null,"generated":null,"depth":null,"seconds":0,"detail":"malformed TLC-MODE directive in the cfg"}'
      exit 1
    fi
  fi
fi

if [ ! -s "$TLA_JAR" ]; then
  echo "tools/tlc.sh: TLC jar not found at $TLA_JAR -- run 'make setup' first." >&2
  echo 'TLC-SUMMARY {"status":"fail","distinct":null,"generated":null,"depth":null,"seconds":0,"detail":"TLC jar missing: run make setup"}'
  exit 1
fi

# Module search path (see the header).
libpath=""
add_lib() {
  [ -d "$1" ] || return 0
  case ":$libpath:" in *":$1:"*) ;; *) libpath="${libpath:+$libpath:}$1" ;; esac
}
[ -n "${TLA_LIBRARY:-}" ] && libpath="$TLA_LIBRARY"
add_lib "$PERDURE_ROOT/specs/common"
for top in specs traces; do
  [ -d "$PERDURE_ROOT/$top" ] || continue
  while IFS= read -r d; do add_lib "$d"; done < <(
    find "$PERDURE_ROOT/$top" -name '*.tla' -not -path '*/states/*' -printf '%h\n' | sort -u
  )
done

mkdir -p "$PERDURE_OUT/tlc"
run_dir=$(mktemp -d "$PERDURE_OUT/tlc/$(basename "${model%.tla}").XXXXXX")
trap 'rm -rf "$run_dir"' EXIT
log="$run_dir/tlc.out"

# shellcheck disable=SC2206 # TLC_JAVA_OPTS is a word list on purpose
java_opts=(${TLC_JAVA_OPTS:--XX:+UseParallelGC -Xss64m})
if [ "${TLC_QUICK:-}" = 1 ]; then
  java_opts+=(-XX:TieredStopAtLevel=1)
  echo "tools/tlc.sh: TLC_QUICK=1: the JVM compiles with C1 only"
fi
tlc_args=(-workers "${TLC_WORKERS:-auto}" -metadir "$run_dir/meta")
[ -n "$cfg" ] && tlc_args+=(-config "$cfg")
if [ -n "$sim_traces" ]; then
  tlc_args=(-workers 1 -metadir "$run_dir/meta" -config "$cfg"
    -simulate "num=$sim_traces" -depth "$sim_depth" -seed "$sim_seed")
fi

start=$(date +%s.%N)
set +e
# Run from the model's folder (TLC resolves relative paths from there). java.io.tmpdir: TLC
# unpacks its standard modules there; a private one keeps parallel runs apart.
(cd "$(dirname "$model")" &&
  exec java "${java_opts[@]}" -Djava.io.tmpdir="$run_dir" ${libpath:+"-DTLA-Library=$libpath"} \
    -cp "$TLA_JAR" tlc2.TLC "${tlc_args[@]}" "$@" "$(basename "$model")") 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
end=$(date +%s.%N)

# Parse TLC's output into the summary line (python3 for reliable JSON escaping).
python3 - "$log" "$rc" "$start" "$end" "$sim_traces" "$sim_depth" "$sim_seed" <<'PY'
import json, re, sys

log, rc, start, end = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
sim = {"traces": int(sys.argv[5]), "sim_depth": int(sys.argv[6]), "seed": int(sys.argv[7])} \
    if sys.argv[5] else None
lines = open(log, encoding="utf-8", errors="replace").read().splitlines()
text = "\n".join(lines)

def num(s):
    return int(s.replace(",", ""))

generated = distinct = depth = None
# Final statistics: "6 states generated, 6 distinct states found, 0 states left on queue."
for m in re.finditer(r"^([\d,]+) states generated, ([\d,]+) distinct states found", text, re.M):
    generated, distinct = num(m.group(1)), num(m.group(2))
m = re.search(r"The depth of the complete state graph search is ([\d,]+)", text)
if m:
    depth = num(m.group(1))
if generated is None:  # simulation mode words it differently
    m = re.search(r"The number of states generated: ([\d,]+)", text)
    if m:
        generated = num(m.group(1))

def first_error():
    # Parse errors: "***Parse Error***", then what SANY expected and what it found.
    if "***Parse Error***" in text:
        i = next(k for k, l in enumerate(lines) if "***Parse Error***" in l)
        what = [l.strip() for l in lines[i + 1:i + 6] if l.strip().startswith(("Encountered", "Was expecting"))]
        mod = re.search(r"Could not parse module (\S+)", text)
        return "parse error" + (f" in module {mod.group(1)}" if mod else "") + (": " + " ".join(what) if what else "")
    # Other fatal parser errors (e.g. a module not found): "*** Abort messages: N", a location, a message.
    if "*** Abort messages:" in text:
        i = next(k for k, l in enumerate(lines) if "*** Abort messages:" in l)
        rest = [l.strip() for l in lines[i + 1:i + 20] if l.strip()]
        msg = next((l for l in rest if l != "Unknown location" and not l.startswith(("In module", "line "))), "")
        if msg:
            return f"parse error: {msg}"
    # Semantic errors: "*** Errors: N", then a location line and the message.
    if "Semantic errors:" in text:
        i = next(k for k, l in enumerate(lines) if "Semantic errors:" in l)
        rest = [l.strip() for l in lines[i + 1:i + 20] if l.strip() and not l.startswith("***")]
        where = next((l for l in rest if l.startswith("line ")), "")
        msg = next((l for l in rest if not l.startswith("line ")), "")
        return f"semantic error: {msg}" + (f" ({where})" if where else "")
    # Everything else TLC reports as "Error: ..."; a message may continue on the next lines.
    for i, l in enumerate(lines):
        if l.startswith("Error: "):
            msg = [l[len("Error: "):].strip()]
            for c in lines[i + 1:i + 4]:
                if not c.strip() or c.startswith(("Error:", "State ", "Finished", "@!@!@")) or c[0].isdigit():
                    break
                msg.append(c.strip())
            return " ".join(msg)
    return None

if sim:
    # Simulation prints no "Model checking completed": it ends with "Finished in" after its
    # num=N traces, or reports an error (exit code 12 and "Error: ...").
    checked = re.findall(r"^Progress: ([\d,]+) states checked", text, re.M)
    if checked:
        generated = num(checked[-1])
    distinct = depth = None
    ok = rc == 0 and re.search(r"^Finished in ", text, re.M) is not None and first_error() is None
else:
    ok = rc == 0 and "Model checking completed. No error has been found." in text
if ok:
    detail = "no error found"
else:
    detail = first_error()
    if detail is None:
        tail = next((l.strip() for l in reversed(lines) if l.strip()), "no output")
        detail = f"TLC exited with code {rc}: {tail}" if rc != 0 else \
            "TLC exited 0 without reporting 'Model checking completed. No error has been found.'"
    elif rc == 0:
        detail += " (TLC exited 0)"
if sim:
    detail = (f"simulation: {sim['traces']} traces, depth {sim['sim_depth']}, seed {sim['seed']}; "
              + detail)
summary = {"status": "pass" if ok else "fail", "distinct": distinct, "generated": generated,
           "depth": depth, "seconds": round(end - start, 1), "detail": detail[:500]}
if sim:
    summary = {"mode": "simulate", **sim, **summary}
print("TLC-SUMMARY " + json.dumps(summary, separators=(",", ":")))
sys.exit(0 if ok else 1)
PY
