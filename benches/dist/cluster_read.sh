#!/usr/bin/env bash
# R-MCL's read under mpirun on one host, each rank's peak host memory beside its time:
# `--read host` (the default: read once per host, the later ranks build their columns from
# the shared window), `--read ranges` (each rank reads its byte range and keeps only its
# columns) and `--read whole` (READS, default "host ranges"), against one process of the
# same binary in the same run; an older binary (OLD=path) with the reads OLD_READS (default
# "ranges") for comparison. Every run's clusters are compared
# with one process's, byte for byte. The peak memory is each rank's resident high-water mark
# (getrusage of a wrapper; shared-window pages a rank touched count in its own).
#
#   NODES=10000000 NP=4 OLD=/path/to/old/trident bash benches/dist/cluster_read.sh [bundle dir]
# CLUSTER_ARGS go to every run; BACKEND (default cuda) picks the backend; WEIGHTS=1 reads a weighted copy of the network instead,
# LABELS=1 a copy whose ids are labels, GZ=1 a gzipped copy (not GZIP: gzip reads that variable); OLD_ONE=1 runs one process of the
# older binary too.
set -euo pipefail
B=${1:-target/bundle}
. "$(dirname "$0")/bundle_env.sh"
. "$(dirname "$0")/nccl_env.sh"
n=${NODES:-1000000}
np=${NP:-4}
f=$W/planted$n.el
[ -f "$f" ] || "$T" generate planted --nodes "$n" --communities $((n / 100)) --degree 30 -o "$f" | tail -1
if [ "${LABELS:-0}" = 1 ]; then
    # Every id a label (a PPI network's proteins are named): numbered in order of first
    # appearance, by one process or over the ranks.
    [ -f "$W/labelled$n.el" ] || awk '/^#/ {print; next} {print "Y" $1, "Y" $2}' "$f" >"$W/labelled$n.el"
    f=$W/labelled$n.el
fi
if [ "${WEIGHTS:-0}" = 1 ]; then
    [ -f "$W/weighted$n.el" ] || awk '/^#/ {print; next} {print $1, $2, (NR * 37) % 11 + 1}' "$f" >"$W/weighted$n.el"
    f=$W/weighted$n.el
fi
if [ "${GZ:-0}" = 1 ]; then
    # Gzipped (SNAP's .txt.gz): every rank decompresses it, and keeps its pieces under
    # --read ranges.
    [ -s "$f.gz" ] || gzip -1 -c "$f" >"$f.gz"
    f=$f.gz
fi
echo "== $f ($(du -h "$f" | cut -f1))"
rss=$W/rss.py
cat >"$rss" <<'PY'
import os, resource, subprocess, sys
rc = subprocess.call(sys.argv[1:])
kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
rank = os.environ.get("OMPI_COMM_WORLD_RANK", "-")
print(f"peak rss: rank {rank}: {kib / 2**20:.2f} GiB", file=sys.stderr)
sys.exit(rc)
PY
run() {
    local what=$1 bin=$2 read=$3
    shift 3
    echo "== $what"
    local s=$(date +%s%N)
    "$@" python3 "$rss" "$bin" cluster "$f" --backend ${BACKEND:-cuda} $read ${CLUSTER_ARGS:-} --quiet -o "$W/out.txt" 2>&1 </dev/null |
        grep -E "^graph|^clusters|^phases|^load|^peak rss|^error" | cut -c1-400 | sort -s -k1,1
    echo "wall: $((($(date +%s%N) - s) / 1000000)) ms"
    if [ "$what" = "one process" ]; then
        cp "$W/out.txt" "$W/one.txt"
    else
        cmp -s "$W/one.txt" "$W/out.txt" && echo "clusters identical to one process" || echo "CLUSTERS DIFFER"
    fi
}
mp() {
    echo mpirun -np "$np" --bind-to none -x TRIDENT_NCCL_LIBRARY -x RAYON_NUM_THREADS=$(($(nproc) / np))
}
for rep in ${REPEAT:-1 2}; do
    run "one process" "$T" ""
    if [ -n "${OLD:-}" ] && [ "${OLD_ONE:-0}" = 1 ]; then
        run "one process, $OLD" "$OLD" ""
    fi
    for read in ${READS:-host ranges}; do
        run "$np GPUs, --read $read" "$T" "--read $read" $(mp)
    done
    if [ -n "${OLD:-}" ]; then
        for read in ${OLD_READS:-ranges}; do
            run "$np GPUs, --read $read, $OLD" "$OLD" "--read $read" $(mp)
        done
    fi
done
