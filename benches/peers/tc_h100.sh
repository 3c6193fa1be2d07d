#!/usr/bin/env bash
# Triangle counting on a GPU machine, every backend and algorithm, on Graph500 Kronecker graphs
# generated there (edge factor 16, seed 1), with `trident triangles` (load, orientation,
# transfer and counting times; the median of --repeat counts).
#
#   benches/peers/tc_h100.sh TRIDENT [SCALE...]     # default scales: 20 22
#   TC_RUNS=search benches/peers/tc_h100.sh TRIDENT 22   # the binary-search kernels only
#
# TRIDENT: a `trident` binary (e.g. target/bundle/bin/trident, gunzipped). For each scale and
# backend (cuda, opencl) it runs the binary-search kernels side by side (--search-kernel=row,
# tc_search_row; =flat, tc_search_flat, the default, a work-group per 256 edges with the
# searches flattened; =flat-global, the same without the row cache in shared memory; =edge,
# the former tc_search), then (unless TC_RUNS=search) auto, merge and hash, and hash with
# --plan-limits=0,0 (every row on the global-bitmap kernel: the former hash path) and
# --plan-limits=64,64 (no block-per-row bin), so that the bins' gain shows. Every count of a
# scale must agree (the CPU backend counts once as the reference); exits 1 otherwise. At the
# end a table of the counting-time medians (ms) and edges/s, and the speedup of flat and
# flat-global over row per scale and backend (target: 10^9 edges/s, 64 ms at scale 22). Each
# command runs under `timeout` (TC_TIMEOUT seconds, default 120); TC_REPEAT counts per run
# (default 5). OpenCL goes through NVIDIA's driver, registered the way run.sh does. Graphs are
# written to ${TC_DIR:-/tmp/tc}.
set -uo pipefail

if [ $# -lt 1 ]; then
    sed -n '2,21p' "$0" >&2
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
REPEAT=${TC_REPEAT:-5}
DIR=${TC_DIR:-/tmp/tc}
mkdir -p "$DIR"

# Each run: algorithm [--option=value]. The binary-search kernels first, then the rest.
RUNS=("binary-search --search-kernel=row" "binary-search --search-kernel=flat"
    "binary-search --search-kernel=flat-global" "binary-search --search-kernel=edge")
if [ "${TC_RUNS:-all}" != search ]; then
    RUNS+=(auto merge hash "hash --plan-limits=0,0" "hash --plan-limits=64,64")
fi

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
SUMMARY=()
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
        row_ms=""
        for run in "${RUNS[@]}"; do
            set -- $run
            a=$1
            setting=${2:-}
            echo "-- scale $s, $b, $a${setting:+, $setting}"
            out=$(timeout "$TO" "$T" triangles "$g" --backend "$b" --algorithm "$a" ${setting:+"$setting"} --repeat "$REPEAT" 2>&1)
            echo "$out" | grep -E '^(backend|graph|algorithm|triangles|load|orientation|transfer|counting|total):|rror'
            got=$(echo "$out" | awk '/^triangles:/ { print $2 }')
            # "counting:      <seconds> s (<rate> edges/s; median of 5)"
            ms=$(echo "$out" | awk '/^counting:/ { printf "%.1f", $2 * 1000 }')
            eps=$(echo "$out" | awk '/^counting:/ { gsub(/\(/, "", $4); print $4 }')
            if [ -z "$got" ] || [ "$got" != "$ref" ]; then
                echo "MISMATCH or failure: got '${got}', reference '${ref}'"
                status=1
                ms="FAIL"
            fi
            SUMMARY+=("$(printf '%-5s %-7s %-40s %10s %12s' "$s" "$b" "$a${setting:+ $setting}" "${ms:-none}" "${eps:-none}")")
            case "$setting" in
            --search-kernel=row) row_ms=$ms ;;
            --search-kernel=flat*)
                if [ -n "$row_ms" ] && [ "$row_ms" != FAIL ] && [ -n "$ms" ] && [ "$ms" != FAIL ]; then
                    SUMMARY+=("$(awk -v s="$s" -v b="$b" -v k="${setting#*=}" -v r="$row_ms" -v f="$ms" 'BEGIN { printf "%-5s %-7s %s vs row: %.2fx (%s ms -> %s ms)", s, b, k, r / f, r, f }')")
                fi
                ;;
            esac
        done
    done
done
echo
echo "== counting, median of $REPEAT"
printf '%-5s %-7s %-40s %10s %12s\n' scale backend run ms edges/s
printf '%s\n' "${SUMMARY[@]}"
exit $status
