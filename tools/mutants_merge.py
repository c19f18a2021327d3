#!/usr/bin/env python3
"""tools/mutants_merge.py -- merge the shards of `make mutants` into one summary.

    python3 tools/mutants_merge.py [--shards N] [--out DIR]
    python3 tools/mutants_merge.py --self-test

Reads every out/mutants/shard-<k>-of-<n>/ that tools/mutants.sh wrote (its shard.json and the
cargo-mutants output mutants.out/{outcomes.json,mutants.json}), and writes
out/mutants/summary.json and out/mutants/summary.md:

  * per crate: mutants tested, caught, missed, unviable, timeout, the score
    caught / (caught + missed) -- unviable mutants (they do not compile) and timeouts (the checks
    ran out of time, so neither caught nor missed) are counted apart, not in the score -- and
    the mean seconds per mutant (build + test, as cargo-mutants timed them);
  * the missed mutants and the timeouts, by location (file:line:col and what was changed);
  * which shards are complete, which are incomplete (a run was interrupted: rerun the shard)
    and which are missing, for the shard count N (--shards; default: the n the shard folders
    use, when they agree).

With --ledger FILE (tools/mutants.sh passes docs/mutants/ledger.tsv, or $MUTANTS_LEDGER) the merge
also reads the complete shards recorded in that ledger -- one tab-separated line per mutant outcome:
source state, shard k/n, crate, outcome, seconds, mutant name; a shard with no mutants is one line
with crate "-" and outcome "empty" -- and writes every complete shard back into it. The ledger is
committed, so a run spread over several machines (a full run takes days on 2 cores) keeps what
each one finished; out/ is not. A shard folder present and complete takes precedence over the
ledger's lines for the same shard and source state.

The triage of the missed mutants lives in each crate's MUTANTS.md (impl/<crate>/MUTANTS.md), one
list item per mutant, its full name in backticks, then a dash and a verdict in bold:

    - `perdure-ptm/src/rwlock.rs:89:33: replace - with /` — **killed** by `shuttle:...`: why
    - `perdure-memento/src/cas.rs:107:9: replace CasMmt::clear with ()` — **equivalent**: why
    - `...` — **deeper**: which check catches it at make verify's depth
    - `...` — **gap**: what no check looks at yet

`killed` means a check added after the campaign's commit catches the mutant in the mutation tier
(tried by hand on the later tree), `deeper` that the checks catch it at make verify's depth
(PERDURE_DEPTH=ci) but not in the tier's first schedules, `equivalent` that no execution can tell
the mutant from the code, `gap` a known hole not yet closed. The summary tags every missed mutant
with its verdict, counts the untriaged ones, and gives, beside the score, the score after triage:
(caught + killed + deeper) / (caught + missed - equivalent).

A shard counts only when complete (cargo-mutants finished and every mutant of the shard has an
outcome). Shards of different source states (shard.json "tree") are merged but the summary says
so: their mutants are not the same set. Python 3.11, standard library only.
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARD_DIR = re.compile(r"^shard-(\d+)-of-(\d+)$")
# cargo-mutants' per-mutant summaries (outcome.rs, SummaryOutcome) and how they are counted.
KINDS = {"CaughtMutant": "caught", "MissedMutant": "missed", "Unviable": "unviable",
         "Timeout": "timeout", "Success": "missed", "Failure": "failure"}
COUNTS = ("tested", "caught", "missed", "unviable", "timeout", "failure")


def read_shard(d: Path) -> dict:
    """One shard folder: its metadata, whether complete, and its mutant outcomes."""
    k, n = (int(x) for x in SHARD_DIR.match(d.name).groups())
    shard = {"k": k, "n": n, "dir": d.name, "complete": False, "tree": None, "outcomes": [],
             "planned": None, "problem": None}
    meta = {}
    try:
        meta = json.loads((d / "shard.json").read_text())
        shard["tree"] = meta.get("tree")
    except (OSError, ValueError):
        pass
    out = d / "mutants.out"
    try:
        shard["planned"] = len(json.loads((out / "mutants.json").read_text()))
    except (OSError, ValueError):
        pass
    if shard["planned"] == 0 and meta.get("exit") in (0, 2, 3):
        # No mutant fell in this shard (a filtered list): cargo-mutants writes no outcomes.json.
        shard["complete"] = True
        return shard
    try:
        lab = json.loads((out / "outcomes.json").read_text())
    except OSError:
        shard["problem"] = "no outcomes.json (the run did not start, or was removed)"
        return shard
    except ValueError as e:
        shard["problem"] = f"outcomes.json is not JSON ({e})"
        return shard
    for o in lab.get("outcomes", []):
        scen = o.get("scenario")
        if not isinstance(scen, dict) or "Mutant" not in scen:
            if o.get("summary") not in ("Success", None):
                shard["problem"] = f"baseline: {o.get('summary')}"
            continue
        m = scen["Mutant"]
        secs = sum(p.get("duration") or 0.0 for p in o.get("phase_results", []))
        shard["outcomes"].append({
            "package": m.get("package", "?"),
            "name": m.get("name") or f"{m.get('file')}: {m.get('replacement')}",
            "file": m.get("file"),
            "line": ((m.get("span") or {}).get("start") or {}).get("line"),
            "kind": KINDS.get(o.get("summary"), "failure"),
            "seconds": round(secs, 1),
        })
    done = len(shard["outcomes"])
    shard["complete"] = (bool(lab.get("end_time")) and shard["problem"] is None
                         and (shard["planned"] is None or done == shard["planned"]))
    if not shard["complete"] and shard["problem"] is None:
        shard["problem"] = (f"interrupted: {done} of {shard['planned']} mutants have an outcome"
                            if shard["planned"] is not None else f"interrupted after {done} mutants")
    return shard


LEDGER_HEADER = ("# make mutants ledger (tools/mutants_merge.py): every complete shard, one line per mutant\n"
                 "# tree\tshard\tcrate\toutcome\tseconds\tmutant\n")


def read_ledger(path: Path | None) -> list[dict]:
    """The complete shards a ledger records, as read_shard's dicts (a missing file: none)."""
    if path is None or not path.is_file():
        return []
    shards: dict[tuple[str, int, int], dict] = {}
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split("\t")
        m = re.fullmatch(r"(\d+)/(\d+)", f[1]) if len(f) == 6 else None
        if m is None or (f[3] not in COUNTS and f[3] != "empty"):
            raise SystemExit(f"mutants_merge: {path}:{i}: not a ledger line "
                             f"(tree, k/n, crate, outcome, seconds, mutant; tab-separated): {line!r}")
        k, n = int(m.group(1)), int(m.group(2))
        sh = shards.setdefault((f[0], k, n), {
            "k": k, "n": n, "dir": f"ledger:{k}/{n}", "complete": True, "tree": f[0],
            "outcomes": [], "planned": 0, "problem": None})
        if f[3] == "empty":
            continue
        fm = re.match(r"^([^:]+):(\d+):", f[5])
        sh["outcomes"].append({"package": f[2], "name": f[5], "kind": f[3],
                               "file": fm.group(1) if fm else None,
                               "line": int(fm.group(2)) if fm else None,
                               "seconds": float(f[4])})
        sh["planned"] += 1
    return list(shards.values())


def write_ledger(path: Path, shards: list[dict]) -> None:
    """Every complete shard into the ledger, sorted, one line per outcome."""
    lines = []
    for s in sorted(shards, key=lambda s: (s["tree"] or "", s["n"], s["k"])):
        tree = s["tree"] or "unknown"
        if not s["outcomes"]:
            lines.append(f"{tree}\t{s['k']}/{s['n']}\t-\tempty\t0\t-")
        for o in sorted(s["outcomes"], key=lambda o: o["name"]):
            lines.append(f"{tree}\t{s['k']}/{s['n']}\t{o['package']}\t{o['kind']}\t{o['seconds']}\t{o['name']}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(LEDGER_HEADER + "".join(x + "\n" for x in lines))


VERDICTS = ("killed", "deeper", "equivalent", "gap")
TRIAGE_LINE = re.compile(r"^[-*] `([^`]+)` [—-]+ \*\*(" + "|".join(VERDICTS) + r")\*\*(.*)$")


def read_triage(impl: Path | None) -> dict[str, dict]:
    """Every `- `mutant` — **verdict**...` line of impl/*/MUTANTS.md, by mutant name."""
    out: dict[str, dict] = {}
    if impl is None or not impl.is_dir():
        return out
    for md in sorted(impl.glob("*/MUTANTS.md")):
        for i, line in enumerate(md.read_text().splitlines(), 1):
            m = TRIAGE_LINE.match(line.strip())
            if m:
                out[m.group(1)] = {"verdict": m.group(2), "why": m.group(3).lstrip(" :"),
                                   "where": f"{md.relative_to(impl.parent)}:{i}"}
    return out


def merge(out_dir: Path, shards_wanted: int | None, ledger: Path | None = None,
          impl: Path | None = None) -> dict:
    found = [read_shard(d) for d in sorted(out_dir.iterdir())
             if d.is_dir() and SHARD_DIR.match(d.name)] if out_dir.is_dir() else []
    # The ledger's shards, where no complete folder of the same shard and tree is present.
    have = {(s["tree"], s["k"], s["n"]) for s in found if s["complete"]}
    recorded = [s for s in read_ledger(ledger) if (s["tree"], s["k"], s["n"]) not in have]
    if ledger is not None:
        write_ledger(ledger, recorded + [s for s in found if s["complete"]])
    # A folder that is incomplete does not hide the ledger's complete record of that shard.
    done_in_ledger = {(s["k"], s["n"]) for s in recorded}
    found = [s for s in found if s["complete"] or (s["k"], s["n"]) not in done_in_ledger] + recorded
    ns = sorted({s["n"] for s in found})
    n = shards_wanted if shards_wanted is not None else (ns[0] if len(ns) == 1 else None)
    notes = []
    if n is None and len(ns) > 1:
        notes.append(f"shard folders of several shard counts ({', '.join(map(str, ns))}); "
                     f"give --shards N to merge one of them")
    used = [s for s in found if n is not None and s["n"] == n]
    other = [s["dir"] for s in found if n is not None and s["n"] != n]
    if other:
        notes.append(f"ignored: {', '.join(other)} (not of {n} shards)")
    complete = [s for s in used if s["complete"]]
    incomplete = [{"shard": f"{s['k']}/{s['n']}", "why": s["problem"]} for s in used if not s["complete"]]
    present = {s["k"] for s in used}
    missing = [f"{k}/{n}" for k in range(n) if k not in present] if n is not None else []
    trees = sorted({s["tree"] or "unknown" for s in complete})
    if len(trees) > 1:
        notes.append(f"complete shards come from {len(trees)} source states ({', '.join(trees)}): "
                     f"they are not shards of one mutant list")

    per: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    seconds: dict[str, float] = collections.defaultdict(float)
    missed, timeouts = [], []
    for s in complete:
        for o in s["outcomes"]:
            c = per[o["package"]]
            c["tested"] += 1
            c[o["kind"]] += 1
            seconds[o["package"]] += o["seconds"]
            if o["kind"] == "missed":
                missed.append(o)
            elif o["kind"] == "timeout":
                timeouts.append(o)
    crates = {}
    for pkg in sorted(per):
        c = per[pkg]
        judged = c["caught"] + c["missed"]
        crates[pkg] = {k: c[k] for k in COUNTS}
        crates[pkg]["score"] = round(c["caught"] / judged, 4) if judged else None
        crates[pkg]["seconds_per_mutant"] = round(seconds[pkg] / c["tested"], 1) if c["tested"] else None
    total = collections.Counter()
    for c in per.values():
        total.update(c)
    judged = total["caught"] + total["missed"]
    key = lambda o: (o["package"], o["file"] or "", o["line"] or 0, o["name"])
    triage = read_triage(impl)
    verdict = {o["name"]: triage.get(o["name"], {}).get("verdict", "untriaged") for o in missed}
    for pkg, c in crates.items():
        v = collections.Counter(verdict[o["name"]] for o in missed if o["package"] == pkg)
        c.update({k: v[k] for k in VERDICTS + ("untriaged",)})
        cj = c["caught"] + c["missed"] - v["equivalent"]
        c["score_triaged"] = round((c["caught"] + v["killed"] + v["deeper"]) / cj, 4) if cj else None
    tv = collections.Counter(verdict.values())
    tjudged = total["caught"] + total["missed"] - tv["equivalent"]
    return {
        "shards": n,
        "complete": sorted(f"{s['k']}/{s['n']}" for s in complete),
        "incomplete": incomplete,
        "missing": missing,
        "trees": trees,
        "notes": notes,
        "crates": crates,
        "total": {**{k: total[k] for k in COUNTS},
                  "score": round(total["caught"] / judged, 4) if judged else None,
                  "seconds_per_mutant": (round(sum(seconds.values()) / total["tested"], 1)
                                         if total["tested"] else None),
                  **{k: tv[k] for k in VERDICTS + ("untriaged",)},
                  "score_triaged": (round((total["caught"] + tv["killed"] + tv["deeper"]) / tjudged, 4)
                                    if tjudged else None)},
        "missed": [{**{k: o[k] for k in ("package", "name", "seconds")}, "verdict": verdict[o["name"]],
                    "why": triage.get(o["name"], {}).get("why", "")}
                   for o in sorted(missed, key=key)],
        "timeouts": [{k: o[k] for k in ("package", "name", "seconds")} for o in sorted(timeouts, key=key)],
    }


def ranges(shards: list[str]) -> str:
    """["3/200", "4/200", "5/200", "9/200"] -> "3–5, 9 (of 200)": the missing list stays short."""
    if not shards:
        return ""
    n = shards[0].split("/")[1]
    ks = sorted(int(x.split("/")[0]) for x in shards)
    out, start = [], ks[0]
    for a, b in zip(ks, ks[1:] + [None]):
        if b != a + 1:
            out.append(str(start) if start == a else f"{start}–{a}")
            start = b
    return f"{', '.join(out)} (of {n})"


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def markdown(s: dict) -> str:
    n = s["shards"]
    lines = ["# Mutation testing: merged shards", ""]
    if n is None:
        lines.append("No shard count: nothing merged.")
    else:
        lines.append(f"{len(s['complete'])} of {n} shards complete"
                     + (f"; {len(s['incomplete'])} incomplete" if s["incomplete"] else "")
                     + (f"; {len(s['missing'])} missing" if s["missing"] else "") + ".")
        if len(s["complete"]) < n:
            lines.append("The counts below are those of the complete shards only, a sample of the "
                         "mutants, not a score of the whole crates.")
    lines += [f"Note: {x}" for x in s["notes"]]
    lines += ["", "Score = caught / (caught + missed); unviable (does not compile) and timeout "
              "(the checks ran out of time) are not in it. The missed mutants are triaged in the "
              "crates' MUTANTS.md: *killed* in the tier by a check added after the campaign's "
              "commit, caught *deeper* (at make verify's depth), *equivalent* (no execution tells "
              "them from the code), a known *gap*, or not yet triaged; after triage = (caught + "
              "killed + deeper) / (caught + missed − equivalent).", "",
              "| crate | tested | caught | missed | score | killed | deeper | equivalent | gap "
              "| untriaged | after triage | unviable | timeout | s/mutant |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, c in list(s["crates"].items()) + [("total", s["total"])]:
        spm = "–" if c["seconds_per_mutant"] is None else f"{c['seconds_per_mutant']:.0f}"
        lines.append(f"| {name} | {c['tested']} | {c['caught']} | {c['missed']} | {pct(c['score'])} "
                     f"| {c.get('killed', 0)} | {c.get('deeper', 0)} | {c.get('equivalent', 0)} "
                     f"| {c.get('gap', 0)} "
                     f"| {c.get('untriaged', 0)} | {pct(c.get('score_triaged'))} "
                     f"| {c['unviable']} | {c['timeout']} | {spm} |")
    if s["total"]["failure"]:
        lines.append(f"\n{s['total']['failure']} mutants ended in an unclassified failure "
                     "(see their logs under shard-*/mutants.out/log/).")
    lines += ["", f"## Missed mutants ({len(s['missed'])})", ""]
    lines += [f"- `{r['name']}` — {r['verdict']}"
              + ((" " if r["why"].startswith("by ") else ": ") + r["why"] if r["why"] else "")
              for r in s["missed"]] or ["None."]
    lines += ["", f"## Timeouts ({len(s['timeouts'])})", ""]
    lines += [f"- `{r['name']}`" for r in s["timeouts"]] or ["None."]
    if s["incomplete"]:
        lines += ["", "## Incomplete shards (run them again)", ""]
        lines += [f"- {x['shard']}: {x['why']}" for x in s["incomplete"]]
    if s["missing"]:
        lines += ["", f"## Missing shards ({len(s['missing'])})", "", ranges(s["missing"])]
    return "\n".join(lines) + "\n"


def write(out_dir: Path, shards: int | None, ledger: Path | None = None,
          impl: Path | None = None) -> dict:
    summary = merge(out_dir, shards, ledger, impl)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    (out_dir / "summary.md").write_text(markdown(summary))
    return summary


# --- self-test: fixture shards in the layout and format cargo-mutants 27.1 writes --------------

def _fixture_outcome(pkg: str, name: str, file: str, line: int, summary: str, phases) -> dict:
    mutant = {"name": name, "package": pkg, "file": file, "genre": "FnValue", "replacement": "()",
              "function": {"function_name": "f", "return_type": "",
                           "span": {"start": {"line": line, "column": 5}, "end": {"line": line + 3, "column": 6}}},
              "span": {"start": {"line": line, "column": 9}, "end": {"line": line, "column": 20}}}
    return {"scenario": {"Mutant": mutant}, "summary": summary,
            "log_path": "log/x.log", "diff_path": "diff/x.diff",
            "phase_results": [{"phase": ph, "duration": d, "process_status": st, "argv": ["cargo", "test"]}
                              for ph, d, st in phases]}


def _write_fixture_shard(root: Path, k: int, n: int, outcomes: list, planned: int, finished: bool,
                         tree: str = "t1") -> None:
    d = root / f"shard-{k}-of-{n}"
    (d / "mutants.out").mkdir(parents=True)
    meta = {"k": k, "n": n, "tree": tree}
    if finished:
        meta["exit"] = 2
    (d / "shard.json").write_text(json.dumps(meta))
    (d / "mutants.out" / "mutants.json").write_text(json.dumps([{}] * planned))
    if planned == 0:  # as cargo-mutants 27.1 leaves a shard with no mutants: no outcomes.json
        return
    base = {"scenario": "Baseline", "summary": "Success", "log_path": "log/baseline.log",
            "diff_path": None, "phase_results": [
                {"phase": "Build", "duration": 10.0, "process_status": "Success", "argv": []},
                {"phase": "Test", "duration": 20.0, "process_status": "Success", "argv": []}]}
    lab = {"outcomes": [base] + outcomes, "total_mutants": len(outcomes), "caught": 0, "missed": 0,
           "timeout": 0, "unviable": 0, "success": 0, "start_time": "2026-01-01T00:00:00Z",
           "end_time": "2026-01-01T01:00:00Z" if finished else None, "cargo_mutants_version": "27.1.0"}
    (d / "mutants.out" / "outcomes.json").write_text(json.dumps(lab))


def self_test() -> int:
    ok_b, ok_t = ("Build", 5.0, "Success"), ("Test", 10.0, "Success")
    fail_b, fail_t = ("Build", 5.0, {"Failure": 101}), ("Test", 3.0, {"Failure": 101})
    out_t = ("Test", 900.0, "Timeout")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write_fixture_shard(root, 0, 4, [
            _fixture_outcome("perdure-pm", "perdure-pm/src/heap.rs:10:9: replace f with ()", "perdure-pm/src/heap.rs", 10, "CaughtMutant", [ok_b, fail_t]),
            _fixture_outcome("perdure-pm", "perdure-pm/src/heap.rs:20:9: replace g with ()", "perdure-pm/src/heap.rs", 20, "MissedMutant", [ok_b, ok_t]),
            _fixture_outcome("perdure-ptm", "perdure-ptm/src/sti.rs:5:9: replace h -> u64 with 0", "perdure-ptm/src/sti.rs", 5, "Unviable", [fail_b]),
        ], planned=3, finished=True)
        _write_fixture_shard(root, 1, 4, [
            _fixture_outcome("perdure-ptm", "perdure-ptm/src/sti.rs:9:9: replace < with <= in i", "perdure-ptm/src/sti.rs", 9, "Timeout", [ok_b, out_t]),
            _fixture_outcome("perdure-ptm", "perdure-ptm/src/tx.rs:7:9: replace j with ()", "perdure-ptm/src/tx.rs", 7, "CaughtMutant", [ok_b, fail_t]),
        ], planned=2, finished=True)
        # Interrupted: two of three outcomes, no end time. Its outcomes must not be counted.
        _write_fixture_shard(root, 2, 4, [
            _fixture_outcome("perdure-relax", "perdure-relax/src/bitset.rs:1:1: replace k with ()", "perdure-relax/src/bitset.rs", 1, "MissedMutant", [ok_b, ok_t]),
        ], planned=3, finished=False)
        s = write(root, None)
        checks = [
            (s["shards"] == 4, f"shard count {s['shards']}"),
            (s["complete"] == ["0/4", "1/4"], f"complete {s['complete']}"),
            ([x["shard"] for x in s["incomplete"]] == ["2/4"], f"incomplete {s['incomplete']}"),
            (s["missing"] == ["3/4"], f"missing {s['missing']}"),
            (s["crates"]["perdure-pm"]["score"] == 0.5, f"pm {s['crates'].get('perdure-pm')}"),
            (s["crates"]["perdure-ptm"]["caught"] == 1 and s["crates"]["perdure-ptm"]["unviable"] == 1
             and s["crates"]["perdure-ptm"]["timeout"] == 1 and s["crates"]["perdure-ptm"]["score"] == 1.0,
             f"ptm {s['crates'].get('perdure-ptm')}"),
            ("perdure-relax" not in s["crates"], "an incomplete shard was counted"),
            (s["total"]["tested"] == 5 and s["total"]["score"] == round(2 / 3, 4), f"total {s['total']}"),
            ([m["name"] for m in s["missed"]] == ["perdure-pm/src/heap.rs:20:9: replace g with ()"],
             f"missed {s['missed']}"),
            (len(s["timeouts"]) == 1 and s["timeouts"][0]["package"] == "perdure-ptm", f"timeouts {s['timeouts']}"),
            (s["crates"]["perdure-pm"]["seconds_per_mutant"] == 11.5, "seconds per mutant"),
            ((root / "summary.md").read_text().count("| perdure-") == 2, "summary.md rows"),
            ("\n3 (of 4)\n" in (root / "summary.md").read_text(), "summary.md names the missing shard"),
            (ranges(["0/9", "1/9", "2/9", "5/9", "7/9", "8/9"]) == "0–2, 5, 7–8 (of 9)", "missing ranges"),
        ]
        # A shard with no mutants, of another source state: complete, merged, but the mix is said.
        _write_fixture_shard(root, 3, 4, [], planned=0, finished=True, tree="t2")
        s2 = write(root, 4)
        checks += [(s2["missing"] == [] and "3/4" in s2["complete"], f"empty shard {s2['complete']}"),
                   (any("source states" in x for x in s2["notes"]), f"mixed trees {s2['notes']}")]
        # The ledger: written from the complete shards, and read back in place of the folders.
        ledger = root / "ledger.tsv"
        write(root, 4, ledger)
        moved = root / "elsewhere"
        moved.mkdir()
        s4 = write(moved, 4, ledger)
        checks += [(s4["complete"] == s2["complete"] and s4["crates"] == s2["crates"]
                    and s4["missed"] == s2["missed"], f"ledger round trip {s4['complete']} {s4['crates']}"),
                   (ledger.read_text().count("\tempty\t") == 1, "ledger records the empty shard")]
        bad = root / "bad.tsv"
        bad.write_text("t1\t0/4\tperdure-pm\tcaught\n")
        try:
            read_ledger(bad)
            checks.append((False, "a malformed ledger line was accepted"))
        except SystemExit as e:
            checks.append(("bad.tsv:1" in str(e), f"malformed ledger message {e}"))
        # No shards at all: a summary that says so, not a crash.
        empty = root / "empty"
        empty.mkdir()
        s3 = write(empty, 2)
        checks += [(s3["missing"] == ["0/2", "1/2"] and s3["total"]["tested"] == 0, f"empty {s3}")]
        # Triage: a verdict read from a crate's MUTANTS.md tags the missed mutant and moves the
        # score after triage; a mutant with no line is untriaged.
        impl = root / "impl"
        (impl / "perdure-pm").mkdir(parents=True)
        (impl / "perdure-pm" / "MUTANTS.md").write_text(
            "# x\n\n- `perdure-pm/src/heap.rs:20:9: replace g with ()` — **killed** by `shuttle:x`: y\n")
        s5 = write(root, 4, None, impl)
        pm = s5["crates"]["perdure-pm"]
        checks += [(pm["killed"] == 1 and pm["untriaged"] == 0 and pm["score_triaged"] == 1.0,
                    f"triage killed {pm}"),
                   (s5["missed"][0]["verdict"] == "killed" and "shuttle:x" in s5["missed"][0]["why"],
                    f"triage tag {s5['missed']}")]
        (impl / "perdure-pm" / "MUTANTS.md").write_text(
            "- `perdure-pm/src/heap.rs:20:9: replace g with ()` — **equivalent**: z\n")
        pm = write(root, 4, None, impl)["crates"]["perdure-pm"]
        checks += [(pm["equivalent"] == 1 and pm["score_triaged"] == 1.0, f"triage equivalent {pm}")]
        pm = write(root, 4, None, None)["crates"]["perdure-pm"]
        checks += [(pm["untriaged"] == 1 and pm["score_triaged"] == 0.5, f"untriaged {pm}")]
    failed = [why for ok, why in checks if not ok]
    for why in failed:
        print(f"mutants_merge self-test: FAIL: {why}", file=sys.stderr)
    print(f"mutants_merge self-test: {len(checks) - len(failed)} checks passed, {len(failed)} failed")
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shards", type=int, help="the shard count N to merge (default: the one present)")
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "mutants")
    ap.add_argument("--ledger", type=Path, help="read and update this ledger of complete shards")
    ap.add_argument("--impl", type=Path, default=ROOT / "impl",
                    help="where the crates' MUTANTS.md with the missed mutants' triage are")
    ap.add_argument("--self-test", action="store_true", help="run the merge on fixture shards")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    s = write(a.out, a.shards, a.ledger, a.impl)
    t = s["total"]
    print(f"mutants: {len(s['complete'])}/{s['shards']} shards complete, "
          f"{len(s['incomplete'])} incomplete, {len(s['missing'])} missing; "
          f"{t['tested']} mutants: {t['caught']} caught, {t['missed']} missed, "
          f"{t['unviable']} unviable, {t['timeout']} timeout; score {pct(t['score'])}, "
          f"{t['untriaged']} missed untriaged, after triage {pct(t['score_triaged'])} "
          f"-> {a.out / 'summary.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
