#!/usr/bin/env bash
# NCCL as it runs between hosts, on one host: with its peer-to-peer (NVLink) and shared-memory
# transports off (NCCL_P2P_DISABLE=1, NCCL_SHM_DISABLE=1), every transfer between the ranks'
# GPUs goes through its network transport (sockets, or InfiniBand where there is some), the
# path ranks on distinct hosts take. `trident cluster` (both layouts of M) and `trident
# triangles` (both layouts) at 2 to GPUS ranks against one process, byte for byte; NCCL's log
# must show the network transport. Fails (exit 1) on any difference.
#
#   GPUS=4 bash benches/dist/check_net.sh [bundle dir]
set -uo pipefail
B=${1:-target/bundle}
. "$(dirname "$0")/bundle_env.sh"
. "$(dirname "$0")/nccl_env.sh"
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
fails=0
net=0
n=${NODES:-200000}
p=$W/net-planted$n.el
[ -f "$p" ] || "$T" generate planted --nodes "$n" --communities $((n / 100)) --degree 20 -o "$p" | tail -1
"$T" cluster "$p" --backend cuda --quiet -o "$W/net-one.txt" 2>&1 | grep -E "^clusters"
k=$W/net-kron${SCALE:-18}.el
[ -f "$k" ] || "$T" generate kronecker --scale "${SCALE:-18}" -o "$k" | tail -1
want=$("$T" triangles "$k" --backend cuda --per-vertex "$W/net-one.tsv" 2>&1 | grep -a '^triangles:' | awk '{print $2}')
echo "one process: $want triangles"
for np in $(seq 2 "${GPUS:-4}"); do
    for layout in replicate partition; do
        out=$(mpirun -np "$np" --bind-to none -x TRIDENT_NCCL_LIBRARY -x NCCL_P2P_DISABLE -x NCCL_SHM_DISABLE \
            -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS "$T" cluster "$p" --backend cuda --layout "$layout" --quiet \
            -o "$W/net-np.txt" 2>&1 </dev/null)
        via=$(echo "$out" | grep -c "via NET/")
        echo "cluster np=$np $layout: $(echo "$out" | grep -aE '^(layout|clusters)' | cut -c1-120 | tr '\n' ' '); $via NCCL channels via NET"
        [ "$via" -gt 0 ] && net=$((net + 1))
        if ! cmp -s "$W/net-one.txt" "$W/net-np.txt" || ! echo "$out" | grep -q "device to device (NCCL)"; then
            echo "FAIL cluster np=$np $layout"; echo "$out" | grep -av "NCCL INFO" | tail -5; fails=$((fails + 1))
        fi
        out=$(mpirun -np "$np" --bind-to none -x TRIDENT_NCCL_LIBRARY -x NCCL_P2P_DISABLE -x NCCL_SHM_DISABLE \
            -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS "$T" triangles "$k" --backend cuda --layout "$layout" \
            --per-vertex "$W/net-np.tsv" 2>&1 </dev/null)
        via=$(echo "$out" | grep -c "via NET/")
        echo "triangles np=$np $layout: $(echo "$out" | grep -aE '^(exchange|triangles:)' | cut -c1-120 | tr '\n' ' '); $via NCCL channels via NET"
        [ "$via" -gt 0 ] && net=$((net + 1))
        if ! cmp -s "$W/net-one.tsv" "$W/net-np.tsv" || [ "$(echo "$out" | grep -a '^triangles:' | awk '{print $2}')" != "$want" ]; then
            echo "FAIL triangles np=$np $layout"; echo "$out" | grep -av "NCCL INFO" | tail -5; fails=$((fails + 1))
        fi
    done
done
echo "check_net: $fails failures; $net runs with NCCL's network transport"
[ "$fails" -eq 0 ] && [ "$net" -gt 0 ]
