"""Every command in the docs runs as written: the fenced code blocks of README.md and
docs/**/*.md, run from a temporary copy of the repository, with no GPU.

Which lines are commands:
  - a line of a fenced code block that starts with `syncbench` or `make` as a word, after an
    optional `$ `; a line ending in a backslash goes on on the next one; an unquoted `#` starts
    a comment. Blocks tagged `text` show output and are not read.
  - in a `console` block only the `$ ` lines are commands; the lines after one, up to the next,
    are its output. Where that output is `syncbench: ...` lines (an error shown), the command
    must fail with exactly those lines on stderr.

How each is run (in a copy of the repository, one per document, so that a block's commands see
each other's outputs and nothing lands in the checkout):
  - `make ARGS`: checked with `make -n ARGS` (nothing built, tested or installed), except the
    quick targets of RUN_MAKE, which run.
  - `syncbench ARGS`: the binary of $SYNCBENCH, every GPU hidden (CUDA_VISIBLE_DEVICES=""), so
    that nothing is measured even on a GPU machine. Exit 0 passes. Exit 3 with one line
    `syncbench: no usable CUDA device ...` (which names libcuda.so.1 on a machine without a
    driver) means the command needs a GPU: skipped, "needs a GPU".
  - `syncbench audit ... -- CMD ...`: CMD is your program; it is replaced by one that does not
    exist, and the audit must get as far as starting it (exit 127, one line). That checks every
    option and output of the line without running the program or CUDA.
  - an input that is not there (compare's two CSVs, --config FILE, --from DIR, --rules FILE, --baseline FILE,
    the --merge reports) stands for a file of yours: skipped. An input inside one of the repository's own
    folders (configs/, results/, tests/, ...) must exist.
  - anything else fails, naming the document, the line and the command.

Also: README.md has at most 300 lines, and every relative link of README.md and the docs (the
docs/ links of the README among them) points to a file that exists. And docs/record-format.md
keeps to the record table (src/record/schema.c): its field table is `syncbench __record-schema`'s
output, and its sections under "Records" name each kind of the table, and no other."""
import os
import pathlib
import re
import shlex
import shutil
import subprocess

import pytest

from conftest import BIN, NO_GPU, ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
README_MAX_LINES = 300
OUTPUT_TAGS = {"text"}                 # blocks that show output, never run
RUN_MAKE = {"perf-metrics"}            # make targets quick enough to run; the rest: make -n
COMMAND = re.compile(r"^(?:\$ )?((?:syncbench|make)(?:\s.*)?)$")
FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")
SHELL_SYNTAX = {"|", "||", "&&", "&", ";", ">", ">>", "<", "2>", "2>&1"}
MISSING_PROGRAM = "/nonexistent/syncbench-docs-test/your-program"
NO_DEVICE = "syncbench: no usable CUDA device"
TIMEOUT = 300
# The repository's own top-level folders: an input path inside one of them must exist.
REPO_DIRS = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith((".", "build"))}


class Command:
    def __init__(self, doc, line, text, expect_err=None):
        self.doc, self.line, self.text, self.expect_err = doc, line, text, expect_err

    @property
    def where(self):
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def fenced_blocks(path):
    """(tag, [(line number, text), ...]) of every fenced code block of a Markdown file."""
    blocks, block, fence, tag = [], None, "", ""
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if block is None:
            m = FENCE.match(stripped)
            if m:
                fence, tag, block = m.group(1), m.group(2).lower(), []
        elif stripped.startswith(fence) and set(stripped) == {fence[0]}:
            blocks.append((tag, block))
            block = None
        else:
            block.append((n, line))
    return blocks


def logical_lines(block):
    """A block's lines with backslash continuations joined: (first line number, text)."""
    out, pending, start = [], "", None
    for n, line in block:
        if start is None:
            start = n
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append((start, (pending + line).strip()))
        pending, start = "", None
    if start is not None:
        out.append((start, pending.strip()))
    return out


def commands_of(path):
    found = []
    for tag, block in fenced_blocks(path):
        if tag in OUTPUT_TAGS:
            continue
        lines = logical_lines(block)
        for i, (n, text) in enumerate(lines):
            if tag == "console" and not text.startswith("$ "):
                continue
            m = COMMAND.match(text)
            if not m:
                continue
            expect = None
            if tag == "console":
                shown = []
                for _, out in lines[i + 1:]:
                    if out.startswith("$ "):
                        break
                    shown.append(out)
                if shown and all(s.startswith("syncbench: ") for s in shown):
                    expect = shown
            found.append(Command(path, n, m.group(1), expect))
    return found


COMMANDS = [c for doc in DOCS if doc.exists() for c in commands_of(doc)]


@pytest.fixture(scope="session")
def copies(tmp_path_factory):
    """A copy of the repository per document (no .git, no build folders)."""
    made = {}

    def ignore(folder, names):
        top = pathlib.Path(folder) == ROOT
        return {n for n in names
                if n in ("__pycache__", ".pytest_cache")
                or (top and (n.startswith("build") or n in (".git", ".deps", ".probe", ".whl")))}

    def copy_for(doc):
        if doc not in made:
            dst = tmp_path_factory.mktemp("docs") / "repo"
            shutil.copytree(ROOT, dst, ignore=ignore, symlinks=True)
            made[doc] = dst
        return made[doc]

    return copy_for


def split(cmd):
    try:
        words = shlex.split(cmd.text, comments=True)
    except ValueError as e:
        pytest.fail(f"{cmd.where}: `{cmd.text}`: cannot be split into words: {e}")
    bad = [w for w in words if w in SHELL_SYNTAX or "$(" in w or "`" in w]
    if bad:
        pytest.fail(f"{cmd.where}: `{cmd.text}`: shell syntax ({' '.join(bad)}) in a docs "
                    "command: write one command a line")
    return words


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env.update(extra or {})
    return env


_python = []


def makefile_python():
    """The Python the Makefile picks (the first of python3, /usr/bin/python3 with pytest and
    matplotlib), found once and handed to every make as PYTHON: the Makefile's own probe costs
    seconds a call, and PYTHON from the environment is what `PYTHON ?=` keeps."""
    if not _python:
        for p in ("python3", "/usr/bin/python3"):
            if shutil.which(p) and subprocess.run([p, "-c", "import pytest, matplotlib"],
                                                  capture_output=True).returncode == 0:
                _python.append(p)
                break
        else:
            _python.append("python3")
    return _python[0]


def option_value(args, name):
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return None


def inputs_of(args):
    """The files a syncbench command reads: they must be there for it to run."""
    found = []
    if args[:1] == ["compare"]:
        found += [a for a in args[1:3] if not a.startswith("-")]
    for opt in ("--config", "--from", "--rules", "--baseline"):
        value = option_value(args, opt)
        if value is not None:
            found.append(value)
    if "--merge" in args:
        for a in args[args.index("--merge") + 1:]:
            if a.startswith("-"):
                break
            found.append(a)
    return found


def fail(cmd, argv, r, why):
    pytest.fail(f"{cmd.where}: `{cmd.text}` {why}\n  ran: {' '.join(map(str, argv))}\n"
                f"  exit {r.returncode}\n  stderr: {r.stderr[-2000:]}\n  stdout: {r.stdout[-1000:]}")


def run_make(cmd, words, cwd):
    args = words[1:]
    targets = [a for a in args if not a.startswith("-") and "=" not in a]
    argv = ["make", *args] if targets and set(targets) <= RUN_MAKE else ["make", "-n", *args]
    env = clean_env() if "PYTHON" in os.environ else clean_env({"PYTHON": makefile_python()})
    r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT,
                       env=env, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        fail(cmd, argv, r, "fails")


def run_syncbench(cmd, words, cwd):
    args = words[1:]
    for path in inputs_of(args):
        if not (cwd / path).exists():
            if pathlib.PurePath(path).parts[0] in REPO_DIRS:
                pytest.fail(f"{cmd.where}: `{cmd.text}`: {path} is not in the repository")
            pytest.skip(f"{path} stands for a file of yours")
    audited = args[:1] == ["audit"] and "--" in args
    if audited:
        args = args[:args.index("--") + 1] + [MISSING_PROGRAM]
    argv = [BIN, *args]
    r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT,
                       env=clean_env(NO_GPU), stdin=subprocess.DEVNULL)
    err = r.stderr.splitlines()
    if cmd.expect_err is not None:
        if r.returncode == 0 or err != cmd.expect_err:
            fail(cmd, argv, r, "does not fail as the docs show:\n  " + "\n  ".join(cmd.expect_err))
        return
    if audited:
        if r.returncode != 127 or len(err) != 1 or MISSING_PROGRAM not in err[0]:
            fail(cmd, argv, r, "(its program replaced by a missing one) did not get as far as "
                 "starting it (exit 127, one line)")
        return
    if r.returncode == 3 and len(err) == 1 and err[0].startswith(NO_DEVICE):
        pytest.skip("needs a GPU")
    if r.returncode != 0:
        fail(cmd, argv, r, "fails")


@pytest.mark.parametrize("cmd", COMMANDS, ids=[c.where for c in COMMANDS])
def test_command_runs_as_written(cmd, copies):
    words = split(cmd)
    cwd = copies(cmd.doc)
    if words[0] == "make":
        run_make(cmd, words, cwd)
    else:
        run_syncbench(cmd, words, cwd)


def test_readme_is_short():
    n = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines, more than {README_MAX_LINES}"


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def relative_links(path):
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a URL or an anchor of this page
            yield n, target.split("#", 1)[0]


def test_readme_links_to_docs_exist():
    readme = ROOT / "README.md"
    docs = [(n, t) for n, t in relative_links(readme) if t.startswith("docs/")]
    assert docs, "README.md links to no docs/ file"
    missing = [f"README.md:{n}: {t}" for n, t in docs if not (ROOT / t).is_file()]
    assert not missing, "links to missing files:\n" + "\n".join(missing)


def test_every_relative_link_exists():
    missing = [f"{doc.relative_to(ROOT)}:{n}: {t}"
               for doc in DOCS for n, t in relative_links(doc)
               if not (doc.parent / t).exists()]
    assert not missing, "links to missing files:\n" + "\n".join(missing)


def test_quick_start_is_what_ci_runs():
    """The README's two quick-start commands: `make test` is CI's own last step."""
    readme = [shlex.split(c.text, comments=True) for c in commands_of(ROOT / "README.md")]
    assert ["make", "run"] in readme and ["make", "test"] in readme, readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test\b", ci, re.M), ".ci/run no longer runs make test"


def test_the_docs_hold_commands_that_run_here():
    """The extraction found commands, and most of them need no GPU."""
    assert len(COMMANDS) >= 40, len(COMMANDS)
    syncbench = [c for c in COMMANDS if c.text.startswith("syncbench")]
    assert any("--dry-run" in c.text for c in syncbench)
    assert any(c.text.startswith("syncbench compare") for c in syncbench)
    assert any(c.expect_err for c in syncbench)


RECORD_DOC = ROOT / "docs" / "record-format.md"
SCHEMA_BEGIN = "<!-- record-schema: begin (syncbench __record-schema) -->\n"
SCHEMA_END = "<!-- record-schema: end -->\n"


def record_schema():
    r = subprocess.run([BIN, "__record-schema"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_the_record_formats_field_table_is_the_record_table():
    """Every kind and field of src/record/schema.c in the doc, as the table says it, and no
    other: the table between the markers is the command's output, byte for byte."""
    text = RECORD_DOC.read_text(encoding="utf-8")
    assert text.count(SCHEMA_BEGIN) == 1 and text.count(SCHEMA_END) == 1, RECORD_DOC
    shown = text[text.index(SCHEMA_BEGIN) + len(SCHEMA_BEGIN):text.index(SCHEMA_END)]
    assert shown == record_schema(), (
        f"{RECORD_DOC.relative_to(ROOT)}: the field table differs from the record table "
        "(src/record/schema.c): put `syncbench __record-schema`'s output between the markers")


def test_the_record_formats_sections_are_the_tables_kinds():
    """One `### kind[, kind...] — what` section per kind under "## Records": a kind the doc
    describes is one the reader knows, and every kind the reader knows is described."""
    rows = [line.split("|") for line in record_schema().splitlines()[2:]]
    table = {row[1].strip().strip("`") for row in rows}
    text = RECORD_DOC.read_text(encoding="utf-8")
    records = text[text.index("\n## Records\n") + 1:]
    records = records[:records.find("\n## ")] if "\n## " in records else records
    described = set()
    for m in re.finditer(r"^### (.+?) — ", records, re.M):
        described |= {k.strip() for k in m.group(1).split(",")}
    assert described - table == set(), "kinds the doc describes that the record table lacks"
    assert table - described == set(), "kinds of the record table the doc does not describe"
