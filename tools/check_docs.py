#!/usr/bin/env python3
"""tools/check_docs.py -- every repository path and every check name the documentation cites must exist.

    python3 tools/check_docs.py [--self-test] [--with-self-test] [--list] [--root DIR]

`tools/verify.py` runs it as the check `docs:paths` (with --with-self-test). Python 3.11, standard
library only. Exit 0 when every reference resolves, 1 when one does not (each printed as
file:line with what to do), 2 on bad usage. --self-test runs only the self-test (a temporary tree
with a bad path and a bad name, which must fail, and a good one, which must pass); --with-self-test
runs it first; --list prints every reference found and how it resolved.

What is scanned: every Markdown file of the tree (git's tracked and untracked-but-not-ignored files,
or a walk of the folder when it is not a git work tree): README.md, docs/**, every folder's README,
impl/*/MUTANTS.md, traces/SCHEMA.md, proofs/AXIOMS.md. Files outside the repository (the team's
shared design documents) are not scanned.

THE RULES

(a) Paths. A reference is
    - the target of a Markdown link or image, `[text](target)` or `[label]: target` (not a URL, not
      mailto:); resolved from the Markdown file's folder (a leading / from the repository root). It
      must exist. `file.md#anchor` and `#anchor` must name a heading of that file (GitHub's slugs).
    - a word inside an inline code span that looks like a path: it contains a / or ends in a known
      file extension (.rs .tla .cfg .v .md .py .sh .json .svg .txt .toml .litmus .ndjson .lock),
      is made of path characters, and is not a URL, an absolute path, a flag or a NAME=value.
      `file.rs:12` is checked as `file.rs`. It resolves if ONE of these holds, tried in order:
        1. its first component is a top-level entry of the tree (impl, specs, docs, README.md, ...)
           and it exists from the root;
        2. it exists from the Markdown file's folder (`src/mutant.rs` in impl/perdure-ptm/MUTANTS.md);
        3. it is a contextual path: some file or folder of the tree ends with /<it> (`src/patomic.rs`
           written in a paragraph about perdure-relax); a bare file name must be the name of some
           file of the tree.
      A path that climbs out of the repository with ../ never resolves.
    - a word inside a fenced code block (a shell session, an example) only when its first
      component is a top-level entry of the tree followed by / ; then rule 1 alone applies.
    Globs (`*`, `**`), brace lists (`{a,b}`) and placeholders (`<check>`, treated as `*`) must
    match at least one file or folder. Paths under out/, .cache/, target/ and impl/target/ are
    build outputs: accepted without looking (they do not exist in a clean clone).
    The shared design documents ARCHITECTURE.md, PX86.md, HISTORY.md and STYLE.md live outside the
    repository: their bare names are accepted; a path to them is not.

(b) Check and row names: a word `kind:rest` anywhere in the text (prose, code spans, code blocks)
    whose kind is a kind of tools/verify.py (its KINDS set), tlc-mutant, shuttle, mutant,
    crosscheck, the prefix of a check it lists, or the prefix of a row name the tests print. A name is produced by the tree if ONE of these holds:
        1. `tools/verify.py --list` names it, at DEPTH=ci or DEPTH=deep (cargo:*, loom:*, shuttle:*,
           tlc:*, tlc-mutant:* from specs/**/*.cfg, trace:* from traces/**/checks.json, coq:proofs,
           docs:paths);
        2. it is a filter prefix of such a name ending at a boundary: `tlc:ptm/`, `tlc:memento`,
           `shuttle:relax` (what `python3 tools/verify.py FILTER` is given);
        3. it matches a row-name template found in a string literal of impl/**/*.rs, the literals
           that print PERDURE-CHECK rows: `"explore:log"`, `\\"name\\":\\"loom:pm/{name}\\"`,
           `format!("mutant:ptm/{}", ...)`. A `{...}` placeholder stands for nothing or whole
           string literals of impl/**/*.rs (or digit runs), joined by - _ . / @ + : scenario and
           mutant names are such literals (`"msq-mmt-vol"`, `"cx-reclaim-vs-walk"`) or are built
           from them. A name with `*` or `{a,b}` in it must be able to match the template with
           its placeholders as `*`, and every letter run of it must occur in some string literal
           of the sources or in a listed check -- so `explore:relax/*` passes, `explore:relx/*`
           does not. This rule is weaker than 1 (a wrong combination of real literals passes),
           and it is static: a template in a test that no longer runs still counts.
    Names are checked in their literal form; `<placeholder>` stands for `*`.

Escapes, both explicit: tools/check_docs.allow lists `<markdown file glob> <reference>  # why`, one
per line; and a line holding the marker <!-- docs:example --> is not checked at all (for deliberate
examples of bad paths or names). Each use is counted in the summary.
"""
from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

EXTENSIONS = ("rs", "tla", "cfg", "v", "md", "py", "sh", "json", "svg", "txt", "toml", "litmus",
              "ndjson", "lock")
GENERATED = ("out/", ".cache/", "target/", "impl/target/")
SHARED_DESIGN = {"ARCHITECTURE.md", "PX86.md", "HISTORY.md", "STYLE.md"}
MARKER = "<!-- docs:example -->"
# Upper-case words the docs use as placeholders in file and check names (`NAME.pass.ndjson`, `X.cfg`,
# `tlc:common/X`): tried as `*` only when the reference does not resolve as written.
PLACEHOLDER_WORDS = {"NAME", "DIR", "FILE", "SPEC", "TRACE", "MODULE", "PATH", "CASE", "X", "N", "K", "L"}
FALLBACK_KINDS = {"tlc", "coq", "cargo", "litmus", "explore", "trace", "loom", "genmc", "bench", "docs"}
# Prefixes of check and row names that are always checked, even when nothing in the tree prints them
# any more (else a name whose tests were deleted would silently stop being checked).
ALWAYS_KINDS = {"tlc-mutant", "shuttle", "mutant", "crosscheck"}

PATH_CHARS = re.compile(r"^[\w.+@*{},<>\[\]/-]+$")
FILE_LINE = re.compile(r"^(.+\.\w+):\d+(?:[-:]\d+)?$")
LINK_RE = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF_RE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+.*)?$")
FENCE_RE = re.compile(r"^\s*(```+|~~~+)")
HEADING_RE = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


# ------------------------------------------------------------------------------------------
# The tree

def tree_files(root: Path) -> list[str]:
    """Files of the work tree as a clean clone would have them (tracked or about to be)."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
        files = [f for f in out.decode().split("\0") if f]
        if files:
            return sorted(f for f in set(files) if (root / f).exists())
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = [d for d in dirnames if d not in (".git", "out", "target", ".cache")]
        for f in filenames:
            files.append(f if rel == "." else f"{rel}/{f}".replace(os.sep, "/"))
    return sorted(files)


@dataclass
class Tree:
    files: set[str]
    dirs: set[str]
    top: set[str]
    basenames: set[str]

    @staticmethod
    def of(files: list[str]) -> "Tree":
        dirs = set()
        for f in files:
            parts = f.split("/")
            for i in range(1, len(parts)):
                dirs.add("/".join(parts[:i]))
        return Tree(set(files), dirs, {f.split("/")[0] for f in files},
                    {f.rsplit("/", 1)[-1] for f in files})

    def exists(self, p: str) -> bool:
        p = p.rstrip("/")
        return p == "" or p in self.files or p in self.dirs

    def glob(self, pattern: str) -> bool:
        rx = glob_regex(pattern.rstrip("/"))
        return any(rx.fullmatch(x) for x in self.files | self.dirs)

    def suffix(self, p: str) -> bool:
        p = p.rstrip("/")
        if "/" not in p:
            return p in self.basenames or any(d.rsplit("/", 1)[-1] == p for d in self.dirs)
        end = "/" + p
        return any(x.endswith(end) for x in self.files | self.dirs)

    def suffix_glob(self, pattern: str) -> bool:
        rx = glob_regex("**/" + pattern.rstrip("/"))
        return any(rx.fullmatch(x) for x in self.files | self.dirs)


def glob_regex(pattern: str) -> re.Pattern:
    """`**/` any folders (also none), `**` anything, `*` anything but /, `?` one character."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append(r"(?:.*/)?"); i += 3
        elif pattern.startswith("**", i):
            out.append(r".*"); i += 2
        elif pattern[i] == "*":
            out.append(r"[^/]*"); i += 1
        elif pattern[i] == "?":
            out.append(r"[^/]"); i += 1
        else:
            out.append(re.escape(pattern[i])); i += 1
    return re.compile("".join(out))


def expand_braces(s: str) -> list[str]:
    m = re.search(r"\{([^{}]*,[^{}]*)\}", s)
    if not m:
        return [s]
    out = []
    for alt in m.group(1).split(","):
        out += expand_braces(s[:m.start()] + alt + s[m.end():])
    return out


def placeholders_to_star(s: str) -> str:
    return re.sub(r"<[^<>/]*>", "*", s)


def placeholder_words_to_star(s: str) -> str | None:
    """`s` with its placeholder words as `*`, or None if it has none."""
    t = re.sub(r"(?<![A-Za-z])[A-Z]+(?![A-Za-z])", lambda m: "*" if m.group(0) in PLACEHOLDER_WORDS else m.group(0), s)
    return None if t == s else t


# ------------------------------------------------------------------------------------------
# Names the tree produces

def verify_names(root: Path) -> tuple[set[str], set[str]]:
    """(check names of tools/verify.py --list at DEPTH=ci and deep, verify.py's KINDS)."""
    vp = root / "tools" / "verify.py"
    if not vp.is_file():
        return set(), set()
    names: set[str] = set()
    kinds: set[str] = set()
    for depth in ("ci", "deep"):
        env = dict(os.environ, DEPTH=depth)
        r = subprocess.run([sys.executable, str(vp), "--list"], capture_output=True, text=True,
                           env=env, cwd=root)
        if r.returncode != 0:
            raise SystemExit(f"check_docs: `python3 tools/verify.py --list` failed (DEPTH={depth}):\n"
                             f"{r.stderr.strip()[-2000:]}")
        for line in r.stdout.splitlines():
            if line.strip():
                names.add(line.split()[0])
    m = re.search(r"^KINDS\s*=\s*\{([^}]*)\}", vp.read_text(), re.M)
    if m:
        kinds = set(re.findall(r"\"([\w-]+)\"", m.group(1)))
    return names, kinds


def rust_string_literals(src: str) -> list[str]:
    """The source text of every string literal (normal, byte, raw), comments skipped."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth += 1; i += 2
                elif src.startswith("*/", i):
                    depth -= 1; i += 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', src[i:i + 130]) and not re.match(r"\w", src[i - 1:i] or " "):
            m = re.match(r'r(#*)"', src[i:])
            close = '"' + m.group(1)
            j = src.find(close, i + m.end())
            j = n if j < 0 else j
            out.append(src[i + m.end():j])
            i = j + len(close)
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append(src[i + 1:j])
            i = j + 1
        elif c == "'":
            m = re.match(r"'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])'", src[i:])
            i += m.end() if m else 1
        else:
            i += 1
    return out


@dataclass
class Sources:
    templates: list[str] = field(default_factory=list)
    words: set[str] = field(default_factory=set)       # letter runs of every string literal
    literals: set[str] = field(default_factory=set)    # whole literals that look like name parts


def harvest_sources(root: Path, tree: Tree, kinds: set[str]) -> Sources:
    s = Sources()
    name_rx = name_regex(kinds)
    seen = set()
    for f in sorted(tree.files):
        if not (f.startswith("impl/") and f.endswith(".rs")):
            continue
        for lit in rust_string_literals((root / f).read_text(errors="replace")):
            s.words.update(re.findall(r"[A-Za-z]+", lit))
            if re.fullmatch(r"[A-Za-z0-9][\w.@+/-]*", lit):
                s.literals.add(lit)
            for m in name_rx.finditer(lit.replace('\\"', '"')):
                t = m.group(1)
                if t not in seen:
                    seen.add(t)
                    s.templates.append(t)
    return s


def name_regex(kinds: set[str]) -> re.Pattern:
    alts = "|".join(sorted((re.escape(k) for k in kinds), key=len, reverse=True))
    return re.compile(r"(?<![\w/.:-])((?:" + alts + r"):(?:[\w.@*+/-]|\{[^{}\s]*\}|<[\w-]*>)*"
                      r"(?:[\w*>/]|\{[^{}\s]*\}))")


# ------------------------------------------------------------------------------------------
# Matching names

def template_regex(t: str, word_rx: str) -> re.Pattern:
    parts = re.split(r"(\{[^{}]*\})", t.replace("{{", "\0").replace("}}", "\1"))
    rx = []
    for p in parts:
        if p.startswith("{") and p.endswith("}"):
            rx.append(word_rx)
        else:
            rx.append(re.escape(p.replace("\0", "{").replace("\1", "}")))
    return re.compile("".join(rx))


def as_glob(t: str) -> str:
    """A template with its placeholders as `*` (for intersecting with a glob of the docs)."""
    return re.sub(r"\{[^{}]*\}", "*", t.replace("{{", "\0").replace("}}", "\1")).replace("\0", "{").replace("\1", "}")


def globs_intersect(p: str, q: str) -> bool:
    """Whether some string matches both patterns (only `*` is special; it matches anything)."""
    from functools import lru_cache

    @lru_cache(maxsize=None)
    def go(i: int, j: int) -> bool:
        if i == len(p) and j == len(q):
            return True
        if i < len(p) and p[i] == "*":
            return go(i + 1, j) or (j < len(q) and go(i, j + 1))
        if j < len(q) and q[j] == "*":
            return go(i, j + 1) or (i < len(p) and go(i + 1, j))
        return i < len(p) and j < len(q) and p[i] == q[j] and go(i + 1, j + 1)
    return go(0, 0)


@dataclass
class Names:
    listed: set[str]
    templates: list[str]
    words: set[str]
    literals: set[str]

    def __post_init__(self):
        self.allwords = self.words | {w for n in self.listed for w in re.findall(r"[A-Za-z]+", n)}
        lits = sorted(self.literals, key=len, reverse=True)
        piece = ("(?:" + "|".join(re.escape(x) for x in lits) + "|[0-9]+)") if lits else "(?:[0-9]+)"
        # a placeholder's value: whole string literals of the sources (or digits), joined by - _ . / @ +
        self.part_rx = "(?:" + piece + r"(?:[-_./@+]?" + piece + ")*)?"   # may be empty: `{suffix}`
        self.template_rxs = [(t, template_regex(t, self.part_rx)) for t in self.templates]

    def resolve(self, name: str) -> str | None:
        """How `name` is produced (a short reason), or None."""
        why = self._all(placeholders_to_star(name))
        if why is None and (alt := placeholder_words_to_star(placeholders_to_star(name))):
            why = self._all(alt)
            why = why and why + " (upper-case placeholder as *)"
        return why

    def _all(self, name: str) -> str | None:
        why = None
        for alt in expand_braces(name):
            why = self._one(alt)
            if why is None:
                return None
        return why

    def _one(self, n: str) -> str | None:
        if "*" not in n:
            if n in self.listed:
                return "verify.py --list"
            if any(x.startswith(n if n.endswith(("/", ":")) else n + "/") or
                   (n.endswith(("/", ":")) and x.startswith(n)) for x in self.listed):
                return "filter prefix of a verify.py check"
            for t, rx in self.template_rxs:
                if rx.fullmatch(n):
                    return f"test template {t}"
            return None
        rx = re.compile("".join(".*" if ch == "*" else re.escape(ch) for ch in n)
                        + (".*" if n.endswith(("/", ":")) else ""))
        if any(rx.fullmatch(x) for x in self.listed):
            return "glob over verify.py --list"
        letters = re.findall(r"[A-Za-z]+", n)
        if all(w in self.allwords for w in letters):
            for t in self.templates:
                if globs_intersect(n, as_glob(t)):
                    return f"glob over test template {t}"
        return None


# ------------------------------------------------------------------------------------------
# Markdown

def slug(heading: str) -> str:
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # links keep their text
    h = h.replace("`", "").strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors_of(text: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    in_fence = False
    for line in text.splitlines():
        if FENCE_RE.match(line):
            in_fence = not in_fence
            continue
        m = None if in_fence else HEADING_RE.match(line)
        if m:
            s = slug(m.group(2))
            k = seen.get(s, 0)
            out.add(s if k == 0 else f"{s}-{k}")
            seen[s] = k + 1
    for m in re.finditer(r"<a\s+(?:name|id)=\"([^\"]+)\"", text):
        out.add(m.group(1))
    return out


@dataclass
class Ref:
    file: str
    line: int
    kind: str      # "link" | "path" | "block-path" | "name"
    text: str


def code_spans(line: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of each inline code span."""
    out, i = [], 0
    while True:
        m = re.compile(r"(`+)").search(line, i)
        if not m:
            return out
        ticks = m.group(1)
        j = line.find(ticks, m.end())
        while j >= 0 and (line[j + len(ticks):j + len(ticks) + 1] == "`"):
            j = line.find(ticks, j + len(ticks) + 1)
        if j < 0:
            return out
        out.append((m.start(), j + len(ticks), line[m.end():j].strip()))
        i = j + len(ticks)


def path_like(word: str) -> str | None:
    w = word.strip("'\"()[],;")
    w = w.rstrip(".:") if not w.endswith("..") else w
    if not w or "://" in w or w.startswith(("/", "~", "$", "-", "#")) or "=" in w:
        return None
    m = FILE_LINE.match(w)
    if m:
        w = m.group(1)
    if ":" in w or not PATH_CHARS.match(w) or not re.search(r"[A-Za-z]", w):
        return None
    if any(c.isdigit() for c in w.split("/")):   # arithmetic (`SeqMod/2`), not a path
        return None
    if "/" in w:
        return w
    ext = w.rsplit(".", 1)[-1] if "." in w else ""
    return w if ext in EXTENSIONS and not w.startswith(".") else None


def scan_markdown(path: str, text: str, name_rx: re.Pattern, top: set[str]) -> tuple[list[Ref], int]:
    refs: list[Ref] = []
    marked = 0
    in_fence = False
    for no, line in enumerate(text.splitlines(), 1):
        if FENCE_RE.match(line):
            in_fence = not in_fence
            continue
        if MARKER in line:
            marked += 1
            continue
        for m in name_rx.finditer(line):
            name, rest = m.group(1), line[m.end():]
            # `trace:ptm/redo/redo-...`, `tlc-mutant:relax/mutants/…`: the ellipsis is a wildcard
            if rest.startswith(("-...", "-…")):
                name += "-*"
            elif rest.startswith(("...", "…")):
                name += "*"
            refs.append(Ref(path, no, "name", name))
        if in_fence:
            for w in re.split(r"[\s\"'`(),;=]+", line):
                p = path_like(w)
                if p and "/" in p and p.split("/")[0] in top:
                    refs.append(Ref(path, no, "block-path", p))
            continue
        spans = code_spans(line)
        outside = line
        for a, b, _ in reversed(spans):
            outside = outside[:a] + " " * (b - a) + outside[b:]
        for m in LINK_RE.finditer(outside):
            refs.append(Ref(path, no, "link", m.group(1)))
        m = REFDEF_RE.match(outside)
        if m:
            refs.append(Ref(path, no, "link", m.group(1)))
        for _, _, content in spans:
            for w in content.split():
                p = path_like(w)
                if p:
                    refs.append(Ref(path, no, "path", p))
    return refs, marked


# ------------------------------------------------------------------------------------------
# Resolving paths

def resolve_path(ref: Ref, tree: Tree) -> str | None:
    """How a path resolves (a short reason), or None."""
    p = placeholders_to_star(ref.text)
    if p in SHARED_DESIGN:
        return "shared design document (outside the repository)"
    if p.startswith(GENERATED):
        return "build output"
    doc_dir = posixpath.dirname(ref.file)
    why = _resolve_all(p, ref, doc_dir, tree)
    if why is None and (alt := placeholder_words_to_star(p)):
        why = _resolve_all(alt, ref, doc_dir, tree)
        why = why and why + " (upper-case placeholder as *)"
    return why


def _resolve_all(p: str, ref: Ref, doc_dir: str, tree: Tree) -> str | None:
    why = None
    for alt in expand_braces(p):
        why = _resolve_one(alt, ref, doc_dir, tree)
        if why is None and "." not in alt.rsplit("/", 1)[-1] and "*" not in alt:
            # a module named without its extension: `common/DurableObject`
            for ext in ("tla", "rs", "v"):
                why = _resolve_one(f"{alt}.{ext}", ref, doc_dir, tree)
                if why:
                    why += f" (as .{ext})"
                    break
        if why is None:
            return None
    return why


def _norm(p: str) -> str | None:
    n = posixpath.normpath(p)
    return None if n.startswith("..") or n.startswith("/") else ("" if n == "." else n)


def _exists(p: str | None, tree: Tree) -> bool:
    if p is None:
        return False
    return tree.glob(p) if any(c in p for c in "*?") else tree.exists(p)


def _resolve_one(p: str, ref: Ref, doc_dir: str, tree: Tree) -> str | None:
    first = p.split("/")[0]
    if ref.kind == "block-path":
        return "from the root" if _exists(_norm(p), tree) else None
    if first in tree.top and _exists(_norm(p), tree):
        return "from the root"
    if _exists(_norm(posixpath.join(doc_dir, p)), tree):
        return "from the file's folder"
    if p.startswith("../") or "/../" in p:
        return None
    if any(c in p for c in "*?"):
        return "contextual (suffix of a tree path)" if tree.suffix_glob(p) else None
    return "contextual (suffix of a tree path)" if tree.suffix(p) else None


def resolve_link(ref: Ref, tree: Tree, root: Path, anchors_cache: dict) -> str | None:
    t = ref.text
    if re.match(r"^[a-zA-Z][\w+.-]*:", t):   # http:, https:, mailto:, ...
        return "external"
    target, _, anchor = t.partition("#")
    if target == "":
        file = ref.file
    else:
        base = "" if target.startswith("/") else posixpath.dirname(ref.file)
        file = _norm(posixpath.join(base, target.lstrip("/")))
        if file is None or not tree.exists(file):
            return None
    if anchor:
        if not file.endswith(".md") or file not in tree.files:
            return "exists (anchor not checked: not a Markdown file)"
        if file not in anchors_cache:
            anchors_cache[file] = anchors_of((root / file).read_text(errors="replace"))
        if anchor not in anchors_cache[file]:
            return None
    return "exists"


# ------------------------------------------------------------------------------------------
# Allowlist and the check

def load_allow(root: Path) -> list[tuple[str, str, str]]:
    f = root / "tools" / "check_docs.allow"
    out = []
    if f.is_file():
        for n, line in enumerate(f.read_text().splitlines(), 1):
            body = line.split("#", 1)[0].strip()
            if not body:
                continue
            parts = body.split(None, 1)
            if len(parts) != 2:
                raise SystemExit(f"tools/check_docs.allow:{n}: expected '<markdown file glob> <reference>  # why'")
            out.append((parts[0], parts[1].strip(), f"tools/check_docs.allow:{n}"))
    return out


def markdown_files(tree: Tree) -> list[str]:
    return sorted(f for f in tree.files if f.endswith(".md"))


def check(root: Path, list_refs: bool = False, out=sys.stdout) -> int:
    tree = Tree.of(tree_files(root))
    listed, kinds = verify_names(root)
    kinds = (kinds or set(FALLBACK_KINDS)) | ALWAYS_KINDS | {n.split(":", 1)[0] for n in listed}
    src = harvest_sources(root, tree, kinds)
    kinds |= {t.split(":", 1)[0] for t in src.templates}
    names = Names(listed, src.templates, src.words, src.literals)
    name_rx = name_regex(kinds)
    allow = load_allow(root)
    used_allow: set[str] = set()
    anchors_cache: dict = {}

    counts = {"files": 0, "link": 0, "path": 0, "block-path": 0, "name": 0, "marked": 0, "allowed": 0}
    how: dict[str, int] = {}
    failures = []
    for f in markdown_files(tree):
        counts["files"] += 1
        refs, marked = scan_markdown(f, (root / f).read_text(errors="replace"), name_rx, tree.top)
        counts["marked"] += marked
        for r in refs:
            counts[r.kind] += 1
            if r.kind == "name":
                why = names.resolve(r.text)
            elif r.kind == "link":
                why = resolve_link(r, tree, root, anchors_cache)
            else:
                why = resolve_path(r, tree)
            if why is None:
                hit = next((a for a in allow if fnmatch.fnmatch(r.file, a[0]) and a[1] == r.text), None)
                if hit:
                    why = f"allowed ({hit[2]})"
                    used_allow.add(hit[2])
                    counts["allowed"] += 1
            if list_refs:
                print(f"{r.file}:{r.line}: {r.kind} {r.text} -> {why or 'NOT FOUND'}", file=out)
            if why is None:
                failures.append(r)
            else:
                key = f"{r.kind}: " + re.sub(r"test template .*?(?= \(upper|$)", "row template in impl sources",
                                             re.sub(r" \(tools/check_docs\.allow:\d+\)", "", why))
                how[key] = how.get(key, 0) + 1

    print(f"check_docs: {counts['files']} Markdown files; "
          f"{counts['link']} links, {counts['path']} paths in code spans, {counts['block-path']} paths "
          f"in code blocks, {counts['name']} check/row names; names known: {len(listed)} from "
          f"verify.py --list, {len(src.templates)} row templates in impl sources; escapes: "
          f"{counts['allowed']} allowlisted, {counts['marked']} marked lines", file=out)
    for k in sorted(how):
        print(f"  resolved {how[k]:5d}  {k}", file=out)
    for a in allow:
        if a[2] not in used_allow:
            print(f"  note: {a[2]} ({a[0]} {a[1]}) matched nothing; remove it", file=out)
    for r in failures:
        if r.kind == "name":
            what = (f"check name `{r.text}` is produced by nothing in the tree (not in `python3 "
                    f"tools/verify.py --list`, not a filter prefix of one, no PERDURE-CHECK template "
                    f"in impl/**/*.rs matches it): correct the name")
        elif r.kind == "link":
            what = f"link target `{r.text}` does not exist (or its #anchor is no heading there): fix the link"
        else:
            what = (f"path `{r.text}` does not exist (from the root, from {posixpath.dirname(r.file) or '.'}/, "
                    f"or as the end of any path of the tree): fix the path")
        print(f"{r.file}:{r.line}: {what}; if it is a deliberate example, add '{r.file} {r.text}  # why' "
              f"to tools/check_docs.allow or put {MARKER} on the line", file=out)
    if failures:
        print(f"check_docs: {len(failures)} failed", file=out)
        return 1
    print("check_docs: all references resolve", file=out)
    return 0


# ------------------------------------------------------------------------------------------
# Self-test

def self_test() -> int:
    """A temporary tree: the good document passes; each bad reference fails, and only those."""
    import io
    with tempfile.TemporaryDirectory(prefix="check_docs-") as d:
        root = Path(d)
        (root / "specs").mkdir()
        (root / "specs" / "X.tla").write_text("---- MODULE X ----\n====\n")
        (root / "impl" / "crate" / "tests").mkdir(parents=True)
        (root / "impl" / "crate" / "tests" / "t.rs").write_text(
            'fn f(n: &str) { println!("PERDURE-CHECK {}", format!("explore:demo/{n}")); }\n'
            'const S: [&str; 3] = ["queue", "crash", "stack"];\n')
        (root / "docs").mkdir()
        (root / "docs" / "A.md").write_text("# A\n\n## Part one\n")
        good = ("# R\n\nSee `specs/X.tla`, [A](docs/A.md#part-one), `explore:demo/queue-crash`,\n"
                "`explore:demo/*`, `X.tla`, `out/verify.json`, `PX86.md`.\n\n```\ncat specs/X.tla /tmp/y\n```\n"
                "`specs/Missing.tla` <!-- docs:example -->\n")
        (root / "README.md").write_text(good)
        buf = io.StringIO()
        rc = check(root, out=buf)
        if rc != 0:
            print("check_docs self-test: the good tree failed:\n" + buf.getvalue())
            return 1
        bad = good + ("\n`specs/Missing.tla`, [b](docs/B.md), [c](docs/A.md#no-such-part), "
                      "`explore:demo/queue-crsh`, `explore:nothing/*`\n```\nls specs/Gone.cfg\n```\n")
        (root / "README.md").write_text(bad)
        buf = io.StringIO()
        rc = check(root, out=buf)
        text = buf.getvalue()
        expect = ["`specs/Missing.tla`", "`docs/B.md`", "`docs/A.md#no-such-part`",
                  "`explore:demo/queue-crsh`", "`explore:nothing/*`", "`specs/Gone.cfg`"]
        missing = [e for e in expect if e not in text]
        nfail = text.count("README.md:")
        if rc != 1 or missing or nfail != len(expect):
            print(f"check_docs self-test: the bad tree gave rc={rc}, {nfail} failures "
                  f"(expected {len(expect)}), not reported: {missing}\n{text}")
            return 1
    print("check_docs self-test: passed (a good tree passes; 6 bad references fail, nothing else)")
    return 0


def main(argv: list[str]) -> int:
    args = list(argv)
    root = Path(__file__).resolve().parent.parent
    if "--root" in args:
        i = args.index("--root")
        if i + 1 >= len(args):
            print("usage: check_docs.py [--self-test] [--with-self-test] [--list] [--root DIR]", file=sys.stderr)
            return 2
        root = Path(args[i + 1]).resolve()
        del args[i:i + 2]
    unknown = [a for a in args if a not in ("--self-test", "--with-self-test", "--list")]
    if unknown:
        print(f"check_docs: unknown argument {unknown[0]}\n"
              "usage: check_docs.py [--self-test] [--with-self-test] [--list] [--root DIR]", file=sys.stderr)
        return 2
    if "--self-test" in args:
        return self_test()
    if "--with-self-test" in args and self_test() != 0:
        return 1
    return check(root, list_refs="--list" in args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
