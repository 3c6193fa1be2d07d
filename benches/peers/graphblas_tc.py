#!/usr/bin/env python3
"""Same-run CPU baseline for triangle counting: SuiteSparse:GraphBLAS through python-graphblas
(`pip install python-graphblas`), the masked product count

    triangles = sum((L · Lᵀ) masked by L),  L = strictly lower triangle of the symmetric,
                                            loop-free adjacency matrix,

with the plus-pair semiring (each pair of common neighbours counts 1; every triangle
k < j < i is counted once, at L(i, j), as the common neighbour k).

    benches/peers/graphblas_tc.py GRAPH.el [--trials 5] [--threads 2] [--expect COUNT]

GRAPH.el: an edge list (`u v` per line, `#` / `%` comments, tabs or spaces; extra columns
ignored), e.g. `trident generate kronecker --scale 18 -o k18.el`. Directed, duplicated and
self-loop edges are symmetrised, merged and dropped, as Trident's readers do. The timed part is
the masked product and its sum (the matrix build is not timed, as Trident's `counting` line does
not include loading and orientation); GraphBLAS runs with --threads threads.

Prints the median (and every trial) in ms and the count. The count is checked against ours:
`--expect COUNT`, else, if TRIDENT names a `trident` binary, the count of `$TRIDENT triangles
--backend cpu GRAPH`; exits 1 if they disagree (and 2 without anything to check against,
unless --no-check).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np


def read_edges(path):
    """The (u, v) columns of an edge list, as two uint64 arrays."""
    with open(path, "rb") as f:
        data = f.read()
    lines = [ln for ln in data.split(b"\n") if ln.strip() and ln[:1] not in (b"#", b"%")]
    cols = len(lines[0].split()) if lines else 2
    flat = np.array(b" ".join(lines).split(), dtype=np.uint64) if lines else np.zeros(0, np.uint64)
    flat = flat.reshape(-1, cols)
    return flat[:, 0].copy(), flat[:, 1].copy()


def ours(graph):
    exe = os.environ.get("TRIDENT")
    if not exe:
        return None
    env = dict(os.environ)
    out = subprocess.run(
        [exe, "triangles", "--backend", "cpu", graph],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    m = re.search(r"^triangles:\s+(\d+)", out, re.M)
    if not m:
        sys.exit(f"no 'triangles:' line in trident's output:\n{out}")
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("graph")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("THREADS", "2")))
    ap.add_argument("--expect", type=int, default=None)
    ap.add_argument("--no-check", action="store_true")
    a = ap.parse_args()

    import graphblas as gb

    gb.init("suitesparse", blocking=True)
    from graphblas import Matrix, dtypes, semiring

    gb.ss.config["nthreads"] = a.threads

    t0 = time.perf_counter()
    u, v = read_edges(a.graph)
    n = int(max(u.max(initial=0), v.max(initial=0))) + 1 if len(u) else 0
    keep = u != v
    u, v = u[keep], v[keep]
    # Symmetric, duplicates merged: both directions, duplicates ignored; then the strict lower part.
    rows = np.concatenate([u, v])
    cols = np.concatenate([v, u])
    A = Matrix.from_coo(rows, cols, True, dtype=dtypes.BOOL, nrows=n, ncols=n)
    L = A.select("tril", -1).new(dtype=dtypes.INT64)
    del A
    build = time.perf_counter() - t0

    times, count = [], None
    for _ in range(max(1, a.trials)):
        t = time.perf_counter()
        C = Matrix(dtypes.INT64, n, n)
        C(L.S) << L.mxm(L.T, semiring.plus_pair)
        c = C.reduce_scalar().new().value
        times.append(time.perf_counter() - t)
        c = int(c or 0)
        if count is not None and c != count:
            sys.exit(f"graphblas trials disagree: {count} then {c}")
        count = c
        del C

    print(f"graphblas {gb.__version__} (SuiteSparse:GraphBLAS {gb.ss.about['library_version']}), "
          f"{a.threads} threads: {n} nodes, {L.nvals} undirected edges (build {build:.3f} s)")
    print("trials ms: " + " ".join(f"{1e3 * t:.1f}" for t in times))
    print(f"graphblas tc median: {1e3 * statistics.median(times):.1f} ms")
    print(f"triangles: {count}")

    expect = a.expect if a.expect is not None else ours(a.graph)
    if expect is None:
        if a.no_check:
            return 0
        print("nothing to check the count against: pass --expect or set TRIDENT", file=sys.stderr)
        return 2
    if expect != count:
        print(f"MISMATCH: graphblas counts {count}, trident {expect}", file=sys.stderr)
        return 1
    print(f"count agrees with trident ({expect})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
