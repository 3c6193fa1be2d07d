#!/usr/bin/env bash
# Same-run CPU baseline for triangle counting: the GAP benchmark suite's `tc`
# (https://github.com/sbeamer/gapbs), built from a checkout OUTSIDE this repository (its code
# is never copied into Trident), run on the same graph as Trident.
#
#   benches/peers/gapbs_tc.sh GAPBS_DIR GRAPH.el [TRIALS]    # an edge list (u v lines)
#   benches/peers/gapbs_tc.sh GAPBS_DIR -g SCALE [TRIALS]    # gapbs' own Kronecker, ef 16
#
# GRAPH.el: e.g. the Kronecker graph the triangles benchmark writes with
# TRIDENT_TC_DUMP=<dir> (`<dir>/kronecker-s18.el`), or `trident generate kronecker` output
# (comment lines are stripped here). THREADS (default 2) sets OMP_NUM_THREADS. If TRIDENT is
# set to a `trident` binary, it is run on the same file right after, for a side-by-side
# comparison (`trident triangles --backend cpu`, RAYON_NUM_THREADS=THREADS).
#
# Prints gapbs' output (-a: with the count, "N triangles"); its "Trial Time" lines are per
# trial (relabelling included), the "Average Time" their mean. Exits non-zero if gapbs fails
# to build or run.
set -euo pipefail

if [ $# -lt 2 ]; then
    sed -n '2,18p' "$0" >&2
    exit 2
fi
GAPBS=$(cd "$1" && pwd)
THREADS=${THREADS:-2}
make -C "$GAPBS" tc >/dev/null

if [ "$2" = "-g" ]; then
    SCALE=$3
    TRIALS=${4:-3}
    echo "gapbs tc: -g $SCALE -k 16, $TRIALS trials, OMP_NUM_THREADS=$THREADS"
    OMP_NUM_THREADS=$THREADS "$GAPBS/tc" -g "$SCALE" -k 16 -a -n "$TRIALS"
    exit 0
fi

GRAPH=$2
TRIALS=${3:-3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# gapbs reads `.el` files: `u v` per line, no comments.
grep -v '^[#%]' "$GRAPH" | awk 'NF >= 2 { print $1, $2 }' >"$TMP/graph.el"
echo "gapbs tc: $GRAPH (symmetrised), $TRIALS trials, OMP_NUM_THREADS=$THREADS"
OMP_NUM_THREADS=$THREADS "$GAPBS/tc" -f "$TMP/graph.el" -s -a -n "$TRIALS"

if [ -n "${TRIDENT:-}" ]; then
    echo "trident triangles: $GRAPH, RAYON_NUM_THREADS=$THREADS"
    RAYON_NUM_THREADS=$THREADS "$TRIDENT" triangles "$GRAPH" --backend cpu --repeat "$TRIALS"
fi
