"""The house rules of docs/dev/layout.md, checked on the tree: every `#include "..."` of the C
and CUDA sources goes to its own layer or one below it (the layer order is read from the
layout's text block), the two libraries loaded into the audited program keep to themselves, the
records (src/model/) hold nothing of the analysis, no two source files share a basename, and no
function is over 100 lines. No build needed."""
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


def code_of(text):
    """C text without its comments and string literals (what the compiler names)."""
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', " ", text, flags=re.S)


def analysis_types():
    """The names of the types src/analyze/ makes in its headers: the tags of the structs it
    defines and its typedef names (not the structs of others it only points to)."""
    names = set()
    for h in sorted((ROOT / "src" / "analyze").glob("*.h")):
        code = code_of(h.read_text())
        names.update(re.findall(r"\bstruct\s+(\w+)\s*\{", code))
        names.update(re.findall(r"\btypedef\s+(?:struct|enum)\s+\w+\s+(\w+)\s*;", code))
        names.update(re.findall(r"\btypedef\s+(?:struct|enum)\s*\w*\s*\{[^{}]*\}\s*(\w+)\s*;",
                                code))
    return names


def members(code, name):
    """The member names of `typedef struct name { ... } name;` in code (comments stripped)."""
    m = re.search(r"typedef\s+struct\s+" + name + r"\s*\{(.*?)\}\s*" + name + r"\s*;", code,
                  re.S)
    assert m, f"no struct {name}"
    return {d for stmt in m.group(1).split(";")
            for d in re.findall(r"(\w+)\s*(?:\[[^\]]*\])?\s*(?=,|$)", stmt.strip())}


# What the analysis finds of the records is its own (src/analyze/analyze.h: each call's
# sb_audit_call_info, each range instance's sb_audit_range_info, the stacks a blocking call
# used), never written back into them (issue 45).
ANALYSIS_FIELDS = {
    "sb_audit_call": {"cls", "waiter", "wake", "bubble_ns", "range", "site", "native",
                      "pyframe", "source", "rule", "made"},
    "sb_audit_range": {"blocking", "blocked_ns"},
    "sb_audit_stack": {"used"},
}


def test_the_records_hold_nothing_of_the_analysis():
    """src/model/model.h holds the records as read: no field the analysis fills in, and neither
    it nor any file of a layer below src/analyze/ (the replay, the record format, ...) names a
    type of the analysis, not even declared ahead (`struct sb_audit_rule;`)."""
    model = code_of((ROOT / "src" / "model" / "model.h").read_text())
    found = [f"{struct}.{f}" for struct, fields in ANALYSIS_FIELDS.items()
             for f in sorted(fields & members(model, struct))]
    assert not found, f"analysis fields in model.h: {found}"
    types = analysis_types()
    assert {"sb_audit_rule", "sb_audit_made", "sb_audit_call_info", "sb_audit_analysis",
            "sb_audit_range_info"} <= types
    order = layers()
    analyze = order.index("src/analyze/")
    named = []
    for p in sources():
        rel = p.relative_to(ROOT).as_posix()
        mine = layer_of(rel, order)
        if mine is None or mine <= analyze:
            continue
        code = code_of(p.read_text(errors="replace"))
        named += [f"{rel}: {t}" for t in sorted(types) if re.search(r"\b" + t + r"\b", code)]
    assert not named, "types of src/analyze/ named below it:\n" + "\n".join(named)


def test_the_field_reader_reads():
    """members() itself: the call as it was before issue 45 has the analysis's fields, a
    comment's words are not members."""
    old = code_of("""typedef struct sb_audit_call {
    const char *api; /* as recorded: "cudaMemcpy_v3020" */
    int64_t tid, ctx, corr, start, end, stack;
    sb_audit_range_ref *ranges; /* outermost first */
    sb_audit_class cls;
    int waiter; /* a thread, site and source */
    const struct sb_audit_rule *rule;
    int64_t at[4];
} sb_audit_call;""")
    assert members(old, "sb_audit_call") == {"api", "tid", "ctx", "corr", "start", "end",
                                             "stack", "ranges", "cls", "waiter", "rule", "at"}
    assert "sb_audit_rule" in re.findall(r"\bstruct\s+(\w+)", old)
