#!/usr/bin/env python3
"""tools/verify.py -- run every check the tree has, print a report, write out/verify.json.

`make verify` (and `make test`, CI's entry point) run this after tools/setup.sh. Python 3.11,
standard library only.

    python3 tools/verify.py [--list] [FILTER...]

FILTER keeps only the checks whose name contains one of the given strings (e.g. `tlc:` or
`cargo:test`); --list prints the checks it would run and exits.

Environment:
    DEPTH=ci|deep      which configurations to run (default ci); also passed to cargo tests as
                       PERDURE_DEPTH so they can scale what they explore.
    VERIFY_TIMEOUT     per-check time limit in seconds (default 2400 = 40 min); a check that
                       runs out of time is reported as fail.
    VERIFY_VERBOSE=1   also echo every check's output live (it always goes to its log file).
    VERIFY_LANES       how many checks of the kinds tlc, trace, genmc, loom, explore (shuttle:*),
                       coq, docs, layers and mutants run at once (default 2 on a machine with 2
                       or more cores, else 1), the longest first by the last run's times
                       (.cache/verify-check-seconds.json; in a fresh clone those of
                       tools/verify-seconds.json);
                       with more than one lane each TLC runs one worker (TLC_WORKERS=1, unless
                       set), so the lanes share the cores instead of each TLC's workers waiting
                       on the other's. A row's seconds are then its wall-clock time beside
                       another check.
    VERIFY_TEST_LANES  how many test binaries of one cargo test check (cargo:test, loom:*,
                       shuttle:*) run at once (default VERIFY_LANES); 1 runs plain `cargo test`.

What is checked, each only when its inputs exist (a missing input means the check is absent,
not failed; a tool that is genuinely unavailable makes it "skip", with the reason, never "pass"):

    cargo:fmt      impl/Cargo.toml       cargo fmt --all --check
    cargo:clippy   impl/Cargo.toml       cargo clippy --workspace --all-targets --release -- -D warnings
    cargo:doc      impl/Cargo.toml       RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
    cargo:test     impl/Cargo.toml       cargo test --workspace --release --no-fail-fast -- --nocapture
                   (built with --no-run, its test binaries then run VERIFY_TEST_LANES at a time)
    loom:<crate>   impl/**/tests/loom_*.rs     the same, one crate at a time, with --cfg perdure_loom
                   for the workspace's crates (RUSTC_WORKSPACE_WRAPPER=tools/rustc-cfg/perdure_loom:
                   the dependencies are cargo:test's, in its target directory), one --test per file,
                   LOOM_MAX_PREEMPTIONS=3 under DEPTH=ci (deep: whatever the environment says,
                   i.e. unbounded unless set). <crate> is the package name without "perdure-".
    shuttle:<crate> impl/**/tests/shuttle_*.rs  likewise with --cfg perdure_shuttle (tools/rustc-cfg/)
    trace:<dir>/<case> traces/**/checks.json  record an implementation trace with `perdure`, replay it
                   in TLC with tools/trace-check.sh; passes if accepted/rejected as the case expects
    tlc:<path>     specs/**/<path>.cfg   TLC through tools/tlc.sh (see "TLC models" below)
    tlc-mutant:<path> specs/**/mutants/<path>.cfg  a deliberately broken model: passes only if
                   TLC reports the violation named by its "\\* ... EXPECTED: ... Name violated" line
    coq:proofs     proofs/_CoqProject    `make -C proofs`, then the Admitted/axiom scan below
    genmc:<row>/<mm> modelcheck/genmc/*.c  GenMC under --rc11, --imm, --tso (see "GenMC models" at
                   its runner); skipped with the reason when genmc is not on PATH (tools/genmc.sh)
    genmc:orderings tools/genmc-orderings.py  the models' `rust:` orderings against the Rust functions
    layers:workspace tools/check_layers.py crate layering (normal dependencies) and no import circle in any src/
    manifest:rows  tools/expected-rows.tsv  last: every row the manifest lists is in the report (unless a
                   FILTER narrowed the run), explores at least its minimum, and skips only where the
                   manifest allows it; no row is unlisted (rules in tools/manifest.py)
    mutants:merge-self-test tools/mutants_merge.py  the merge of `make mutants`' shards, on fixture shards
                   in cargo-mutants' output format (`make mutants` itself is not part of verify)
    docs:paths     tools/check_docs.py   every repository path and check/row name the Markdown files
                   cite exists or is produced by the tree (its self-test first); rules in its docstring

Conventions the rest of the repository relies on:

  PERDURE-CHECK lines. A cargo test (in cargo:test, loom:*, shuttle:*) can report what it
  explored as its own row of the report by printing, on one line of stdout,
      PERDURE-CHECK {"name":"explore:redo-crash","kind":"explore","status":"pass",
                     "explored":"200 kills, 0 lost","detail":"...","seconds":3.2}
  (one JSON object; "seconds" optional; kind one of the KINDS below; status pass|fail|skip).
  The text before "PERDURE-CHECK" on the line is ignored, so it survives libtest's
  interleaving. Rows are kept even when the cargo run fails (the cargo row is then "fail").
  A malformed line becomes a "fail" row saying why.

  TLC models. Every specs/**/*.cfg is a TLC run, except *_deep.cfg: with DEPTH=deep, X_deep.cfg
  is used instead of X.cfg where it exists (same check name; an X_deep.cfg without an X.cfg runs
  only under deep). The model checked with Foo.cfg is:
    1. the file named by a "\\* MODEL: Bar.tla" comment among the cfg's leading comment lines
       (path relative to the cfg's folder) -- this is how Foo_small.cfg points at Foo.tla;
    2. else Foo.tla next to the cfg;
    3. else, for X_deep.cfg, the model of X.cfg.
  The check is named tlc:<path of the cfg under specs/ without .cfg>, e.g. tlc:ptm/Redo_small.
  A cfg whose leading comment lines include "\\* TLC-MODE: simulate depth=D traces=N seed=S"
  runs in TLC's random simulation instead (one worker, N traces of at most D states from seed
  S; tools/tlc.sh's header): its row's explored text reads "simulation: N traces, depth D,
  seed S (M states checked)", never a state count of an exhaustive run. The usual pairing: a
  CI X.cfg simulating the bounds that its X_deep.cfg checks exhaustively under DEPTH=deep.

  Coq scan. After the build, every .v under proofs/ is scanned, with comments and strings
  removed, for "Admitted.", the admit / give_up tactics, "Admit Obligations", and declarations
  that add axioms: Axiom(s), Parameter(s), Conjecture(s), Declare Instance, and Variable(s) /
  Hypothesis / Hypotheses outside a Section. Declarations inside a "Module Type" are not axioms.
  Every axiom's name must appear as a word in proofs/AXIOMS.md. Limitations: this is a textual
  scan of sentence starts, not Coq's `Print Assumptions`: it misses axioms built by tactics or
  notations/Ltac that expand to admit, and it does not see axioms of the libraries required
  (stdpp, Iris, Coq's standard library).
"""
from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

KINDS = {"tlc", "coq", "cargo", "litmus", "explore", "trace", "loom", "genmc", "bench", "docs", "layers", "mutants",
         "manifest"}
STATUSES = {"pass", "fail", "skip"}

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out"
LOGS = OUT / "logs"
DEPTH = os.environ.get("DEPTH", "ci") or "ci"
TIMEOUT = float(os.environ.get("VERIFY_TIMEOUT", "2400"))
VERBOSE = os.environ.get("VERIFY_VERBOSE", "") not in ("", "0")
# Checks of these kinds are independent processes (TLC, a trace replay, GenMC, the loom and
# shuttle test runs, whose builds cargo's lock on their target directory serializes, the Coq
# build, the docs, layers and mutants-merge scripts) that share no files: they run VERIFY_LANES
# at a time; the cargo:* checks (one target directory, fmt before clippy) one at a time.
LANE_KINDS = {"tlc", "trace", "genmc", "loom", "explore", "coq", "docs", "layers", "mutants"}
CHECK_TIMES = ROOT / ".cache" / "verify-check-seconds.json"   # last run's seconds per check
# TLC checks whose last run took less than this many seconds get a JVM with the C1 compiler
# only (tools/tlc.sh's TLC_QUICK): it halves the CPU of a run of a few seconds and slows a long one.
QUICK_TLC_BELOW = 10.0
EXPECTED_SECONDS: dict[str, float] = {}   # the last run's seconds per check (main() fills it)


def tlc_env(name: str) -> dict[str, str]:
    """TLC_QUICK=1 for a TLC or trace check its last run timed under QUICK_TLC_BELOW seconds."""
    t = EXPECTED_SECONDS.get(name)
    return {"TLC_QUICK": "1"} if t is not None and t < QUICK_TLC_BELOW else {}


TAIL_LINES = 30


def shared_env() -> dict[str, str]:
    """tools/env.sh is the one place that says where things are; read it through bash."""
    try:
        out = subprocess.run(
            ["bash", "-c", 'source "$1" && env -0', "bash", str(ROOT / "tools" / "env.sh")],
            capture_output=True, check=True).stdout.decode()
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"verify: cannot source tools/env.sh: {e}")
    env = dict(kv.split("=", 1) for kv in out.split("\0") if "=" in kv)
    return env


ENV = shared_env()
TLA_JAR = Path(ENV["TLA_JAR"])


# ------------------------------------------------------------------------------------------
# Rows and running commands

@dataclass
class Row:
    name: str
    kind: str
    status: str = "fail"
    explored: str = ""
    seconds: float | None = None
    detail: str = ""
    log: str | None = None

    def as_json(self) -> dict:
        d = {"name": self.name, "kind": self.kind, "status": self.status,
             "explored": self.explored, "seconds": self.seconds, "detail": self.detail}
        if self.log:
            d["log"] = self.log
        return d


@dataclass
class Run:
    rc: int | None          # None when killed on timeout
    timed_out: bool
    seconds: float
    output: str
    log: Path


def log_path(check_name: str) -> Path:
    # "tlc:ptm/Redo" -> out/logs/tlc/ptm/Redo.log
    return LOGS / (check_name.replace(":", "/") + ".log")


def run(cmd: list[str], log: Path, cwd: Path = ROOT, env: dict | None = None,
        timeout: float = TIMEOUT) -> Run:
    """Run cmd with stdout+stderr streamed to log (and echoed if VERBOSE). The child gets its
    own process group so that a timeout kills everything it started (java under tlc.sh, the
    test binaries under cargo)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    full_env = dict(os.environ)
    full_env.update(env or {})
    start = time.monotonic()
    with open(log, "w", encoding="utf-8", errors="replace") as f:
        f.write(f"$ (cd {cwd} && {' '.join(cmd)})\n")
        f.flush()
        try:
            p = subprocess.Popen(cmd, cwd=cwd, env=full_env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 start_new_session=True)
        except OSError as e:
            f.write(f"cannot start: {e}\n")
            return Run(127, False, 0.0, f"cannot start {cmd[0]}: {e}\n", log)

        def pump():
            for raw in iter(p.stdout.readline, b""):
                line = raw.decode("utf-8", errors="replace")
                f.write(line)
                if VERBOSE:
                    sys.stdout.write("    | " + line)
                    sys.stdout.flush()
            f.flush()

        t = threading.Thread(target=pump, daemon=True)
        t.start()
        LIVE.add(p)
        timed_out = False
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(p)
        except KeyboardInterrupt:
            kill_group(p)
            raise
        finally:
            LIVE.discard(p)
        t.join(timeout=30)
        if timed_out:
            f.write(f"\nverify: killed after the time limit of {timeout:g} s\n")
    seconds = round(time.monotonic() - start, 1)
    output = log.read_text(encoding="utf-8", errors="replace")
    return Run(None if timed_out else p.returncode, timed_out, seconds, output, log)


LIVE: set[subprocess.Popen] = set()   # the children running now (the lanes run several)


def kill_group(p: subprocess.Popen) -> None:
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def rel(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(ROOT))
    except ValueError:
        return str(p)


def timeout_detail(r: Run) -> str:
    return f"timed out after {r.seconds:g} s (limit VERIFY_TIMEOUT={TIMEOUT:g} s)"


# ------------------------------------------------------------------------------------------
# Checks

@dataclass
class Check:
    name: str
    kind: str
    runner: Callable[["Check"], list[Row]]   # first row is the check's own; more may follow
    args: dict = field(default_factory=dict)


def skip_check(name: str, kind: str, reason: str) -> Check:
    return Check(name, kind, lambda c: [Row(c.name, c.kind, "skip", "", 0.0, reason)])


# --- cargo ----------------------------------------------------------------------------------

IMPL = ROOT / "impl"
RESULT_RE = re.compile(r"test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored")
FAILED_TEST_RE = re.compile(r"^test (\S+) \.\.\. FAILED", re.M)
BINARY_RE = re.compile(r"^\s+(?:Running|Doc-tests) \S", re.M)
RERUN_RE = re.compile(r"^error: test failed, to rerun pass `([^`]+)`", re.M)
CARGO_ERROR_RE = re.compile(r"^(error(?:\[E\d+\])?: .*)$", re.M)
CHECK_LINE_RE = re.compile(r"PERDURE-CHECK (\{.*)$", re.M)


def cargo_env() -> dict[str, str]:
    return {"PERDURE_OUT": str(OUT), "PERDURE_DEPTH": DEPTH, "CARGO_TERM_COLOR": "never"}


CARGO_SUMMARY_ERRORS = ("error: could not compile", "error: aborting", "error: test failed",
                        "error: 1 target failed", "error: build failed")


def first_cargo_error(output: str, with_location: bool = True) -> str:
    """The first real compiler error (not cargo's closing summary), with its `--> file:line`."""
    for m in CARGO_ERROR_RE.finditer(output):
        msg = m.group(1)
        if msg.startswith(CARGO_SUMMARY_ERRORS) or re.match(r"error: \d+ targets? failed", msg):
            continue
        if with_location:
            loc = re.match(r"\n\s*--> (\S+)", output[m.end():m.end() + 400])
            if loc:
                msg += f" (at {loc.group(1)})"
        return msg
    return ""


def perdure_check_rows(output: str, source: str) -> list[Row]:
    """Rows reported by tests through `PERDURE-CHECK {json}` lines (see the module docstring)."""
    rows = []
    decoder = json.JSONDecoder()
    for m in CHECK_LINE_RE.finditer(output):
        try:
            obj, _ = decoder.raw_decode(m.group(1))
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
            name, kind, status = obj.get("name"), obj.get("kind"), obj.get("status")
            if not isinstance(name, str) or not name:
                raise ValueError("missing name")
            if kind not in KINDS:
                raise ValueError(f"kind {kind!r} is not one of {sorted(KINDS)}")
            if status not in STATUSES:
                raise ValueError(f"status {status!r} is not pass|fail|skip")
            secs = obj.get("seconds")
            rows.append(Row(name, kind, status, str(obj.get("explored", "")),
                            float(secs) if isinstance(secs, (int, float)) else None,
                            str(obj.get("detail", ""))))
        except ValueError as e:
            rows.append(Row(f"{source}:malformed-PERDURE-CHECK", "cargo", "fail", "", None,
                            f"malformed PERDURE-CHECK line ({e}): {m.group(0)[:200]}"))
    return rows


def cargo_test_rows(c: Check, r: Run) -> list[Row]:
    """The row of a cargo test run (cargo:test, loom:*, shuttle:*) plus its PERDURE-CHECK rows."""
    results = RESULT_RE.findall(r.output)
    passed = sum(int(x[1]) for x in results)
    failed = sum(int(x[2]) for x in results)
    ignored = sum(int(x[3]) for x in results)
    # Binaries: every "Running ..." / "Doc-tests ..." cargo announces, so that harness = false
    # test binaries (which print no "test result:" line) are counted too.
    binaries = len(BINARY_RE.findall(r.output)) or len(results)
    explored = f"{passed} tests passed in {binaries} binaries"
    if ignored:
        explored += f", {ignored} ignored"
    if failed:
        explored += f", {failed} failed"
    row = Row(c.name, c.kind, "pass", explored, r.seconds, "", rel(r.log))
    if r.timed_out:
        row.status, row.detail = "fail", timeout_detail(r)
    elif failed or r.rc != 0:
        row.status = "fail"
        names = FAILED_TEST_RE.findall(r.output)
        # A target that failed without a libtest "... FAILED" line (harness = false, a crash):
        # cargo says "error: test failed, to rerun pass `-p PKG --test NAME`".
        targets = [t for t in RERUN_RE.findall(r.output) if not names]
        if names:
            row.detail = "failed: " + ", ".join(names[:10]) + (" ..." if len(names) > 10 else "")
        elif targets:
            row.detail = "failed test targets: " + ", ".join(f"`{t}`" for t in targets[:10])
        else:
            row.detail = first_cargo_error(r.output) or f"cargo exited with code {r.rc}"
    else:
        row.detail = "all tests passed" if results else "no test binaries ran"
    return [row] + perdure_check_rows(r.output, c.name)


def run_cargo_simple(c: Check) -> list[Row]:
    r = run(c.args["cmd"], log_path(c.name), cwd=IMPL, env={**cargo_env(), **c.args.get("env", {})})
    row = Row(c.name, c.kind, "pass", c.args["explored"], r.seconds, "", rel(r.log))
    if r.timed_out:
        row.status, row.detail = "fail", timeout_detail(r)
    elif r.rc != 0:
        row.status = "fail"
        if c.name == "cargo:fmt":
            files = sorted(set(re.findall(r"^Diff in (\S+?)(?: at line \d+)?:", r.output, re.M)))
            row.detail = ("not rustfmt-formatted: " + ", ".join(rel(Path(x)) for x in files[:8])
                          if files else first_cargo_error(r.output) or f"exit code {r.rc}")
            row.detail += " (run: cd impl && cargo fmt --all)"
        else:
            first = first_cargo_error(r.output, with_location=True)
            n = len([e for e in CARGO_ERROR_RE.findall(r.output) if not e.startswith(CARGO_SUMMARY_ERRORS)])
            row.detail = f"{n} errors; first: {first}" if first else f"exit code {r.rc}"
    else:
        row.detail = c.args["ok"]
    return [row]


# How many test binaries a cargo test check runs at once (VERIFY_TEST_LANES; main sets it).
# cargo runs its test binaries one after another, and most of perdure's heavy binaries hold one
# or two long tests (an explorer scenario, a shuttle run), so with cargo alone one of two cores
# sat idle for most of cargo:test.
TEST_LANES = 1


def run_cargo_test(c: Check) -> list[Row]:
    env = {**cargo_env(), **c.args.get("env", {})}
    if TEST_LANES > 1:
        return cargo_test_rows(c, run_test_binaries(c, env))
    r = run(c.args["cmd"], log_path(c.name), cwd=IMPL, env=env)
    return cargo_test_rows(c, r)


def lane_count(var: str, default: int) -> int:
    """The count the environment variable var gives (at least 1), else default; ValueError
    with the message to print if it is not a number."""
    v = os.environ.get(var, "")
    if not v:
        return default
    try:
        return max(1, int(v))
    except ValueError:
        raise ValueError(f"verify: {var} must be a number, not {v!r}") from None


# A fresh clone's seconds (tools/verify-seconds.json: "checks" and "tests"), for the order of the
# lanes until .cache/ holds a run of its own.
SECONDS_FALLBACK = ROOT / "tools" / "verify-seconds.json"


def load_times(path: Path, fallback: str) -> dict[str, float]:
    """A last run's seconds by name (.cache/), else the committed ones of a fresh clone's run
    (SECONDS_FALLBACK's map `fallback`), or nothing."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        pass
    try:
        return json.loads(SECONDS_FALLBACK.read_text())[fallback]
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def save_times(path: Path, times: dict[str, float]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(times, indent=1, sort_keys=True) + "\n")
    except OSError:
        pass   # only the next run's order depends on it


TEST_TIMES = ROOT / ".cache" / "verify-test-seconds.json"   # last run's seconds per test binary
# Before any run has been timed (a fresh clone), these binaries start first: the longest ones.
HEAVY_FIRST = ("explore_", "shuttle_", "loom_", "heap_kill", "process_kill", "mutants_", "litmus_sim")


def run_test_binaries(c: Check, env: dict[str, str]) -> Run:
    """`cargo test ARGS` as cargo would run it, except that the test binaries run
    TEST_LANES at a time, the longest first (by the last run's times in .cache/). Builds with
    `--no-run --message-format=json-render-diagnostics`, runs each test executable from its
    package's directory with the arguments after `--` (as cargo does), runs the doc tests (if
    the command would) as one more job, and writes one log in cargo's order with cargo's
    "Running" headers and "error: test failed" lines, so cargo_test_rows reads it unchanged."""
    cmd = c.args["cmd"]
    split = cmd.index("--") if "--" in cmd else len(cmd)
    cargo_args, test_args = cmd[:split], cmd[split + 1:]
    log = log_path(c.name)
    parts = log.with_suffix(".d")
    shutil.rmtree(parts, ignore_errors=True)
    parts.mkdir(parents=True, exist_ok=True)
    build = run(cargo_args + ["--no-run", "--message-format=json-render-diagnostics"],
                parts / "build.log", cwd=IMPL, env=env)
    text_lines, jobs = [], []
    for line in build.output.splitlines():
        if not line.startswith('{"reason"'):
            text_lines.append(line)
            continue
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg.get("profile", {}).get("test"):
            continue
        tgt = msg["target"]
        pkg_name = package_name(Path(msg["manifest_path"])) or msg["package_id"]
        kind = tgt["kind"][0]
        src = rel(Path(tgt["src_path"])).removeprefix("impl/")
        label = f"unittests {src}" if kind in ("lib", "bin") else src
        rerun = f"-p {pkg_name} --{'lib' if kind == 'lib' else kind}" + ("" if kind == "lib" else f" {tgt['name']}")
        jobs.append({"key": f"{pkg_name}:{kind}:{tgt['name']}", "label": label, "rerun": rerun,
                     "cmd": [msg["executable"]] + test_args, "cwd": Path(msg["manifest_path"]).parent,
                     "exe": msg["executable"]})
    build_text = "\n".join(text_lines) + "\n"
    if build.timed_out or build.rc != 0:
        log.write_text(build_text)
        return Run(build.rc, build.timed_out, build.seconds, build_text, log)
    # `cargo test` with no --test/--lib/--bin selection also runs the doc tests.
    if not any(a in ("--test", "--lib", "--bin", "--tests", "--bins", "--doc") for a in cargo_args):
        jobs.append({"key": "doc-tests", "label": None, "rerun": "--doc",
                     "cmd": cargo_args + ["--doc", "--"] + test_args, "cwd": IMPL, "exe": None})
    times = load_times(TEST_TIMES, "tests")

    def weight(j):
        name = j["key"].rsplit(":", 1)[-1]
        return (-(times.get(j["key"]) or 0.0), not name.startswith(HEAVY_FIRST))

    order = sorted(range(len(jobs)), key=lambda i: weight(jobs[i]))
    results: dict[int, Run] = {}

    def go(i: int) -> None:
        j = jobs[i]
        job_env = dict(env)
        if j["exe"]:
            job_env["CARGO_MANIFEST_DIR"] = str(j["cwd"])
        results[i] = run(j["cmd"], parts / f"{i:03d}.log", cwd=j["cwd"], env=job_env)

    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=TEST_LANES) as pool:
        for f in [pool.submit(go, i) for i in order]:
            f.result()
    out = [build_text]
    rc, timed_out = 0, False
    for i, j in enumerate(jobs):
        r = results[i]
        times[j["key"]] = r.seconds
        if j["exe"]:
            out.append(f"     Running {j['label']} ({rel(Path(j['exe'])).removeprefix('impl/')}) [{r.seconds:g} s]\n")
        body = r.output.split("\n", 1)[1] if "\n" in r.output else ""   # drop run()'s "$ cmd" line
        out.append(body)
        if r.timed_out or r.rc != 0:
            rc = rc or (r.rc if r.rc is not None else 1)
            timed_out = timed_out or r.timed_out
            out.append(f"error: test failed, to rerun pass `{j['rerun']}`\n")
    save_times(TEST_TIMES, times)
    text = "".join(out)
    log.write_text(f"$ (cd {IMPL} && {' '.join(cmd)})  [test binaries {TEST_LANES} at a time; "
                   f"parts in {rel(parts)}/]\n" + text)
    return Run(rc, timed_out, round(build.seconds + time.monotonic() - start, 1), text, log)


def package_name(manifest: Path) -> str | None:
    """The [package] name of a Cargo.toml."""
    try:
        return tomllib.loads(manifest.read_text()).get("package", {}).get("name")
    except (OSError, tomllib.TOMLDecodeError):
        return None


def package_of(test_file: Path) -> str | None:
    """Name of the Cargo package whose tests/ folder holds test_file."""
    d = test_file.parent
    while d != IMPL and IMPL in d.parents:
        if (d / "Cargo.toml").is_file():
            return package_name(d / "Cargo.toml")
        d = d.parent
    return None


def model_test_checks(prefix: str, kind: str, cfg_flag: str, file_glob: str) -> list[Check]:
    """loom:* / shuttle:* checks: one per crate that has tests/<file_glob>."""
    by_pkg: dict[str, list[str]] = {}
    for f in sorted(IMPL.rglob(f"tests/{file_glob}")):
        if "target" in f.relative_to(IMPL).parts:
            continue
        pkg = package_of(f)
        if pkg is None:
            continue
        by_pkg.setdefault(pkg, []).append(f.stem)
    checks = []
    for pkg, tests in sorted(by_pkg.items()):
        name = f"{prefix}:{pkg.removeprefix('perdure-') or pkg}"
        cmd = ["cargo", "test", "--release", "--no-fail-fast", "-p", pkg]
        for t in tests:
            cmd += ["--test", t]
        cmd += ["--", "--nocapture"]
        # The cfg reaches the workspace's crates only (tools/rustc-cfg/cfg-wrapper.sh): the
        # dependencies are cargo:test's, in its target directory, not compiled per configuration.
        env = {"RUSTC_WORKSPACE_WRAPPER": str(ROOT / "tools" / "rustc-cfg" / cfg_flag)}
        if prefix == "loom" and DEPTH != "deep" and "LOOM_MAX_PREEMPTIONS" not in os.environ:
            env["LOOM_MAX_PREEMPTIONS"] = "3"
        checks.append(Check(name, kind, run_cargo_test, {"cmd": cmd, "env": env}))
    return checks


def cargo_checks() -> list[Check]:
    if not (IMPL / "Cargo.toml").is_file():
        return []
    names = [("cargo:fmt", "fmt"), ("cargo:clippy", "clippy"), ("cargo:doc", None), ("cargo:test", None)]
    if shutil.which("cargo") is None:
        return [skip_check(n, "cargo", "cargo not on PATH (install Rust with rustup; make setup checks it)")
                for n, _ in names]
    checks = []
    for name, sub in names:
        if sub and subprocess.run(["cargo", sub, "--version"], capture_output=True).returncode != 0:
            comp = "rustfmt" if sub == "fmt" else "clippy"
            checks.append(skip_check(name, "cargo", f"cargo {sub} unavailable (rustup component add {comp})"))
            continue
        if name == "cargo:fmt":
            checks.append(Check(name, "cargo", run_cargo_simple, {
                "cmd": ["cargo", "fmt", "--all", "--check", "--", "--color", "never"],
                "explored": "all workspace crates", "ok": "formatted"}))
        elif name == "cargo:clippy":
            checks.append(Check(name, "cargo", run_cargo_simple, {
                "cmd": ["cargo", "clippy", "--workspace", "--all-targets", "--release", "--", "-D", "warnings"],
                "explored": "workspace, all targets", "ok": "no warnings"}))
        elif name == "cargo:doc":
            # Broken intra-doc links and malformed docs fail the build: the crate docs are
            # part of what the project ships.
            checks.append(Check(name, "cargo", run_cargo_simple, {
                "cmd": ["cargo", "doc", "--workspace", "--no-deps"],
                "env": {"RUSTDOCFLAGS": "-D warnings"},
                "explored": "rustdoc of every workspace crate", "ok": "no rustdoc warnings"}))
        else:
            # --no-fail-fast: run every test binary even after one fails, so the report is whole.
            checks.append(Check(name, "cargo", run_cargo_test, {
                "cmd": ["cargo", "test", "--workspace", "--release", "--no-fail-fast", "--", "--nocapture"]}))
    checks += model_test_checks("loom", "loom", "perdure_loom", "loom_*.rs")
    checks += model_test_checks("shuttle", "explore", "perdure_shuttle", "shuttle_*.rs")
    return checks


# --- TLC ------------------------------------------------------------------------------------

SPECS = ROOT / "specs"
MODEL_RE = re.compile(r"^\s*\\\*\s*MODEL:\s*(\S+?\.tla)\s*$")
SUMMARY_RE = re.compile(r"^TLC-SUMMARY (\{.*\})\s*$", re.M)


def declared_model(cfg: Path) -> str | None:
    """The "\\* MODEL: X.tla" comment among the cfg's leading comment (or blank) lines."""
    for line in cfg.read_text(errors="replace").splitlines():
        m = MODEL_RE.match(line)
        if m:
            return m.group(1)
        if line.strip() and not line.strip().startswith(("\\*", "(*")):
            break
    return None


def model_for(cfg: Path, base_cfg: Path | None) -> tuple[Path | None, str]:
    declared = declared_model(cfg)
    if declared:
        p = (cfg.parent / declared).resolve()
        return (p, "") if p.is_file() else (None, f"{rel(cfg)} names MODEL {declared}, which does not exist")
    same = cfg.with_suffix(".tla")
    if same.is_file():
        return same, ""
    if base_cfg is not None and base_cfg.is_file():
        return model_for(base_cfg, None)
    return None, (f"no model for {rel(cfg)}: no {same.name} next to it and no "
                  f"'\\* MODEL: X.tla' comment in its first lines")


def run_tlc(c: Check) -> list[Row]:
    cfg, base = c.args["cfg"], c.args["base_cfg"]
    model, why = model_for(cfg, base)
    if model is None:
        return [Row(c.name, c.kind, "fail", "", 0.0, why)]
    r = run(["bash", str(ROOT / "tools" / "tlc.sh"), str(model), str(cfg)], log_path(c.name),
            env=tlc_env(c.name))
    row = Row(c.name, c.kind, "fail", "", r.seconds, "", rel(r.log))
    sums = SUMMARY_RE.findall(r.output)
    used = f"[{rel(cfg)} on {rel(model)}]"
    if r.timed_out:
        row.detail = f"{timeout_detail(r)} {used}"
        return [row]
    if not sums:
        row.detail = f"tools/tlc.sh printed no TLC-SUMMARY (exit code {r.rc}) {used}"
        return [row]
    s = json.loads(sums[-1])
    fmt = lambda v: "?" if v is None else f"{v:,}"
    if s.get("mode") == "simulate":
        # Random simulation (the cfg's TLC-MODE line): say so, so it never reads as exhaustive.
        row.explored = (f"simulation: {fmt(s.get('traces'))} traces, depth {fmt(s.get('sim_depth'))}, "
                        f"seed {s.get('seed')} ({fmt(s.get('generated'))} states checked)")
    elif any(s.get(k) is not None for k in ("distinct", "generated", "depth")):
        row.explored = (f"{fmt(s.get('distinct'))} distinct states ({fmt(s.get('generated'))} generated), "
                        f"depth {fmt(s.get('depth'))}")
    row.status = "pass" if s.get("status") == "pass" and r.rc == 0 else "fail"
    row.detail = f"{s.get('detail', '')} {used}"
    expected = c.args.get("expect_violation")
    if expected is not None:
        # A mutant: it passes only if TLC finds the violation it exists to show
        # (a parse error or a different failure does not count).
        found = s.get("status") == "fail" and f"{expected} is violated" in (s.get("detail") or "")
        row.status = "pass" if found else "fail"
        row.detail = (f"mutant caught as expected: {s.get('detail', '')} {used}" if found else
                      f"mutant NOT caught: expected '{expected} is violated', got: "
                      f"{s.get('detail', '') or s.get('status')} {used}")
    return [row]


EXPECT_RE = re.compile(r"^\s*\\\*.*EXPECTED(?: RESULT)?:.*?(?:\b(\w+)\s+violated|VIOLATION of (\w+))", re.M | re.I)


def expected_violation(cfg: Path) -> str | None:
    """The invariant or property a mutant cfg says TLC must report violated
    (`\\* ... EXPECTED: TLC reports Name violated` or
    `\\* EXPECTED RESULT: VIOLATION of Name`)."""
    m = EXPECT_RE.search(cfg.read_text(errors="replace"))
    return (m.group(1) or m.group(2)) if m else None


def tlc_checks() -> list[Check]:
    if not SPECS.is_dir():
        return []
    cfgs = [p for p in sorted(SPECS.rglob("*.cfg")) if "states" not in p.relative_to(SPECS).parts]
    if not cfgs:
        return []
    checks = []
    plain = {p for p in cfgs if not p.name.endswith("_deep.cfg")}
    for cfg in cfgs:
        if cfg.name.endswith("_deep.cfg"):
            base = cfg.with_name(cfg.name.removesuffix("_deep.cfg") + ".cfg")
            if base in plain or DEPTH != "deep":
                continue   # used in place of its X.cfg below, or not at this depth
            name_cfg, use, base_cfg = base, cfg, None   # an X_deep.cfg alone: deep only
        else:
            deep = cfg.with_name(cfg.stem + "_deep.cfg")
            name_cfg, base_cfg = cfg, None
            use = cfg
            if DEPTH == "deep" and deep.is_file():
                use, base_cfg = deep, cfg
        relpath = name_cfg.relative_to(SPECS)
        if "mutants" in relpath.parts:
            # Mutant models must FAIL with the violation their cfg names.
            expected = expected_violation(cfg)
            name = "tlc-mutant:" + str(relpath.with_suffix(""))
            if expected is None:
                checks.append(Check(name, "tlc", lambda c, why=f"{rel(cfg)} has no '\\* EXPECTED: ... Name violated' line":
                                    [Row(c.name, c.kind, "fail", "", 0.0, why)], {}))
                continue
            checks.append(Check(name, "tlc", run_tlc, {"cfg": use, "base_cfg": base_cfg, "expect_violation": expected}))
            continue
        name = "tlc:" + str(relpath.with_suffix(""))
        checks.append(Check(name, "tlc", run_tlc, {"cfg": use, "base_cfg": base_cfg}))
    if shutil.which("java") is None or not TLA_JAR.is_file():
        why = "java not on PATH" if shutil.which("java") is None else f"TLC jar missing ({rel(TLA_JAR)})"
        return [skip_check(c.name, "tlc", f"{why}: run make setup") for c in checks]
    return checks


# --- Coq ------------------------------------------------------------------------------------

PROOFS = ROOT / "proofs"


def strip_coq_comments(src: str) -> str:
    """Blank out (* nested *) comments and "strings" ("" escapes a quote), keeping newlines
    so that line numbers stay right."""
    out, i, depth, n = [], 0, 0, len(src)
    in_str = False
    while i < n:
        ch, two = src[i], src[i:i + 2]
        if in_str:
            if two == '""':
                out.append("  "); i += 2; continue
            if ch == '"':
                in_str = False
            out.append("\n" if ch == "\n" else " "); i += 1; continue
        if two == "(*":
            depth += 1; out.append("  "); i += 2; continue
        if depth and two == "*)":
            depth -= 1; out.append("  "); i += 2; continue
        if depth:
            out.append("\n" if ch == "\n" else " "); i += 1; continue
        if ch == '"':
            in_str = True; out.append(" "); i += 1; continue
        out.append(ch); i += 1
    return "".join(out)


ATTRS = r"(?:#\[[^\]]*\]\s*)?(?:(?:Local|Global|Polymorphic|Monomorphic|Private|Program|Cumulative|NonCumulative)\s+)*"
AXIOM_RE = re.compile(r"^\s*" + ATTRS +
                      r"(Axioms?|Parameters?|Conjectures?|Hypothes[ie]s|Variables?|Declare\s+Instance)\b")
LEMMA_RE = re.compile(r"^\s*" + ATTRS + r"(Lemma|Theorem|Corollary)\s+[\w']+")
ADMIT_RES = [
    (re.compile(r"\bAdmitted\s*\."), "Admitted."),
    (re.compile(r"(?<![\w'.])admit\b(?!')"), "admit"),
    (re.compile(r"(?<![\w'.])give_up\b(?!')"), "give_up"),
    (re.compile(r"\bAdmit\s+Obligations\b"), "Admit Obligations"),
]
SECTION_RE = re.compile(r"^\s*Section\s+([\w']+)\s*\.")
MODULE_RE = re.compile(r"^\s*Module\s+(Type\s+)?(?:(?:Import|Export)\s+)?([\w']+)(.*)$")
END_RE = re.compile(r"^\s*End\s+([\w']+)\s*\.")
SENTENCE_END = re.compile(r"\.(?=\s|$)")


def sentence_from(lines: list[str], i: int, start: int) -> str:
    """Text from lines[i][start:] up to the end of the Coq sentence (at most 20 lines)."""
    text = " ".join([lines[i][start:]] + lines[i + 1:i + 20])
    m = SENTENCE_END.search(text)
    return text[:m.start()] if m else text


def axiom_names(decl: str) -> list[str]:
    decl = decl.strip()
    if decl.startswith("("):
        names = []
        for group in re.findall(r"\(\s*([\w'\s]+?)\s*:", decl):
            names += group.split()
        return names
    return decl.split(":", 1)[0].split()


def scan_coq() -> tuple[list[str], list[tuple[str, str]], int, int]:
    """(admits, axioms as (where, name), number of .v files, number of lemmas)."""
    admits, axioms, nfiles, nlemmas = [], [], 0, 0
    for v in sorted(PROOFS.rglob("*.v")):
        if any(part.startswith(".") for part in v.relative_to(PROOFS).parts):
            continue
        nfiles += 1
        lines = strip_coq_comments(v.read_text(errors="replace")).splitlines()
        stack: list[tuple[str, str]] = []   # ("section"|"module"|"modtype", name)
        for i, line in enumerate(lines):
            where = f"{rel(v)}:{i + 1}"
            for rx, what in ADMIT_RES:
                if rx.search(line):
                    admits.append(f"{where}: {what}")
            if LEMMA_RE.match(line):
                nlemmas += 1
            if m := SECTION_RE.match(line):
                stack.append(("section", m.group(1)))
            elif m := MODULE_RE.match(line):
                rest = sentence_from(lines, i, m.start(3))
                if ":=" not in rest:
                    stack.append(("modtype" if m.group(1) else "module", m.group(2)))
            elif m := END_RE.match(line):
                for k in range(len(stack) - 1, -1, -1):
                    if stack[k][1] == m.group(1):
                        del stack[k:]
                        break
            elif m := AXIOM_RE.match(line):
                keyword = m.group(1)
                if any(kind == "modtype" for kind, _ in stack):
                    continue   # a module type's fields are a signature, not axioms
                if keyword.startswith(("Variable", "Hypothes")) and any(k == "section" for k, _ in stack):
                    continue   # section variables are discharged at End
                for name in axiom_names(sentence_from(lines, i, m.end())) or ["?"]:
                    axioms.append((where, name))
    return admits, axioms, nfiles, nlemmas


def run_coq(c: Check) -> list[Row]:
    jobs = str(os.cpu_count() or 2)
    if (PROOFS / "Makefile").is_file():
        cmd = ["make", "-C", str(PROOFS), f"-j{jobs}"]
    else:
        # No Makefile of the proofs' own (yet): build straight from _CoqProject.
        cmd = ["bash", "-c", f"cd {PROOFS} && coq_makefile -f _CoqProject -o Makefile.coq && "
                             f"make -f Makefile.coq -j{jobs}"]
    r = run(cmd, log_path(c.name))
    problems = []
    if r.timed_out:
        problems.append(timeout_detail(r))
    elif r.rc != 0:
        m = re.search(r'^File "([^"]+)", line (\d+).*\n(?:.*\n){0,3}?(Error:.*)$', r.output, re.M)
        bad = re.search(r"^assumptions: FAILED, (.*)$", r.output, re.M)
        first = re.search(r"^assumptions: (?!FAILED)(.*)$", r.output, re.M)
        if bad:   # tools/coq_assumptions.py: Print Assumptions differs from proofs/AXIOMS.md
            problems.append(f"assumptions: {bad.group(1)}" + (f" ({first.group(1)})" if first else ""))
        else:
            problems.append(f"build failed: {m.group(1)}:{m.group(2)}: {m.group(3)}" if m
                            else f"build failed (exit code {r.rc})")
    admits, axioms, nfiles, nlemmas = scan_coq()
    if admits:
        problems.append(f"{len(admits)} admitted: " + "; ".join(admits[:5]) + (" ..." if len(admits) > 5 else ""))
    listed = (PROOFS / "AXIOMS.md").read_text(errors="replace") if (PROOFS / "AXIOMS.md").is_file() else ""
    unlisted = [(w, n) for w, n in axioms
                if not re.search(rf"(?<![\w']){re.escape(n)}(?![\w'])", listed)]
    if unlisted:
        problems.append(f"{len(unlisted)} axioms not listed in proofs/AXIOMS.md: "
                        + "; ".join(f"{w}: {n}" for w, n in unlisted[:5]))
    explored = f"{nfiles} files, {nlemmas} Lemma/Theorem/Corollary proved"
    checked = re.search(r"^assumptions: (\d+) theorems checked", r.output, re.M)
    if checked:
        explored += f", assumptions of {checked.group(1)} theorems as AXIOMS.md lists"
    if problems:
        return [Row(c.name, c.kind, "fail", explored, r.seconds, " | ".join(problems), rel(r.log))]
    detail = "built; no Admitted/admit" + (f"; {len(axioms)} axioms, all listed in proofs/AXIOMS.md"
                                           if axioms else "; no axioms declared")
    return [Row(c.name, c.kind, "pass", explored, r.seconds, detail, rel(r.log))]



# --- Trace validation -------------------------------------------------------------------------

TRACES = ROOT / "traces"
PERDURE_BIN = IMPL / "target" / "release" / "perdure"
_PERDURE_BUILT = False
_PERDURE_BUILD_LOCK = threading.Lock()   # trace checks run in parallel lanes
# The verdict line; a rejection also names its step number and the step (a JSON line).
# Why it was rejected (tools/trace-check.sh's REASON line): the conditions named by the spec's Why.
TRACE_REASON_RE = re.compile(r"^trace-check: REASON: (.*?) \(\d+ stuck states?\)$", re.M)
TRACE_SEARCHED_RE = re.compile(r"^trace-check: SEARCHED: (\d+) distinct spec states$", re.M)
TRACE_RESULT_RE = re.compile(r"^trace-check: (ACCEPTED|REJECTED at step (\d+) of (\d+))(?:: (.*))?$", re.M)


def run_trace_case(c: Check) -> list[Row]:
    case, spec = c.args["case"], c.args["spec"]
    log = log_path(c.name)
    out_trace = OUT / "traces" / (c.name.replace(":", "_").replace("/", "_") + ".ndjson")
    out_trace.parent.mkdir(parents=True, exist_ok=True)
    global _PERDURE_BUILT
    with _PERDURE_BUILD_LOCK:
        if not _PERDURE_BUILT:
            # Always (re)build once per run: a stale binary from an older tree would replay traces
            # of old code. A no-op when it is up to date.
            b = run(["cargo", "build", "--release", "-q", "-p", "perdure"], log, cwd=IMPL, env=cargo_env())
            if b.rc != 0:
                return [Row(c.name, c.kind, "fail", "", b.seconds, "cannot build perdure", rel(b.log))]
            _PERDURE_BUILT = True
    gen = subprocess.run([str(PERDURE_BIN), *case["perdure"]], capture_output=True, text=True)
    if gen.returncode != 0:
        return [Row(c.name, c.kind, "fail", "", 0.0, f"perdure {' '.join(case['perdure'])} failed: "
                    f"{gen.stderr.strip()[:200]}")]
    out_trace.write_text(gen.stdout)
    steps = sum(1 for l in gen.stdout.splitlines() if l.strip())
    # A trace that shows nothing, or a crash case without its crash, would pass for the wrong
    # reason: accepted by any spec, or accepted without the recovery it is about.
    shape = trace_shape_problem(gen.stdout, case)
    if shape:
        return [Row(c.name, c.kind, "fail", f"{steps}-line implementation trace", 0.0, shape)]
    r = run(["bash", str(ROOT / "tools" / "trace-check.sh"), str(spec), str(out_trace),
             "--expect", case["expect"]], log, env=tlc_env(c.name))
    m = TRACE_RESULT_RE.search(r.output)
    verdict = "no verdict" if not m else ("accepted" if m.group(1) == "ACCEPTED"
                                          else f"rejected at step {m.group(2)}")
    where = " ".join(x for x in (f"step {case['at_step']}" if "at_step" in case else "",
                                 f"a {case['at_action']} step" if "at_action" in case else "") if x)
    expected = case["expect"] + (f" at {where}" if where else "")
    searched = TRACE_SEARCHED_RE.search(r.output)
    searched = f", {int(searched.group(1)):,} spec states searched" if searched else ""
    row = Row(c.name, c.kind, "pass" if r.rc == 0 else "fail",
              f"{steps}-step implementation trace {verdict} (expected: {expected}){searched}",
              r.seconds, case.get("why", ""), rel(r.log))
    if r.rc == 0 and where:
        rejected = m if m and m.group(2) else None
        try:
            action = json.loads(rejected.group(4) or "{}").get("action") if rejected else None
        except ValueError:
            action = None
        if not rejected or ("at_step" in case and rejected.group(2) != str(case["at_step"])) \
                or ("at_action" in case and action != case["at_action"]):
            got = f"step {rejected.group(2)} ({action})" if rejected else "no step"
            row.status = "fail"
            row.detail = (f"rejected at {got}, not at {where} where the tampering shows: the spec "
                          f"rejects it for another reason. {case.get('why', '')}")
    if r.rc == 0 and case["expect"] == "reject":
        # The violated condition: a rejection for another reason is no evidence for this one.
        m_reason = TRACE_REASON_RE.search(r.output)
        reasons = [x.strip() for x in m_reason.group(1).split(",")] if m_reason else []
        if "reason" not in case:
            row.status = "fail"
            row.detail = (f"a case expected to be rejected must name the violated condition "
                          f"(\"reason\" in its checks.json; TLC's: {', '.join(reasons) or 'none'})")
        elif case["reason"] not in reasons:
            row.status = "fail"
            row.detail = (f"rejected because of {', '.join(reasons) or 'no reason TLC could name'}, "
                          f"not {case['reason']}: the spec rejects it for another reason. "
                          f"{case.get('why', '')}")
        else:
            row.explored += f", reason {case['reason']}"
    if r.timed_out:
        row.status, row.detail = "fail", timeout_detail(r)
    return [row]


def trace_shape_problem(trace: str, case: dict) -> str:
    """Why a generated trace cannot serve its case, or "": it must hold at least one protocol step,
    and a crash case (`--crash...` among its arguments) at least one crash."""
    events = []
    for line in trace.splitlines():
        if line.strip():
            try:
                events.append(json.loads(line))
            except ValueError:
                return f"the trace has a line that is not JSON: {line[:80]}"
    # A protocol step names its action (`type: step`, or RELAX's bare `action` records).
    if not any("action" in e and e.get("type", "step") == "step" for e in events):
        return "the trace holds no protocol step: an empty trace proves nothing"
    if any(a.startswith("--crash") for a in case.get("perdure", [])):
        crashed = any(e.get("type") == "crash" or str(e.get("action", "")).startswith("Crash")
                      for e in events)
        if not crashed:
            return "a crash case whose trace holds no crash"
    return ""


def trace_checks() -> list[Check]:
    """One check per case of every traces/**/checks.json (see traces/SCHEMA.md)."""
    if not TRACES.is_dir():
        return []
    checks = []
    for f in sorted(TRACES.rglob("checks.json")):
        where = str(f.parent.relative_to(TRACES))
        try:
            spec_doc = json.loads(f.read_text())
            spec = f.parent / spec_doc["spec"]
            cases = spec_doc["cases"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            checks.append(Check(f"trace:{where}", "trace",
                                lambda c, why=f"{rel(f)} is malformed: {e}": [Row(c.name, c.kind, "fail", "", 0.0, why)], {}))
            continue
        for case in cases:
            name = f"trace:{where}/{case.get('name', '?')}"
            depth = case.get("depth", "ci") if isinstance(case, dict) else "ci"
            if depth not in ("ci", "deep"):
                checks.append(Check(name, "trace", lambda c, d=depth: [Row(
                    c.name, c.kind, "fail", "", 0.0, f'"depth" must be "ci" or "deep", not {d!r} (traces/SCHEMA.md)')]))
                continue
            if depth == "deep" and DEPTH != "deep":
                continue   # a longer batch of runs, for DEPTH=deep only
            if shutil.which("java") is None or not TLA_JAR.is_file():
                checks.append(skip_check(name, "trace", "TLC unavailable: run make setup"))
            else:
                checks.append(Check(name, "trace", run_trace_case, {"case": case, "spec": spec}))
    return checks

# --- Documentation ----------------------------------------------------------------------------

DOCS_CHECK = ROOT / "tools" / "check_docs.py"
DOCS_SUMMARY_RE = re.compile(r"^check_docs: (\d+) Markdown files; (.*?); names known", re.M)
DOCS_FAILURE_RE = re.compile(r"^(\S+\.md:\d+: .*?)(?:; if it is a deliberate example.*)?$", re.M)


def run_docs(c: Check) -> list[Row]:
    r = run([sys.executable, str(DOCS_CHECK), "--with-self-test"], log_path(c.name))
    m = DOCS_SUMMARY_RE.search(r.output)
    explored = f"{m.group(1)} Markdown files: {m.group(2)}" if m else ""
    row = Row(c.name, c.kind, "pass" if r.rc == 0 else "fail", explored, r.seconds, "", rel(r.log))
    if r.timed_out:
        row.detail = timeout_detail(r)
    elif r.rc == 0:
        row.detail = "every path exists, every check name is produced by the tree; self-test passed"
    else:
        fails = DOCS_FAILURE_RE.findall(r.output)
        row.detail = ("; ".join(fails[:3]) + (f" (and {len(fails) - 3} more)" if len(fails) > 3 else "")
                      if fails else tail(r.output, 3).replace("\n", " | "))
        row.detail += " (run: python3 tools/check_docs.py)"
    return [row]


def docs_checks() -> list[Check]:
    return [Check("docs:paths", "docs", run_docs)] if DOCS_CHECK.is_file() else []


LAYERS_CHECK = ROOT / "tools" / "check_layers.py"
LAYERS_SUMMARY_RE = re.compile(r"^check_layers: (\d+ crates, \d+ source files of src/ read)", re.M)


def run_layers(c: Check) -> list[Row]:
    r = run([sys.executable, str(LAYERS_CHECK)], log_path(c.name))
    m = LAYERS_SUMMARY_RE.search(r.output)
    row = Row(c.name, c.kind, "pass" if r.rc == 0 else "fail", m.group(1) if m else "", r.seconds,
              "", rel(r.log))
    if r.timed_out:
        row.detail = timeout_detail(r)
    elif r.rc == 0:
        row.detail = ("crate layers as ARCHITECTURE.md says (normal dependencies); no import circle among "
                      "the modules of any src/ (a textual reading: see the script's docs)")
    else:
        breaches = [l.strip() for l in r.output.splitlines() if l.startswith("  ")]
        row.detail = "; ".join(breaches[:3]) or tail(r.output, 3).replace("\n", " | ")
        row.detail += " (run: python3 tools/check_layers.py)"
    return [row]


def layers_checks() -> list[Check]:
    if not LAYERS_CHECK.is_file() or not (IMPL / "Cargo.toml").is_file():
        return []
    if shutil.which("cargo") is None:
        return [skip_check("layers:workspace", "layers", "cargo not on PATH (make setup checks it)")]
    return [Check("layers:workspace", "layers", run_layers)]


MUTANTS_MERGE = ROOT / "tools" / "mutants_merge.py"
MUTANTS_SELF_TEST_RE = re.compile(r"^mutants_merge self-test: (\d+ checks passed, \d+ failed)", re.M)


def run_mutants_merge_self_test(c: Check) -> list[Row]:
    r = run([sys.executable, str(MUTANTS_MERGE), "--self-test"], log_path(c.name))
    m = MUTANTS_SELF_TEST_RE.search(r.output)
    row = Row(c.name, c.kind, "pass" if r.rc == 0 else "fail", m.group(1) if m else "", r.seconds,
              "", rel(r.log))
    if r.timed_out:
        row.detail = timeout_detail(r)
    elif r.rc == 0:
        row.detail = "fixture shards (complete, interrupted, missing, mixed source states) merged as expected"
    else:
        row.detail = tail(r.output, 3).replace("\n", " | ") + " (run: python3 tools/mutants_merge.py --self-test)"
    return [row]


def mutants_checks() -> list[Check]:
    return [Check("mutants:merge-self-test", "mutants", run_mutants_merge_self_test)] if MUTANTS_MERGE.is_file() else []


def coq_checks() -> list[Check]:
    if not (PROOFS / "_CoqProject").is_file():
        return []
    if shutil.which("coqc") is None:
        return [skip_check("coq:proofs", "coq", "coqc not on PATH: run make setup")]
    return [Check("coq:proofs", "coq", run_coq)]


# --- GenMC ----------------------------------------------------------------------------------
# C11 models of the concurrency cores (modelcheck/genmc/*.c, see its README), each run under
# GenMC's RC11, IMM and TSO models: rows genmc:<row>/<rc11|imm|tso>. A model's header names its
# rows with `genmc-row: <row> [-DFLAG...] [violates=<mm>,...]` lines (none: one row named after the
# file); the flags go to clang (mutants are macros of the model, not copies). A row passes when
# GenMC verifies the model under that memory model, or, for a memory model in `violates=`, only
# when GenMC reports a safety violation or a race (an expected failure: a mutant, a known
# finding). Under DEPTH=deep the models are compiled with -DDEEP (their larger bounds).

GENMC_DIR = ROOT / "modelcheck" / "genmc"
GENMC_MODELS = ("rc11", "imm", "tso")
GENMC_ROW_RE = re.compile(r"^\s*\*?\s*genmc-row:\s*(\S+)(.*)$", re.M)
GENMC_EXPLORED_RE = re.compile(r"Number of complete executions explored: (\d+)")
GENMC_BLOCKED_RE = re.compile(r"Number of blocked executions seen: (\d+)")
GENMC_VIOLATIONS = ("Safety violation", "Non-atomic race", "Unordered writes")


def genmc_rows_of(model: Path) -> list[tuple[str, list[str], set[str]]]:
    """(row, clang flags, memory models where a violation is expected) for each genmc-row line."""
    rows = []
    for name, rest in GENMC_ROW_RE.findall(model.read_text(errors="replace")):
        flags, violates = [], set()
        for tok in rest.split():
            if tok.startswith("violates="):
                violates = {m for m in tok[len("violates="):].split(",") if m}
            else:
                flags.append(tok)
        rows.append((name, flags, violates))
    return rows or [(model.stem.replace("_", "-"), [], set())]


def run_genmc(c: Check) -> list[Row]:
    model, mm, flags, expect_violation = c.args["model"], c.args["mm"], c.args["flags"], c.args["violates"]
    flags = flags + (["-DDEEP"] if DEPTH == "deep" else [])
    r = run(["genmc", f"--{mm}", "-disable-mm-detector", "-disable-estimation", "--", *flags, str(model)],
            log_path(c.name))
    row = Row(c.name, c.kind, "fail", "", r.seconds, "", rel(r.log))
    used = f"[{rel(model)}{' ' + ' '.join(flags) if flags else ''}, --{mm}]"
    if r.timed_out:
        row.detail = f"{timeout_detail(r)} {used}"
        return [row]
    explored, blocked = GENMC_EXPLORED_RE.search(r.output), GENMC_BLOCKED_RE.search(r.output)
    if explored:
        row.explored = (f"{int(explored.group(1)):,} executions explored, "
                        f"{int(blocked.group(1)) if blocked else 0:,} blocked")
    verified = r.rc == 0 and "No errors were detected" in r.output
    found = next((v for v in GENMC_VIOLATIONS if v in r.output), None) if not verified else None
    lines = [l.strip() for l in r.output.splitlines()]
    first_error = next((l for l in lines if l.startswith("Assertion violation")),
                       next((l for l in lines if l.startswith("Error") or " error: " in l), ""))
    if expect_violation:
        row.status = "pass" if found else "fail"
        row.detail = (f"expected violation reported: {found}: {first_error} {used}" if found else
                      f"expected a violation under {mm}, GenMC "
                      f"{'verified the model' if verified else f'exited {r.rc} without one'} {used}")
    else:
        row.status = "pass" if verified else "fail"
        elsewhere = c.args.get("violates_in") or []
        ok = (f"no errors, as expected: its violation is expected only under {', '.join(elsewhere)} {used}"
              if elsewhere else f"no errors {used}")
        row.detail = (ok if verified else
                      f"{first_error or tail(r.output, 3).replace(chr(10), ' | ')} {used}")
    return [row]


GENMC_ORDERINGS = ROOT / "tools" / "genmc-orderings.py"
GENMC_ORDERINGS_RE = re.compile(r"^genmc-orderings: (\d+ models, \d+ functions, \d+ operations checked), (\d+) disagreements",
                                re.M)


def run_genmc_orderings(c: Check) -> list[Row]:
    r = run([sys.executable, str(GENMC_ORDERINGS), "--with-self-test"], log_path(c.name))
    m = GENMC_ORDERINGS_RE.search(r.output)
    row = Row(c.name, c.kind, "pass" if r.rc == 0 and m else "fail", m.group(1) if m else "", r.seconds,
              "", rel(r.log))
    if r.timed_out:
        row.detail = timeout_detail(r)
    elif row.status == "pass":
        row.detail = "every rust: comment of the models matches the Rust function's orderings; self-test passed"
    else:
        lines = [l for l in r.output.splitlines() if l.startswith(tuple(p.name for p in GENMC_DIR.glob("*.c")))]
        row.detail = ("; ".join(lines[:2]) or tail(r.output, 3).replace("\n", " | ")) + \
            " (run: python3 tools/genmc-orderings.py)"
    return [row]


def genmc_checks() -> list[Check]:
    if not GENMC_DIR.is_dir():
        return []
    # The orderings of the models against the Rust code: no GenMC needed, never skipped.
    orderings = [Check("genmc:orderings", "genmc", run_genmc_orderings)] if GENMC_ORDERINGS.is_file() else []
    checks = []
    for model in sorted(GENMC_DIR.glob("*.c")):
        for name, flags, violates in genmc_rows_of(model):
            for mm in GENMC_MODELS:
                checks.append(Check(f"genmc:{name}/{mm}", "genmc", run_genmc,
                                    {"model": model, "mm": mm, "flags": flags, "violates": mm in violates,
                                     "violates_in": sorted(violates)}))
    if shutil.which("genmc") is None:
        why = "genmc not on PATH: build and install it with tools/genmc.sh (modelcheck/genmc/README.md)"
        return orderings + [skip_check(c.name, "genmc", why) for c in checks]
    return orderings + checks


# ------------------------------------------------------------------------------------------
# Report

def tail(text: str, n: int = TAIL_LINES) -> str:
    return "\n".join(text.rstrip("\n").splitlines()[-n:])


def manifest_row(rows: list[Row], complete: bool) -> Row:
    """The `manifest:rows` row: the report against tools/expected-rows.tsv (tools/manifest.py)."""
    sys.path.insert(0, str(ROOT / "tools"))
    import manifest
    t = time.monotonic()
    row = Row("manifest:rows", "manifest")
    try:
        manifest.self_test()
        entries = manifest.parse(manifest.PATH.read_text())
    except (OSError, manifest.ManifestError, AssertionError) as e:
        row.detail = f"{type(e).__name__}: {e}"
        return row
    row.status, row.explored, row.detail = manifest.check([r.as_json() for r in rows], entries, complete,
                                                          allow_unlisted=DEPTH == "deep")
    row.seconds = time.monotonic() - t
    return row


# Which crate's code an explorer or mutant row crashes, by the row's name (the footer's sums).
CRATE_OF_ROW = [
    (("explore:ptm", "mutant:ptm/"), "perdure-ptm"),
    (("explore:relax", "mutant:relax/"), "perdure-relax"),
    (("explore:cas", "explore:checkpoint", "explore:clevel", "explore:combq", "explore:elim", "explore:msq",
      "explore:soft", "explore:treiber", "explore:baseline-", "mutant:memento/"), "perdure-memento"),
    (("explore:log", "explore:pm"), "perdure-pm"),
    (("explore:kv", "mutant:kv/"), "perdure-kv"),
]


def crash_images_per_crate(rows: list[Row]) -> dict[str, int]:
    """Crash images recovered and checked, summed per crate over the rows that report them
    ("N images checked" in `explored`, every occurrence: a row that crashes recoveries again
    reports those too)."""
    sums: dict[str, int] = {}
    for r in rows:
        crate = next((c for prefixes, c in CRATE_OF_ROW if r.name.startswith(prefixes)), None)
        if crate is None:
            continue
        n = sum(int(x.replace(",", "")) for x in re.findall(r"([\d,]+) images checked", r.explored))
        sums[crate] = sums.get(crate, 0) + n
    return sums


def print_table(rows: list[Row]) -> None:
    def secs(r: Row) -> str:
        return "-" if r.seconds is None else f"{r.seconds:.1f}"
    cells = [("check", "result", "explored", "seconds")] + [
        (r.name, r.status, r.explored if len(r.explored) <= 70 else r.explored[:67] + "...", secs(r))
        for r in rows]
    w = [max(len(c[i]) for c in cells) for i in range(4)]
    line = lambda c: f"{c[0]:<{w[0]}}  {c[1]:<{w[1]}}  {c[2]:<{w[2]}}  {c[3]:>{w[3]}}"
    print(line(cells[0]))
    print("  ".join("-" * x for x in w))
    for c in cells[1:]:
        print(line(c))


def main(argv: list[str]) -> int:
    sys.stdout.reconfigure(line_buffering=True)   # progress shows up live in CI logs too
    if DEPTH not in ("ci", "deep"):
        print(f"verify: DEPTH must be ci or deep, not {DEPTH!r}", file=sys.stderr)
        return 2
    list_only = "--list" in argv
    filters = [a for a in argv if not a.startswith("--")]
    checks = (cargo_checks() + tlc_checks() + trace_checks() + coq_checks() + docs_checks() + layers_checks()
              + mutants_checks() + genmc_checks())
    if filters:
        checks = [c for c in checks if any(f in c.name for f in filters)]
    if list_only:
        for c in checks:
            print(f"{c.name}  ({c.kind})")
        print("manifest:rows  (manifest)")   # added after the checks: the report against the manifest
        return 0

    print(f"verify: DEPTH={DEPTH}, {len(checks)} checks, logs in {rel(LOGS)}/")
    # The crash-site ledgers of this run (impl/perdure-pm/src/site.rs, tools/crash_sites.py):
    # every check process inherits the variable and appends its own file.
    sites_dir = OUT / "sites"
    shutil.rmtree(sites_dir, ignore_errors=True)
    sites_dir.mkdir(parents=True, exist_ok=True)
    os.environ["PERDURE_SITES_OUT"] = str(sites_dir)
    rows: list[Row] = []
    seen: dict[str, int] = {}
    global TEST_LANES
    try:
        lanes = lane_count("VERIFY_LANES", 2 if (os.cpu_count() or 1) >= 2 else 1)
        TEST_LANES = lane_count("VERIFY_TEST_LANES", lanes)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    if lanes > 1:
        os.environ.setdefault("TLC_WORKERS", "1")
        print(f"verify: checks of the kinds {', '.join(sorted(LANE_KINDS))} run {lanes} at a time "
              f"(VERIFY_LANES), TLC with {os.environ['TLC_WORKERS']} worker(s) each")

    def run_one(c: Check) -> list[Row]:
        try:
            return c.runner(c)
        except Exception as e:  # a bug in this script must not read as a passing check
            return [Row(c.name, c.kind, "fail", "", None, f"verify.py error: {type(e).__name__}: {e}")]

    def report(i: int, c: Check, got: list[Row]) -> None:
        print(f"[{i}/{len(checks)}] {c.name} ... ", end="")
        own, extra = got[0], got[1:]
        secs = "" if own.seconds is None else f" ({own.seconds:.1f} s)"
        print(f"{own.status}{secs}" + (f": {own.detail}" if own.status != "pass" and own.detail else ""))
        if own.status == "fail" and own.log:
            print(f"    log: {own.log} -- last lines:")
            log_text = (ROOT / own.log).read_text(errors="replace")
            print("\n".join("    | " + l for l in tail(log_text).splitlines()))
        for x in extra:
            print(f"      reported: {x.name} ... {x.status}" + (f" ({x.explored})" if x.explored else "")
                  + (f": {x.detail}" if x.status != "pass" and x.detail else ""))
        for x in got:
            seen[x.name] = seen.get(x.name, 0) + 1
            if seen[x.name] > 1:   # the same name reported twice (e.g. by two runs): keep both
                x.name = f"{x.name} #{seen[x.name]}"
            rows.append(x)

    check_times = load_times(CHECK_TIMES, "checks")
    EXPECTED_SECONDS.update(check_times)
    # Consecutive checks of the lane kinds form a batch run `lanes` at a time; the report keeps
    # the checks' order (each printed when it and every check before it are done).
    i = 0
    try:
        while i < len(checks):
            j = i + 1
            if lanes > 1 and checks[i].kind in LANE_KINDS:
                while j < len(checks) and checks[j].kind in LANE_KINDS:
                    j += 1
            batch = checks[i:j]
            if len(batch) == 1:
                report(i + 1, batch[0], run_one(batch[0]))
            else:
                # The longest first (by the last run's times, if any), so that no long check
                # starts last beside an idle lane; the report keeps the list's order.
                order = sorted(range(len(batch)), key=lambda k: -(check_times.get(batch[k].name) or 0.0))
                with concurrent.futures.ThreadPoolExecutor(max_workers=lanes) as pool:
                    by_index = {k: pool.submit(run_one, batch[k]) for k in order}
                    futures = [by_index[k] for k in range(len(batch))]
                    try:
                        for n, (c, fut) in enumerate(zip(batch, futures)):
                            report(i + 1 + n, c, fut.result())
                    except KeyboardInterrupt:
                        for fut in futures:
                            fut.cancel()
                        for p in list(LIVE):   # the lanes' children: their threads see no signal
                            kill_group(p)
                        raise
            i = j
    except KeyboardInterrupt:
        print("interrupted")
        return 130

    if not list_only and rows:
        m = manifest_row(rows, complete=not filters)
        print(f"[manifest] {m.name} ... {m.status}" + (f": {m.detail}" if m.status != "pass" else ""))
        rows.append(m)

    print()
    if rows:
        print_table(rows)
    else:
        print("verify: no checks found in this tree (no impl/Cargo.toml, specs/**/*.cfg or proofs/_CoqProject)")
    OUT.mkdir(parents=True, exist_ok=True)
    images = crash_images_per_crate(rows)
    if images:
        print("\ncrash images checked per crate (explore:* and mutant:* rows): "
              + ", ".join(f"{c} {n:,}" for c, n in sorted(images.items())))
    sites = None
    if rows:
        import crash_sites
        cov = crash_sites.coverage(str(sites_dir))
        (OUT / "crash-sites.md").write_text(crash_sites.markdown(cov, str(sites_dir)))
        sites = {c: {k: v for k, v in d.items() if k != "rows"} for c, d in cov.items()}
        print(crash_sites.footer(cov) + ("" if not filters else " (only the checks this run selected)")
              + f"; list: {rel(OUT / 'crash-sites.md')}")
    for r in rows:
        if r.seconds is not None and r.status != "skip":
            check_times[r.name] = r.seconds
    save_times(CHECK_TIMES, check_times)
    report = {"depth": DEPTH, "checks": [r.as_json() for r in rows], "crash_images": images,
              "crash_sites": sites}
    (OUT / "verify.json").write_text(json.dumps(report, indent=2) + "\n")
    n = {s: sum(r.status == s for r in rows) for s in STATUSES}
    print(f"\nreport: {rel(OUT / 'verify.json')}")
    failed = [r for r in rows if r.status == "fail"]
    if failed:
        print("failed: " + ", ".join(r.name for r in failed))
        # Each failed row's detail again (a CI log is often read from its tail only, far from
        # the row's own line): the failing tests, the violation, the error.
        for r in failed:
            print(f"  {r.name}: {r.detail[:600]}")
    # The closing line in the plain "N passed, N failed" form that CI reads.
    print(f"verify: {n['pass']} passed, {n['fail']} failed, {n['skip']} skipped")
    return 1 if n["fail"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
