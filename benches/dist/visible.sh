#!/usr/bin/env bash
# Does each rank seeing only its own GPU (CUDA_VISIBLE_DEVICES set per local rank, as
# Slurm's GPU binding does) shorten the start of `cluster` under mpirun? The CUDA driver
# starts every visible device in `cuInit`; NCCL probes them all. One call, on one host:
#   1. cuInit and a context alone (Python ctypes), 1 and NP processes at once, with every GPU
#      visible and with one each;
#   2. `cluster` of the planted network (NODES, default 10M; degree 30, K = 64, f64, CUDA,
#      read once per host) by one process and on NP GPUs, with every GPU visible and with one
#      each (REPEAT rounds, alternating); every run's clusters compared with one process's.
#
#   NODES=10000000 NP=4 bash benches/dist/visible.sh [bundle dir]
set -euo pipefail
B=${1:-target/bundle}
. "$(dirname "$0")/bundle_env.sh"
. "$(dirname "$0")/nccl_env.sh"
n=${NODES:-10000000}
np=${NP:-4}
f=$W/planted$n.el
[ -f "$f" ] || "$T" generate planted --nodes "$n" --communities $((n / 100)) --degree 30 -o "$f" | tail -1
probe=$W/cuinit.py
cat >"$probe" <<'PY'
import ctypes, os, sys, time
t = time.perf_counter()
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
init = time.perf_counter() - t
dev = ctypes.c_int()
rank = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", "0"))
count = ctypes.c_int()
cu.cuDeviceGetCount(ctypes.byref(count))
assert cu.cuDeviceGet(ctypes.byref(dev), rank % count.value) == 0
ctx = ctypes.c_void_p()
t2 = time.perf_counter()
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
c = time.perf_counter() - t2
print(f"cuInit {init:.3f} s, context {c:.3f} s ({count.value} visible, rank {rank})")
PY
# Sets CUDA_VISIBLE_DEVICES to the rank's local rank (mpirun) before running the command.
one=$W/one_gpu.sh
cat >"$one" <<'SH'
#!/bin/sh
export CUDA_VISIBLE_DEVICES=${OMPI_COMM_WORLD_LOCAL_RANK:-0}
exec "$@"
SH
chmod +x "$one"
mp() {
    echo mpirun -np "$np" --bind-to none -x TRIDENT_NCCL_LIBRARY -x RAYON_NUM_THREADS=$(($(nproc) / np))
}
echo "== cuInit, every GPU visible: one process, then $np at once"
python3 "$probe"
$(mp) python3 "$probe"
echo "== cuInit, one GPU visible each: one process, then $np at once"
CUDA_VISIBLE_DEVICES=0 python3 "$probe"
$(mp) "$one" python3 "$probe"
run() {
    local what=$1
    shift
    echo "== $what"
    local s=$(date +%s%N)
    "$@" "$T" cluster "$f" --backend cuda --quiet -o "$W/out.txt" 2>&1 </dev/null |
        grep -E "^clusters|^phases|^process|^error" | cut -c1-300
    echo "wall: $((($(date +%s%N) - s) / 1000000)) ms"
    if [ "$what" = "one process, every GPU visible" ]; then
        cp "$W/out.txt" "$W/one.txt"
    else
        cmp -s "$W/one.txt" "$W/out.txt" && echo "clusters identical to one process" || echo "CLUSTERS DIFFER"
    fi
}
for rep in ${REPEAT:-1 2}; do
    run "one process, every GPU visible"
    run "one process, one GPU visible" env CUDA_VISIBLE_DEVICES=0
    run "$np GPUs, every GPU visible" $(mp)
    run "$np GPUs, one GPU visible each" $(mp) "$one"
done
