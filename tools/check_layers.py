#!/usr/bin/env python3
"""tools/check_layers.py -- the workspace's layering, checked (the `docs:layers` row of make verify).

Two rules of ARCHITECTURE.md, read off the tree:

1. Crate layers, from `cargo metadata` (normal dependencies only; dev- and build-dependencies may point
   anywhere, a dev-dependency cycle included):
     perdure-pm          -> no perdure crate
     perdure-check       -> perdure-pm
     perdure-ptm, perdure-memento, perdure-relax
                         -> perdure-pm (no construction on another, none on the checker or the harness)
     perdure-kv          -> perdure-pm, perdure-ptm
     perdure-harness     -> the checker, the constructions and perdure-kv
     perdure (the CLI)   -> anything below it
   A perdure crate the table does not name is an error: add it here with its layer.

2. No import circle among the modules of any crate's src/: module A refers to module B when A's file
   mentions `crate::B…` or `super::…` (a sibling); a module referring to its own parent or child is not a
   circle. The reading is textual: comments and `#[cfg(test)] mod tests { … }` at a file's end are skipped,
   and `use` aliases that rename a module (`use space::node;`) are followed only as far as the path they
   name. It can miss a circle made through a macro or a glob import; it does not invent one.

Exit 0 when both hold, 1 with one line per breach, 2 when cargo metadata cannot be read.
Standard library only.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMPL = ROOT / "impl"

CONSTRUCTIONS = {"perdure-ptm", "perdure-memento", "perdure-relax"}
ALLOWED: dict[str, set[str]] = {
    "perdure-pm": set(),
    "perdure-check": {"perdure-pm"},
    **{c: {"perdure-pm"} for c in CONSTRUCTIONS},
    "perdure-kv": {"perdure-pm", "perdure-ptm"},
    "perdure-harness": {"perdure-pm", "perdure-check", "perdure-kv"} | CONSTRUCTIONS,
    "perdure": {"perdure-pm", "perdure-check", "perdure-harness", "perdure-kv"} | CONSTRUCTIONS,
}


def crate_breaches() -> tuple[list[str], list[tuple[str, Path]]]:
    out = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
                         cwd=IMPL, capture_output=True, text=True)
    if out.returncode != 0:
        out = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps"],
                             cwd=IMPL, capture_output=True, text=True)
    if out.returncode != 0:
        print(f"check_layers: cargo metadata failed: {out.stderr.strip()[:300]}", file=sys.stderr)
        sys.exit(2)
    meta = json.loads(out.stdout)
    names = {p["name"] for p in meta["packages"]}
    breaches, crates = [], []
    for p in meta["packages"]:
        name = p["name"]
        crates.append((name, Path(p["manifest_path"]).parent / "src"))
        if name not in ALLOWED:
            breaches.append(f"{name}: a workspace crate with no layer in tools/check_layers.py")
            continue
        for d in p["dependencies"]:
            if d["name"] in names and d.get("kind") is None and d["name"] not in ALLOWED[name]:
                breaches.append(f"{name}: a normal dependency on {d['name']} (allowed: "
                                f"{', '.join(sorted(ALLOWED[name])) or 'none'}); make it a dev-dependency "
                                f"or move the code to the layer that may use it")
    return breaches, crates


def module_of(src: Path, f: Path) -> str:
    parts = list(f.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return "::".join(parts)


def strip(text: str) -> str:
    text = re.sub(r"(?s)#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text)
    return "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("//"))


def circles(src: Path) -> list[list[str]]:
    files = sorted(src.rglob("*.rs"))
    mods = {module_of(src, f): f for f in files}
    edges: dict[str, set[str]] = {m: set() for m in mods}

    def resolve(m: str, path: str) -> None:
        parts = path.split("::")
        for k in range(len(parts), 0, -1):
            t = "::".join(parts[:k])
            if t in mods:
                if t != m and not m.startswith(t + "::") and not t.startswith(m + "::"):
                    edges[m].add(t)
                return

    for m, f in mods.items():
        text = strip(f.read_text(errors="replace"))
        for path in re.findall(r"\bcrate::([a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*)", text):
            resolve(m, path)
        parent = m.rsplit("::", 1)[0] if "::" in m else ""
        for path in re.findall(r"\bsuper::([a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*)", text):
            resolve(m, f"{parent}::{path}" if parent else path)
    # Tarjan's strongly connected components, iteratively.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in mods:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def main() -> int:
    breaches, crates = crate_breaches()
    n_mods = 0
    for name, src in sorted(crates):
        if not src.is_dir():
            continue
        n_mods += sum(1 for _ in src.rglob("*.rs"))
        for comp in circles(src):
            breaches.append(f"{name}: modules {' <-> '.join(comp)} import each other (an import circle "
                            f"in src/); move what both need to one of them or to a module below both")
    print(f"check_layers: {len(crates)} crates, {n_mods} source files of src/ read")
    for b in breaches:
        print(f"  {b}")
    print("check_layers: " + ("layering holds" if not breaches else f"{len(breaches)} breaches"))
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
