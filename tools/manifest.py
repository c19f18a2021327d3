#!/usr/bin/env python3
"""tools/manifest.py -- the expected-rows manifest of `make verify` (tools/expected-rows.tsv).

A report whose rows are self-reported can lose a row without anyone noticing: a test that stops
running, a scenario dropped from a list, a skip that became permanent. The manifest lists every row
the report must have, so tools/verify.py can tell:

    name <TAB> kind <TAB> minimum <TAB> allowance

* name, kind: the row (as in out/verify.json);
* minimum: `-`, or `N unit` (e.g. `9000 images checked`): the row's `explored` text must say
  `M unit` with M >= N (the first `<number> unit` in it; thousands separators allowed);
* allowance (optional): `skip-ok: <reason>` -- the row may be `skip` (for a tool that may be
  absent, such as GenMC); any other skip fails the manifest row.

Lines starting with `#` and blank lines are comments. verify.py adds one row, `manifest:rows`, that
fails when a listed row is missing (only when no FILTER narrowed the run), is skipped without an
allowance, explores less than its minimum, or when the report has a row the manifest does not list
(under DEPTH=deep such rows, the deep-only models and mutants, are counted instead).
`python3 tools/manifest.py --write out/verify.json` prints a manifest for a report (minimums at 90%
of what the report explored, rounded down: slack for the rows whose exploration depends on timing),
to review and commit; `python3 tools/manifest.py --self-test` checks this module.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

PATH = Path(__file__).resolve().parent / "expected-rows.tsv"
SLACK = 0.9
NUMBER = r"(\d[\d,]*)"


class ManifestError(Exception):
    """A malformed manifest line: the file and line, and what is wrong."""


@dataclass
class Entry:
    name: str
    kind: str
    minimum: tuple[int, str] | None   # (N, unit)
    skip_ok: str | None               # the reason a skip is allowed
    line: int


def parse(text: str, source: str = "tools/expected-rows.tsv") -> dict[str, Entry]:
    entries: dict[str, Entry] = {}
    for i, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        cols = raw.split("\t")
        where = f"{source}:{i}"
        if len(cols) not in (3, 4):
            raise ManifestError(f"{where}: expected 3 or 4 tab-separated columns (name, kind, minimum"
                                f"[, skip-ok: reason]), found {len(cols)}")
        name, kind, minimum = (c.strip() for c in cols[:3])
        if not name or not kind:
            raise ManifestError(f"{where}: empty name or kind")
        if name in entries:
            raise ManifestError(f"{where}: {name} is listed twice (first on line {entries[name].line})")
        m = None
        if minimum != "-":
            g = re.fullmatch(NUMBER + r"((?: |-)\S.*)", minimum)
            if not g:
                raise ManifestError(f"{where}: minimum {minimum!r} is neither '-' nor 'N unit'")
            m = (int(g.group(1).replace(",", "")), g.group(2))
        skip_ok = None
        if len(cols) == 4:
            allowance = cols[3].strip()
            if not allowance.startswith("skip-ok:") or not allowance[len("skip-ok:"):].strip():
                raise ManifestError(f"{where}: the fourth column must be 'skip-ok: <reason>', not {allowance!r}")
            skip_ok = allowance[len("skip-ok:"):].strip()
        entries[name] = Entry(name, kind, m, skip_ok, i)
    return entries


def amount(explored: str, unit: str) -> int | None:
    """The number `explored` gives for `unit` (its first `<number><unit>`, where the unit starts
    with its separator: `" images checked"`, `"-step implementation trace"`), or None."""
    g = re.search(r"(?<![\w.])" + NUMBER + re.escape(unit) + r"(?!\w)", explored)
    return int(g.group(1).replace(",", "")) if g else None


def check(rows: list[dict], entries: dict[str, Entry], complete: bool,
          allow_unlisted: bool = False) -> tuple[str, str, str]:
    """(status, explored, detail) of the manifest row for `rows` (dicts with name, kind, status,
    explored). `complete`: the run was not narrowed by a FILTER, so every listed row must be there.
    `allow_unlisted`: rows the manifest does not list are counted, not failed (DEPTH=deep, whose
    deep-only models and mutants the DEPTH=ci manifest does not list)."""
    problems: list[str] = []
    unlisted = 0
    seen = set()
    for r in rows:
        name = r["name"]
        if name == "manifest:rows":
            continue
        seen.add(name)
        e = entries.get(name)
        if e is None:
            unlisted += 1
            if not allow_unlisted:
                problems.append(f"{name}: not in the manifest (add it to tools/expected-rows.tsv)")
            continue
        if r["kind"] != e.kind:
            problems.append(f"{name}: kind {r['kind']}, the manifest says {e.kind}")
        if r["status"] == "skip" and e.skip_ok is None:
            problems.append(f"{name}: skipped, and the manifest allows no skip ({r.get('detail', '')})")
        if e.minimum and r["status"] == "pass":
            n, unit = e.minimum
            got = amount(r.get("explored", ""), unit)
            if got is None:
                problems.append(f"{name}: its explored text no longer says how many{unit} "
                                f"(minimum {n})")
            elif got < n:
                problems.append(f"{name}: {got}{unit}, below the manifest's minimum of {n}")
    missing = [n for n in entries if n not in seen] if complete else []
    problems += [f"{n}: missing from the report (listed on line {entries[n].line})" for n in missing]
    listed = len(entries) if complete else len(seen & entries.keys())
    explored = (f"{listed} rows checked against tools/expected-rows.tsv "
                f"({sum(e.minimum is not None for e in entries.values())} with a minimum, "
                f"{sum(e.skip_ok is not None for e in entries.values())} allowed to skip)")
    if not complete:
        explored += "; a narrowed run: missing rows not checked"
    if allow_unlisted and unlisted:
        explored += f"; {unlisted} rows beyond the manifest (DEPTH=deep)"
    if problems:
        shown = problems[:20] + ([f"... and {len(problems) - 20} more"] if len(problems) > 20 else [])
        return "fail", explored, f"{len(problems)} problems: " + "; ".join(shown)
    return "pass", explored, ""


# Rows whose exploration varies from run to run: TLC stops a mutant at its first violation, after
# however many states its workers reached; the tutorial log's traces come from real threads.
NONDETERMINISTIC = ("tlc-mutant:", "trace:tutorial/")

# The measures a manifest prefers for a row, most telling first; else the largest number. A kill
# test's count of kills comes first: what it acknowledged between kills depends on the machine's
# speed and load, not on what the test explores.
MEASURES = [" SIGKILLs", " images checked", " distinct states", " interleavings", " PCT schedules",
            " random schedules", " histories", " crash-heavy histories", " executions",
            " schedules", "-step implementation trace", " expectations", " tests passed",
            " Lemma/Theorem/Corollary proved", " second-crash recoveries", " lazy recoveries"]


def unit_of(explored: str) -> tuple[int, str] | None:
    """The measure a manifest keeps for a row: the first of MEASURES its explored text gives,
    else its largest `<number> <words>` (up to three words, stopping at punctuation)."""
    for unit in MEASURES:
        n = amount(explored, unit)
        if n is not None:
            return n, unit
    best = None
    for g in re.finditer(r"(?<![\w.])" + NUMBER + r"( [A-Za-z][\w-]*(?: [A-Za-z][\w-]*){0,2})",
                         explored):
        n = int(g.group(1).replace(",", ""))
        if best is None or n > best[0]:
            best = (n, g.group(2))
    return best


def write(report: dict, old: dict[str, Entry] | None = None) -> str:
    lines = ["# Expected rows of `make verify` (DEPTH=ci): name, kind, minimum, [skip-ok: reason].",
             "# Format and rules: tools/manifest.py. Regenerate a draft with",
             "#   python3 tools/manifest.py --write out/verify.json > tools/expected-rows.tsv",
             "# and review the diff: a lower minimum or a new skip-ok needs a reason in the commit."]
    for r in report["checks"]:
        name = r["name"]
        if name == "manifest:rows":
            continue
        deterministic = not name.startswith(NONDETERMINISTIC)
        u = unit_of(r.get("explored", "")) if r["status"] == "pass" and deterministic else None
        minimum = "-" if u is None or int(u[0] * SLACK) == 0 else f"{int(u[0] * SLACK)}{u[1]}"
        allowance = ""
        if old and name in old and old[name].skip_ok:
            allowance = f"\tskip-ok: {old[name].skip_ok}"
        elif r["status"] == "skip":
            allowance = "\tskip-ok: " + (r.get("detail") or "REASON NEEDED")
        lines.append(f"{name}\t{r['kind']}\t{minimum}{allowance}")
    return "\n".join(lines) + "\n"


def self_test() -> None:
    text = "# c\nexplore:a\texplore\t90 images checked\nloom:x\tloom\t-\nskip:y\tgenmc\t-\tskip-ok: no genmc\n"
    e = parse(text)
    assert e["explore:a"].minimum == (90, " images checked") and e["skip:y"].skip_ok == "no genmc"
    row = lambda n, k, s="pass", x="": {"name": n, "kind": k, "status": s, "explored": x}
    good = [row("explore:a", "explore", x="3 schedules, 100 images checked"), row("loom:x", "loom"),
            row("skip:y", "genmc", "skip")]
    assert check(good, e, True)[0] == "pass", check(good, e, True)
    assert "missing" in check(good[:2], e, True)[2]
    assert check(good[:2], e, False)[0] == "pass"
    assert "below" in check([row("explore:a", "explore", x="89 images checked")] + good[1:], e, True)[2]
    assert "no longer says" in check([row("explore:a", "explore", x="9 runs")] + good[1:], e, True)[2]
    assert "allows no skip" in check([good[0], row("loom:x", "loom", "skip"), good[2]], e, True)[2]
    assert "not in the manifest" in check(good + [row("new:z", "explore")], e, True)[2]
    assert check(good + [row("new:z", "explore")], e, True, allow_unlisted=True)[0] == "pass"
    assert amount("1,234 images checked", " images checked") == 1234
    assert amount("x1234 images checked", " images checked") is None
    assert unit_of("1 schedules, 6 operations, 24 crash points (24 sampled images), 48 images checked") \
        == (48, " images checked")
    assert unit_of("824-step implementation trace accepted") == (824, "-step implementation trace")
    assert unit_of("up to 16 Px86 images, 3 runs") == (16, " Px86 images")
    assert parse("t:a\ttrace\t741-step implementation trace")["t:a"].minimum == \
        (741, "-step implementation trace")
    for bad in ["a\tb", "a\tb\tseven things", "a\tb\t-\tplease skip", "a\tb\t-\na\tb\t-"]:
        try:
            parse(bad)
        except ManifestError:
            continue
        raise AssertionError(f"accepted a malformed manifest: {bad!r}")
    rt = parse(write({"checks": good}))
    assert rt["explore:a"].minimum == (90, " images checked") and rt["skip:y"].skip_ok


def main(argv: list[str]) -> int:
    if argv[:1] == ["--self-test"]:
        self_test()
        print("manifest: self-test passed")
        return 0
    if len(argv) == 2 and argv[0] == "--write":
        try:
            report = json.loads(Path(argv[1]).read_text())
            old = parse(PATH.read_text()) if PATH.exists() else None
        except (OSError, ValueError, ManifestError) as e:
            print(f"manifest: {e}", file=sys.stderr)
            return 2
        sys.stdout.write(write(report, old))
        return 0
    print("usage: python3 tools/manifest.py --self-test | --write out/verify.json", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
