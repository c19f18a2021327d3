#!/bin/sh
# tools/rustc-cfg/cfg-wrapper.sh -- rustc with `--cfg NAME` for the workspace's crates only, where
# NAME is the name the script is called by: perdure_loom and perdure_shuttle are links to it.
#
#   RUSTC_WORKSPACE_WRAPPER=$PWD/tools/rustc-cfg/perdure_loom cargo test --release -p CRATE ...
#
# tools/verify.py builds the loom:* and shuttle:* checks this way rather than with
# RUSTFLAGS="--cfg NAME". Cargo runs the wrapper for the workspace members (and for its rustc
# queries, so their [target.'cfg(NAME)'.dependencies] apply) and counts the wrapper's path in
# their build hash (one link per cfg, so one hash per cfg): the dependencies are the plain
# release build's, compiled once into the one target directory, where the plain, loom and
# shuttle builds of each crate sit side by side.
exec "$@" --cfg "$(basename "$0")"
