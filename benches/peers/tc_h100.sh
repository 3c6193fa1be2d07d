#!/usr/bin/env bash
# Triangle counting on a GPU machine, every backend and algorithm, on Graph500 Kronecker graphs
# generated there (edge factor 16, seed 1), with `trident triangles` (load, orientation,
# transfer and counting times; the median of --repeat counts).
#
#   benches/peers/tc_h100.sh TRIDENT [SCALE...]     # default scales: 20 22
#
# TRIDENT: a `trident` binary (e.g. target/bundle/bin/trident, gunzipped). For each scale and
# backend (cuda, opencl) it runs auto, merge, binary-search (tc_search, a warp per edge),
# binary-search with TRIDENT_TC_SEARCH=edge (the former tc_search, a warp per edge) and hash, then hash
# with TRIDENT_TC_BINS=0,0 (every row on the global-bitmap kernel: the former hash path) and
# TRIDENT_TC_BINS=64,64 (no block-per-row bin), so that the bins' gain shows. Every count of a
# scale must agree (the CPU backend counts once as the reference); exits 1 otherwise. Each
# command runs under `timeout` (TC_TIMEOUT seconds, default 120). OpenCL goes through NVIDIA's
# driver, registered the way run.sh does. Graphs are written to ${TC_DIR:-/tmp/tc}.
set -uo pipefail

if [ $# -lt 1 ]; then
    sed -n '2,15p' "$0" >&2
    exit 2
fi
T=$1
shift
if [ $# -eq 0 ]; then
    SCALES=(20 22)
else
    SCALES=("$@")
fi
TO=${TC_TIMEOUT:-120}
DIR=${TC_DIR:-/tmp/tc}
mkdir -p "$DIR"

# NVIDIA's OpenCL driver for the ICD loader (as xtask's run.sh registers it).
lib=""
if ldconfig -p 2>/dev/null | grep -q 'libnvidia-opencl\.so\.1 '; then
    lib=libnvidia-opencl.so.1
else
    for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
        if [ -e "$d/libnvidia-opencl.so.1" ]; then
            lib=$d/libnvidia-opencl.so.1
            break
        fi
    done
fi
if [ -n "$lib" ]; then
    ICD=$(mktemp -d)
    echo "$lib" >"$ICD/nvidia.icd"
    export OCL_ICD_VENDORS=$ICD TRIDENT_OPENCL_PLATFORM=NVIDIA
fi

status=0
for s in "${SCALES[@]}"; do
    g=$DIR/k$s.el
    [ -s "$g" ] || timeout "$TO" "$T" generate kronecker --scale "$s" --edge-factor 16 --seed 1 -o "$g" || {
        echo "generating scale $s failed"
        status=1
        continue
    }
    ref=$(timeout "$TO" "$T" triangles "$g" --backend cpu | awk '/^triangles:/ { print $2 }')
    echo "== scale $s: cpu reference count ${ref:-none}"
    for b in cuda opencl; do
        for run in auto merge binary-search "binary-search TRIDENT_TC_SEARCH=edge" hash \
            "hash TRIDENT_TC_BINS=0,0" "hash TRIDENT_TC_BINS=64,64"; do
            set -- $run
            a=$1
            setting=${2:-}
            echo "-- scale $s, $b, $a${setting:+, $setting}"
            out=$(env ${setting:+"$setting"} timeout "$TO" "$T" triangles "$g" --backend "$b" --algorithm "$a" --repeat 5 2>&1)
            echo "$out" | grep -E '^(backend|graph|algorithm|triangles|load|orientation|transfer|counting|total):|rror'
            got=$(echo "$out" | awk '/^triangles:/ { print $2 }')
            if [ -z "$got" ] || [ "$got" != "$ref" ]; then
                echo "MISMATCH or failure: got '${got}', reference '${ref}'"
                status=1
            fi
        done
    done
done
exit $status
