"""The house rules of docs/dev/layout.md, checked on the tree: every `#include "..."` of the C
and CUDA sources goes to its own layer or one below it (the layer order is read from the
layout's text block), the two libraries loaded into the audited program keep to themselves, no
two source files share a basename, and no function is over 100 lines. No build needed."""
import pathlib
import re

from conftest import ROOT

LAYOUT = ROOT / "docs" / "dev" / "layout.md"
SOURCE_DIRS = ("src", "kernels", "inject", "waits")
MAX_FUNCTION_LINES = 100


def layers():
    """[folder or file prefix, ...] top to bottom, from the numbered lines of the block that
    follows "The layers, top to bottom"."""
    text = LAYOUT.read_text()
    block = text[text.index("The layers, top to bottom"):]
    block = block[block.index("```text") + len("```text"):]
    block = block[:block.index("```")]
    out = []
    for line in block.splitlines():
        m = re.match(r"\s*\d+\s+(\S+)", line)
        if m:
            out.extend(m.group(1).split(","))
    assert out, "no layers found in docs/dev/layout.md"
    return out


def sources():
    for d in SOURCE_DIRS:
        base = ROOT / d
        if base.is_dir():
            yield from sorted(p for p in base.rglob("*") if p.suffix in (".c", ".h", ".cu"))


def layer_of(rel, order):
    """The index of the longest layer prefix that holds rel (a path from the root)."""
    best, at = -1, None
    for i, prefix in enumerate(order):
        if (rel == prefix or rel.startswith(prefix.rstrip("/") + "/")) and len(prefix) > best:
            best, at = len(prefix), i
    return at


def resolve(including, name):
    """Where `#include "name"` in file `including` lands, as a path from the root, or None
    for a header outside the project (a toolkit's)."""
    for base in (including.parent, ROOT / "src", ROOT / "kernels", ROOT):
        p = base / name
        if p.exists():
            return p.resolve().relative_to(ROOT).as_posix()
    return None


def test_every_source_file_is_in_a_layer():
    order = layers()
    lost = [p.relative_to(ROOT).as_posix() for p in sources()
            if layer_of(p.relative_to(ROOT).as_posix(), order) is None]
    assert not lost, f"files in no layer of docs/dev/layout.md: {lost}"


def test_no_include_runs_up_a_layer():
    order = layers()
    up = []
    for p in sources():
        rel = p.relative_to(ROOT).as_posix()
        mine = layer_of(rel, order)
        for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', p.read_text(errors="replace"),
                               re.M):
            target = resolve(p, name)
            if target is None:
                continue
            theirs = layer_of(target, order)
            if theirs is not None and mine is not None and theirs < mine:
                up.append(f"{rel} -> {target} ({order[mine]} includes {order[theirs]})")
    assert not up, "includes that run up a layer:\n" + "\n".join(up)


def test_nothing_includes_the_injection_library():
    """inject/ is a product of its own, loaded into the audited program: no file of src/ or
    kernels/ includes it (the layer order alone would let src/ include what lies below it)."""
    found = []
    for p in sources():
        rel = p.relative_to(ROOT).as_posix()
        if rel.startswith("inject/"):
            continue
        for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', p.read_text(errors="replace"),
                               re.M):
            target = resolve(p, name)
            if target and target.startswith("inject/"):
                found.append(f"{rel} -> {target}")
    assert not found, found


def includes(p):
    """The project files `#include "..."` names in p, as paths from the root."""
    for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', p.read_text(errors="replace"), re.M):
        target = resolve(p, name)
        if target:
            yield target


def test_the_waits_library_stands_alone():
    """waits/ (libsyncbench_waits.so, preloaded into every process the audited program starts)
    includes nothing of the project but its own files, and only inject/ includes it."""
    found = []
    assert any(p.relative_to(ROOT).as_posix().startswith("waits/") for p in sources())
    for p in sources():
        rel = p.relative_to(ROOT).as_posix()
        for target in includes(p):
            mine, theirs = rel.startswith("waits/"), target.startswith("waits/")
            if mine != theirs and not (rel.startswith("inject/") and theirs):
                found.append(f"{rel} -> {target}")
    assert not found, found


def test_no_two_source_files_share_a_basename():
    seen = {}
    for p in sources():
        seen.setdefault(p.name, []).append(p.relative_to(ROOT).as_posix())
    twice = {k: v for k, v in seen.items() if len(v) > 1}
    assert not twice, twice


def long_functions(text):
    """(name, lines) of each function over the limit, counted from the first line of its
    signature to its closing brace: clang-format (.clang-format) puts a definition's signature
    at column 0, its opening brace alone at column 0 and its closing brace at column 0."""
    out, start, name = [], None, None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if start is None and line.rstrip() == "{" and i > 0:
            j = i - 1
            while j > 0 and lines[j][:1] in (" ", "\t"):  # continued signature lines
                j -= 1
            m = re.search(r"(\w+)\s*\(", " ".join(lines[j:i]))
            if m:
                start, name = j, m.group(1)
        elif start is not None and line.startswith("}"):
            if i - start + 1 > MAX_FUNCTION_LINES:
                out.append((name, i - start + 1))
            start = None
    return out


def test_no_function_is_over_100_lines():
    long = []
    for p in sources():
        if p.suffix in (".c", ".cu"):
            long += [f"{p.relative_to(ROOT)}: {n} ({k} lines)"
                     for n, k in long_functions(p.read_text(errors="replace"))]
    assert not long, "functions over 100 lines:\n" + "\n".join(long)


def test_the_function_counter_counts():
    """The counter itself: a 101-line function is found, a 100-line one is not."""
    def fn(name, body_lines):
        return f"static int {name}(int a,\n                int b)\n{{\n" + \
            "    a++;\n" * (body_lines) + "}\n"
    assert long_functions(fn("fits", 100 - 4)) == []
    assert long_functions(fn("over", 101 - 4)) == [("over", 101)]
