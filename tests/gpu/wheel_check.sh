#!/usr/bin/env bash
# The GPU check of the wheel (issue 38: `pip install` is all a PyTorch user needs), in one call,
# about 2 minutes: build the wheel (make wheel, CUDA_ARCHS=90), then in a fresh virtual
# environment that sees torch, with the CUDA toolkit hidden (PATH, LD_LIBRARY_PATH, CUDA_HOME
# without it; /usr/local/cuda stays on disk, and SYNCBENCH_NO_TOOLKIT=1 makes syncbench skip it
# and the loader's own search, whose ld.so.cache may list it), `pip install --no-index` of the
# wheel and: the pytest plugin (a marked .item() fails, a sync-free test passes), `syncbench
# audit -- python tests/audit/torch_item.py` naming the lines, `syncbench --scenario
# small-gemm`; each says which CUPTI and which cuBLAS it used. Last, the sdist built from
# source by pip (the toolkit visible again). Every command is printed before its output.
#   tests/gpu/wheel_check.sh OUTDIR
#   TORCH_PYTHON=/path/to/python (default /opt/torch/.venv/bin/python, else python3)
set -uo pipefail
out=${1:?usage: wheel_check.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)   # the venv, the wheels, the test file: large, kept out of OUTDIR (its logs)
ORIG_PATH=$PATH
export PYTHONUNBUFFERED=1
t0=$SECONDS
step() { echo; echo "== $* ($((SECONDS - t0)) s)"; }
run() { echo "\$ $*"; "$@"; local rc=$?; echo "[exit $rc]"; return $rc; }

step "the machine"
run git log -1 --oneline
run nvidia-smi -L
TORCH_PY=${TORCH_PYTHON:-/opt/torch/.venv/bin/python}
[ -x "$TORCH_PY" ] || TORCH_PY=python3
run "$TORCH_PY" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
TORCH_SITE=$("$TORCH_PY" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
echo "torch's site-packages: $TORCH_SITE"
run ls -d "$TORCH_SITE"/nvidia*
run ls "$TORCH_SITE"/nvidia/
for d in "$TORCH_SITE"/nvidia/*/lib; do echo "-- $d"; ls "$d" | grep -E 'cupti|cublas|nvperf' | tr '\n' ' '; echo; done
echo "-- the loader's cache (ld.so.cache) for cupti and cublas:"; ldconfig -p | grep -E 'libcupti|libcublas\.' || echo "(none)"

step "build the wheel (make wheel, CUDA_ARCHS=90)"
echo "\$ make -j$(nproc) CUDA_ARCHS=90 DIST=$work/dist wheel"
make -j"$(nproc)" CUDA_ARCHS=90 DIST="$work/dist" wheel >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
tail -1 "$out/build.log"
whl=$(ls "$work"/dist/syncbench-*.whl)
# the wheel's files and metadata through Python's zipfile: the GPU machine has no unzip
run python3 -m zipfile -l "$whl"
echo "\$ (the wheel's dist-info/WHEEL and entry_points.txt)"
python3 - "$whl" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for n in z.namelist():
    if n.endswith((".dist-info/WHEEL", ".dist-info/entry_points.txt")):
        print(z.read(n).decode())
PY

step "a fresh venv that sees torch, the toolkit hidden"
venv=$work/venv
run "$TORCH_PY" -m venv --system-site-packages "$venv" || run "$TORCH_PY" -m venv --system-site-packages --without-pip "$venv"
py=$venv/bin/python
pysite=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
if ! "$py" -c 'import torch' 2>/dev/null; then
    # a venv made from a venv's Python sees the base Python's packages, not that venv's
    echo "torch not visible through --system-site-packages: adding $TORCH_SITE with a .pth file"
    echo "$TORCH_SITE" >"$pysite/torch-venv.pth"
fi
if ! "$py" -c 'import pytest' 2>/dev/null; then
    pt=$(python3 -c 'import os, pytest; print(os.path.dirname(os.path.dirname(pytest.__file__)))' 2>/dev/null)
    echo "no pytest for the venv's Python: adding ${pt:-nothing} (the system python3's) with a .pth file"
    [ -n "$pt" ] && echo "$pt" >>"$pysite/zz-pytest.pth"
fi
nocuda() { tr ':' '\n' | grep -v -i cuda | paste -sd: -; }
export PATH=$venv/bin:$(echo "$PATH" | nocuda)
export LD_LIBRARY_PATH=$(echo "${LD_LIBRARY_PATH:-}" | nocuda)
[ -n "$LD_LIBRARY_PATH" ] || unset LD_LIBRARY_PATH
unset CUDA_HOME CUDA_PATH CUDA_INJECTION64_PATH SYNCBENCH_AUDIT_LIB SYNCBENCH_WAITS_LIB SYNCBENCH
export SYNCBENCH_NO_TOOLKIT=1
echo "PATH=$PATH"; echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH-(unset)}"; echo "CUDA_HOME unset; SYNCBENCH_NO_TOOLKIT=1"
run which nvcc || true   # not used at run time; PATH entries naming cuda were dropped
if "$py" -m pip --version >/dev/null 2>&1; then
    run "$py" -m pip install -q --no-index "$whl"
else
    run "$TORCH_PY" -m pip --python "$py" install -q --no-index "$whl" || run uv pip install --python "$py" --no-index "$whl"
fi
run which syncbench
run syncbench --version
run ls -la "$pysite/syncbench/_bin/"

step "which CUPTI the package takes (no torch loaded first; then with torch imported first)"
run "$py" -c 'from syncbench import _native; _native._load(); print("library:", _native._lib_path); print("CUPTI:", _native.cupti_path, "(from", _native.cupti_from + ")")'
run "$py" -c '
import torch, syncbench
from syncbench import _native
x = torch.ones(1024, device="cuda")
with syncbench.count_syncs() as s:
    (x * 2).sum().item()
print("blocking:", s.blocking, s.by_class)
print("CUPTI:", _native.cupti_path, "(from", _native.cupti_from + ")")'

step "the pytest plugin: a marked .item() must fail, a sync-free marked test must pass"
mkdir -p "$work/t"
cat >"$work/t/test_marked.py" <<'EOF'
import pytest
import torch

torch.ones(1, device="cuda").sum().item()  # CUDA started outside the tests


@pytest.mark.no_syncs
def test_item_must_fail():
    x = torch.ones(1000, device="cuda")
    (x * 2).sum().item()


@pytest.mark.no_syncs
def test_sync_free_must_pass():
    x = torch.ones(1000, device="cuda")
    y = (x * 2).sum()
    assert y.is_cuda
EOF
(cd "$work/t" && run "$py" -m pytest -q -p no:cacheprovider -rf test_marked.py) >"$out/pytest.txt" 2>&1
cat "$out/pytest.txt"
if grep -q "1 failed, 1 passed" "$out/pytest.txt" && grep -q "FAILED test_marked.py::test_item_must_fail" "$out/pytest.txt"; then
    echo "PLUGIN: as it should (the .item() test failed, the sync-free one passed)"
else
    echo "PLUGIN: NOT as it should"
fi

step "syncbench audit -- python tests/audit/torch_item.py (from the venv's bin/)"
echo "\$ syncbench audit -- $py tests/audit/torch_item.py --mode item --steps 10"
syncbench audit -- "$py" tests/audit/torch_item.py --mode item --steps 10 >"$out/audit_stdout.txt" 2>"$out/audit.txt"
echo "[exit $?]"; cat "$out/audit.txt"; tail -1 "$out/audit_stdout.txt"
grep -q "torch_item.py:" "$out/audit.txt" && echo "AUDIT: names torch_item.py's lines" || echo "AUDIT: no torch_item.py line named"
echo "-- the CUPTI the audited process has mapped, and LD_LIBRARY_PATH as it saw it:"
run syncbench audit -q -- "$py" -c '
import os, torch
torch.ones(1, device="cuda").sum().item()
print("LD_LIBRARY_PATH=" + os.environ.get("LD_LIBRARY_PATH", "(unset)"))
print("mapped:", sorted({l.split()[-1] for l in open("/proc/self/maps") if "libcupti" in l}))'
echo "-- no CUPTI anywhere (the packaged binary run directly: no site-packages named): one line, exit 3, the command not started"
run env -u SYNCBENCH_SITE_PACKAGES -u VIRTUAL_ENV -u CONDA_PREFIX "$pysite/syncbench/_bin/syncbench" audit -- touch "$work/started"
[ -e "$work/started" ] && echo "the command STARTED" || echo "the command was not started"

step "syncbench --scenario small-gemm (which cuBLAS: the loader's trace)"
echo "\$ LD_DEBUG=libs syncbench --scenario small-gemm --min-reps 3 --max-time 0.3 --json $out/gemm.json"
LD_DEBUG=libs syncbench --scenario small-gemm --min-reps 3 --max-time 0.3 --json "$out/gemm.json" >"$out/gemm.txt" 2>"$work/gemm_ld.txt"
echo "[exit $?]"
cat "$out/gemm.txt"; grep -v -E '^ *[0-9]+:' "$work/gemm_ld.txt"
grep -E 'calling init: .*(cublas|cupti)' "$work/gemm_ld.txt" | sed 's/^ *[0-9]*: *//' | sort -u
"$py" -c 'import json,sys; e=json.load(open(sys.argv[1]))["environment"]; print("environment:", {k: e.get(k) for k in ("gpu","cuda_driver","cublas")})' "$out/gemm.json"

step "a suite by name: syncbench --config seeds.ini from an empty folder (the installed configs/)"
(
    cd "$(mktemp -d)" || exit 1
    run syncbench --config seeds.ini --max-time 0.2 --min-reps 3 --csv "$out/seeds.csv"
    "$py" -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(len(r), "rows,", len({x["scenario"] for x in r}), "scenarios")' "$out/seeds.csv"
)

step "the man page the wheel ships (syncbench/share/man/man1/syncbench.1)"
man1="$pysite/syncbench/share/man/man1/syncbench.1"
run ls -l "$man1"
# a minimized Debian has a man command that only says so: the page rendered by man -l where
# it renders, else its groff source
if command -v man >/dev/null && MANPAGER=cat COLUMNS=80 man -l "$man1" 2>/dev/null | grep -q SYNCBENCH; then
    MANPAGER=cat COLUMNS=80 man -l "$man1" 2>&1 | head -12
else
    echo "(no man command here: the page's head, as groff source)"; head -12 "$man1"
fi

step "the sdist built from source by pip (make sdist; pip wheel, CUDA_ARCHS=90; the toolkit visible)"
(
    export PATH=$ORIG_PATH; unset SYNCBENCH_NO_TOOLKIT
    run make -s DIST="$work/dist" sdist 2>&1 | grep -v "^warning: no previously-included"
    sd=$(ls "$work"/dist/syncbench-*.tar.gz)
    wp=$(for p in python3 /usr/bin/python3; do $p -c 'import setuptools, wheel' 2>/dev/null && { echo $p; break; }; done)
    echo "\$ CUDA_ARCHS=90 $wp -m pip wheel -v --no-cache-dir --no-deps --no-build-isolation --no-index -w $work/fromsrc $sd"
    CUDA_ARCHS=90 timeout 300 "$wp" -m pip wheel -v --no-cache-dir --no-deps --no-build-isolation \
        --no-index -w "$work/fromsrc" "$sd" >"$work/sdist.log" 2>&1; echo "[exit $?]"
    grep -E "syncbench setup.py|NVCC|LINK|CC-SO" "$work/sdist.log" | head -8; tail -2 "$work/sdist.log"
    ls "$work"/fromsrc/*.whl 2>/dev/null && python3 -m zipfile -l "$work"/fromsrc/*.whl | grep _bin
)
rm -rf "$work"
step "done"
