#!/usr/bin/env bash
# Strong scaling of `trident triangles` at 1, 2 and 4 GPUs of one host, one binary (the
# bundle's, built with the `mpi` feature), on Graph500 Kronecker graphs generated on the host.
# The baselines in the same run: the same binary without mpirun (one process, the
# one-process pipeline) and under `mpirun -np 1` (the distributed pipeline on one rank).
#
#   SCALES="24 26" GPUS="1 2 4" READS="host ranges" bash benches/dist/triangles_scaling.sh [bundle dir]
#
# READS: how the ranks read (`--read`; host, the default: once per host, shared; ranges: each
# rank its byte range, built and oriented across the ranks).
set -euo pipefail
B=${1:-target/bundle}
. "$(dirname "$0")/bundle_env.sh"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
. "$(dirname "$0")/nccl_env.sh"
for s in ${SCALES:-24 26}; do
    f=$W/kron$s.el
    if [ ! -f "$f" ]; then
        /usr/bin/time -f "generate: %e s" "$T" generate kronecker --scale "$s" -o "$f" | tail -3
    fi
    ls -l "$f"
    echo "== scale $s: one process, no mpirun"
    "$T" triangles "$f" --backend cuda --repeat 3 | grep -E "graph:|algorithm|triangles:|load|orientation|transfer|counting|total"
    for np in ${GPUS:-1 2 4}; do
        for layout in ${LAYOUTS:-replicate partition}; do
            for read in ${READS:-host}; do
                echo "== scale $s: mpirun -np $np, $layout, --read $read"
                # Unbound, each rank with its share of the host's cores.
                mpirun -np "$np" --bind-to none -x TRIDENT_NCCL_LIBRARY -x RAYON_NUM_THREADS=$(($(nproc) / np)) "$T" triangles "$f" --backend cuda --layout "$layout" --read "$read" --repeat 3 |
                    grep -E "^rank|layout|triangles:|load|orientation|exchange|transfer|counting|total"
            done
        done
    done
done
