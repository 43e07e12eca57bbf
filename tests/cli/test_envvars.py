"""The SYNCBENCH_* environment variables have one table (src/base/envvars.c) and one page
(docs/environment.md), without a GPU and without running anything:
  - every SYNCBENCH_ name in src/, inject/, waits/ and python/ is a row of the table (a name
    #defined in C, such as the in-process API's return codes, is no variable);
  - every row is read somewhere: its id through the getters (src/, inject/), or its name by
    the waits library's own getenv or the Python package;
  - src/ and inject/ read none with getenv directly: through envvars.h only;
  - the page lists every row, once, and no other, each for whom the table says."""
import re

from conftest import ROOT

TABLE = ROOT / "src/base/envvars.c"
HEADER = ROOT / "src/base/envvars.h"
PAGE = ROOT / "docs/environment.md"
ROW = re.compile(r'\[(SB_ENV_\w+)\]\s*=\s*\{\s*"(SYNCBENCH_\w+)",\s*SB_ENV_FOR_(\w+)')
NAME = re.compile(r"\bSYNCBENCH_[A-Z0-9_]*[A-Z0-9]\b")
DEFINED = re.compile(r"#\s*define\s+(SYNCBENCH_\w+)")
PAGE_ROW = re.compile(r"^\| `(SYNCBENCH_\w+)` \| ([\w-]+) \|", re.M)
WHO = {"USER": "user", "DEV": "developer", "TEST": "test", "HANDOFF": "hand-off"}
DIRECT = re.compile(r'getenv\(\s*(?:"SYNCBENCH_|SB_AUDIT_ENV_)')


def rows():
    """{name: (id, who)} of the table."""
    found = ROW.findall(TABLE.read_text())
    names = [name for _, name, _ in found]
    assert len(names) == len(set(names)), "a name twice in the table"
    return {name: (ident, who) for ident, name, who in found}


def sources(*folders, suffixes=(".c", ".h", ".py")):
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in suffixes and path.is_file() and path not in (TABLE, HEADER):
                yield path, path.read_text(errors="replace")


def test_the_table_has_a_row_for_every_id():
    header = HEADER.read_text()
    ids = set(re.findall(r"^\s*(SB_ENV_\w+),$", header, re.M)) - {"SB_ENV_COUNT"}
    ids -= {i for i in ids if i.startswith("SB_ENV_FOR_")}
    assert ids == {ident for ident, _ in rows().values()}


def test_every_name_read_is_a_row():
    table = rows()
    texts = list(sources("src", "inject", "waits", "python"))
    defined = {name for _, text in texts for name in DEFINED.findall(text)}
    missing = {}
    for path, text in texts:
        for name in set(NAME.findall(text)) - defined - set(table):
            missing.setdefault(name, path.relative_to(ROOT).as_posix())
    assert not missing, f"SYNCBENCH_ names not in src/base/envvars.c's table: {missing}"


def test_every_row_is_read():
    used = "\n".join(text for _, text in sources("src", "inject"))
    own = "\n".join(text for _, text in sources("waits", "python"))
    unused = [name for name, (ident, _) in rows().items()
              if not re.search(rf"\b{ident}\b", used) and name not in own]
    assert not unused, f"rows of src/base/envvars.c no one reads: {unused}"


def test_no_direct_getenv_of_a_row():
    direct = [path.relative_to(ROOT).as_posix() for path, text in sources("src", "inject")
              if DIRECT.search(text)]
    assert not direct, f"getenv of a SYNCBENCH_ variable outside base/envvars.c: {direct}"


def test_the_page_lists_every_row():
    listed = PAGE_ROW.findall(PAGE.read_text())
    names = [name for name, _ in listed]
    assert len(names) == len(set(names)), "a variable twice in docs/environment.md"
    table = rows()
    assert set(names) == set(table), set(names) ^ set(table)
    for name, who in listed:
        assert who == WHO[table[name][1]], f"{name}: the page says {who}, the table {table[name][1]}"
