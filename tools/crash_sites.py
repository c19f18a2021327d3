#!/usr/bin/env python3
"""Crash-site coverage: which persistence call sites the checks crashed right after.

The Rust side (impl/perdure-pm/src/site.rs) writes, with PERDURE_SITES_OUT=DIR, one
ledger file per process: `reached<TAB>file:line:col` the first time a process made a
simulated access from a site, `crashed<TAB>file:line:col` the first time it built a
crash image of a point captured right after that site's event. This module merges the
ledgers with a static scan of the sources, which finds the sites no check reached.

The scan is a heuristic, not a type checker: a site is a call of `pwb`, `pfence`,
`psync`, `ntstore`; of `store`, `compare_exchange(_weak)`, `swap`, `fetch_add` on a
receiver built from a pool word (`word(..)`, `dword(..)`, `pm_word(..)`, `w(..)` or a
local bound to one); or of a crate's own `#[track_caller]` wrapper of those. Lines
inside `#[track_caller]` functions are not sites (their calls report their callers),
nor are `#[cfg(test)]` modules. The universe is the scan's sites plus every site a
ledger reached outside a `#[cfg(test)]` module, so a site the scan misses but a check reaches still counts; a site
the scan misses that nothing reaches is invisible (`tools/crash-sites-allow.tsv`
lists scanned sites that are not persistence calls, or are unreachable, with why; an entry
that matches no site is named in the footer).

Usage: crash_sites.py DIR [--json OUT] [--markdown OUT]
"""
import json
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Per crate: the source files in scope (paths relative to impl/, as rustc names them).
SCOPES = {
    "ptm": ["perdure-ptm/src"],
    "memento": ["perdure-memento/src"],
    "relax": ["perdure-relax/src"],
    "pm": ["perdure-pm/src/heap.rs", "perdure-pm/src/commit_log.rs"],
}

ALWAYS = {"pwb", "pfence", "psync", "psync_checked", "ntstore"}
AMBIGUOUS = {"store", "compare_exchange", "compare_exchange_weak", "swap", "fetch_add"}
PRODUCER = re.compile(r"\b(word|word_unchecked|dword|pm_word|w)\s*\(")
FN = re.compile(r"\bfn\s+(\w+)")
LET = re.compile(r"\blet\s+(?:mut\s+)?(\w+)\s*(?::\s*([^=]+))?=\s*(.*)")
PARAM_PM = re.compile(r"(\w+)\s*:\s*&?\s*(?:Pm(?:Word|Dword))\b")


def strip_comment(line):
    # Drops `// ...` outside a string literal (good enough for this tree).
    out, in_str, i = [], False, 0
    while i < len(line):
        c = line[i]
        if c == '"' and (i == 0 or line[i - 1] != "\\"):
            in_str = not in_str
        if not in_str and line.startswith("//", i):
            break
        out.append(c)
        i += 1
    return "".join(out)


def rust_files(crate_scope):
    for p in crate_scope:
        full = os.path.join(ROOT, "impl", p)
        if os.path.isfile(full):
            yield p
        else:
            for d, _, fs in os.walk(full):
                for f in sorted(fs):
                    if f.endswith(".rs"):
                        yield os.path.relpath(os.path.join(d, f), os.path.join(ROOT, "impl"))


def parse(path):
    """Lines (comment-stripped), with for each line: inside a test module,
    inside a #[track_caller] function, and the function's PM locals."""
    with open(os.path.join(ROOT, "impl", path)) as f:
        raw = f.read().split("\n")
    lines = [strip_comment(l) for l in raw]
    info = []
    depth = 0
    stack = []  # (kind, depth at open): kind in {"test", "tc", "fn"}
    pending_attr = None  # "test" / "tc" awaiting its item
    pending_fn = None
    pm_vars = [set()]
    for text in lines:
        s = text.strip()
        if s.startswith("#[cfg(test)]"):
            pending_attr = "test"
        elif s.startswith("#[track_caller]"):
            pending_attr = "tc"
        m = FN.search(text)
        if m and not s.startswith("#"):
            pending_fn = pending_attr if pending_attr == "tc" else "fn"
            pending_attr = None if pending_attr == "tc" else pending_attr
        if pending_attr == "test" and re.search(r"\bmod\s+\w+", text):
            pending_fn = "test"
            pending_attr = None
        kinds = {k for k, _ in stack}
        local = set().union(*pm_vars)
        for pm in PARAM_PM.finditer(text):
            local.add(pm.group(1))
        info.append(("test" in kinds, "tc" in kinds or pending_fn == "tc", set(local)))
        lm = LET.search(text)
        if lm and (PRODUCER.search(lm.group(3)) or (lm.group(2) and "Pm" in lm.group(2))):
            pm_vars[-1].add(lm.group(1))
        for pm in PARAM_PM.finditer(text):
            pm_vars[-1].add(pm.group(1))
        for c in text:
            if c == "{":
                depth += 1
                if pending_fn:
                    stack.append((pending_fn, depth))
                    pm_vars.append(set())
                    pending_fn = None
            elif c == "}":
                if stack and stack[-1][1] == depth:
                    stack.pop()
                    pm_vars.pop()
                depth -= 1
        if pending_fn and text.rstrip().endswith(";"):
            pending_fn = None  # a declaration without a body
    return lines, info


def wrappers(files):
    """Names of the #[track_caller] functions of these files."""
    names = set()
    for path in files:
        with open(os.path.join(ROOT, "impl", path)) as f:
            lines = f.read().split("\n")
        for i, l in enumerate(lines):
            if l.strip().startswith("#[track_caller]"):
                for nxt in lines[i + 1 : i + 4]:
                    m = FN.search(nxt)
                    if m:
                        names.add(m.group(1))
                        break
    return names


def scan(crate):
    files = list(rust_files(SCOPES[crate]))
    wrap = wrappers(files)
    sites = {}
    for path in files:
        lines, info = parse(path)
        for i, text in enumerate(lines):
            in_test, in_tc, pm_local = info[i]
            if in_test or in_tc:
                continue
            for m in re.finditer(r"(\.|\b)(\w+)\s*\(", text):
                name, dot = m.group(2), m.group(1) == "."
                col = m.start(2) + 1
                ctx = " ".join(lines[max(0, i - 4) : i] + [text[: m.start()]])
                ctx = re.split(r"[;{}]", ctx)[-1]
                kind = None
                if dot and name in ALWAYS:
                    kind = name
                elif dot and name in AMBIGUOUS:
                    if "Ordering" in text[m.end() :] + " ".join(lines[i + 1 : i + 3]) and (
                        PRODUCER.search(ctx)
                        or any(re.search(r"\b%s\s*$" % re.escape(v), ctx.rstrip(". \n")) for v in pm_local)
                    ):
                        kind = name
                    elif name in wrap and "Ordering" not in text[m.end() :]:
                        kind = name + " (wrapper)"
                elif name in wrap and not re.search(r"\bfn\s*$", text[: m.start()]):
                    kind = name + " (wrapper)"
                if kind:
                    sites["%s:%d" % (path, i + 1)] = {"col": col, "call": kind, "line": text.strip()}
    return sites


def load_ledgers(d):
    reached, crashed = set(), set()
    if not os.path.isdir(d):
        return reached, crashed
    for f in os.listdir(d):
        if not f.endswith(".tsv"):
            continue
        with open(os.path.join(d, f)) as fh:
            for line in fh:
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 2:
                    continue
                key = parts[1].rsplit(":", 1)[0]  # file:line
                (crashed if parts[0] == "crashed" else reached).add(key)
    return reached, crashed


def load_allow():
    allow = {}
    p = os.path.join(ROOT, "tools", "crash-sites-allow.tsv")
    if os.path.exists(p):
        with open(p) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    k, _, why = line.rstrip("\n").partition("\t")
                    allow[k.strip()] = why.strip()
    return allow


def entry_matches(entry, key, text):
    """Whether allow-list entry `entry` names site `key` (`file:line`), whose
    source line is `text`: the entry is `file:line`, or `file:~snippet` with
    `snippet` a substring of the line (an entry that survives edits above the
    site)."""
    if entry == key:
        return True
    path, sep, snippet = entry.partition(":~")
    return bool(sep and snippet) and path == key.split(":")[0] and snippet in text


def allowed(allow, key, text):
    """The reason listed for site `key` whose source line is `text`, or None
    (an exact `file:line` entry first)."""
    if key in allow:
        return allow[key]
    return next((why for e, why in allow.items() if entry_matches(e, key, text)), None)


def stale_allow(allow, cov):
    """Entries of the allow list that match no site of the report (a moved line
    or a removed call: the entry must be updated or dropped)."""
    rows = [r for v in cov.values() for r in v["rows"]]
    return sorted(e for e in allow if not any(entry_matches(e, r["site"], r["line"]) for r in rows))


def crate_of(key):
    for crate, scope in SCOPES.items():
        for p in scope:
            if key.startswith(p + ("" if p.endswith(".rs") else "/")) or key.split(":")[0] == p:
                return crate
    return None


_PARSED = {}


def in_test_code(key):
    """Whether a ledger site `file:line` lies in a `#[cfg(test)]` module of
    `src/` (a unit test's call: not a site of the construction)."""
    path, line = key.split(":")[0], int(key.split(":")[1])
    if path not in _PARSED:
        try:
            _PARSED[path] = parse(path)[1]
        except OSError:
            _PARSED[path] = []
    info = _PARSED[path]
    return 0 < line <= len(info) and info[line - 1][0]


def coverage(ledger_dir):
    reached, crashed = load_ledgers(ledger_dir)
    allow = load_allow()
    out = {}
    for crate in SCOPES:
        scanned = scan(crate)
        universe = set(scanned) | {
            k for k in reached | crashed if crate_of(k) == crate and not in_test_code(k)
        }
        rows = []
        for k in sorted(universe, key=lambda k: (k.split(":")[0], int(k.split(":")[1]))):
            state = "crashed" if k in crashed else "reached" if k in reached else "never"
            rows.append(
                {
                    "site": k,
                    "state": state,
                    "call": scanned.get(k, {}).get("call", "(not found by the scan)"),
                    "line": scanned.get(k, {}).get("line", ""),
                    "allowed": allowed(allow, k, scanned.get(k, {}).get("line", "")),
                }
            )
        n = len(rows)
        c = sum(r["state"] == "crashed" for r in rows)
        r_ = sum(r["state"] == "reached" for r in rows)
        listed = sum(r["state"] != "crashed" and r["allowed"] is not None for r in rows)
        out[crate] = {
            "sites": n,
            "crashed_after": c,
            "reached_only": r_,
            "never_reached": n - c - r_,
            "listed_with_reason": listed,
            "rows": rows,
        }
    return out


def footer(cov):
    parts = []
    for crate, v in cov.items():
        pct = 100.0 * v["crashed_after"] / v["sites"] if v["sites"] else 100.0
        unexplained = v["sites"] - v["crashed_after"] - v["listed_with_reason"]
        parts.append(
            "%s %d/%d (%.0f%%; of the rest %d reached but never crashed after, %d never reached; %d listed with a reason, %d not)"
            % (crate, v["crashed_after"], v["sites"], pct, v["reached_only"], v["never_reached"],
               v["listed_with_reason"], unexplained)
        )
    stale = stale_allow(load_allow(), cov)
    tail = ""
    if stale:
        tail = "; %d entries of tools/crash-sites-allow.tsv match no site (update them): %s" % (
            len(stale), ", ".join(stale))
    return "crash sites crashed right after: " + ", ".join(parts) + tail


def markdown(cov, ledger_dir):
    out = [
        "# Crash-site coverage",
        "",
        "Generated by `tools/crash_sites.py` from the ledgers in `%s` (one per check process)"
        % os.path.relpath(ledger_dir, ROOT),
        "and a static scan of the sources (its limits: the script's docstring).",
        "A site is *crashed after* when a check built a crash image of a point captured right",
        "after the site's persistence event; *reached* when a check ran it on the simulator but",
        "never crashed right after it (for a CAS: it only ever failed, or its points were not",
        "sampled); *never* when no check ran it on the simulator.",
        "",
    ]
    for crate, v in cov.items():
        out.append("## %s: %d of %d sites crashed after" % (crate, v["crashed_after"], v["sites"]))
        out.append("")
        out.append("| site | state | call | reason it is not covered |")
        out.append("| --- | --- | --- | --- |")
        for r in v["rows"]:
            if r["state"] == "crashed":
                continue
            out.append(
                "| `%s` | %s | %s | %s |"
                % (r["site"], r["state"], r["call"], r["allowed"] or "")
            )
        out.append("")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    d = argv[1]
    cov = coverage(d)
    if "--json" in argv:
        with open(argv[argv.index("--json") + 1], "w") as f:
            json.dump(cov, f, indent=1)
    if "--markdown" in argv:
        with open(argv[argv.index("--markdown") + 1], "w") as f:
            f.write(markdown(cov, d))
    print(footer(cov))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
