#!/bin/bash
# R-MCL's two variants on the 1M-node planted network of benches/results/mcl.md (communities
# of 100, mean degree 40, mixing 0.2, seed 1), on one GPU, same binary, same run: Trident's
# variant (the baseline), MLR-MCL single-level and MLR-MCL multi-level (coarsening to 1000),
# and single-level with Trident's K = 64 instead of the variant's 256, each scored against the
# planted communities. Usage: mlrmcl_h100.sh [BACKEND...]
set -uo pipefail
T=${TRIDENT:-target/bundle/bin/trident}
if [ ! -e "$T" ] && [ -f "$T.gz" ]; then gunzip -kf "$T.gz" && chmod +x "$T"; fi
D=${DIR:-/tmp/mlrmcl_h100}
mkdir -p "$D"
"$T" generate planted --nodes 1000000 --communities 10000 --degree 40 --mixing 0.2 --seed 1 \
    -o "$D/planted.txt" --truth "$D/truth.txt" > /dev/null
for b in "${@:-cuda}"; do
    for args in "--variant trident" "--variant mlrmcl --coarsen-to 0" "--variant mlrmcl" \
        "--variant mlrmcl --coarsen-to 0 --max-per-column 64"; do
        echo "=== $b $args"
        timeout "${TIMEOUT:-300}" "$T" cluster "$D/planted.txt" --backend "$b" $args --quiet \
            --eval "$D/truth.txt" -o "$D/clusters.txt" 2>&1 |
            grep -E "^(clusters|phases|  matched|warning|error)"
    done
done
