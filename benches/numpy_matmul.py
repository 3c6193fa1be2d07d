#!/usr/bin/env python3
"""CPU baseline for the matmul benchmark: numpy's matmul (OpenBLAS dgemm/sgemm in the wheels)
on the same machine, in the same run as `cargo bench --bench matmul` with the CPU backend.

    python3 benches/numpy_matmul.py [out.json] [--sizes 1024,2048,4096] [--runs 5]

Prints one line per (precision, n): `numpy f64 n=2048 median_ms=... gflops=...`, and writes
{"baselines": [{"table": "matmul", "column": "numpy (OpenBLAS)", "reference": false,
"results": {"f64/2048": {"median_ms": ..., "bytes": 2 n^3}}}]} (the benchmark's row names; the
"bytes" field carries the flop count, as in benches/benches/matmul.rs) for
`xtask bench-report --baseline`. Threads: OpenBLAS's default (all cores), like the CPU backend.
"""

import argparse
import json
import statistics
import time

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out", nargs="?")
    p.add_argument("--sizes", default="1024,2048,4096")
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    rng = np.random.default_rng(1)
    results = {}
    for dtype, name in [(np.float64, "f64"), (np.float32, "f32")]:
        for n in [int(s) for s in args.sizes.split(",")]:
            a = rng.uniform(-1, 1, (n, n)).astype(dtype)
            b = rng.uniform(-1, 1, (n, n)).astype(dtype)
            c = a @ b  # warm-up
            times = []
            for _ in range(args.runs):
                t = time.perf_counter()
                c = a @ b
                times.append(time.perf_counter() - t)
            # Sampled check against float64.
            rows = np.linspace(0, n - 1, 8).astype(int)
            ref = a[rows].astype(np.float64) @ b.astype(np.float64)
            err = np.max(np.abs(c[rows] - ref)) / (np.finfo(dtype).eps * np.max(np.abs(a)) * np.max(np.abs(b)))
            med = statistics.median(times)
            flops = 2 * n**3
            print(f"numpy {name} n={n} median_ms={med * 1e3:.3f} gflops={flops / med / 1e9:.2f} err={err:.1f}", flush=True)
            results[f"{name}/{n}"] = {"median_ms": med * 1e3, "bytes": flops}
    doc = {"baselines": [{"table": "matmul", "column": "numpy (OpenBLAS)", "reference": False, "results": results}]}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
