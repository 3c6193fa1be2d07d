#!/usr/bin/env bash
# `mpirun -np N trident triangles` on a GPU host, from the bundle (run `run.sh test` first, or
# any mode: it unpacks bin/): every shared graph at NPS ranks (default 1 2 3 4; the ranks
# share out the GPUs), both layouts, on CUDA and on NVIDIA's OpenCL, against one process's
# count and per-vertex file byte for byte; and a failing rank ending the job. The CI twin of
# this check is crates/cli/tests/mpi.rs (CPU and PoCL).
#
#   bash benches/dist/check_mpi.sh [bundle dir]
set -uo pipefail
B=$(cd "${1:-target/bundle}" && pwd)
T=$B/bin/trident
[ -f "$T.gz" ] && gunzip -f "$T.gz"
chmod +x "$T"
D=${TRIDENT_DATA:-$B/data}
W=$(mktemp -d)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# NVIDIA's OpenCL through the ICD loader (as run.sh does).
nv_icd=""
if ldconfig -p 2>/dev/null | grep -q 'libnvidia-opencl\.so\.1 '; then
    nv_icd=libnvidia-opencl.so.1
else
    for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
        [ -e "$d/libnvidia-opencl.so.1" ] && nv_icd=$d/libnvidia-opencl.so.1 && break
    done
fi
if [ -n "$nv_icd" ]; then
    mkdir -p "$W/icd" && echo "$nv_icd" >"$W/icd/nvidia.icd"
    export OCL_ICD_VENDORS=$W/icd TRIDENT_OPENCL_PLATFORM=NVIDIA
    # Open MPI (its hwloc) sets OCL_ICD_FILENAMES to PoCL in the ranks it starts, which the
    # ICD loader takes over the vendors folder: name NVIDIA's library instead.
    export OCL_ICD_FILENAMES=$nv_icd
fi
"$T" info </dev/null | head -6
. "$(dirname "$0")/nccl_env.sh"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
fails=0
runs=0
nccl_runs=0
while IFS=$'\t' read -r file nodes edges tri rest; do
    case "$file" in "#"* | file | "") continue ;; esac
    "$T" triangles "$D/$file" --backend cpu --per-vertex "$W/one.tsv" >"$W/one.txt" 2>/dev/null </dev/null
    got=$(grep -a '^triangles:' "$W/one.txt" | awk '{print $2}')
    [ "$got" = "$tri" ] || { echo "FAIL $file: one process counted $got, want $tri"; fails=$((fails + 1)); }
    for backend in ${BACKENDS:-cuda opencl}; do
        for np in ${NPS:-1 2 3 4}; do
            for layout in replicate partition; do
                out=$(mpirun --oversubscribe --bind-to none -np "$np" -x OCL_ICD_FILENAMES -x TRIDENT_NCCL_LIBRARY "$T" triangles "$D/$file" \
                    --backend "$backend" --layout "$layout" --per-vertex "$W/d.tsv" 2>&1 </dev/null)
                c=$(echo "$out" | grep -a '^triangles:' | awk '{print $2}')
                runs=$((runs + 1))
                if [ "$c" != "$tri" ] || ! cmp -s "$W/one.tsv" "$W/d.tsv"; then
                    echo "FAIL $file $backend np=$np $layout: count $c, want $tri"
                    echo "$out" | tail -5
                    fails=$((fails + 1))
                fi
                # Ranks on distinct GPUs exchange the replicated rows through NCCL.
                if [ "$backend" = cuda ] && [ "$layout" = replicate ] && [ "$np" -ge 2 ] && [ "$np" -le "$ngpu" ]; then
                    if echo "$out" | grep -q "device to device (NCCL)"; then
                        nccl_runs=$((nccl_runs + 1))
                    else
                        echo "FAIL $file np=$np: rows not exchanged through NCCL: $(echo "$out" | grep -a '^exchange')"
                        fails=$((fails + 1))
                    fi
                fi
                rm -f "$W/d.tsv"
            done
        done
    done
done <"$D/graphs.tsv"
# OpenCL ranks share out the host's GPUs (the local rank picks among NVIDIA's devices): at
# one rank per GPU, the rank lines name every device's place once.
if [ -n "$nv_icd" ] && [ "$ngpu" -ge 2 ]; then
    first=$(awk -F'\t' '$1 !~ /^#/ && $1 != "file" {print $1; exit}' "$D/graphs.tsv")
    out=$(mpirun --oversubscribe --bind-to none -np "$ngpu" -x OCL_ICD_FILENAMES "$T" triangles "$D/$first" \
        --backend opencl 2>&1 </dev/null)
    places=$(echo "$out" | grep -a '^rank [0-9]*:' | grep -o '#[0-9]* of [0-9]*' | sort -u | wc -l)
    echo "$out" | grep -a '^rank [0-9]*:' | cut -c1-110
    if [ "$places" -ne "$ngpu" ]; then
        echo "FAIL OpenCL ranks: $places distinct devices for $ngpu ranks"
        fails=$((fails + 1))
    fi
fi
# A bad line in the last rank's range ends the job, with its line, within seconds.
python3 - "$W/bad.el" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(20000):
        f.write(f"{i} {(i * 7 + 1) % 20000}\n")
    f.write("12\n")
    for i in range(50):
        f.write(f"{i} {i + 3}\n")
PY
start=$(date +%s)
err=$(timeout 60 mpirun --oversubscribe -np 2 "$T" triangles "$W/bad.el" --backend cuda 2>&1 </dev/null)
rc=$?
took=$(($(date +%s) - start))
if [ $rc -eq 0 ] || [ $rc -eq 124 ] || ! echo "$err" | grep -q "rank 1 of 2" || ! echo "$err" | grep -q "bad.el:20001"; then
    echo "FAIL failing rank: rc $rc after ${took}s: $err" | tail -5
    fails=$((fails + 1))
else
    echo "failing rank: job ended (rc $rc) in ${took} s: $(echo "$err" | grep -a 'rank 1 of 2' | head -1)"
fi
echo "check_mpi: $runs mpirun runs ($nccl_runs of them through NCCL), $fails failures"
[ $fails -eq 0 ]
