# Sourced by the benches/dist scripts: finds NCCL for the `trident` ranks. The dynamic
# loader's libnccl.so.2 when it has one, else the first found in the usual places (the CUDA
# toolkit, PyTorch's wheel), named through TRIDENT_NCCL_LIBRARY (pass `-x
# TRIDENT_NCCL_LIBRARY` to mpirun). Prints what it found.
if ! ldconfig -p 2>/dev/null | grep -q 'libnccl\.so\.2 '; then
    for f in /usr/local/cuda/lib64/libnccl.so.2 /usr/lib/x86_64-linux-gnu/libnccl.so.2 \
        $(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null) \
        $(find / -xdev -name 'libnccl.so.2' 2>/dev/null | head -1); do
        if [ -e "$f" ]; then
            export TRIDENT_NCCL_LIBRARY=$f
            break
        fi
    done
fi
export TRIDENT_NCCL_LIBRARY=${TRIDENT_NCCL_LIBRARY:-}
echo "nccl: ${TRIDENT_NCCL_LIBRARY:-libnccl.so.2 (dynamic loader)}"
