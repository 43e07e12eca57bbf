"""The include rule at link level (docs/dev/layout.md): no object of the binary's library calls a
function defined in a layer above its own. An include rule alone misses a function declared in
a low layer's header but defined above it (sb_record was: declared in scenarios/scenario.h,
defined in engine/). Reads the objects `make` built beside the binary under test (build/obj);
skipped without them."""
import pathlib
import subprocess

import pytest

from conftest import BIN, ROOT
from test_layout import layer_of, layers

OBJ = pathlib.Path(BIN).resolve().parent / "obj"


def symbols(obj):
    """(defined, undefined) global symbols of an object file."""
    out = subprocess.run(["nm", "-g", str(obj)], capture_output=True, text=True, check=True)
    defined, undefined = set(), set()
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
    return defined, undefined


def test_no_call_runs_up_a_layer():
    objects = sorted(OBJ.rglob("*.o")) if OBJ.is_dir() else []
    if not objects:
        pytest.skip(f"no objects in {OBJ}: build with make first")
    order = layers()
    where, needs = {}, {}
    for obj in objects:
        rel = obj.relative_to(OBJ).with_suffix("").as_posix()
        src = next((rel + ext for ext in (".c", ".cu") if (ROOT / (rel + ext)).exists()), None)
        if src is None:
            continue
        defined, undefined = symbols(obj)
        for name in defined:
            where[name] = src
        needs[src] = undefined
    up = []
    for src, undefined in sorted(needs.items()):
        mine = layer_of(src, order)
        for name in sorted(undefined):
            theirs = layer_of(where[name], order) if name in where else None
            if mine is not None and theirs is not None and theirs < mine:
                up.append(f"{src} calls {name} of {where[name]}")
    assert not up, "calls that run up a layer:\n" + "\n".join(up)
