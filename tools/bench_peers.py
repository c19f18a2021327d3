#!/usr/bin/env python3
"""tools/bench_peers.py -- perdure against the published implementations, point by point (`make bench-peers`).

    python3 tools/bench_peers.py [--list] [--build-only] [POINT-FILTER...]

Builds the peers from their source folders and perdure's bench binaries, then runs every benchmark point
on both sides, interleaved (round r: perdure then the peer for even r, the peer then perdure for odd r),
one process per point and side, with the same sizes, key ranges, update ratios, hash-set buckets,
warm-up and `pwb` instruction. Prints a table (medians, spreads, ratio perdure/peer, `pwb` and `pfence`
per operation on both sides), writes `bench-peers.json` and `bench-peers.svg` (the ratios) into OUT.
docs/bench/peers.md describes every point, each known mismatch and the output. Python 3.11, standard
library only; not part of `make test`.

Environment (all optional; a peer whose source folder is not given is reported as skipped):
    REDODB_SRC     a checkout of pramalhe/RedoDB (its ptms/, pdatastructures/, common/)
    MEMENTO_SRC    a checkout of kaist-cp/memento with ext/pmdk-rs filled (the submodule, rleungx/pmdk-rs);
                   copied into BUILD and patched there (the checkout is not changed)
    SECS           seconds per point and side            (default 2)
    ROUNDS         interleaved rounds                    (default 3)
    THREADS        thread counts, comma separated        (default 1,2)
    ENGINES        from opt,timed,redo,cx,puc            (default all; puc runs the queue only)
    QUEUES         Memento's from vol,indel,cas,durable,log   (default all)
    PWB_SECS       seconds per point of the peers' counting builds (default 0.5; 0 skips that pass)
    PM_DIR         where both sides' pool files go       (default /dev/shm)
    OUT            results                               (default out/bench-peers)
    BUILD          the peers' build products             (default out/bench-peers/build)
    NICE           prefix of every build command, e.g. "nice -n 10"
    CXX            C++ compiler for the RedoDB driver     (default g++)
POINT-FILTER: substrings of point ids (`python3 tools/bench_peers.py --list` prints them), e.g. sps/1 hash1k.
Exit status: 0 when every point selected ran on both sides (or its peer was reported skipped), 1 when a
point failed or every selected point's peer was skipped, 2 on bad usage or a failed perdure build.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "tools" / "peers" / "redodb_point.cpp"

# perdure-ptm's construction names (PERDURE_BENCH_PTMS) -> (table name, RedoDB define, RedoDB source, PM file)
REDODB_ENGINES = {
    "opt": ("RedoOpt-PTM", "USE_REDOOPT", "ptms/redoopt/RedoOpt.cpp", "redoopt_shared"),
    "timed": ("RedoTimed-PTM", "USE_REDOTIMED", "ptms/redotimed/RedoTimed.cpp", "redotimed_shared"),
    "redo": ("Redo-PTM", "USE_REDO", "ptms/redo/Redo.cpp", "redo_shared"),
    "cx": ("CX-PTM", "USE_CXPTM", "ptms/cxptm/CXPTM.cpp", "cx_shared"),
    "puc": ("CX-PUC", "USE_CXPUC", "ptms/cxpuc/CXPUC.cpp", "cxpuc_shared"),
}
# perdure-memento's queue names -> Memento's bench target names
MEMENTO_QUEUES = {
    "vol": ("MSQ-mmt-vol", "memento_queue"),
    "indel": ("MSQ-mmt-indel", "memento_queue_lp"),
    "cas": ("MSQ-mmt-cas", "memento_queue_general"),
    "durable": ("DurableQ", "durable_queue"),
    "log": ("LogQ", "log_queue"),
}
# Memento's queue bench repins each thread's epoch guard every --relax pairs (default 10,000) inside one root
# operation per thread; perdure's MSQ-mmt points run as many pairs per root operation.
MEMENTO_ROOT_PAIRS = 10_000
# The buckets both hash sets have: RedoDB's TMHashMap grows at a load factor of 0.75 (1000 keys: 2048
# buckets), perdure's HashSet at 2 keys per bucket (1000 keys: 512); created with 2048, neither grows.
HASH_BUCKETS = 2048
# Iterations of the measured loop each worker runs before the clock starts, on both sides: a fresh Redo or
# CX replica is copied whole on its first use, which a short point would otherwise mostly measure.
WARMUP = {"sps": 2000, "queue": 2000, "set": 10_000}
POOL = ("pool: perdure sizes its replicas for the workload; RedoDB maps one file of its default PM_REGION_SIZE "
        "(2 GiB) and splits it among its replicas")


@dataclass
class Point:
    """One benchmark point, run on both sides."""
    pid: str              # e.g. "redodb/sps/1/opt/1T"
    peer: str             # "RedoDB" | "Memento"
    workload: str         # sps | queue | tree10k | hash1k | memento-queue
    param: str            # what the table shows
    engine: str           # perdure's construction (and the peer's of the same name)
    threads: int
    unit: str
    warmup: int           # iterations per thread before the clock, both sides
    perdure_env: dict
    peer_argv: list       # after the binary
    differs: list = field(default_factory=list)  # how the two sides differ at this point
    perdure: list = field(default_factory=list)  # rates per round
    peer_rates: list = field(default_factory=list)
    perdure_pwb: list = field(default_factory=list)
    perdure_pfence: list = field(default_factory=list)
    peer_pwb: float | None = None
    peer_pfence: float | None = None
    failures: list = field(default_factory=list)
    notes: list = field(default_factory=list)    # what was retried, and why


class Setup(Exception):
    """A build or configuration step that failed, with its reason."""


def env_list(name, default):
    return [x.strip() for x in os.environ.get(name, default).split(",") if x.strip()]


def run(cmd, *, cwd=None, env=None, log=None, timeout=None):
    """Runs cmd (a list); returns CompletedProcess, its output appended to log when given."""
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if log:
        with open(log, "a") as f:
            f.write(f"$ {' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}\n[exit {r.returncode}]\n")
    return r


def nice():
    return os.environ.get("NICE", "").split()


def pwb_instruction():
    """The instruction perdure's Pmem picks (clwb, else clflushopt): RedoDB's PWB_IS_* of the same."""
    flags = set()
    for line in open("/proc/cpuinfo"):
        if line.startswith("flags"):
            flags |= set(line.split(":", 1)[1].split())
    if "clwb" in flags:
        return "clwb", "CLWB"
    if "clflushopt" in flags:
        return "clflushopt", "CLFLUSHOPT"
    raise Setup("this CPU has neither clwb nor clflushopt; RedoDB's driver has no clflush build here")


# ---------------------------------------------------------------- builds

def cargo_bench_binary(package, bench, log):
    """Builds one of perdure's benches (cargo bench --no-run) and returns its executable."""
    cmd = nice() + ["cargo", "bench", "-p", package, "--bench", bench, "--no-run", "--message-format=json"]
    r = run(cmd, cwd=ROOT / "impl", log=log)
    if r.returncode != 0:
        raise Setup(f"perdure's {package} bench {bench} did not build (see {log})")
    for line in r.stdout.splitlines():
        try:
            m = json.loads(line)
        except json.JSONDecodeError:
            continue
        if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == bench:
            return m["executable"]
    raise Setup(f"cargo built {package}'s bench {bench} but named no executable (see {log})")


def build_redodb(src, build, pwb_define, pm_dir, engines, log):
    """One timing and one counting (-DMEASURE_PWB) binary per engine, from perdure's driver and RedoDB's
    headers and sources, unchanged. Returns {engine: (timing binary, counting binary)}."""
    src = Path(src)
    for need in ("common/ThreadRegistry.cpp", "pdatastructures/TMHashMap.hpp", "common/pfences.h"):
        if not (src / need).exists():
            raise Setup(f"REDODB_SRC={src} has no {need}: not a checkout of pramalhe/RedoDB")
    build.mkdir(parents=True, exist_ok=True)
    cxx = os.environ.get("CXX", "g++")
    bins = {}
    for e in engines:
        _, define, source, pm_file = REDODB_ENGINES[e]
        pair = []
        for variant, extra in (("", []), ("-count", ["-DMEASURE_PWB"])):
            out = build / f"redodb-{e}{variant}"
            stamp = out.with_suffix(".cmd")
            cmd = [cxx, "-std=c++14", "-O3", "-g", f"-DPWB_IS_{pwb_define}",
                            f'-DPM_FILE_NAME="{pm_dir}/perdure-peers-{pm_file}"', f"-D{define}",
                            f"-DPERDURE_HASH_BUCKETS={HASH_BUCKETS}", *extra, f"-I{src}", f"-I{src}/ptms",
                            str(src / "common/ThreadRegistry.cpp"), str(src / source), str(DRIVER),
                            "-o", str(out), "-lpthread"]
            key = " ".join(cmd) + f" driver-mtime={DRIVER.stat().st_mtime}"
            if not (out.exists() and stamp.exists() and stamp.read_text() == key):
                print(f"  building {out.name}", flush=True)
                r = run(nice() + cmd, log=log)
                if r.returncode != 0:
                    raise Setup(f"RedoDB {e}{variant} did not build (see {log})")
                stamp.write_text(key)
            pair.append(str(out))
        bins[e] = tuple(pair)
    return bins


def build_memento(src, build, pwb_name, log):
    """Copies MEMENTO_SRC into BUILD/memento, applies the local build patches (docs/bench/peers.md), builds
    Memento's queue bench with the nightly toolchain, once for timing and once with the counting feature the
    patches add; returns (timing executable, counting executable)."""
    src = Path(src)
    if not (src / "evaluation/performance/queue/Cargo.toml").exists():
        raise Setup(f"MEMENTO_SRC={src} has no evaluation/performance/queue: not a checkout of kaist-cp/memento")
    if not (src / "ext/pmdk-rs/pmemobj-sys/build.rs").exists():
        raise Setup(f"MEMENTO_SRC={src}: ext/pmdk-rs is empty (git submodule update --init, or clone "
                    "rleungx/pmdk-rs at the commit the submodule names)")
    for pkg in ("libpmemobj-dev", "libclang-dev"):
        if shutil.which("dpkg") and run(["dpkg", "-s", pkg]).returncode != 0:
            raise Setup(f"{pkg} is not installed (apt-get install {pkg}): Memento's pmemobj-sys needs it")
    if run(["rustup", "run", "nightly", "rustc", "--version"]).returncode != 0:
        raise Setup("no nightly toolchain (rustup toolchain install nightly): Memento needs unstable features")
    dst = build / "memento"
    binary = dst / "evaluation/performance/queue/target/release/bench"
    stamp = f"patched by tools/bench_peers.py, patches {MEMENTO_PATCHES}, pwb {pwb_name}, from {src.resolve()}\n"
    if not (dst / ".perdure-patched").exists() or (dst / ".perdure-patched").read_text() != stamp:
        keep = build / "memento-target"  # the bench's cargo target/, kept across a fresh copy
        if (dst / "evaluation/performance/queue/target").exists() and not keep.exists():
            shutil.move(dst / "evaluation/performance/queue/target", keep)
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(".git", "target"))
        patch_memento(dst, log)
        if pwb_name != "clwb":  # Memento's default feature is use_clwb; the same instruction as perdure's
            sub(dst / "Cargo.toml", 'default = ["use_clwb"]', f'default = ["use_{pwb_name}"]')
        if keep.exists():
            shutil.move(keep, dst / "evaluation/performance/queue/target")
        (dst / ".perdure-patched").write_text(stamp)
    qdir = dst / "evaluation/performance/queue"
    env = dict(os.environ, RUSTFLAGS="--cap-lints=warn")
    env.pop("CARGO_TARGET_DIR", None)  # the bench's own target/, not perdure's
    outs = []
    for variant, features in (("", []), ("-count", ["--features", "perdure_count"])):
        out = build / f"memento-bench{variant}"
        print(f"  building {out.name} (cargo +nightly build --release{''.join(' ' + f for f in features)})",
              flush=True)
        r = run(nice() + ["cargo", "+nightly", "build", "--release", "--bin", "bench", *features], cwd=qdir, env=env,
                log=log)
        if r.returncode != 0 or not binary.exists():
            tail = (r.stderr.strip().splitlines() or ["?"])[-1]
            raise Setup(f"Memento's queue bench{variant} did not build: {tail} (see {log})")
        shutil.copy2(binary, out)
        outs.append(str(out))
    return tuple(outs)


# Bumped whenever patch_memento changes, so that a build folder patched by an older runner is copied again.
MEMENTO_PATCHES = 3


def sub(path, old, new, count=1):
    """Replaces old by new in path; a patch that no longer applies is an error, not a silent no-op."""
    text = path.read_text()
    if old not in text:
        raise Setup(f"Memento patch: {path} no longer contains {old[:60]!r}")
    path.write_text(text.replace(old, new, count))


def patch_memento(dst, log):
    """The local build patches (docs/bench/peers.md lists why each is needed). None changes a queue."""
    pmdk = dst / "ext/pmdk-rs"
    r = run(["patch", "-p1", "-i", str(dst / "ext/pmdk-rs.patch")], cwd=pmdk, log=log)
    if r.returncode != 0:
        raise Setup(f"Memento's ext/pmdk-rs.patch does not apply (see {log})")
    build_rs = pmdk / "pmemobj-sys/build.rs"
    sub(build_rs, 'pmdk_builder::build_lib("libpmemobj");', "// perdure bench-peers: the system's libpmemobj")
    sub(build_rs, 'println!("cargo:rustc-link-search={}", lib_path.as_path().display());',
        'let _ = lib_path; println!("cargo:rustc-link-lib=pmemobj");')
    sub(dst / "ext/ralloc/src/pm_config.hpp", "/* SHM_SIMULATING switches to compatible mode",
        "#define SHM_SIMULATING 1 /* perdure bench-peers: tmpfs has no MAP_SYNC */\n"
        "/* SHM_SIMULATING switches to compatible mode")
    sub(dst / "src/test_utils.rs", "std::rt::panic_count::increase();", "std::rt::panic_count::increase(false);")
    q = dst / "evaluation/performance/queue"
    sub(q / "Cargo.toml", 'corundum = { git = "https://github.com/NVSL/Corundum.git", rev = "20fc95d" }', "")
    sub(q / "Cargo.toml", 'no_persist = ["memento/no_persist", "corundum/no_persist"]',
        'no_persist = ["memento/no_persist"]')
    sub(q / "src/lib.rs", "pub mod crndm;\n", "")
    common = q / "src/common.rs"
    sub(common, "    use corundum::default::*;\n    use corundum::open_flags::{O_128GB, O_CF};\n", "")
    sub(common, "        crndm::*,\n", "")
    sub(common, "pub const FILE_SIZE: usize = 128 * 1024 * 1024 * 1024;",
        "pub const FILE_SIZE: usize = 8 * 1024 * 1024 * 1024; // perdure bench-peers: was 128 GiB")
    text = common.read_text()
    i = text.find("            TestTarget::CorundumQueue(kind) => {")
    if i < 0:
        raise Setup(f"Memento patch: {common} has no CorundumQueue arm")
    j = text.index("        }\n    }\n}", i)
    common.write_text(text[:i] + '            TestTarget::CorundumQueue(_) => unimplemented!("corundum removed"),\n'
                      + text[j:])
    # The counting build (feature perdure_count): every cache line Memento's ll::clflush writes back and every
    # ll::sfence, in two global counters (relaxed adds: this build is not timed), printed by the bench's main.
    sub(dst / "Cargo.toml", "[features]\n", "[features]\nperdure_count = []\n")
    sub(q / "Cargo.toml", "[features]\n", '[features]\nperdure_count = ["memento/perdure_count"]\n')
    ll = dst / "src/pmem/ll.rs"
    sub(ll, "                cur += 1 << CACHE_LINE_SHIFT;\n",
        "                #[cfg(feature = \"perdure_count\")]\n"
        "                PERDURE_PWB.fetch_add(1, std::sync::atomic::Ordering::Relaxed);\n"
        "                cur += 1 << CACHE_LINE_SHIFT;\n")
    sub(ll, "pub fn sfence() {\n", "pub fn sfence() {\n    #[cfg(feature = \"perdure_count\")]\n"
        "    PERDURE_FENCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);\n")
    ll.write_text(ll.read_text() + "\n/// perdure bench-peers' counting build: cache lines written back, store fences.\n"
                  "pub static PERDURE_PWB: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);\n"
                  "/// See PERDURE_PWB.\n"
                  "pub static PERDURE_FENCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);\n")
    sub(common, "    pool_handle.execute::<O, M>();\n",  # the pool's creation is not counted, only the run
        '    #[cfg(feature = "perdure_count")]\n    {\n'
        '        memento::pmem::ll::PERDURE_PWB.store(0, std::sync::atomic::Ordering::Relaxed);\n'
        '        memento::pmem::ll::PERDURE_FENCE.store(0, std::sync::atomic::Ordering::Relaxed);\n    }\n'
        '    pool_handle.execute::<O, M>();\n')
    sub(q / "src/main.rs", '    println!("avg ops: {}", avg_ops);\n',
        '    println!("avg ops: {}", avg_ops);\n    #[cfg(feature = "perdure_count")]\n'
        '    println!("perdure-count: pairs {} pwb {} fence {}", nops, '
        'memento::pmem::ll::PERDURE_PWB.load(std::sync::atomic::Ordering::Relaxed), '
        'memento::pmem::ll::PERDURE_FENCE.load(std::sync::atomic::Ordering::Relaxed));\n')


# ---------------------------------------------------------------- points

def make_points(threads, engines, queues):
    pts = []
    ptm_engines = [e for e in engines if e != "puc"]
    sps_warm, queue_warm, set_warm = WARMUP["sps"], WARMUP["queue"], WARMUP["set"]
    for swaps in (1, 16):
        for e in ptm_engines:
            for t in threads:
                pts.append(Point(f"redodb/sps/{swaps}/{e}/{t}T", "RedoDB", "sps", f"{swaps} swap{'s' if swaps > 1 else ''}/tx",
                                 e, t, "swaps/s", sps_warm,
                                 dict(PERDURE_BENCH_ONLY="sps", PERDURE_BENCH_PTMS=e, PERDURE_BENCH_SWAPS=str(swaps)),
                                 ["sps", str(t), None, str(sps_warm), str(swaps)],
                                 [POOL, "SPS indices: RedoDB's closure derives them from a captured seed (it may be "
                                  "run again), perdure's captures the drawn list"]))
    for e in engines:
        for t in threads:
            pts.append(Point(f"redodb/queue/{e}/{t}T", "RedoDB", "queue", "enq-deq, 1000 pre-filled", e, t, "tx/s",
                             queue_warm, dict(PERDURE_BENCH_ONLY="queue", PERDURE_BENCH_PTMS=e),
                             ["queue", str(t), None, str(queue_warm), "1000"],
                             [POOL] + (["pre-fill: CX-PUC's 1000 values are 1000 updates on RedoDB's side "
                                        "(no batch interface), one transaction on perdure's"] if e == "puc" else [])))
    for w, label, keys, pct, bucket in (("tree10k", "RB tree 10^4 keys, 10% updates", 10_000, 10, None),
                                        ("hash1k", "hash set 10^3 keys, 1% updates", 1_000, 1, HASH_BUCKETS)):
        kind = "tree" if w == "tree10k" else "hash"
        for e in ptm_engines:
            for t in threads:
                env = dict(PERDURE_BENCH_ONLY=w, PERDURE_BENCH_PTMS=e)
                differs = [POOL, "nodes: perdure's is a set (a key per node); RedoDB's class is a map (key and value)"]
                if bucket:
                    env["PERDURE_BENCH_HASH_BUCKETS"] = str(bucket)
                    differs.append(f"hash: both {bucket} buckets; perdure hashes the key (mixing), RedoDB uses "
                                   "std::hash (identity), so RedoDB's keys 0..999 never share a bucket")
                pts.append(Point(f"redodb/{w}/{e}/{t}T", "RedoDB", w, label, e, t, "tx/s", set_warm, env,
                                 [kind, str(t), None, str(set_warm), str(keys), str(pct)], differs))
    for q in queues:
        name, target = MEMENTO_QUEUES[q]
        for t in threads:
            pts.append(Point(f"memento/{q}/{t}T", "Memento", "memento-queue", "enq-deq pairs, empty", name, t,
                             "ops/s", 0,
                             dict(PERDURE_BENCH_ONLY=f"{name}/pairs", PERDURE_BENCH_PREFILL="0",
                                  PERDURE_BENCH_ROOT_PAIRS=str(MEMENTO_ROOT_PAIRS)),
                             ["-a", target, "-k", "pair", "-t", str(t), "-i", "0", "-r", str(MEMENTO_ROOT_PAIRS)],
                             ["warm-up: none on either side (Memento's bench has no warm-up)"]
                             + ([f"root operations: Memento's threads each run one root operation for the whole run, "
                                 f"reusing one enqueue and one dequeue memento, and repin their epoch guard every "
                                 f"{MEMENTO_ROOT_PAIRS:,} pairs (-r); perdure's MSQ-mmt runs {MEMENTO_ROOT_PAIRS:,} "
                                 f"pairs per root operation (PERDURE_BENCH_ROOT_PAIRS) as a detectable loop, whose "
                                 f"index it checkpoints at every pair (Memento's loop is not recoverable)"]
                                if name.startswith("MSQ-mmt") else []) + [
                              "clock: Memento's threads meet at a barrier, each then runs for the duration from its "
                              "own start, and the rate is their operations / the duration; perdure's stop together "
                              "at a flag and the rate is their operations / the longest thread's time",
                              "counts: Memento's are the lines its ll::clflush writes back and its ll::sfence "
                              "calls (a patched counting build); Ralloc's own flushes are not counted, perdure's "
                              "heap's are"]))
    return pts


# ---------------------------------------------------------------- runs

PTM_ROW = re.compile(r"^(SPS|queue|tree|hash)\s+(.+?)\s+(\d+)\s+(\S+)\s+(\d+)\s+([\d.]+)([MK])\s+\S+/s\s+"
                     r"([\d.]+)\s+([\d.]+)\s+([\d.]+)")
MEMENTO_ROW = re.compile(r"^(\S+) enqueue-dequeue (\d+)T: ([\d.]+) M ops/s, ([\d.]+) pwb/op, ([\d.]+) pfence/op")


def run_perdure(p, binaries, secs, pm_dir, log):
    env = dict(os.environ, PERDURE_BENCH_DIR=pm_dir, PERDURE_BENCH_THREADS=str(p.threads),
               PERDURE_BENCH_SECS=str(secs), PERDURE_BENCH_WARMUP=str(p.warmup))
    env.update({k: v for k, v in p.perdure_env.items() if v is not None})
    binary = binaries["memento" if p.peer == "Memento" else "ptm"]
    r = run([binary, "--bench"], env=env, log=log, timeout=300 + 4 * secs)
    for line in r.stdout.splitlines():
        if p.peer == "Memento":
            m = MEMENTO_ROW.match(line)
            if m and m[1] == p.engine and int(m[2]) == p.threads:
                return float(m[3]) * 1e6, float(m[4]), float(m[5])
        else:
            m = PTM_ROW.match(line)
            if m and m[4] == REDODB_ENGINES[p.engine][0] and int(m[5]) == p.threads:
                rate = float(m[6]) * (1e6 if m[7] == "M" else 1e3)
                # RedoDB counts PFENCE and PSYNC in one counter: perdure's pfence + psync against it
                return rate, float(m[8]), float(m[9]) + float(m[10])
    p.failures.append(f"perdure exit {r.returncode}, no row (see {log})")
    return None


def run_redodb(p, bins, secs, pm_dir, log, counting=False):
    binary = bins[p.engine][1 if counting else 0]
    pm_file = Path(pm_dir) / f"perdure-peers-{REDODB_ENGINES[p.engine][3]}"
    argv = [binary] + [str(secs) if a is None else a for a in p.peer_argv]
    for attempt in range(3):
        try:
            pm_file.unlink(missing_ok=True)
            r = run(argv, log=log, timeout=300 + 4 * secs)
        finally:
            pm_file.unlink(missing_ok=True)
        # RedoDB maps its file at a fixed address given as a hint; when the process already has something
        # there, its constructor aborts before any transaction ("mmap() is not working"). Run it again.
        if r.returncode >= 0 or "mmap() is not working" not in r.stderr:
            break
        p.notes.append(f"RedoDB's fixed-address mmap was refused (attempt {attempt + 1}); run again")
    for line in r.stdout.splitlines():
        x = line.split()
        if x[:1] == ["RESULT"]:
            return float(x[2]), float(x[3]), float(x[4])
    p.failures.append(f"RedoDB exit {r.returncode}, no RESULT (see {log})")
    return None


def run_memento(p, binaries, secs, pm_dir, out, log, counting=False):
    """The point's rate in operations/s; with counting, (rate, pwb/op, fence/op) from the counting build."""
    pool = Path(pm_dir) / "perdure-peers-memento.pool"
    argv = [binaries[1 if counting else 0], "-f", str(pool), "-d", str(secs), "-o", str(out / "memento-raw.csv")] + p.peer_argv
    try:
        r = run(argv, log=log, timeout=300 + 4 * secs)
    finally:
        for f in Path(pm_dir).glob(pool.name + "*"):  # Ralloc leaves <pool>_basemd, _desc, _sb
            f.unlink()
    m = re.search(r"avg ops: ([\d.e+]+)", r.stdout)
    if not m:
        p.failures.append(f"Memento exit {r.returncode}, no 'avg ops' (see {log})")
        return None
    rate = 2 * float(m[1])  # Memento counts an enqueue-dequeue pair as one op; perdure as two
    if not counting:
        return rate
    c = re.search(r"perdure-count: pairs (\d+) pwb (\d+) fence (\d+)", r.stdout)
    if not c or int(c[1]) == 0:
        p.failures.append(f"Memento's counting build printed no counts (see {log})")
        return None
    ops = 2 * int(c[1])
    return rate, int(c[2]) / ops, int(c[3]) / ops


# ---------------------------------------------------------------- report

def med(v):
    return statistics.median(v) if v else None


def spread(v):
    """(max - min) / median over the rounds, the table's "spread"."""
    return (max(v) - min(v)) / statistics.median(v) if len(v) > 1 and statistics.median(v) else None


def ratio(p):
    a, b = med(p.perdure), med(p.peer_rates)
    return a / b if a and b else None


def human(x):
    if x is None:
        return "-"
    return f"{x / 1e6:.3f}M" if x >= 1e6 else f"{x / 1e3:.1f}K"


def pct(x):
    return "-" if x is None else f"{100 * x:.0f}%"


def num(x, fmt=".2f"):
    return "-" if x is None else format(x, fmt)


def table(points):
    lines = ["| point | workload | perdure | peer | thr | perdure median (spread) | peer median (spread) | ratio "
             "| pwb/op perdure | pwb/op peer | pfence/op perdure | pfence/op peer |",
             "|" + "---|" * 12]
    for p in points:
        peer_name = f"{p.peer} {REDODB_ENGINES[p.engine][0]}" if p.peer == "RedoDB" else \
            f"Memento {MEMENTO_QUEUES[p.pid.split('/')[1]][1]}"
        lines.append(
            f"| {p.pid} | {p.param} | {REDODB_ENGINES[p.engine][0] if p.peer == 'RedoDB' else p.engine} "
            f"| {peer_name} | {p.threads} | {human(med(p.perdure))} ({pct(spread(p.perdure))}) "
            f"| {human(med(p.peer_rates))} ({pct(spread(p.peer_rates))}) | {num(ratio(p))} "
            f"| {num(med(p.perdure_pwb))} | {num(p.peer_pwb)} | {num(med(p.perdure_pfence))} | {num(p.peer_pfence)} |")
    return "\n".join(lines)


def svg(points, title):
    """The ratios as horizontal bars on a log axis (1 = as fast; right of 1: perdure faster)."""
    rows = [(p.pid, ratio(p)) for p in points]
    lo, hi = 1 / 8, 8
    for _, r in rows:
        if r:
            lo, hi = min(lo, r / 1.2), max(hi, r * 1.2)
    left, width, bar, top = 250, 520, 16, 50
    height = top + bar * len(rows) + 60
    x = lambda r: left + width * (math.log(r) - math.log(lo)) / (math.log(hi) - math.log(lo))
    esc = lambda s: s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 60}" height="{height}" '
           'font-family="sans-serif" font-size="11">',
           f'<rect width="100%" height="100%" fill="white"/>',
           f'<text x="10" y="20" font-size="14">{esc(title)}</text>',
           f'<text x="{left}" y="38">perdure / peer, median throughput (log scale; right of 1: perdure faster)</text>']
    tick = 1 / 8
    while tick <= hi * 1.0001:
        if tick >= lo:
            tx = x(tick)
            out.append(f'<line x1="{tx:.1f}" y1="{top}" x2="{tx:.1f}" y2="{top + bar * len(rows)}" '
                       f'stroke="{"black" if tick == 1 else "#ddd"}"/>')
            out.append(f'<text x="{tx:.1f}" y="{top + bar * len(rows) + 14}" text-anchor="middle">{tick:g}</text>')
        tick *= 2
    for i, (pid, r) in enumerate(rows):
        y = top + i * bar
        out.append(f'<text x="{left - 6}" y="{y + bar - 4}" text-anchor="end">{esc(pid)}</text>')
        if r is None:
            out.append(f'<text x="{x(1) + 4:.1f}" y="{y + bar - 4}" fill="#a00">no ratio</text>')
            continue
        x0, x1 = sorted((x(1), x(r)))
        colour = "#2a7" if r >= 1 else "#c53"
        out.append(f'<rect x="{x0:.1f}" y="{y + 2}" width="{max(x1 - x0, 1):.1f}" height="{bar - 4}" fill="{colour}"/>')
        out.append(f'<text x="{x1 + 4:.1f}" y="{y + bar - 4}">{r:.2f}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- main

def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    flags = {a for a in argv if a.startswith("--")}
    if flags - {"--list", "--build-only"}:
        print(__doc__)
        return 2
    secs = float(os.environ.get("SECS", "2"))
    rounds = int(os.environ.get("ROUNDS", "3"))
    threads = [int(t) for t in env_list("THREADS", "1,2")]
    engines = env_list("ENGINES", "opt,timed,redo,cx,puc")
    queues = env_list("QUEUES", "vol,indel,cas,durable,log")
    bad = [e for e in engines if e not in REDODB_ENGINES] + [q for q in queues if q not in MEMENTO_QUEUES]
    if bad:
        print(f"bench-peers: unknown ENGINES/QUEUES names {bad}", file=sys.stderr)
        return 2
    pm_dir = os.environ.get("PM_DIR", "/dev/shm")
    out = Path(os.environ.get("OUT", ROOT / "out/bench-peers"))
    build = Path(os.environ.get("BUILD", out / "build"))
    out.mkdir(parents=True, exist_ok=True)
    log_dir = out / "logs"
    log_dir.mkdir(exist_ok=True)

    points = [p for p in make_points(threads, engines, queues) if not args or any(a in p.pid for a in args)]
    if "--list" in flags:
        print("\n".join(p.pid for p in points))
        return 0
    if not points:
        print(f"bench-peers: no point matches {args}", file=sys.stderr)
        return 2

    skipped = {}
    pwb_name, pwb_define = pwb_instruction()
    print(f"bench-peers: pwb = {pwb_name} on both sides; pool files in {pm_dir}; {secs} s per point and side, "
          f"{rounds} rounds; threads {threads}", flush=True)
    blog = log_dir / "build.log"
    blog.write_text("")
    try:
        binaries = {}
        if any(p.peer == "RedoDB" for p in points):
            binaries["ptm"] = cargo_bench_binary("perdure-ptm", "ptm", blog)
        if any(p.peer == "Memento" for p in points):
            binaries["memento"] = cargo_bench_binary("perdure-memento", "queues", blog)
    except Setup as e:
        print(f"bench-peers: {e}", file=sys.stderr)
        return 2
    redodb_bins, memento_bins = {}, None
    if any(p.peer == "RedoDB" for p in points):
        try:
            if not os.environ.get("REDODB_SRC"):
                raise Setup("REDODB_SRC is not set (a checkout of pramalhe/RedoDB)")
            redodb_bins = build_redodb(os.environ["REDODB_SRC"], build, pwb_define, pm_dir,
                                       sorted({p.engine for p in points if p.peer == "RedoDB"}), blog)
        except Setup as e:
            skipped["RedoDB"] = str(e)
    if any(p.peer == "Memento" for p in points):
        try:
            if not os.environ.get("MEMENTO_SRC"):
                raise Setup("MEMENTO_SRC is not set (a checkout of kaist-cp/memento with ext/pmdk-rs)")
            memento_bins = build_memento(os.environ["MEMENTO_SRC"], build, pwb_name, blog)
        except Setup as e:
            skipped["Memento"] = str(e)
    for peer, why in skipped.items():
        print(f"bench-peers: SKIPPED {peer}: {why}", flush=True)
    if "--build-only" in flags:
        return 1 if skipped else 0
    points = [p for p in points if p.peer not in skipped]
    if not points:
        print("bench-peers: every selected point's peer was skipped; nothing was measured", file=sys.stderr)
        return 1

    t0 = time.time()
    for rnd in range(rounds):
        for p in points:
            log = log_dir / (p.pid.replace("/", "_") + ".log")
            if rnd == 0:
                log.write_text("")

            def perdure_side():
                r = run_perdure(p, binaries, secs, pm_dir, log)
                if r:
                    p.perdure.append(r[0])
                    p.perdure_pwb.append(r[1])
                    p.perdure_pfence.append(r[2])

            def peer_side():
                if p.peer == "RedoDB":
                    r = run_redodb(p, redodb_bins, secs, pm_dir, log)
                    if r:
                        p.peer_rates.append(r[0])
                else:
                    r = run_memento(p, memento_bins, secs, pm_dir, out, log)
                    if r:
                        p.peer_rates.append(r)

            for side in ((perdure_side, peer_side) if rnd % 2 == 0 else (peer_side, perdure_side)):
                side()
            print(f"  round {rnd + 1}/{rounds} {p.pid}: perdure {human(p.perdure[-1] if p.perdure else None)} "
                  f"peer {human(p.peer_rates[-1] if p.peer_rates else None)} ({time.time() - t0:.0f} s)", flush=True)
    pwb_secs = float(os.environ.get("PWB_SECS", "0.5"))
    if pwb_secs > 0:
        for p in points:
            log = log_dir / (p.pid.replace("/", "_") + ".log")
            if p.peer == "RedoDB":
                r = run_redodb(p, redodb_bins, pwb_secs, pm_dir, log, counting=True)
            else:
                r = run_memento(p, memento_bins, pwb_secs, pm_dir, out, log, counting=True)
            if r:
                p.peer_pwb, p.peer_pfence = r[1], r[2]

    print()
    print(table(points))
    print()
    differs = {}
    for p in points:
        for d in p.differs:
            differs.setdefault(d, []).append(p.pid)
    print("How the sides differ (docs/bench/peers.md has the full list):")
    for d, pids in differs.items():
        print(f"  - {d}  [{len(pids)} point{'s' if len(pids) > 1 else ''}]")
    for p in points:
        for n in p.notes:
            print(f"note {p.pid}: {n}")
    for peer, why in skipped.items():
        print(f"SKIPPED {peer}: {why}")
    rs = [ratio(p) for p in points if ratio(p)]
    if rs:
        print(f"geometric mean of the ratios over {len(rs)} points: "
              f"{math.exp(sum(map(math.log, rs)) / len(rs)):.2f}; perdure ahead on {sum(r > 1 for r in rs)}")

    perdure_rev = run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]).stdout.strip()
    revs = {"perdure": perdure_rev}
    for peer, var in (("RedoDB", "REDODB_SRC"), ("Memento", "MEMENTO_SRC")):
        if os.environ.get(var):
            revs[peer] = run(["git", "-C", os.environ[var], "rev-parse", "--short", "HEAD"]).stdout.strip() or None
    meta = dict(date=time.strftime("%Y-%m-%d %H:%M:%S"), secs_per_point=secs, rounds=rounds, threads=threads,
                pwb=pwb_name, pm_dir=pm_dir, revisions=revs, skipped=skipped, nproc=os.cpu_count(),
                cpu=next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?"),
                load_before=os.getloadavg(),
                order="per round and point: perdure then the peer (even rounds), the peer then perdure (odd rounds)")
    rows = [dict(point=p.pid, peer=p.peer, workload=p.workload, param=p.param,
                 construction=REDODB_ENGINES[p.engine][0] if p.peer == "RedoDB" else p.engine,
                 threads=p.threads, unit=p.unit, warmup_per_thread=p.warmup,
                 perdure_runs=p.perdure, peer_runs=p.peer_rates, perdure_median=med(p.perdure),
                 peer_median=med(p.peer_rates), perdure_spread=spread(p.perdure), peer_spread=spread(p.peer_rates),
                 ratio=ratio(p), perdure_pwb_per_op=med(p.perdure_pwb), perdure_pfence_per_op=med(p.perdure_pfence),
                 peer_pwb_per_op=p.peer_pwb, peer_pfence_per_op=p.peer_pfence, differs=p.differs,
                 failures=p.failures, notes=p.notes) for p in points]
    (out / "bench-peers.json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1) + "\n")
    (out / "bench-peers.svg").write_text(svg(points, f"perdure {perdure_rev} against its peers, "
                                                     f"{secs} s x {rounds} rounds, {pwb_name}"))
    print(f"wrote {out / 'bench-peers.json'} and {out / 'bench-peers.svg'} (logs in {log_dir})")
    failed = [p for p in points if p.failures]
    for p in failed:
        print(f"FAILED {p.pid}: {'; '.join(p.failures)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
