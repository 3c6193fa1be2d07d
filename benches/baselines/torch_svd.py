"""Same-run GPU baseline for `benches/benches/svd.rs`: cuSOLVER's Jacobi SVD through
`torch.linalg.svd(a, full_matrices=False, driver='gesvdj')`, f32 and f64, at the bench's GPU
shapes (`TRIDENT_SVD_SHAPES`, default 4096x4096,32768x256), U and Vᵀ formed. Prints the
medians and writes `{"baselines": [...]}` JSON (table `svd`, rows `f32-4096x4096`, …) to the
path given as the first argument, for `xtask bench-report`. Also times numpy's gesdd on the
CPU (column `numpy gesdd`) for shapes up to 2^33 m·n·min(m, n).
"""
import json
import os
import sys
import time


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "torch_svd.json"
    shapes = [
        tuple(int(v) for v in s.split("x"))
        for s in os.environ.get("TRIDENT_SVD_SHAPES", "4096x4096,32768x256").split(",")
    ]
    import torch

    gpu = {}
    cpu = {}
    qr_gpu = {}
    for m, n in shapes:
        for name, dt in (("f32", torch.float32), ("f64", torch.float64)):
            key = f"{name}-{m}x{n}"
            g = torch.Generator().manual_seed(7)
            a = (torch.rand(m, n, generator=g, dtype=dt) - 0.5)
            if torch.cuda.is_available():
                d = a.cuda()
                torch.linalg.svd(d, full_matrices=False, driver="gesvdj")
                torch.cuda.synchronize()
                ts = []
                for _ in range(5):
                    t = time.perf_counter()
                    u, s, vh = torch.linalg.svd(d, full_matrices=False, driver="gesvdj")
                    torch.cuda.synchronize()
                    ts.append(time.perf_counter() - t)
                err = (u @ torch.diag(s) @ vh - d).abs().max().item()
                gpu[key] = {"median_ms": median(ts) * 1e3, "bytes": 0}
                print(f"torch gesvdj {key}: median {median(ts)*1e3:.2f} ms (max|USV'-A| {err:.2e})")
                if m >= 2 * n:
                    # The QR alone (cuSOLVER Householder geqrf + orgqr), for `qr/...`.
                    torch.linalg.qr(d, mode="reduced")
                    torch.cuda.synchronize()
                    ts = []
                    for _ in range(5):
                        t = time.perf_counter()
                        q, r = torch.linalg.qr(d, mode="reduced")
                        torch.cuda.synchronize()
                        ts.append(time.perf_counter() - t)
                    qr_gpu[key] = {"median_ms": median(ts) * 1e3, "bytes": 0}
                    print(f"torch qr {key}: median {median(ts)*1e3:.2f} ms")
            if m * n * min(m, n) <= 2**33:
                try:
                    import numpy as np

                    an = a.numpy()
                    ts = []
                    for _ in range(3):
                        t = time.perf_counter()
                        np.linalg.svd(an, full_matrices=False)
                        ts.append(time.perf_counter() - t)
                    cpu[key] = {"median_ms": median(ts) * 1e3, "bytes": 0}
                    print(f"numpy gesdd {key}: median {median(ts)*1e3:.2f} ms")
                except ImportError:
                    pass
    baselines = []
    if gpu:
        baselines.append({"table": "svd", "column": "cuSOLVER gesvdj", "reference": True, "results": gpu})
    if qr_gpu:
        baselines.append({"table": "qr", "column": "cuSOLVER geqrf+orgqr", "reference": True, "results": qr_gpu})
    if cpu:
        baselines.append({"table": "svd", "column": "numpy gesdd", "reference": False, "results": cpu})
    with open(out, "w") as f:
        json.dump({"baselines": baselines}, f, indent=1)


if __name__ == "__main__":
    main()
