#!/usr/bin/env bash
# R-MCL over GPUs (`mpirun -np N trident cluster --backend cuda`: the device pass, M gathered
# through NCCL) on a planted network generated on the host, against one process of the same
# binary on one GPU in the same run; every rank count's clusters compared with one
# process's, byte for byte. CPU=1 adds one process on the CPU (slow at 10M nodes).
#
#   NODES="1000000 10000000" GPUS="1 2 4" bash benches/dist/cluster_scaling.sh [bundle dir]
# LAYOUTS="replicate partition" runs each rank count in each layout of M (default auto);
# CLUSTER_ARGS (e.g. "--max-per-column 256") go to every run.
set -euo pipefail
B=${1:-target/bundle}
. "$(dirname "$0")/bundle_env.sh"
. "$(dirname "$0")/nccl_env.sh"
for n in ${NODES:-1000000}; do
    f=$W/planted$n.el
    [ -f "$f" ] || "$T" generate planted --nodes "$n" --communities $((n / 100)) --degree 30 -o "$f" | tail -1
    echo "== planted network, $n nodes, degree 30 ($(du -h "$f" | cut -f1))"
    if [ "${CPU:-0}" = 1 ]; then
        echo "== one process, CPU ($(nproc) threads)"
        "$T" cluster "$f" --backend cpu --quiet -o "$W/cpu$n.txt" 2>&1 | grep -E "^clusters|^phases" | cut -c1-300
    fi
    echo "== one process, CUDA (baseline)"
    "$T" cluster "$f" --backend cuda ${CLUSTER_ARGS:-} --quiet -o "$W/one$n.txt" 2>&1 | grep -E "^clusters|^phases|^error" | cut -c1-300
    for np in ${GPUS:-1 2 4}; do
        for layout in ${LAYOUTS:-auto}; do
            echo "== mpirun -np $np, CUDA, one GPU per rank ($(($(nproc) / np)) threads per rank), layout $layout"
            s=$(date +%s%N)
            mpirun -np "$np" --bind-to none -x TRIDENT_NCCL_LIBRARY -x RAYON_NUM_THREADS=$(($(nproc) / np)) "$T" cluster "$f" \
                --backend cuda --layout "$layout" ${CLUSTER_ARGS:-} --quiet -o "$W/np$np-$n.txt" 2>&1 </dev/null | grep -E "^clusters|^phases|^ranks|^layout|^fetch|^error" | cut -c1-300
            echo "mpirun wall: $((($(date +%s%N) - s) / 1000000)) ms"
            cmp -s "$W/one$n.txt" "$W/np$np-$n.txt" && echo "np=$np ($layout): clusters identical to one process" || echo "np=$np ($layout): CLUSTERS DIFFER"
        done
    done
done
