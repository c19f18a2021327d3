#!/usr/bin/env bash
# tools/genmc.sh -- build GenMC (MPI-SWS's stateless model checker for C11 programs) from a source
# folder you name, install it under a prefix, and print the version the installed binary reports.
#
#   GENMC_SRC=/path/to/genmc [PREFIX=/usr/local] [JOBS=2] [SKIP_APT=1] tools/genmc.sh
#
# GenMC is GPL-3.0 and in no package registry: get its source yourself (a checkout of
# https://github.com/MPI-SWS/genmc at tag v0.11.0, the version this script was written against) and
# point GENMC_SRC at it. Nothing of GenMC is copied into this repository; the build happens in
# GENMC_SRC itself.
#
# The default prefix /usr/local puts `genmc` on every user's PATH, so every checkout on the machine
# (CI's fresh clone included) runs the GenMC rows of `make verify`; without it those rows are reported
# as skipped, never as passed. `make setup` does not need GenMC; `make genmc` runs the models.
#
# Steps:
#   1. the Debian build dependencies (LLVM 16 and clang 16, autotools, libffi, zlib, libedit, hwloc)
#      via apt-get, unless SKIP_APT=1 (needs root);
#   2. autoreconf --install, then configure --with-llvm=/usr/lib/llvm-16 --prefix=$PREFIX. GenMC 0.11
#      asks for C++23 and Debian's autoconf-archive test for it fails with g++ 12 although the build
#      works, so the cached answer ax_cv_cxx_compile_cxx23__std_cpp23=yes is passed to configure;
#   3. make -j$JOBS (about 8 minutes on 2 cores) and make install.
set -euo pipefail

: "${GENMC_SRC:?set GENMC_SRC to a GenMC source checkout (https://github.com/MPI-SWS/genmc, tag v0.11.0)}"
PREFIX=${PREFIX:-/usr/local}
JOBS=${JOBS:-2}
LLVM=${LLVM:-/usr/lib/llvm-16}

[ -f "$GENMC_SRC/configure.ac" ] || {
  echo "tools/genmc.sh: $GENMC_SRC has no configure.ac; is it a GenMC source checkout?" >&2
  exit 2
}

if [ "${SKIP_APT:-0}" != 1 ]; then
  echo "== Debian build dependencies"
  as_root=""
  [ "$(id -u)" = 0 ] || as_root=sudo
  $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    llvm-16-dev clang-16 libclang-16-dev autoconf automake libtool make g++ \
    libffi-dev zlib1g-dev libedit-dev libhwloc-dev
fi

cd "$GENMC_SRC"
echo "== autoreconf"
autoreconf --install
echo "== configure (LLVM at $LLVM, prefix $PREFIX)"
./configure --with-llvm="$LLVM" --prefix="$PREFIX" ax_cv_cxx_compile_cxx23__std_cpp23=yes
echo "== make -j$JOBS"
make -j"$JOBS"
echo "== make install"
make install

echo "== installed: $PREFIX/bin/genmc"
"$PREFIX/bin/genmc" --version
