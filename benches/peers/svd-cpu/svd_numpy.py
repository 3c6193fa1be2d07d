#!/usr/bin/env python3
"""numpy/LAPACK gesdd (numpy.linalg.svd, full_matrices=False) on the matrices written by the
svd-cpu-peers binary (--npy DIR), checked against its f64 reference values, then the four-way
table (trident CPU, nalgebra, faer from DIR/rust.tsv, numpy here). Use run.sh.

    python3 svd_numpy.py DIR [--runs 5]
"""
import argparse
import csv
import glob
import os
import statistics
import sys
import time

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    rows = {}
    with open(os.path.join(args.dir, "rust.tsv")) as f:
        for prec, shape, lib, wall, cpu in csv.reader(f, delimiter="\t"):
            rows.setdefault((prec, shape), {})[lib] = (float(wall), float(cpu))
    for (prec, shape) in rows:
        a = np.load(os.path.join(args.dir, f"{prec}_{shape}.npy"))
        ref = np.load(os.path.join(args.dir, f"{prec}_{shape}_ref.npy"))
        m, n = a.shape
        s = np.linalg.svd(a, full_matrices=False, compute_uv=True)[1].astype(np.float64)
        # trident_core::svd::values_tolerance: 10 eps min(m, n) ||A||_2
        eps = np.finfo(a.dtype).eps
        bound = 10 * eps * min(m, n) * ref[0]
        err = np.max(np.abs(s - ref))
        if not err <= bound:
            print(f"numpy {prec} {shape}: max |s - ref| {err:.3e} > {bound:.3e}", file=sys.stderr)
            sys.exit(1)
        walls, cpus = [], []
        for _ in range(args.runs):
            c0, t0 = time.process_time(), time.perf_counter()
            np.linalg.svd(a, full_matrices=False, compute_uv=True)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        rows[(prec, shape)]["numpy"] = (statistics.median(walls), statistics.median(cpus))
    libs = ["trident", "nalgebra", "faer", "numpy"]
    print("ms wall (ms CPU), medians; ratios: the library's wall time over trident's")
    print("| shape | prec | " + " | ".join(libs) + " | nalgebra/trident | faer/trident | numpy/trident |")
    print("|---" * (2 + len(libs) + 3) + "|")
    for (prec, shape), r in rows.items():
        cell = lambda l: f"{r[l][0]*1e3:.1f} ({r[l][1]*1e3:.0f})" if l in r else "-"
        ratio = lambda l: f"{r[l][0]/r['trident'][0]:.2f}" if l in r and "trident" in r else "-"
        print(f"| {shape} | {prec} | " + " | ".join(cell(l) for l in libs) + " | "
              + " | ".join(ratio(l) for l in ["nalgebra", "faer", "numpy"]) + " |")


if __name__ == "__main__":
    main()
