#!/usr/bin/env bash
# The multi-GPU checks (collective, cross-device) in one call, on a machine with 2 or more GPUs:
# build, the unit, CLI and GPU tests of the two scenarios, compute-sanitizer's memcheck on both,
# make validate's multi-GPU checks, then the key figures.
#   tests/gpu/multi_gpu_run.sh OUTDIR [make variables, e.g. DEPS_PREFIX=$PWD/.deps BUILD=build]
# Writes OUTDIR/summary.txt (GPUs and links, test results, the figures' table), OUTDIR/*.log
# and OUTDIR/*.csv. Exit status: the first failure's, else 0.
set -uo pipefail
out=${1:?usage: multi_gpu_run.sh OUTDIR [make variables]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
# NVLink multicast off, in NCCL and everything else that could use it: on shared hosts a program
# that uses it can put the GPUs out of service.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
build=build
for v in "$@"; do case "$v" in BUILD=*) build=${v#BUILD=} ;; esac; done
B=$PWD/$build/syncbench
sum="$out/summary.txt"
rc=0
fail() { [ "$rc" -ne 0 ] || rc=$1; }
say() { echo "== $*" | tee -a "$sum"; }

: >"$sum"
say "GPUs"
nvidia-smi -L | tee -a "$sum"
nvidia-smi topo -m 2>&1 | tee -a "$sum"
nvidia-smi topo -p2p r 2>&1 | tee -a "$sum"

say "build"
units=("$build/tests/test_nccl_api" "$build/tests/test_team" "$build/tests/test_multi_gpu")
if ! make -j"$(nproc)" CUDA_ARCHS=90 "$@" all "${units[@]}" >"$out/build.log" 2>&1; then
    tail -30 "$out/build.log" | tee -a "$sum"
    exit 1
fi

# NCCL: where the loader finds it (the CUDA folder, the system's), else PyTorch's wheel.
if [ -z "${SYNCBENCH_NCCL_LIB:-}" ] && ! ls /usr/local/cuda/lib64/libnccl.so.2* >/dev/null 2>&1 &&
    ! ldconfig -p 2>/dev/null | grep -qF libnccl.so.2; then
    lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
    [ -n "$lib" ] && [ -e "$lib" ] && export SYNCBENCH_NCCL_LIB=$lib
fi
echo "NCCL: ${SYNCBENCH_NCCL_LIB:-libnccl.so.2, from the loader path}" | tee -a "$sum"

say "unit tests"
for t in "${units[@]}"; do
    "$t" >"$out/$(basename "$t").log" 2>&1
    t_rc=$?
    echo "$(basename "$t"): exit $t_rc" | tee -a "$sum"
    [ "$t_rc" -eq 0 ] || fail "$t_rc"
done

say "pytest: the two scenarios (CLI, GPU, compute-sanitizer's three tools)"
py=python3
for p in python3 /usr/bin/python3; do $p -c 'import pytest' 2>/dev/null && { py=$p; break; }; done
SYNCBENCH=$B $py -m pytest -v -rs tests/cli/test_multi_gpu_cli.py tests/gpu/test_multi_gpu.py \
    >"$out/pytest.log" 2>&1
t_rc=$?
SYNCBENCH=$B $py -m pytest -v -rs tests/gpu/test_sanitizer.py -k "small_size or collective or cross" \
    >"$out/pytest-sanitizer.log" 2>&1
s_rc=$?
grep -hE "PASSED|FAILED|SKIPPED|ERROR|XFAIL|passed|failed" "$out/pytest.log" \
    "$out/pytest-sanitizer.log" | tee -a "$sum"
[ "$t_rc" -eq 0 ] || fail "$t_rc"
[ "$s_rc" -eq 0 ] || fail "$s_rc"

say "make validate's multi-GPU figures (the straggler's wait, the savings, P2P against staged)"
SYNCBENCH=$B $py tests/validate/validate.py --only multi-gpu 2>"$out/validate.err" | tee -a "$sum"
v_rc=${PIPESTATUS[0]}
[ "$v_rc" -eq 0 ] || fail "$v_rc"

say "the one-GPU view (CUDA_VISIBLE_DEVICES=0): the multi-GPU suite is skipped with a note"
CUDA_VISIBLE_DEVICES=0 "$B" --config configs/multi-gpu.ini --quiet 2>&1 | tee -a "$sum"
echo "exit ${PIPESTATUS[0]}" | tee -a "$sum"

say "compute-sanitizer memcheck, few iterations"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
quick=(--iters 3 --warmup 1 --warmup-time 0 --min-reps 2 --max-reps 2 --quiet)
for args in "collective --set straggler_us=100" "cross-device --set bytes=1MiB"; do
    name=${args%% *}
    # NCCL's own probing of its kernels returns "no kernel image" (error 209) to NCCL, which
    # handles it (tests/gpu/test_sanitizer.py): API errors left out there, memory checked
    api=()
    [ "$name" = collective ] && api=(--report-api-errors no)
    # shellcheck disable=SC2086
    "$san" --tool memcheck "${api[@]}" --error-exitcode 97 "$B" --scenario $args "${quick[@]}" \
        >"$out/memcheck-$name.log" 2>&1
    t_rc=$?
    echo "memcheck $name: exit $t_rc, $(grep -E 'ERROR SUMMARY' "$out/memcheck-$name.log" | tail -1)" |
        tee -a "$sum"
    [ "$t_rc" -eq 0 ] || fail "$t_rc"
done

say "figures: collective (straggler_us 0, 100, 1000)"
"$B" --scenario collective --set straggler_us=0,100,1000 --min-reps 30 --max-time 2 \
    --csv "$out/collective.csv" --json "$out/collective.json" 2>&1 | tee -a "$sum"
fail "${PIPESTATUS[0]}"
say "figures: cross-device (waits; copies of 1 MiB, 64 MiB, 256 MiB)"
"$B" --config configs/multi-gpu.ini --scenario cross-device --min-reps 30 --max-time 2 \
    --csv "$out/cross_device.csv" 2>&1 | tee -a "$sum"
fail "${PIPESTATUS[0]}"

say "key figures (medians; us unless named)"
$py - "$out/collective.csv" "$out/cross_device.csv" <<'PY' 2>&1 | tee -a "$sum"
import csv, os, sys

def rows(path):
    if not os.path.exists(path):
        print(f"{path}: not written")
        return {}
    with open(path, newline="") as f:
        return {(r["variant"], r["params"], r["metric"]): float(r["median"])
                for r in csv.DictReader(f)}

def param(params, key):
    return dict(kv.split("=", 1) for kv in params.split(";"))[key]

coll = rows(sys.argv[1])
gpus = sorted({int(m[len("wait_gpu"):-len("_us")]) for _, _, m in coll if m.startswith("wait_gpu")})
head = ["straggler_us", "variant", "step", *[f"wait gpu{g}" for g in gpus], "fast wait",
        "straggler wait", "saving", "saving %"]
print("collective: " + " | ".join(head))
by_s = sorted({p for _, p, _ in coll}, key=lambda p: int(param(p, "straggler_us")))
base = next((coll.get(("every-step", p, "fast_wait_us")) for p in by_s
             if param(p, "straggler_us") == "0"), None)
for params in by_s:
    s = int(param(params, "straggler_us"))
    for v in ("every-step", "every-n", "never"):
        get = lambda m: coll.get((v, params, m))
        cells = [s, v, get("step_us"), *[get(f"wait_gpu{g}_us") for g in gpus], get("fast_wait_us"),
                 get("straggler_wait_us"), get("saving_us"), get("saving_pct")]
        print("collective: " + " | ".join("-" if c is None else f"{c:.1f}" if isinstance(c, float)
                                          else str(c) for c in cells))
    fast = coll.get(("every-step", params, "fast_wait_us"))
    if s and base is not None and fast is not None:
        print(f"collective: straggler_us={s}: the fast GPUs' wait grew by {fast - base:.1f} us "
              f"({100 * (fast - base - s) / s:+.1f} % of the straggler's extra time)")

x = rows(sys.argv[2])
print("cross-device: variant | bytes | step | wait | syncs/step | GB/s | saving | saving %")
for (v, params, m) in sorted(k for k in x if k[2] == "step_us"):
    get = lambda m: x.get((v, params, m))
    cells = [v, param(params, "bytes"), get("step_us"), get("wait_us"), get("syncs_per_step"),
             get("GBps"), get("saving_us"), get("saving_pct")]
    print("cross-device: " + " | ".join("-" if c is None else f"{c:.1f}" if isinstance(c, float)
                                        else str(c) for c in cells))
PY

echo "exit status: $rc" | tee -a "$sum"
exit "$rc"
