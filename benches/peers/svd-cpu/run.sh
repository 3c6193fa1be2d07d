#!/bin/sh
# Issue 7's CPU SVD bar, all four libraries on the same matrices in one run:
#   benches/peers/svd-cpu/run.sh [--shapes 256x256,512x512,1024x1024,4096x256] [--runs 5] [--prec f64,f32]
# Builds the standalone (non-workspace) bench crate, runs trident CPU / nalgebra / faer
# (alternating, medians, each checked; non-zero exit on a wrong answer), writes the matrices
# as .npy, then times numpy/LAPACK gesdd on them (pip install numpy) and prints the table.
set -e
here=$(cd "$(dirname "$0")" && pwd)
dir=${SVD_PEERS_DIR:-$(mktemp -d)}
cargo run --release --manifest-path "$here/Cargo.toml" -- --npy "$dir" "$@"
runs=5
while [ $# -gt 0 ]; do [ "$1" = "--runs" ] && runs=$2; shift; done
python3 "$here/svd_numpy.py" "$dir" --runs "$runs"
