#!/usr/bin/env bash
# Same-run CPU baseline for R-MCL: van Dongen's `mcl` (Debian package `mcl`:
# `apt-get install -y mcl`) against `trident cluster --backend cpu` on the same networks, with
# the same inflation, end to end (read, cluster, write), and, when COMPLEXES is given, the
# scores of both clusterings (`trident`'s --eval scorer on mcl's output too).
#
#   benches/peers/mcl_baseline.sh NETWORK... [-- TRIALS]
#
# NETWORK: ABC edge lists (`a b [weight]`), e.g. ../shared/data/ppi/collins2007.txt and
# krogan2006_extended.txt, or the planted network the mcl benchmark writes with
# TRIDENT_MCL_DUMP=<dir>. Environment: TRIDENT (default target/release/trident), THREADS
# (default 2: `mcl -te`, RAYON_NUM_THREADS), INFLATION (default 2.0), COMPLEXES (a
# gold-standard file for the scores, e.g. ../shared/data/ppi/CYC2008_complexes.txt), MCL
# (default mcl). Prints one line per run and the median of TRIALS (default 5) per program and
# network. Exits non-zero if either program fails.
set -euo pipefail

TRIDENT=${TRIDENT:-target/release/trident}
THREADS=${THREADS:-2}
INFLATION=${INFLATION:-2.0}
MCL=${MCL:-mcl}
TRIALS=5
NETS=()
while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then
        TRIALS=${2:-5}
        break
    fi
    NETS+=("$1")
    shift
done
if [ ${#NETS[@]} -eq 0 ]; then
    sed -n '2,15p' "$0" >&2
    exit 2
fi
command -v "$MCL" >/dev/null || { echo "no $MCL: apt-get install -y mcl" >&2; exit 1; }
[ -x "$TRIDENT" ] || { echo "no $TRIDENT: cargo build --release -p trident-cli" >&2; exit 1; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Wall seconds of a command (stdout/stderr to files), to millisecond resolution.
timed() {
    local s e
    s=$(date +%s.%N)
    "$@" >"$TMP/out.log" 2>"$TMP/err.log" || { cat "$TMP/err.log" >&2; return 1; }
    e=$(date +%s.%N)
    echo "$s $e" | awk '{ printf "%.4f", $2 - $1 }'
}

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "mcl $("$MCL" --version 2>&1 | head -1); trident $("$TRIDENT" --version)"
echo "inflation $INFLATION, $THREADS threads, $TRIALS trials, end to end (read, cluster, write)"
for net in "${NETS[@]}"; do
    name=$(basename "$net")
    # mcl reads ABC with tab or space separated fields; normalise to tabs.
    awk 'NF >= 2 && $1 !~ /^#/ { if (NF >= 3) print $1 "\t" $2 "\t" $3; else print $1 "\t" $2 }' \
        "$net" >"$TMP/net.abc"
    : >"$TMP/mcl.t"
    : >"$TMP/trident.t"
    for _ in $(seq "$TRIALS"); do
        timed "$MCL" "$TMP/net.abc" --abc -I "$INFLATION" -te "$THREADS" -o "$TMP/mcl.out" \
            >>"$TMP/mcl.t"
        echo >>"$TMP/mcl.t"
        RAYON_NUM_THREADS=$THREADS timed "$TRIDENT" cluster "$net" --backend cpu -I "$INFLATION" \
            --quiet -o "$TMP/trident.out" >>"$TMP/trident.t"
        echo >>"$TMP/trident.t"
    done
    echo "$name: mcl     median $(median <"$TMP/mcl.t") s   (runs: $(tr '\n' ' ' <"$TMP/mcl.t"))"
    echo "$name: trident median $(median <"$TMP/trident.t") s   (runs: $(tr '\n' ' ' <"$TMP/trident.t"))"
    echo "$name: mcl $(wc -l <"$TMP/mcl.out") clusters, trident $(wc -l <"$TMP/trident.out") clusters"
    if [ -n "${COMPLEXES:-}" ]; then
        echo "$name: scores against $(basename "$COMPLEXES")"
        "$TRIDENT" cluster "$net" --backend cpu --from "$TMP/mcl.out" --eval "$COMPLEXES" -o "$TMP/mcl.sorted" \
            2>&1 | grep -E '^  ' | sed 's/^/  mcl:     /'
        "$TRIDENT" cluster "$net" --backend cpu -I "$INFLATION" --quiet -o "$TMP/trident.out" \
            --eval "$COMPLEXES" 2>&1 | grep -E '^  ' | sed 's/^/  trident: /'
    fi
done
