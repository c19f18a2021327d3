#!/usr/bin/env python3
"""tools/genmc-weaken.py -- ordering mutants of the GenMC models, made by a script.

    python3 tools/genmc-weaken.py [--mm rc11] [MODEL.c...]

For every atomic operation of a model that transcribes Rust code (a line with a `rust:` comment,
see tools/genmc-orderings.py) and every one of its orderings stronger than relaxed, writes a copy of
the model with that one ordering weakened one step, runs GenMC on it (default --rc11, the weakest
model GenMC offers besides IMM) and records whether GenMC reports an error:

    seq_cst -> acquire (load), release (store), acq_rel (read-modify-write, fence)
    acq_rel -> acquire and release (two mutants)
    acquire, release -> relaxed

The models spell orderings with the macros SC, ACQ, REL, RLX (the copies define all of them and
ACQ_REL); a compare_exchange's failure ordering is weakened as a load's. The copies go to a temporary folder; nothing in the tree changes. Only the model's own
rows that must verify are mutated (genmc-row lines without violates=, not named -mutant-), with
their flags, at the CI bound. Prints one Markdown table row per model row
(mutants, caught, not caught), then every mutant caught with GenMC's error, then every one it did
not catch, by line: each is either a
stronger-than-needed ordering, to be justified in the model's header, or a missing assertion.
Exit 0 unless GenMC could not run. Needs genmc on PATH (tools/genmc.sh).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "modelcheck" / "genmc"
CLAIM_RE = re.compile(r"/\*\s*rust:\s*\w+\s+(\w+)\s")
TOKEN_RE = re.compile(r"\b(SC|ACQ_REL|ACQ|REL)\b")
PRELUDE = ("#define ACQ_REL memory_order_acq_rel\n#define ACQ memory_order_acquire\n"
           "#define REL memory_order_release\n#define RLX memory_order_relaxed\n")


def weakenings(token: str, op: str, failure: bool = False) -> list[str]:
    if failure:   # a compare_exchange's failure ordering: a load's
        return {"SC": ["ACQ"], "ACQ": ["RLX"]}.get(token, [])
    if token == "SC":
        return {"load": ["ACQ"], "store": ["REL"]}.get(op, ["ACQ_REL"])
    if token == "ACQ_REL":
        return ["ACQ", "REL"]
    return ["RLX"]


def mutants(src: str):
    """(line number, description, mutated source) for each one-step weakening."""
    lines = src.splitlines(keepends=True)
    for i, line in enumerate(lines):
        c = CLAIM_RE.search(line)
        if not c:
            continue
        code = line[:c.start()]
        # The comment ends its statement's line, or stands alone on the line above a long call.
        j = i
        if not code.strip():   # a comment line above its statement
            j = i + 1
            code = lines[j] if j < len(lines) else ""
        for k, m in enumerate(TOKEN_RE.finditer(code)):
            failure = c.group(1) == "compare_exchange" and k == 1
            for w in weakenings(m.group(1), c.group(1), failure):
                new = code[:m.start()] + w + code[m.end():]
                if j == i:
                    new += line[c.start():]
                out = lines[:j] + [new] + lines[j + 1:]
                # GenMC v0.11 gives a failed compare-exchange its success ordering (README):
                # a failure-ordering mutant is listed, and marked, but is no evidence either way.
                tag = " (failure ordering)" if failure else ""
                yield j + 1, f"L{j + 1} {c.group(1)} {m.group(1)}->{w}{tag}", "".join(out)


def passing_rows(src: str, stem: str) -> list[tuple[str, list[str]]]:
    """(row, clang flags) of the model's genmc-row lines without violates= (the rows that verify)."""
    rows = []
    for name, rest in re.findall(r"^\s*\*?\s*genmc-row:\s*(\S+)(.*)$", src, re.M):
        toks = rest.split()
        if not any(t.startswith("violates=") for t in toks) and not name.count("-mutant-"):
            rows.append((name, toks))
    return rows or [(stem.replace("_", "-"), [])]


def run_genmc(path: Path, mm: str, flags: list[str]) -> tuple[bool, str]:
    r = subprocess.run(["genmc", f"--{mm}", "-disable-mm-detector", "-disable-estimation", "--", *flags, str(path)],
                       capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    if "No errors were detected" in out:
        return False, ""
    err = next((l.strip() for l in out.splitlines() if l.startswith(("Assertion violation", "Error"))), "")
    if not err:
        raise RuntimeError(f"genmc failed on {path}: {out[-500:]}")
    return True, err


def main(argv: list[str]) -> int:
    if shutil.which("genmc") is None:
        print("genmc-weaken: genmc not on PATH (tools/genmc.sh)", file=sys.stderr)
        return 2
    mm = "rc11"
    if "--mm" in argv:
        k = argv.index("--mm")
        mm = argv[k + 1]
        argv = argv[:k] + argv[k + 2:]
    models = [Path(a) for a in argv] or sorted(MODELS.glob("*.c"))
    survivors, caught_by = [], []
    print(f"| model | ordering mutants | caught under {mm} | not caught |")
    print("| --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            src = model.read_text()
            for row, flags in passing_rows(src, model.stem):
                total = caught = 0
                for _, what, text in mutants(src):
                    path = Path(tmp) / model.name
                    # Every macro a weakening may write (the model's own identical #defines are
                    # benign); added after the mutation, so line numbers are the model's.
                    path.write_text(text.replace("#include <stdatomic.h>\n", "#include <stdatomic.h>\n" + PRELUDE, 1))
                    hit, err = run_genmc(path, mm, flags)
                    total += 1
                    caught += hit
                    if hit:
                        caught_by.append(f"{row} {what}: {err}")
                    else:
                        survivors.append(f"{row} {what}")
                print(f"| `{row}` ({model.name}{' ' + ' '.join(flags) if flags else ''}) | {total} | {caught} | "
                      f"{total - caught} |")
    print()
    for c in caught_by:
        print(f"caught: {c}")
    for s in survivors:
        print(f"not caught: {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
