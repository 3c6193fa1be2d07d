#!/usr/bin/env python3
"""cuSPARSE baseline for the SpMV benchmark: PyTorch's CSR SpMV on the very matrices that
benches/benches/spmv.rs times.

Run the SpMV bench with TRIDENT_SPMV_DUMP=<dir> first; it writes, per input NAME (random,
banded), raw little-endian files: NAME.indptr.i64.bin, NAME.indices.i32.bin,
NAME.values.f32.bin, NAME.x.f32.bin and NAME.meta.json (rows, cols, nnz, bytes). Then:

    python3 benches/torch_spmv.py <dump dir> <out.json> [--device cuda] [--warmup 20] [--runs 100]

For each input this builds a torch.sparse_csr_tensor on the GPU, times `A @ x` (cuSPARSE CSR
SpMV) with CUDA events (20 warm-up + 100 timed runs), and prints the median time and the
effective bandwidth under the benchmark's byte model (trident_benches::spmv_bytes):

    bytes = nnz * (4 + 4) + rows * 4 + rows * 4 + cols * 4
            (values + column indices, row pointers, y written, x read once: the compulsory traffic)

It also checks y against a float64 product of the same matrix on the GPU and reports
max_i |y_i - y64_i| / (|A| |x|)_i. The medians go to <out.json>, which
`xtask bench-report --torch <out.json>` adds to the report as the baseline.
"""

import argparse
import json
import os
import statistics
import sys
import time
import warnings

import numpy as np
import torch


warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")


def spmv_bytes(rows, cols, nnz):
    """The byte model of trident_benches::spmv_bytes (f32 values, 32-bit indices)."""
    return nnz * (4 + 4) + rows * 4 + rows * 4 + cols * 4


def load(dump_dir, name):
    """The CSR arrays and x of input `name`, checked against its meta file."""
    with open(os.path.join(dump_dir, f"{name}.meta.json")) as f:
        meta = json.load(f)
    rows, cols, nnz = meta["rows"], meta["cols"], meta["nnz"]

    def array(suffix, dtype, count):
        path = os.path.join(dump_dir, f"{name}.{suffix}")
        a = np.fromfile(path, dtype=np.dtype(dtype))
        if a.size != count:
            sys.exit(f"{path}: {a.size} entries, expected {count}")
        return a

    indptr = array("indptr.i64.bin", "<i8", rows + 1)
    indices = array("indices.i32.bin", "<i4", nnz)
    values = array("values.f32.bin", "<f4", nnz)
    x = array("x.f32.bin", "<f4", cols)
    if indptr[0] != 0 or indptr[-1] != nnz:
        sys.exit(f"{name}: row pointers run from {indptr[0]} to {indptr[-1]}, expected 0 to {nnz}")
    return meta, indptr, indices, values, x


def spmv_op(a, x):
    """The fastest product form this PyTorch accepts: A @ x, else torch.mv, else A @ x[:, None]."""
    candidates = [
        ("A @ x", lambda: a @ x),
        ("torch.mv(A, x)", lambda: torch.mv(a, x)),
        ("(A @ x[:, None])[:, 0]", lambda: (a @ x.unsqueeze(1)).squeeze(1)),
    ]
    errors = []
    for label, op in candidates:
        try:
            y = op()
            if y.shape == (a.shape[0],):
                return label, op
            errors.append(f"{label}: shape {tuple(y.shape)}")
        except RuntimeError as e:
            errors.append(f"{label}: {e}")
    sys.exit("no sparse CSR product form works:\n  " + "\n  ".join(errors))


def time_runs(op, device, warmup, runs):
    """Per-run milliseconds of `op` after `warmup` untimed runs."""
    for _ in range(warmup):
        op()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
        for s, e in zip(starts, ends):
            s.record()
            op()
            e.record()
        torch.cuda.synchronize(device)
        return [s.elapsed_time(e) for s, e in zip(starts, ends)]
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        op()
        times.append((time.perf_counter() - t) * 1e3)
    return times


def bench(name, dump_dir, device, warmup, runs):
    meta, indptr, indices, values, x = load(dump_dir, name)
    rows, cols, nnz = meta["rows"], meta["cols"], meta["nnz"]
    index_dtype = torch.int32 if nnz < 2**31 else torch.int64
    crow = torch.from_numpy(indptr).to(device=device, dtype=index_dtype)
    col = torch.from_numpy(indices).to(device=device, dtype=index_dtype)
    vals = torch.from_numpy(values).to(device)
    xs = torch.from_numpy(x).to(device)
    a = torch.sparse_csr_tensor(crow, col, vals, size=(rows, cols))

    label, op = spmv_op(a, xs)
    ms = time_runs(op, device, warmup, runs)
    y = op()

    # Accuracy: against float64 on the same device, scaled by (|A| |x|)_i.
    a64 = torch.sparse_csr_tensor(crow, col, vals.double(), size=(rows, cols))
    y64 = spmv_op(a64, xs.double())[1]()
    abs_a = torch.sparse_csr_tensor(crow, col, vals.double().abs(), size=(rows, cols))
    mag = spmv_op(abs_a, xs.double().abs())[1]()
    rel = (y.double() - y64).abs() / mag.clamp_min(torch.finfo(torch.float64).tiny)
    max_rel_err = float(rel.max().item()) if rows > 0 else 0.0

    median = statistics.median(ms)
    nbytes = spmv_bytes(rows, cols, nnz)
    result = {
        "rows": rows,
        "cols": cols,
        "nnz": nnz,
        "bytes": nbytes,
        "median_ms": median,
        "min_ms": min(ms),
        "gbps": nbytes / (median * 1e-3) / 1e9,
        "max_rel_err": max_rel_err,
        "op": label,
        "index_dtype": str(index_dtype).replace("torch.", ""),
    }
    print(
        f"{name}: {rows} rows, {nnz} entries: median {median:.4f} ms over {runs} runs "
        f"({result['gbps']:.1f} GB/s), min {min(ms):.4f} ms; {label}; "
        f"max relative error vs float64 {max_rel_err:.3e}",
        flush=True,
    )
    del a, a64, abs_a, crow, col, vals, xs, y, y64, mag, rel
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dump_dir", help="directory the SpMV bench wrote with TRIDENT_SPMV_DUMP")
    p.add_argument("out_json", help="where to write the medians")
    p.add_argument("--device", default="cuda", help="torch device (default cuda)")
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--runs", type=int, default=100)
    args = p.parse_args()

    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("torch sees no CUDA device")
    names = sorted(
        f[: -len(".meta.json")] for f in os.listdir(args.dump_dir) if f.endswith(".meta.json")
    )
    if not names:
        sys.exit(f"{args.dump_dir}: no *.meta.json (run the spmv bench with TRIDENT_SPMV_DUMP)")
    device_name = (
        torch.cuda.get_device_name(device) if device.type == "cuda" else str(device)
    )
    print(f"torch {torch.__version__} on {device_name}", flush=True)
    results = {n: bench(n, args.dump_dir, device, args.warmup, args.runs) for n in names}
    out = {
        "device": device_name,
        "torch": torch.__version__,
        "warmup": args.warmup,
        "runs": args.runs,
        "results": results,
    }
    with open(args.out_json, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    print(f"wrote {args.out_json}")


if __name__ == "__main__":
    main()
