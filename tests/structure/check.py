#!/usr/bin/env python3
# The code's shape, held to its goals (issue 75), from the source alone. From the repository root:
#   python3 tests/structure/check.py
# It prints, and fails (exit 1) when a goal is missed:
#   - the inherent methods of each type in the loop's folder (`Ralph` at most 15);
#   - each type name (struct, enum, trait, alias) declared more than once in the workspace (none);
#   - each `pub use` of another temper crate outside tests, a facade (none).
# It reads text: string literals, char literals and comments are blanked before braces are counted.
import collections, os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOOP = "crates/temper-core/src/ralph"
RALPH_MAX = 15


def rust_files(top):
    for d, dirs, files in os.walk(os.path.join(ROOT, top)):
        dirs[:] = sorted(x for x in dirs if x != "target")
        for f in sorted(files):
            if f.endswith(".rs"):
                yield os.path.join(d, f)


RAW = re.compile(r'b?r(#*)"')


def code_only(text):
    """The text with comments, strings and char literals blanked; newlines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if text[i] == "\n" else "")
                    i += 1
        elif c in "br" and (m := RAW.match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'":
            if i + 1 < n and text[i + 1] == "\\":
                j = text.find("'", i + 2)
                out.append("' '")
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                out.append("' '")
                i += 3
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


IMPL = re.compile(r"^\s*impl(?:<[^>]*>)?\s+([A-Z]\w*)(?:<[^{]*>)?\s*(?:where\b[^{]*)?\{")
FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s")
DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|union)\s+([A-Z]\w*)|^(?:pub(?:\([^)]*\))?\s+)?type\s+([A-Z]\w*)")
FACADE = re.compile(r"^\s*pub\s+use\s+(temper_\w+)::")


def methods(files):
    """Inherent methods per type: the fns directly inside `impl Type {` blocks."""
    counts = collections.Counter()
    for f in files:
        depth, cur, at = 0, None, 0
        for line in code_only(open(f).read()).split("\n"):
            m = IMPL.match(line)
            if m and cur is None:
                cur, at = m.group(1), depth
            if cur is not None and depth == at + 1 and FN.match(line):
                counts[cur] += 1
            depth += line.count("{") - line.count("}")
            if cur is not None and depth <= at:
                cur = None
    return counts


def main():
    rel = lambda f: os.path.relpath(f, ROOT)
    ok = True
    loop = methods(rust_files(LOOP))
    print(f"methods of each type in {LOOP} (goal: Ralph at most {RALPH_MAX}):")
    for t, k in sorted(loop.items(), key=lambda x: (-x[1], x[0])):
        print(f"  {k:3d} {t}")
    if loop.get("Ralph", 0) > RALPH_MAX:
        print(f"MISSED: Ralph has {loop['Ralph']} methods")
        ok = False
    if "Ralph" not in loop:
        print(f"MISSED: no `impl Ralph` found in {LOOP}: this check reads nothing")
        ok = False

    where = collections.defaultdict(list)
    facades = []
    files = list(rust_files("crates")) + list(rust_files("fuzz"))
    for f in files:
        inside_tests = "/tests/" in rel(f) or "/benches/" in rel(f)
        for k, line in enumerate(code_only(open(f).read()).split("\n"), 1):
            m = DECL.match(line)
            if m:
                where[m.group(1) or m.group(2)].append(f"{rel(f)}:{k}")
            if not inside_tests and FACADE.match(line):
                facades.append(f"{rel(f)}:{k}: {line.strip()}")
    twice = {t: w for t, w in where.items() if len(w) > 1}
    print(f"type names declared in {len(files)} files: {len(where)}; declared more than once: {len(twice)} (goal: none)")
    for t, w in sorted(twice.items()):
        print(f"  {t}: {', '.join(w)}")
    print(f"re-exports of another temper crate (facades): {len(facades)} (goal: none)")
    for line in facades:
        print(f"  {line}")
    ok = ok and not twice and not facades
    print("structure: goals met" if ok else "structure: a goal missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
