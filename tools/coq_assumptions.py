#!/usr/bin/env python3
"""tools/coq_assumptions.py -- `Print Assumptions` on every headline theorem, against proofs/AXIOMS.md.

    python3 tools/coq_assumptions.py [--proofs DIR] [--keep DIR]

`make -C proofs` (target `all`, so also the `coq:proofs` row of tools/verify.py) runs it after the
build. Python 3.11, standard library only.

It reads the table of proofs/AXIOMS.md whose header row is `| theorem | assumptions |`: one row per
theorem, its fully qualified name in backquotes (`perdure.PM.SizeClass.class_impl_spec`), and either
`none` (Coq must answer "Closed under the global context") or the backquoted names of exactly the
assumptions Coq must print, comma-separated. An axiom is named as Coq prints it under "Axioms:"; any
other kind of assumption Coq reports (section variables, type-in-type, unsafe fixpoints, assumed
positivity) is named as Coq's heading without its colon, then ": ", then the name
(`Section Variables: x`).

It writes .v files into a temporary folder (deleted afterwards), each Requiring every file of
proofs/_CoqProject, and compiles them with coqc and the -Q/-R mappings of _CoqProject (against the
.vo files the build made): the first runs `Redirect "l_<n>" Locate <theorem>.` for each row (so a
listed theorem that does not exist is found), the second `Redirect "a_<n>" Print Assumptions
<theorem>.` for each theorem that exists. Each answer is compared with its row, as sets of names.
Before the second, the rows that say `none` are checked together: a third file defines one term that
mentions each of them (`let _ := @<theorem> in ... tt`) and runs Print Assumptions on it, whose
answer is the union of theirs; when it is "Closed under the global context", every one of them is
closed and the second file asks only about the other rows (if it is not, or the file does not
compile, the second file asks about every theorem, as before).

Exit 0, printing "assumptions: N theorems checked, all as AXIOMS.md lists", when every answer is
what the table says. Exit 1 when one is not (one line per theorem: what the table lists, what Coq
answered, the difference), when a listed theorem does not exist, when the table is missing, empty
or names a theorem twice, or when coqc fails (its message is printed). Exit 2 on bad usage.
--keep DIR writes the generated files into DIR, and keeps them, instead of a temporary folder.
"""
from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLOSED = "Closed under the global context"
HEADER_RE = re.compile(r"^\|\s*theorem\s*\|\s*assumptions\s*\|\s*$", re.I)
SEPARATOR_RE = re.compile(r"^\|[\s:|-]+\|\s*$")
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_']*(\.[A-Za-z_][A-Za-z0-9_']*)+$")


class Failure(Exception):
    pass


def read_table(axioms_md: Path) -> list[tuple[str, frozenset[str], int]]:
    """The rows (theorem, expected assumptions, line number) of the `| theorem | assumptions |` table."""
    if not axioms_md.is_file():
        raise Failure(f"{axioms_md} is missing")
    lines = axioms_md.read_text(encoding="utf-8").splitlines()
    start = next((i for i, l in enumerate(lines) if HEADER_RE.match(l)), None)
    if start is None:
        raise Failure(f"{axioms_md}: no table with the header row `| theorem | assumptions |`")
    rows: list[tuple[str, frozenset[str], int]] = []
    seen: dict[str, int] = {}
    for no in range(start + 1, len(lines)):
        line = lines[no].strip()
        if not line.startswith("|"):
            break
        if SEPARATOR_RE.match(line):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        where = f"{axioms_md.name}:{no + 1}"
        if len(cells) != 2:
            raise Failure(f"{where}: a row needs two cells, theorem and assumptions: {line}")
        m = re.fullmatch(r"`([^`]+)`", cells[0])
        if not m or not NAME_RE.match(m.group(1)):
            raise Failure(f"{where}: the theorem cell must be one fully qualified name in backquotes: {cells[0]}")
        name = m.group(1)
        if name in seen:
            raise Failure(f"{where}: {name} is listed twice (first on line {seen[name]})")
        seen[name] = no + 1
        if cells[1] == "none":
            expected: frozenset[str] = frozenset()
        else:
            parts = [p.strip() for p in cells[1].split(",")]
            if not all(re.fullmatch(r"`[^`]+`", p) for p in parts):
                raise Failure(f"{where}: the assumptions cell must be `none` or backquoted names "
                              f"separated by commas: {cells[1]}")
            expected = frozenset(p[1:-1].strip() for p in parts)
        rows.append((name, expected, no + 1))
    if not rows:
        raise Failure(f"{axioms_md}: the `| theorem | assumptions |` table has no rows")
    return rows


def read_coqproject(proofs: Path) -> tuple[list[str], list[str]]:
    """The coqc load-path arguments (-Q/-R, with absolute folders) and the logical names of the
    .v files of _CoqProject."""
    words = shlex.split((proofs / "_CoqProject").read_text(encoding="utf-8"), comments=True)
    args: list[str] = []
    mappings: list[tuple[Path, str]] = []
    vfiles: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("-Q", "-R") and i + 2 < len(words):
            folder = (proofs / words[i + 1]).resolve()
            args += [w, str(folder), words[i + 2]]
            mappings.append((folder, words[i + 2]))
            i += 3
            continue
        if w == "-arg" and i + 1 < len(words):
            args += shlex.split(words[i + 1])
            i += 2
            continue
        if w.endswith(".v"):
            vfiles.append(w)
        i += 1
    modules = []
    for v in vfiles:
        path = (proofs / v).resolve()
        for folder, logical in mappings:
            if path.is_relative_to(folder):
                rel = path.relative_to(folder).with_suffix("")
                modules.append(".".join([logical, *rel.parts]) if logical else ".".join(rel.parts))
                break
        else:
            raise Failure(f"_CoqProject: {v} is under no -Q/-R folder")
    return args, modules


def parse_answer(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The assumptions in one `Print Assumptions` answer: the axioms' names as Coq printed them
    (the shortest suffix that names them where they are printed), and the other assumptions as
    `heading: name`."""
    text = text.strip()
    if text == CLOSED:
        return frozenset(), frozenset()
    axioms: set[str] = set()
    others: set[str] = set()
    heading = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if line[0].isspace():
            if heading is None:
                raise Failure(f"cannot read this Print Assumptions answer:\n{text}")
            continue   # the rest of an assumption's type
        if line.endswith(":") and " : " not in line:
            heading = line[:-1].strip()
            continue
        if heading is None:
            raise Failure(f"cannot read this Print Assumptions answer:\n{text}")
        name = line.split(" : ", 1)[0].strip()   # a long name is alone on its line, its type below
        if heading == "Axioms":
            axioms.add(name)
        else:
            others.add(f"{heading}: {name}")
    if not axioms and not others:
        raise Failure(f"cannot read this Print Assumptions answer:\n{text}")
    return frozenset(axioms), frozenset(others)


def coqc(args: list[str], work: Path, vname: str, body: str) -> subprocess.CompletedProcess:
    (work / vname).write_text(body, encoding="utf-8")
    return subprocess.run(["coqc", *args, vname], cwd=work, capture_output=True, text=True)


def show(names: frozenset[str]) -> str:
    return ", ".join(f"`{n}`" for n in sorted(names)) if names else "none"


def check(proofs: Path, work: Path) -> int:
    rows = read_table(proofs / "AXIOMS.md")
    args, modules = read_coqproject(proofs)
    if shutil.which("coqc") is None:
        raise Failure("coqc is not on PATH")
    requires = "".join(f"Require {m}.\n" for m in modules)

    def run(vname: str, body: str) -> None:
        r = coqc(args, work, vname, requires + body)
        if r.returncode != 0:
            sys.stderr.write(r.stdout + r.stderr)
            raise Failure(f"coqc failed on the generated {vname} (its message is above; "
                          f"is the build up to date?)")

    # Pass 1: which listed names exist? Locate never fails; Print Assumptions on a missing name would.
    run("HeadlineLocate.v", "".join(f'Redirect "l_{n}" Locate {name}.\n'
                                    for n, (name, _, _) in enumerate(rows)))
    present, missing = [], 0
    for n, row in enumerate(rows):
        out = read_out(work, f"l_{n}", row[0])
        if out.startswith("No object"):
            missing += 1
            print(f"assumptions: {row[0]}: AXIOMS.md line {row[2]} lists it, but it does not exist "
                  f"(Locate answers \"{' '.join(out.split())}\")", file=sys.stderr)
        else:
            present.append(row)

    # Pass 2a: the rows that say `none`, all at once.  Print Assumptions of one definition that
    # mentions each of them answers the union of their assumptions: when it is closed, so is each
    # of them (one traversal of the shared dependencies instead of one per theorem; per theorem,
    # the check cost about 3 minutes of CPU).  When it is not closed, or the definition does not
    # compile, pass 2 asks about each of them.
    answers_of: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
    closed_rows = [n for n, (_, expected, _) in enumerate(present) if not expected]
    if len(closed_rows) > 1:
        bundle = ("Definition perdure_headline_bundle : unit :=\n"
                  + "".join(f"  let _ := @{present[n][0]} in\n" for n in closed_rows)
                  + "  tt.\nRedirect \"b_0\" Print Assumptions perdure_headline_bundle.\n")
        r = coqc(args, work, "HeadlineBundle.v", requires + bundle)
        if r.returncode == 0 and read_out(work, "b_0", "the bundle of the `none` rows") == CLOSED:
            for n in closed_rows:
                answers_of[n] = (frozenset(), frozenset())

    # Pass 2: Print Assumptions on each one that exists (and that pass 2a did not settle).
    ask = [n for n in range(len(present)) if n not in answers_of]
    if ask:
        run("HeadlineAssumptions.v", "".join(f'Redirect "a_{n}" Print Assumptions {present[n][0]}.\n'
                                             for n in ask))
        for n in ask:
            answers_of[n] = parse_answer(read_out(work, f"a_{n}", present[n][0]))
    answers = [answers_of[n] for n in range(len(present))]

    # Pass 3, only when some theorem assumes an axiom: Coq printed the axiom's shortest name;
    # Locate gives the fully qualified one, which is what the table lists.
    printed = sorted(set().union(*(ax for ax, _ in answers)))
    full: dict[str, str] = {}
    if printed:
        run("HeadlineAxioms.v", "".join(f'Redirect "q_{n}" Locate {ax}.\n' for n, ax in enumerate(printed)))
        for n, ax in enumerate(printed):
            words = read_out(work, f"q_{n}", ax).split()
            full[ax] = words[1] if len(words) > 1 and words[0] == "Constant" else ax

    differ = 0
    for (name, expected, line), (axioms, others) in zip(present, answers):
        got = frozenset(full[ax] for ax in axioms) | others
        if got != expected:
            differ += 1
            extra, lacking = got - expected, expected - got
            diff = "; ".join(part for part in (
                f"not in the table: {show(extra)}" if extra else "",
                f"listed but not assumed: {show(lacking)}" if lacking else "") if part)
            print(f"assumptions: {name}: AXIOMS.md line {line} lists {show(expected)}, "
                  f"Print Assumptions answers {show(got)} ({diff})", file=sys.stderr)
    if missing or differ:
        what = [f"{differ} {'differs' if differ == 1 else 'differ'} from it" if differ else "",
                f"{missing} {'does' if missing == 1 else 'do'} not exist" if missing else ""]
        print(f"assumptions: FAILED, of the {len(rows)} theorems proofs/AXIOMS.md lists, "
              + " and ".join(w for w in what if w), file=sys.stderr)
        return 1
    print(f"assumptions: {len(rows)} theorems checked, all as AXIOMS.md lists")
    return 0


def read_out(work: Path, stem: str, name: str) -> str:
    out = work / f"{stem}.out"
    if not out.is_file():
        raise Failure(f"coqc wrote no answer for {name} ({out.name})")
    return out.read_text(encoding="utf-8", errors="replace").strip()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--proofs", type=Path, default=ROOT / "proofs",
                    help="the folder with _CoqProject and AXIOMS.md (default: proofs/ of this tree)")
    ap.add_argument("--keep", type=Path, help="write the generated files here, and keep them")
    a = ap.parse_args()
    proofs = a.proofs.resolve()
    try:
        if a.keep:
            a.keep.mkdir(parents=True, exist_ok=True)
            return check(proofs, a.keep.resolve())
        with tempfile.TemporaryDirectory(prefix="coq-assumptions-") as tmp:
            return check(proofs, Path(tmp))
    except Failure as e:
        print(f"assumptions: FAILED, {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
