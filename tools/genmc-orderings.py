#!/usr/bin/env python3
"""tools/genmc-orderings.py -- keep the GenMC models' memory orderings in step with the Rust code.

    python3 tools/genmc-orderings.py [--self-test | --with-self-test] [MODEL.c...]

Every atomic operation of a model in modelcheck/genmc/ that transcribes Rust code carries a comment

    /* rust: <function> <op> <Ordering> [<Ordering>] */

(op: load, store, swap, compare_exchange, fetch_add, fetch_sub, fence; two orderings for a
compare_exchange). For each function a model names, this script finds `fn <function>` in the Rust
files the model's header cites (`impl/.../*.rs`), extracts the atomic operations of its body with
their `Ordering`s (statements under `#[cfg(perdure_loom)]` left out: the models transcribe the
std build), and compares them as multisets of (op, orderings) -- textual occurrences, so an
operation inside a loop counts once on both sides:

  - by default the two must be equal: a changed, added or removed ordering in the Rust function
    fails the check until the model is updated;
  - a function the header lists on a `genmc-partial: <function>...` line is transcribed only in
    part (e.g. attempt_update's validation): each (op, orderings) the model claims must still be
    in the Rust function at least as often.

When several functions of the cited files have the name, the one that matches is used (a failure
names them all). Exit 0 when every model agrees, 1 otherwise; the last line is
`genmc-orderings: N models, F functions, O operations checked, E disagreements`.
--self-test checks the extraction and the comparison on inline examples, and that the lock model
stops agreeing with impl/perdure-ptm/src/rwlock.rs, and the CX model with
impl/perdure-ptm/src/cx/queue.rs, when one of its orderings is changed (in memory: the tree is not
touched); --with-self-test runs it first, then the check. Python 3.11, standard library only.
"""
from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "modelcheck" / "genmc"
ORDS = r"(?:SeqCst|Acquire|Release|AcqRel|Relaxed)"
OPS = ("load", "store", "swap", "compare_exchange", "fetch_add", "fetch_sub", "fence")
CLAIM_RE = re.compile(r"rust:\s*(\w+)\s+(\w+)\s+(" + ORDS + r")(?:\s+(" + ORDS + r"))?")
LOOSE_CLAIM_RE = re.compile(r"rust:\s*\S")
PATH_RE = re.compile(r"\bimpl/[\w\-/]+\.rs\b")
PARTIAL_RE = re.compile(r"genmc-partial:\s*([\w ]+)")
CALL_RE = re.compile(r"(?:\.(load|store|swap|compare_exchange|fetch_add|fetch_sub)|\b(fence))\s*\(")


def claims_of(text: str) -> tuple[dict[str, Counter], list[str]]:
    """{function: Counter of (op, orderings)} of a model's `rust:` comments, and the malformed ones."""
    by_fn: dict[str, Counter] = {}
    bad = []
    for line in text.splitlines():
        for m in re.finditer(r"/\*(.*?)\*/", line):
            body = m.group(1)
            if not LOOSE_CLAIM_RE.search(body):
                continue
            c = CLAIM_RE.search(body)
            if c is None or c.group(2) not in OPS:
                bad.append(body.strip())
                continue
            fn, op = c.group(1), c.group(2)
            ords = tuple(o for o in (c.group(3), c.group(4)) if o)
            by_fn.setdefault(fn, Counter())[(op, ords)] += 1
    return by_fn, bad


def strip_loom(src: str) -> str:
    """Drop each `#[cfg(perdure_loom)]` attribute and the line it applies to, and comments."""
    out, skip = [], False
    for line in src.splitlines():
        if skip:
            skip = False
            continue
        if line.strip() == "#[cfg(perdure_loom)]":
            skip = True
            continue
        out.append(re.sub(r"//.*$", "", line))
    return "\n".join(out)


def function_bodies(src: str, name: str) -> list[str]:
    """The bodies of every `fn name` in src (brace-matched)."""
    bodies = []
    for m in re.finditer(r"\bfn\s+" + re.escape(name) + r"\b", src):
        # The signature ends at the first `{` (a body) or `;` (none) outside its ( ) [ ] < >.
        depth, i = 0, m.end()
        while i < len(src) and not (depth == 0 and src[i] in "{;"):
            depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(src[i], 0)
            i += 1
        if i >= len(src) or src[i] == ";":
            continue
        start = i + 1
        depth, i = 1, start
        while i < len(src) and depth:
            depth += {"{": 1, "}": -1}.get(src[i], 0)
            i += 1
        bodies.append(src[start:i - 1])
    return bodies


def without_nested_calls(args: str) -> str:
    """args with every parenthesised part removed (the orderings of nested calls are theirs)."""
    out, depth = [], 0
    for ch in args:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def operations_of(body: str) -> Counter:
    """Counter of (op, orderings) of the atomic calls in a Rust function body."""
    ops: Counter = Counter()
    for m in CALL_RE.finditer(body):
        op = m.group(1) or m.group(2)
        depth, i = 1, m.end()
        while i < len(body) and depth:
            depth += {"(": 1, ")": -1}.get(body[i], 0)
            i += 1
        args = body[m.end():i - 1]
        ords = tuple(re.findall(r"\b" + ORDS + r"\b", without_nested_calls(args)))
        if ords:   # a call without an Ordering is not an atomic operation (Vec::swap, ...)
            ops[(op, ords)] += 1
    return ops


def fmt(c: Counter) -> str:
    return ", ".join(f"{n}x {op} {'/'.join(o)}" for (op, o), n in sorted(c.items())) or "none"


def compare(claimed: Counter, actual: Counter, partial: bool) -> bool:
    if partial:
        return all(actual[k] >= n for k, n in claimed.items())
    return claimed == actual


def check_model(model: Path, overrides: dict[str, str] | None = None) -> tuple[int, int, list[str]]:
    """(functions, operations checked, disagreements) for one model; `overrides` gives the text of
    some cited files in place of the tree's (the self-test's changed orderings)."""
    text = model.read_text(errors="replace")
    claims, bad = claims_of(text)
    problems = [f"{model.name}: malformed rust: comment {b!r}" for b in bad]
    files = sorted(set(PATH_RE.findall(text)))
    partial = {f for m in PARTIAL_RE.finditer(text) for f in m.group(1).split()}
    srcs = {}
    for f in files:
        p = ROOT / f
        if not p.is_file():
            problems.append(f"{model.name}: cites {f}, which does not exist")
            continue
        srcs[f] = strip_loom((overrides or {}).get(f) or p.read_text(errors="replace"))
    n_ops = 0
    for fn, claimed in sorted(claims.items()):
        n_ops += sum(claimed.values())
        candidates = [(f, operations_of(b)) for f, s in srcs.items() for b in function_bodies(s, fn)]
        if not candidates:
            problems.append(f"{model.name}: no `fn {fn}` in the files it cites ({', '.join(files) or 'none'})")
            continue
        if not any(compare(claimed, ops, fn in partial) for _, ops in candidates):
            rust = "; ".join(f"{f}: {fmt(ops)}" for f, ops in candidates)
            problems.append(f"{model.name}: {fn}{' (partial)' if fn in partial else ''}: the model has "
                            f"{fmt(claimed)}; the Rust code has {rust}")
    return len(claims), n_ops, problems


def self_test() -> None:
    rust = """
    fn copy_from(&self) {
        self.ticket.store(t, Ordering::SeqCst);
        fence(Ordering::Release);
        let x = v.swap(1, SeqCst);
        #[cfg(perdure_loom)]
        fence(SeqCst);
        let _ = w.compare_exchange(a,
            b, SeqCst, Ordering::Relaxed);
        v.swap(0, 1); // not atomic: no ordering
        a.store(b.load(Ordering::Relaxed), Ordering::Relaxed);
    }
    fn decl(x: [u64; 2]);
    pub(crate) fn sig(words: &[AtomicU64; 2]) -> u64 { x.load(Ordering::Acquire) }
    fn other() { x.load(Ordering::Acquire); }
    """
    ops = operations_of(function_bodies(strip_loom(rust), "copy_from")[0])
    want = Counter({("store", ("SeqCst",)): 1, ("fence", ("Release",)): 1, ("swap", ("SeqCst",)): 1,
                    ("compare_exchange", ("SeqCst", "Relaxed")): 1, ("load", ("Relaxed",)): 1,
                    ("store", ("Relaxed",)): 1})
    assert ops == want, ops
    assert [operations_of(b) for b in function_bodies(rust, "sig")] == [Counter({("load", ("Acquire",)): 1})]
    assert function_bodies(rust, "decl") == []
    model = """
    atomic_store(&t, x, SC); /* rust: copy_from store SeqCst */
    atomic_thread_fence(REL); /* rust: copy_from fence Release */
    /* rust: copy_from swap SeqCst */ /* rust: copy_from compare_exchange SeqCst Relaxed */
    /* rust: copy_from load Relaxed */ /* rust: copy_from store Relaxed */
    """
    claims, bad = claims_of(model)
    assert not bad and compare(claims["copy_from"], ops, False)
    changed = Counter(ops)
    changed[("fence", ("Release",))] -= 1
    changed[("fence", ("SeqCst",))] += 1
    changed = +changed
    assert not compare(claims["copy_from"], changed, False), "a changed ordering must be caught"
    assert not compare(claims["copy_from"], changed, True), "... also in a partial transcription"
    more = Counter(ops)
    more[("load", ("Relaxed",))] += 1
    assert not compare(claims["copy_from"], more, False) and compare(claims["copy_from"], more, True)
    _, bad = claims_of("/* rust: copy_from stor SeqCst */ /* rust: f load */")
    assert len(bad) == 2, bad
    # On the tree: the lock model agrees with rwlock.rs, and stops agreeing when one ordering of
    # the Rust code changes (a reader's arrival swap SeqCst -> AcqRel).
    model, rs = MODELS / "rwlock.c", "impl/perdure-ptm/src/rwlock.rs"
    if model.is_file() and (ROOT / rs).is_file():
        src = (ROOT / rs).read_text()
        arrival = "self.slot(tid).swap(READING, SeqCst);"
        assert src.count(arrival) == 1, "rwlock.rs changed: update the self-test's example"
        assert check_model(model)[2] == []
        problems = check_model(model, {rs: src.replace(arrival, "self.slot(tid).swap(READING, AcqRel);")})[2]
        assert len(problems) == 1 and "shared_try_lock" in problems[0], problems
    # The same on the CX model: the hazard pointer's publication SeqCst -> Release in queue.rs.
    model, rs = MODELS / "cx_queue.c", "impl/perdure-ptm/src/cx/queue.rs"
    if model.is_file() and (ROOT / rs).is_file():
        src = (ROOT / rs).read_text()
        publish = "self.hp[tid].0[slot].store(p, SeqCst);"
        assert src.count(publish) == 1, "queue.rs changed: update the self-test's example"
        assert check_model(model)[2] == []
        problems = check_model(model, {rs: src.replace(publish, "self.hp[tid].0[slot].store(p, Release);")})[2]
        assert len(problems) == 1 and "protect" in problems[0], problems
    print("genmc-orderings: self-test passed")


def main(argv: list[str]) -> int:
    if "--self-test" in argv:
        self_test()
        return 0
    if "--with-self-test" in argv:
        self_test()
        argv = [a for a in argv if a != "--with-self-test"]
    models = [Path(a) for a in argv] or sorted(MODELS.glob("*.c"))
    n_fn = n_ops = 0
    problems: list[str] = []
    for m in models:
        f, o, p = check_model(m)
        n_fn, n_ops = n_fn + f, n_ops + o
        problems += p
    for p in problems:
        print(p)
    print(f"genmc-orderings: {len(models)} models, {n_fn} functions, {n_ops} operations checked, "
          f"{len(problems)} disagreements")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
