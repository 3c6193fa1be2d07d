#!/usr/bin/env bash
# R-MCL over ranks (`mpirun -np N trident cluster --backend cpu`, the host column pass) on a
# planted network generated on the host, against one process of the same binary on the CPU
# and on one GPU (CUDA) in the same run; every rank count's clusters compared with one
# process's, byte for byte.
#
#   NODES=1000000 RANKS="1 2" bash benches/dist/cluster_scaling.sh [bundle dir]
set -euo pipefail
B=${1:-target/bundle}
. "$(dirname "$0")/bundle_env.sh"
n=${NODES:-1000000}
f=$W/planted$n.el
[ -f "$f" ] || "$T" generate planted --nodes "$n" --communities $((n / 100)) --degree 30 -o "$f" | tail -1
echo "== one process, CPU ($(nproc) threads)"
"$T" cluster "$f" --backend cpu --quiet -o "$W/one.txt" 2>&1 | grep -E "^clusters|^phases" | cut -c1-240
echo "== one process, CUDA"
"$T" cluster "$f" --backend cuda --quiet -o "$W/gpu.txt" 2>&1 | grep -E "^clusters|^phases" | cut -c1-240
cmp -s "$W/one.txt" "$W/gpu.txt" && echo "CUDA clusters: identical to the CPU's" || echo "CUDA clusters differ from the CPU's (f32 vs f32 expected equal)"
for np in ${RANKS:-1 2}; do
    echo "== mpirun -np $np, CPU column pass ($(($(nproc) / np)) threads per rank)"
    mpirun -np "$np" --bind-to none -x RAYON_NUM_THREADS=$(($(nproc) / np)) "$T" cluster "$f" \
        --backend cpu --quiet -o "$W/np$np.txt" 2>&1 </dev/null | grep -E "^clusters|^phases|^ranks" | cut -c1-240
    cmp -s "$W/one.txt" "$W/np$np.txt" && echo "np=$np: clusters identical to one process" || echo "np=$np: CLUSTERS DIFFER"
done
