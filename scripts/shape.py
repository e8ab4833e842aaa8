#!/usr/bin/env python3
"""The shape rules of restock's product code, checked the way a reader meets it.

Product code is every `crates/*/src/**/*.rs`, less what only tests compile:
an inline `#[cfg(test)]` module and everything after it, and the test-support
modules named in TEST_SUPPORT. Three rules, each failing with the file, the
line and the number:

- a product file has at most MAX_FILE_LINES lines before its tests;
- a product function (a `fn` with a body) spans at most MAX_FN_LINES lines,
  from the line of `fn` to its closing brace;
- a platform's name (`"shopify"`, `"woocommerce"`) is written as a string
  literal only in that platform's own module: everywhere else it comes from
  the `Platform` type.

    python3 scripts/shape.py            # check the tree; exit 1 with the breaches
    python3 scripts/shape.py --report   # also the ten largest files and longest functions
    python3 scripts/shape.py --self-test   # shows each rule fails on a tree that breaks it
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_LINES = 600
MAX_FN_LINES = 80

# Modules compiled only for tests (behind a `testing`/`conformance` feature or
# `cfg(test)`): the suites every adapter runs, and the doubles' helpers.
TEST_SUPPORT = (
    "crates/store/src/conformance/",
    "crates/store-dynamo/src/testing.rs",
)

# A platform's name may be a literal in its own modules only, and in the
# `Platform` type that names every platform (its `name`, and serde's).
PLATFORM_TYPE = "crates/core/src/webhook/delivery.rs"
PLATFORM_HOMES = {
    "shopify": ("crates/core/src/platform/shopify.rs", "crates/aws/src/platforms/shopify.rs", PLATFORM_TYPE),
    "woocommerce": ("crates/core/src/platform/woocommerce.rs", "crates/aws/src/platforms/woocommerce.rs", PLATFORM_TYPE),
}


@dataclass
class Breach:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def blank_out(src: str) -> str:
    """The source with every comment, string and char literal's contents
    replaced by spaces (newlines kept), so braces and `fn` in them do not count.
    String literals keep their quotes, so a literal can still be found by the
    `literals` pass, which reads the original text at the same offsets."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif (m := re.match(r'(?:b|c)?r(#*)"', src[i:i + 300])) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            hashes = m.group(1)
            end = src.find('"' + hashes, i + m.end())
            end = n if end < 0 else end + 1 + len(hashes)
            out.append('"' + re.sub(r"[^\n]", " ", src[i + 1:end - 1]) + '"')
            i = end
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append('"' + re.sub(r"[^\n]", " ", src[i + 1:j]) + '"')
            i = j + 1
        elif c == "'":
            # A char literal ('x', '\n', '\u{..}', '"'), else a lifetime or label.
            m = re.match(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'", src[i:i + 12])
            if m:
                out.append(" " * m.end())
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def product_end(blank: str) -> int:
    """The offset where a file's tests begin: its first `#[cfg(test)]`
    followed by a module, or the end of the file."""
    m = re.search(r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s", blank)
    return m.start() if m else len(blank)


def functions(blank: str, end: int):
    """(name, first line, last line) of every fn with a body before `end`."""
    for m in re.finditer(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)", blank[:end]):
        # The body opens at the first `{` after the signature, unless a `;`
        # comes first (a trait method without a body). Braces inside the
        # signature (const generics) are rare enough in this tree to ignore.
        j, depth = m.end(), 0
        while j < end:
            ch = blank[j]
            if ch in "([<" and not blank.startswith("->", j - 1):
                depth += ch != "<"
            elif ch in ")]":
                depth -= 1
            elif ch == ";" and depth == 0:
                j = -1
                break
            elif ch == "{" and depth == 0:
                break
            j += 1
        if j < 0 or j >= end:
            continue
        level, k = 0, j
        while k < len(blank):
            if blank[k] == "{":
                level += 1
            elif blank[k] == "}":
                level -= 1
                if level == 0:
                    break
            k += 1
        first = blank.count("\n", 0, m.start()) + 1
        last = blank.count("\n", 0, k) + 1
        yield m.group(1), first, last


def product_files(root: Path):
    for path in sorted(root.glob("crates/*/src/**/*.rs")):
        rel = path.relative_to(root).as_posix()
        if any(rel.startswith(t) for t in TEST_SUPPORT):
            continue
        yield rel, path.read_text(encoding="utf-8")


def check(root: Path, report: bool = False) -> list[Breach]:
    breaches: list[Breach] = []
    sizes, fns = [], []
    literals = 0
    for rel, src in product_files(root):
        blank = blank_out(src)
        end = product_end(blank)
        lines = src[:end].rstrip().count("\n") + 1
        sizes.append((lines, rel))
        if lines > MAX_FILE_LINES:
            breaches.append(Breach(rel, lines, f"{lines} lines before its tests (at most {MAX_FILE_LINES}): cut it along a seam"))
        for name, first, last in functions(blank, end):
            span = last - first + 1
            fns.append((span, f"{rel}:{first} {name}"))
            if span > MAX_FN_LINES:
                breaches.append(Breach(rel, first, f"fn {name} is {span} lines (at most {MAX_FN_LINES}): name its steps"))
        for platform, homes in PLATFORM_HOMES.items():
            if any(rel.startswith(h) for h in homes):
                continue
            # Only inside string literals (the blanked text keeps the quotes at
            # the same offsets), and only before the tests.
            for lit in re.finditer(r'"([^"\n]*)"', blank[:end]):
                text = src[lit.start(1):lit.end(1)]
                if text == platform:
                    literals += 1
                    line = src.count("\n", 0, lit.start()) + 1
                    breaches.append(Breach(rel, line, f'the literal "{platform}": name it with the Platform type'))
    if report:
        print("the ten largest product files (lines before their tests):")
        for lines, rel in sorted(sizes, reverse=True)[:10]:
            print(f"  {lines:5d}  {rel}")
        print("the ten longest product functions (lines):")
        for span, where in sorted(fns, reverse=True)[:10]:
            print(f"  {span:5d}  {where}")
        print(f"platform names written as literals outside their modules: {literals}")
    return breaches


def self_test() -> None:
    """Each rule, broken once in a small tree, fails with the file and the number."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        src = root / "crates/demo/src"
        src.mkdir(parents=True)
        body = "\n".join(f"    let _x{i} = {i};" for i in range(81))
        (src / "long_fn.rs").write_text(f"fn long() {{\n{body}\n}}\n")
        (src / "big.rs").write_text("".join(f"pub const C{i}: u8 = 0;\n" for i in range(601)))
        (src / "fine.rs").write_text(
            "".join(f"pub const C{i}: u8 = 0;\n" for i in range(600))
            + "#[cfg(test)]\nmod tests {\n" + "    // a test line\n" * 400 + "}\n"
        )
        (src / "named.rs").write_text('fn p() -> &\'static str {\n    let _c = \'"\';\n    "shopify"\n}\n// "woocommerce" in a comment\n')
        got = [str(b) for b in check(root)]
        want = [
            "crates/demo/src/big.rs:601: 601 lines before its tests",
            "crates/demo/src/long_fn.rs:1: fn long is 83 lines",
            'crates/demo/src/named.rs:3: the literal "shopify"',
        ]
        for w in want:
            assert any(g.startswith(w) for g in got), f"expected a breach {w!r}, got {got}"
        assert len(got) == len(want), f"expected only {want}, got {got}"
        print("self-test: each rule fails where it is broken:")
        for g in got:
            print(f"  {g}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        self_test()
        return 0
    breaches = check(args.root, report=args.report)
    for b in breaches:
        print(b, file=sys.stderr)
    if breaches:
        print(f"{len(breaches)} breaches of the shape rules (scripts/shape.py says why each exists)", file=sys.stderr)
        return 1
    print("ok: no product file over", MAX_FILE_LINES, "lines, no function over", MAX_FN_LINES, "lines, no platform literal outside its module")
    return 0


if __name__ == "__main__":
    sys.exit(main())
