#!/usr/bin/env bash
# The R-MCL scale goal (issue 9): a 1,000,000-node planted partition of 20M edges clustered
# end to end (read, cluster, write) in under 30 s on the H100, with the phase times that
# `trident cluster` prints on stderr (read, prepare, transfer, iterations, interpret, write),
# then the GPU backends against the CPU backend on a smaller planted network of the same
# shape (the CPU needs minutes at 1M nodes).
#
#   benches/peers/mcl_scale.sh [NODES [CPU_NODES]]
#
# NODES (default 1000000) and CPU_NODES (default 100000): planted partitions from
# `trident generate planted`, communities of 100 nodes, mean degree 40 (NODES * 20 edges),
# mixing 0.2, seed 1, with their ground truth scored by `--eval`. Backends (BACKENDS, default
# "cuda opencl"; the CPU only on CPU_NODES, set CPU_NODES=0 to skip that part) each cluster
# the network once; every step runs under `timeout` (TIMEOUT seconds, default 120). The
# partitions of all backends on one network must be identical (the written cluster files
# are compared byte for byte). Environment: TRIDENT (default target/release/trident), DIR
# (default a temporary directory, removed at the end unless KEEP=1; a given DIR is kept).
# Exits non-zero when a
# step fails or times out or two backends disagree. The column work-group size and local
# table are options of `trident cluster` (`--gpu-column-wg`, `--gpu-local-table`, hidden;
# MclOptions::column_wg / local_table), no longer environment variables.
# The phases line accounts for the whole process: besides read, prepare (of which the
# kernel load: CUDA's PTX JIT or OpenCL's program build, on its own thread while the host
# builds M_G and the starting M), transfer, iterations, interpret and write, it times the
# complexes, the backend start (while the network is read), the evaluation and the teardown,
# and ends with the process time. CPU_NODES=NODES (e.g. `mcl_scale.sh 1000000 1000000`, with
# TIMEOUT=900 for the CPU) compares the backends on the one network, generated and
# clustered once per backend.
set -euo pipefail

TRIDENT=${TRIDENT:-target/release/trident}
NODES=${1:-1000000}
CPU_NODES=${2:-100000}
BACKENDS=${BACKENDS:-cuda opencl}
TIMEOUT=${TIMEOUT:-120}
# A bundle's CLI (`cargo xtask bundle`: target/bundle/bin/trident.gz) is unpacked in place.
if [ ! -e "$TRIDENT" ] && [ -f "$TRIDENT.gz" ]; then
    gunzip -kf "$TRIDENT.gz" && chmod +x "$TRIDENT"
fi
[ -x "$TRIDENT" ] || { echo "no $TRIDENT: cargo build --release -p trident-cli" >&2; exit 1; }
# OpenCL as the bundle's run.sh sets it up: the bundled ICD loader where the machine has none,
# NVIDIA's driver registered in a private vendors directory.
bundle_lib=$(cd "$(dirname "$TRIDENT")/.." && pwd)/lib
if ! ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1 ' && [ -e "$bundle_lib/libOpenCL.so.1" ]; then
    export LD_LIBRARY_PATH="$bundle_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [ -z "${OCL_ICD_VENDORS:-}" ]; then
    nv_icd=""
    if ldconfig -p 2>/dev/null | grep -q 'libnvidia-opencl\.so\.1 '; then
        nv_icd=libnvidia-opencl.so.1
    else
        for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
            [ -e "$d/libnvidia-opencl.so.1" ] && { nv_icd=$d/libnvidia-opencl.so.1; break; }
        done
    fi
    if [ -n "$nv_icd" ]; then
        icd_dir=$(mktemp -d)
        echo "$nv_icd" >"$icd_dir/nvidia.icd"
        export OCL_ICD_VENDORS=$icd_dir TRIDENT_OPENCL_PLATFORM=NVIDIA
    fi
fi
if [ -z "${DIR:-}" ]; then
    DIR=$(mktemp -d)
    [ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$DIR"' EXIT
fi
mkdir -p "$DIR"
status=0

# Wall seconds of a command, to millisecond resolution.
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

generate() { # NODES NAME
    local n=$1 name=$2 s e
    s=$(now)
    timeout "$TIMEOUT" "$TRIDENT" generate planted --nodes "$n" --communities $((n / 100)) \
        --degree 40 --mixing 0.2 --seed 1 -o "$DIR/$name.txt" --truth "$DIR/$name.truth"
    e=$(now)
    echo "$name: generated in $(secs "$s" "$e") s ($(du -h "$DIR/$name.txt" | cut -f1))"
}

cluster() { # NAME BACKEND
    local name=$1 b=$2 s e rc=0
    s=$(now)
    timeout "$TIMEOUT" "$TRIDENT" cluster "$DIR/$name.txt" --backend "$b" --quiet \
        -o "$DIR/$name.$b.clusters" --eval "$DIR/$name.truth" 2>"$DIR/$name.$b.log" || rc=$?
    e=$(now)
    if [ "$rc" -ne 0 ]; then
        echo "$name $b: FAILED (exit $rc$([ "$rc" -eq 124 ] && echo ", timed out after $TIMEOUT s"))"
        tail -5 "$DIR/$name.$b.log" | sed 's/^/    /'
        status=1
        return
    fi
    echo "$name $b: end to end $(secs "$s" "$e") s (wall, process start to exit)"
    grep -E '^(backend|graph|clusters|phases):|matched' "$DIR/$name.$b.log" | sed 's/^/    /'
}

same() { # NAME BACKEND...
    local name=$1 first="" b
    shift
    for b in "$@"; do
        [ -f "$DIR/$name.$b.clusters" ] || continue
        if [ -z "$first" ]; then
            first=$b
        elif cmp -s "$DIR/$name.$first.clusters" "$DIR/$name.$b.clusters"; then
            echo "$name: $b's partition = $first's"
        else
            echo "$name: $b's partition DIFFERS from $first's"
            status=1
        fi
    done
}

echo "trident $("$TRIDENT" --version); $(nproc) CPU threads; timeout $TIMEOUT s per step"
command -v nvidia-smi >/dev/null &&
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | sed 's/^/GPU: /'

big="planted-n$NODES"
if [ "$CPU_NODES" != "$NODES" ]; then
    generate "$NODES" "$big"
    for b in $BACKENDS; do
        cluster "$big" "$b"
    done
    # shellcheck disable=SC2086
    same "$big" $BACKENDS
fi

if [ "$CPU_NODES" -gt 0 ]; then
    small="planted-n$CPU_NODES"
    generate "$CPU_NODES" "$small"
    for b in cpu $BACKENDS; do
        cluster "$small" "$b"
    done
    # shellcheck disable=SC2086
    same "$small" cpu $BACKENDS
    # GPU over CPU on the iterations and on the whole clustering (from the phase lines).
    for b in $BACKENDS; do
        [ -f "$DIR/$small.$b.log" ] && [ -f "$DIR/$small.cpu.log" ] || continue
        awk -v b="$b" -v name="$small" '
            /^phases:/ {
                for (i = 1; i <= NF; i++) {
                    if ($i == "iterations") it[FILENAME] = $(i + 1)
                    if ($i == "cluster") cl[FILENAME] = $(i + 1)
                    if ($i == "process") pr[FILENAME] = $(i + 1)
                }
            }
            END {
                for (f in it)
                    if (f ~ /\.cpu\.log$/) { ci = it[f]; cc = cl[f]; cp = pr[f] }
                    else { gi = it[f]; gc = cl[f]; gp = pr[f] }
                if (gi > 0 && gc > 0 && gp > 0)
                    printf "%s: %s over cpu: iterations %.1fx, cluster (prepare to interpret) %.1fx, process %.1fx\n",
                        name, b, ci / gi, cc / gc, cp / gp
            }' "$DIR/$small.cpu.log" "$DIR/$small.$b.log"
    done
fi
exit $status
