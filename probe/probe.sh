#!/bin/bash
# one-shot GPU probe of the injection library
set -u
O=$OUT
git show HEAD:src/main.c > src/main.c; rm -f src/cmd/audit.c src/cli/audit_args.c
make -j16 DEPS_PREFIX=$PWD/.deps CUDA_ARCHS=90 all >$O/build.log 2>&1 || { tail -30 $O/build.log; exit 1; }
LIB=$PWD/build/libsyncbench_audit.so
CUPTI=$(ls /usr/local/cuda/lib64/libcupti.so | head -1)
ls -la /usr/local/cuda/lib64/libcupti* | head
aud() { # aud NAME [env...] -- cmd
  local name=$1; shift; local d=$O/$name; mkdir -p $d
  env CUDA_INJECTION64_PATH=$LIB NVTX_INJECTION64_PATH=$CUPTI SYNCBENCH_AUDIT_DIR=$d "$@"
}
B=./build/syncbench
echo "== sync-device iters 20 reps 3"
aud sdev $B --scenario small-gemm --variant sync-device --iters 20 --min-reps 3 --max-reps 3 --warmup 1 --warmup-time 0 -q --csv $O/sdev.csv; echo rc=$?
python3 probe/summ.py $O/sdev
echo "== sync-readback"
aud srb $B --scenario small-gemm --variant sync-readback --iters 20 --min-reps 3 --max-reps 3 --warmup 1 --warmup-time 0 -q; echo rc=$?
python3 probe/summ.py $O/srb
echo "== torch item"
aud titem python3 probe/item.py item; echo rc=$?
python3 probe/summ.py $O/titem
echo "== torch profiler"
aud tprof python3 probe/item.py profiler 2>&1 | tail -5; echo rc=$?
python3 probe/summ.py $O/tprof
echo "== trace mode sync-device"
aud trace SYNCBENCH_AUDIT_MODE=trace $B --scenario small-gemm --variant sync-device --iters 20 --min-reps 3 --max-reps 3 --warmup 1 --warmup-time 0 -q; echo rc=$?
python3 probe/summ.py $O/trace | head -20
echo "== overhead small-gemm async (median us/iter), 4 rounds"
for r in 1 2 3 4; do
  for m in none full nogpu trace; do
    f=$O/ovh-$m-$r.csv
    case $m in
      none) $B --scenario small-gemm --variant async -q --csv $f ;;
      full) aud ovh-$m-$r $B --scenario small-gemm --variant async -q --csv $f ;;
      nogpu) aud ovh-$m-$r SYNCBENCH_AUDIT_GPU=0 $B --scenario small-gemm --variant async -q --csv $f ;;
      trace) aud ovh-$m-$r SYNCBENCH_AUDIT_MODE=trace $B --scenario small-gemm --variant async -q --csv $f ;;
    esac
    python3 -c "import csv,sys; rows=[r for r in csv.DictReader(open(sys.argv[1])) if r['metric'] in ('wall_us_per_iter','gpu_us_per_iter')]; print(sys.argv[2], [(r['params'][:30], r['metric'], r['median']) for r in rows][:4])" $f $m
  done
done
du -sh $O/ovh-full-1 $O/ovh-trace-1
rm -rf $O/ovh-*
