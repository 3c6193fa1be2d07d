#!/usr/bin/env bash
# R-MCL on a planted network whose M does not fit one GPU: one process on one GPU is refused
# up front with the out-of-memory error (the bytes it needs), then `mpirun -np $GPUS`
# (layout auto, or LAYOUT) finishes. The GPUs' used memory is sampled once a second during
# the ranks' run (nvidia-smi), and its peak printed per GPU; the ranks' clusters are
# compared with the planted communities (compare_truth.py), as no one process can run it.
#
#   NODES=25000000 K=256 GPUS=4 bash benches/dist/cluster_partition.sh [bundle dir]
set -euo pipefail
B=${1:-target/bundle}
. "$(dirname "$0")/bundle_env.sh"
. "$(dirname "$0")/nccl_env.sh"
n=${NODES:-25000000}
k=${K:-256}
np=${GPUS:-4}
f=$W/planted$n.el
truth=$W/truth$n.txt
[ -f "$f" ] && [ -f "$truth" ] || "$T" generate planted --nodes "$n" --communities $((n / 100)) --degree 30 -o "$f" --truth "$truth" | tail -1
echo "== planted network, $n nodes, degree 30 ($(du -h "$f" | cut -f1)), K = $k"
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader
echo "== one process, CUDA"
s=$(date +%s%N)
rc=0
"$T" cluster "$f" --backend cuda --max-per-column "$k" --quiet -o "$W/one-part.txt" >"$W/one-part.log" 2>&1 || rc=$?
grep -E "^clusters|^phases|^error" "$W/one-part.log" | cut -c1-400
echo "one process: exit $rc after $((($(date +%s%N) - s) / 1000000)) ms"
echo "== mpirun -np $np, CUDA, layout ${LAYOUT:-auto}"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits -l 1 >"$W/mem.csv" &
smi=$!
s=$(date +%s%N)
mpirun -np "$np" --bind-to none -x TRIDENT_NCCL_LIBRARY -x RAYON_NUM_THREADS=$(($(nproc) / np)) "$T" cluster "$f" \
    --backend cuda --max-per-column "$k" ${LAYOUT:+--layout $LAYOUT} --quiet -o "$W/np$np-part.txt" 2>&1 </dev/null |
    grep -E "^clusters|^phases|^ranks|^layout|^error" | cut -c1-400
echo "mpirun wall: $((($(date +%s%N) - s) / 1000000)) ms"
kill $smi 2>/dev/null || true
awk -F', ' '{ if ($2 > m[$1]) m[$1] = $2 } END { for (g in m) printf "GPU %s: peak %d MiB used\n", g, m[g] }' "$W/mem.csv" | sort
echo "clusters: $(wc -l <"$W/np$np-part.txt") lines in $W/np$np-part.txt"
python3 "$(dirname "$0")/compare_truth.py" "$W/np$np-part.txt" "$truth"
