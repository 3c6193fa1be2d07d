#!/bin/bash
# Trident's MLR-MCL variant against MLR-MCL 1.2 (a peer built outside the workspace, see
# ../shared/PEERS.md; MLRMCL_PEER points at its run.sh), in one run, CPU backend:
#   1. the shared yeast networks: CYC2008 complexes matched by `mcl -I 2`, Trident's variant,
#      the MLR-MCL variant single- and multi-level, and MLR-MCL 1.2 itself single- and
#      multi-level;
#   2. the shared PPI networks and generated planted partitions: NMI between the two
#      implementations' partitions and cluster counts, single- and multi-level, and NMI
#      against the planted truth.
# Usage: mlrmcl_compare.sh [WORKDIR]   (TRIDENT=path of the CLI, DATA=../shared/data)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
T=${TRIDENT:-target/release/trident}
DATA=${DATA:-../shared/data}
PEER=${MLRMCL_PEER:-/work/peers/mlrmcl/run.sh}
W=${1:-/tmp/mlrmcl_compare}
mkdir -p "$W"
P=$DATA/ppi
nmi() { python3 "$here/nmi.py" "$1" "$2"; }
score() {
    "$T" cluster "$2" --from "$1" --eval "$P/CYC2008_complexes.txt" -o /dev/null 2>&1 |
        grep "matched:" | sed 's/.*(\([0-9.]*\)).*/\1/'
}
echo "| network | mcl -I 2 | trident | mlrmcl single | mlrmcl multi | MLR-MCL 1.2 single | MLR-MCL 1.2 multi |"
echo "|---|---|---|---|---|---|---|"
for net in collins2007 gavin2006_socioaffinities_rescaled krogan2006_core krogan2006_extended; do
    f=$P/$net.txt
    mcl "$f" --abc -I 2.0 -o "$W/mcl_$net" > /dev/null 2>&1
    "$T" cluster "$f" --backend cpu --quiet -o "$W/tri_$net" 2> /dev/null
    "$T" cluster "$f" --backend cpu --variant mlrmcl --coarsen-to 0 --quiet -o "$W/tris_$net" 2> /dev/null
    "$T" cluster "$f" --backend cpu --variant mlrmcl --quiet -o "$W/trim_$net" 2> /dev/null
    "$PEER" --single "$f" "$W/peers_$net" > /dev/null 2>&1
    "$PEER" "$f" "$W/peerm_$net" > /dev/null 2>&1
    echo "| $net | $(score "$W/mcl_$net" "$f") | $(score "$W/tri_$net" "$f") | $(score "$W/tris_$net" "$f") | $(score "$W/trim_$net" "$f") | $(score "$W/peers_$net" "$f") | $(score "$W/peerm_$net" "$f") |"
done
echo
echo "| graph | levels | NMI (MLR-MCL 1.2, Trident) | clusters (MLR-MCL 1.2 / Trident) | largest | NMI vs truth (MLR-MCL 1.2 / Trident) |"
echo "|---|---|---|---|---|---|"
row() { # name file truth-or-empty
    for mode in single multi; do
        if [ $mode = single ]; then a="--coarsen-to 0"; p="--single"; else a=""; p=""; fi
        "$T" cluster "$2" --backend cpu --variant mlrmcl $a --quiet -o "$W/t_$mode" 2> /dev/null
        "$PEER" $p "$2" "$W/p_$mode" > /dev/null 2>&1
        read -r x cp ct lp lt <<< "$(nmi "$W/p_$mode" "$W/t_$mode")"
        truth="–"
        if [ -n "$3" ]; then
            truth="$(nmi "$3" "$W/p_$mode" | cut -d' ' -f1) / $(nmi "$3" "$W/t_$mode" | cut -d' ' -f1)"
        fi
        echo "| $1 | $mode | $x | $cp / $ct | $lp / $lt | $truth |"
    done
}
for net in collins2007 gavin2006_socioaffinities_rescaled krogan2006_core krogan2006_extended human_string; do
    row "$net" "$P/$net.txt" ""
done
for spec in "10000 100 20 0.2" "10000 100 20 0.4" "100000 1000 20 0.3"; do
    set -- $spec
    g=$W/planted_$1_$4
    "$T" generate planted --nodes "$1" --communities "$2" --degree "$3" --mixing "$4" --seed 7 \
        -o "$g" --truth "$g.truth" > /dev/null 2>&1
    row "planted $1 nodes, $2 communities, degree $3, mixing $4" "$g" "$g.truth"
done
