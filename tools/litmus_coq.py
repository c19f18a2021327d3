#!/usr/bin/env python3
"""tools/litmus_coq.py -- the litmus suite as Coq theorems (proofs/theories/Core/Px86Litmus.v).

    python3 tools/litmus_coq.py            write proofs/theories/Core/Px86Litmus.v
    python3 tools/litmus_coq.py --check    exit 1 if that file is not what this would write

Reads every modelcheck/litmus/*.litmus (the format of PX86.md, as impl/perdure-check/src/litmus/syntax.rs
parses it: `#` comments anywhere, a header of `name`/`line`/`init`, `thread N` blocks, `end`, then
`allow`/`forbid` lines; locations numbered in order of first mention, registers per thread, `N:r` or a
plain `r` that exactly one thread writes) and writes, per test, a `litmus` record of
proofs/theories/Core/Px86.v (every instruction and expectation beside its source line) and a theorem
`litmus_<name> : litmus_holds <name>` proved by `decide_litmus` (computation: the reachable states,
their closure and crash images for the forbids, a replayed schedule for each allow).  The generated file
is not to be edited by hand.  Python 3.11, standard library only.
"""
from __future__ import annotations

import argparse
import re
import textwrap
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "modelcheck" / "litmus"
OUT = ROOT / "proofs" / "theories" / "Core" / "Px86Litmus.v"

# The instructions Px86.v had before issue 20 §1; a test that uses only these is marked as such.
OLD = {"store", "load", "clflush", "clflushopt", "sfence"}


class LitmusError(Exception):
    pass


class Test:
    def __init__(self, path: Path):
        self.path = path
        self.name = ""
        self.comment: list[str] = []
        self.locs: dict[str, int] = {}
        self.unions: list[list[str]] = []
        self.init: list[tuple[str, int]] = []
        self.threads: list[tuple[int, list[tuple[str, list[str], str]]]] = []
        self.regs: list[dict[str, int]] = []
        self.exps: list[tuple[str, list[tuple[str, int]], str]] = []
        self.parse()

    def loc(self, name: str) -> int:
        return self.locs.setdefault(name, len(self.locs))

    def reg(self, t: int, name: str) -> int:
        return self.regs[t].setdefault(name, len(self.regs[t]))

    def parse(self) -> None:
        section = "header"
        for n, raw in enumerate(self.path.read_text().splitlines(), 1):
            if raw.startswith("#") and section == "header" and not self.name:
                self.comment.append(raw[1:].strip())
            text = raw.split("#")[0].strip()
            if not text:
                continue
            w = text.split()
            where = f"{self.path.name}:{n}"
            if w[0] == "name" and section == "header":
                self.name = w[1]
            elif w[0] == "line" and section == "header":
                self.unions.append(w[1:])
                for x in w[1:]:
                    self.loc(x)
            elif w[0] == "init" and section == "header":
                for kv in w[1:]:
                    k, v = kv.split("=")
                    self.init.append((k, int(v)))
                    self.loc(k)
            elif w[0] == "thread" and section in ("header", "threads"):
                section = "threads"
                self.threads.append((int(w[1]), []))
                self.regs.append({})
            elif w[0] == "end" and section == "threads":
                section = "outcomes"
            elif section == "threads":
                self.instr(w, text, where)
            elif w[0] in ("allow", "forbid") and section == "outcomes":
                self.exps.append((w[0], [tuple(kv.split("=")) for kv in w[1:]], text))
            else:
                raise LitmusError(f"{where}: cannot read `{text}`")
        if not self.name or section != "outcomes":
            raise LitmusError(f"{self.path.name}: no name or no `end`")

    def instr(self, w: list[str], text: str, where: str) -> None:
        t = len(self.threads) - 1
        op, a = w[0], w[1:]
        L, R = self.loc, (lambda r: self.reg(t, r))
        if op == "store" and len(a) == 2:
            c = f"IStore {L(a[0])} {int(a[1])}"
        elif op == "ntstore" and len(a) == 2:
            c = f"INtstore {L(a[0])} {int(a[1])}"
        elif op == "load" and len(a) == 2:
            c = f"ILoad {R(a[0])} {L(a[1])}"
        elif op in ("clflush", "clflushopt", "clwb") and len(a) == 1:
            c = f"I{op.capitalize()} {L(a[0])}"
        elif op in ("sfence", "mfence") and not a:
            c = f"I{op.capitalize()}"
        elif op == "cas" and len(a) == 3:
            c = f"ICas None {L(a[0])} {int(a[1])} {int(a[2])}"
        elif op == "cas" and len(a) == 4:
            c = f"ICas (Some {R(a[0])}) {L(a[1])} {int(a[2])} {int(a[3])}"
        elif op in ("xchg", "faa") and len(a) == 3:
            c = f"I{op.capitalize()} {R(a[0])} {L(a[1])} {int(a[2])}"
        else:
            raise LitmusError(f"{where}: unknown instruction `{text}`")
        self.threads[t][1].append((op, [c], text))

    def lines(self) -> list[int]:
        """The line of each location: `line` directives merged, every other location alone."""
        parent = list(range(len(self.locs)))

        def find(i: int) -> int:
            while parent[i] != i:
                i = parent[i]
            return i

        for group in self.unions:
            for x in group[1:]:
                parent[find(self.locs[x])] = find(self.locs[group[0]])
        ids: dict[int, int] = {}
        return [ids.setdefault(find(i), len(ids)) for i in range(len(self.locs))]

    def key(self, k: str, v: str) -> str:
        if ":" in k:
            tid, r = k.split(":")
            ts = [i for i, (n, _) in enumerate(self.threads) if n == int(tid)]
            if len(ts) != 1 or r not in self.regs[ts[0]]:
                raise LitmusError(f"{self.path.name}: no register {k}")
            return f"R ({ts[0]}, {self.regs[ts[0]][r]}, {int(v)})"
        writers = [i for i, regs in enumerate(self.regs) if k in regs]
        if len(writers) > 1:
            raise LitmusError(f"{self.path.name}: ambiguous register {k}")
        if writers:
            return f"R ({writers[0]}, {self.regs[writers[0]][k]}, {int(v)})"
        if k not in self.locs:
            raise LitmusError(f"{self.path.name}: unknown location {k}")
        return f"L ({self.locs[k]}, {int(v)})"

    def ident(self) -> str:
        return re.sub(r"[^A-Za-z0-9_]", "_", self.name)

    def uses(self) -> set[str]:
        return {op for _, ins in self.threads for op, _, _ in ins}

    def coq(self) -> str:
        ident, lines = self.ident(), self.lines()
        names = sorted(self.locs, key=self.locs.get)
        head = (f"(** {self.name} ([modelcheck/litmus/{self.path.name}]). " + comment(" ".join(self.comment)) +
                " Locations: " + ", ".join(f"{x} = {self.locs[x]} (line {lines[self.locs[x]]})" for x in names))
        out = [textwrap.fill(head, width=96, subsequent_indent="    ", break_on_hyphens=False) + ". *)"]
        out.append(f"Definition {ident} : litmus := {{|")
        out.append(f"  lt_line := λ l, nth l {list_coq(lines)} 0;")
        out.append(f"  lt_nlines := {max(lines, default=-1) + 1};")
        out.append(f"  lt_init := {list_coq([f'({self.locs[k]}, {v})' for k, v in self.init])};")
        progs = []
        for tid, ins in self.threads:
            body = ";\n".join(f"      {c[0]} (* {comment(text)} *)" for _, c, text in ins)
            progs.append(f"    (* thread {tid} *) [\n{body}]" if ins else f"    (* thread {tid} *) []")
        out.append("  lt_progs := [\n" + ";\n".join(progs) + "];")
        exps = []
        for pol, kvs, text in self.exps:
            keys = [self.key(k, v) for k, v in kvs]
            ls = [k[2:] for k in keys if k.startswith("L ")]
            rs = [k[2:] for k in keys if k.startswith("R ")]
            exps.append(f"    {pol.capitalize()} (Outcome {list_coq(ls)} {list_coq(rs)}) (* {comment(text)} *)")
        out.append("  lt_exps := [\n" + ";\n".join(exps) + "] |}.")
        out.append(f"\nTheorem litmus_{ident} : litmus_holds {ident}.\nProof. decide_litmus. Qed.\n")
        return "\n".join(out)


def comment(text: str) -> str:
    """Text safe inside a Coq comment (no string quotes, no comment delimiters)."""
    return text.replace('"', "'").replace("(*", "( *").replace("*)", "* )")


def wrap_list(xs: list[str]) -> str:
    return "[\n  " + textwrap.fill("; ".join(xs), width=98, subsequent_indent="  ", break_on_hyphens=False) + "]"


def list_coq(xs: list) -> str:
    return "[" + "; ".join(str(x) for x in xs) + "]"


HEADER = """(** * The litmus suite [modelcheck/litmus/], proved in the Px86 model of [Px86.v]

    Generated by [tools/litmus_coq.py] from the [*.litmus] files; do not edit
    by hand (run the script; [--check] says whether this file is current).

    One test per [*.litmus] file: its lines ([lt_line], locations numbered in
    order of first mention), its [init] values, its threads' programs and
    its [allow]/[forbid] lines, each beside its source text; and a theorem
    [litmus_<name> : litmus_holds <name>]: every [allow] outcome is
    observable (some execution and crash image yield it) and no [forbid]
    outcome is, in the operational semantics of [Px86.v] ([observable_from]
    with [init_with]).  Registers in outcomes are (thread index, register
    index, value), locations (location, value).  Each theorem is proved by
    [decide_litmus]: a computed closed set of states for the forbids, and a
    replayed schedule with a crash image for each allow
    ([litmus_holds_by_check]).

    Tests that use only [store], [load], [clflush], [clflushopt] and [sfence]
    (what [Px86.v] modelled before it gained the locked instructions and
    ntstores):{old}.
    Tests that use [mfence], [cas], [xchg], [faa], [ntstore] or [clwb]:{new}. *)
From stdpp Require Import base list.
From perdure.Core Require Import Px86.

"""


def generate() -> str:
    tests = [Test(p) for p in sorted(SUITE.glob("*.litmus"))]
    idents = [t.ident() for t in tests]
    if len(set(idents)) != len(idents):
        raise LitmusError("two tests have the same Coq name")
    old = [t.name for t in tests if t.uses() <= OLD]
    new = [t.name for t in tests if not t.uses() <= OLD]
    text = HEADER.replace("{old}", wrap(old)).replace("{new}", wrap(new))
    suite = ("(** The whole suite. *)\nDefinition litmus_suite : list litmus := " + wrap_list(idents) + ".\n\n"
             "Theorem litmus_suite_holds : Forall litmus_holds litmus_suite.\nProof.\n" +
             "".join(f"  constructor; [exact litmus_{i} |].\n" for i in idents) + "  constructor.\nQed.\n")
    return text + "\n".join(t.coq() for t in tests) + "\n" + suite


def wrap(names: list[str]) -> str:
    words, lines, cur = [f"[{n}]" for n in names], [], "    "
    for i, w in enumerate(words):
        w += "," if i + 1 < len(words) else ""
        if len(cur) + len(w) + 1 > 100:
            lines.append(cur.rstrip())
            cur = "    "
        cur += w + " "
    lines.append(cur.rstrip())
    return "\n" + "\n".join(lines) + f"\n    ({len(names)} tests)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    args = ap.parse_args()
    try:
        text = generate()
    except LitmusError as e:
        print(f"litmus_coq: {e}", file=sys.stderr)
        return 2
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"litmus_coq: {OUT.relative_to(ROOT)} is not current: run tools/litmus_coq.py", file=sys.stderr)
            return 1
        print("litmus_coq: Px86Litmus.v is current")
        return 0
    OUT.write_text(text)
    print(f"litmus_coq: wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
