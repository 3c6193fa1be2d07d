#!/usr/bin/env python3
"""cuBLAS baseline for the matmul benchmark: torch.matmul on the GPU, f32 with TF32 disabled
(plain SGEMM, the issue's yardstick) and f64 (DGEMM, which on an H100 uses the FP64 tensor
cores), at the sizes benches/benches/matmul.rs times, in the same device session.

    python3 benches/baselines/torch_matmul.py <out.json> [--sizes 1024,...,16384] [--runs N]

For each precision and n: uniform [-1, 1) n x n inputs, 3 warm-up products, then timed
products with CUDA events (runs: 20 up to n = 4096, 10 above); a sampled check of 8 rows
against a float64 product. Prints one machine-readable line per case,
`torch f32 n=8192 median_ms=21.4 tflops=51.3 err=...`, and writes
{"baselines": [{"table": "matmul", "column": "cuBLAS (torch)", "reference": true,
"results": {"f32/8192": {"median_ms": ..., "bytes": 2 n^3}}}]} (the "bytes" field carries the
flop count, as the benchmark's throughput does), which `xtask bench-report --baseline` turns
into the reference column of the matmul table (run.sh does this in `bench` mode).
"""

import argparse
import json
import os
import statistics
import sys

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    # The benchmark's own sizes (TRIDENT_MATMUL_SIZES), so both measure the same products.
    p.add_argument(
        "--sizes", default=os.environ.get("TRIDENT_MATMUL_SIZES", "1024,2048,4096,8192,16384")
    )
    p.add_argument("--runs", type=int, default=0)
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch sees no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    dev = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}", flush=True)
    results = {}
    for dtype, name in [(torch.float32, "f32"), (torch.float64, "f64")]:
        for n in [int(s) for s in args.sizes.split(",")]:
            g = torch.Generator(device=dev).manual_seed(n)
            a = torch.rand((n, n), device=dev, dtype=dtype, generator=g) * 2 - 1
            b = torch.rand((n, n), device=dev, dtype=dtype, generator=g) * 2 - 1
            for _ in range(3):
                c = a @ b
            torch.cuda.synchronize()
            runs = args.runs or (20 if n <= 4096 else 10)
            times = []
            for _ in range(runs):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                c = a @ b
                e.record()
                e.synchronize()
                times.append(s.elapsed_time(e))
            rows = torch.linspace(0, n - 1, 8, device=dev).long()
            ref = a[rows].double() @ b.double()
            eps = torch.finfo(dtype).eps
            err = ((c[rows].double() - ref).abs().max() / (eps * a.abs().max() * b.abs().max())).item()
            med = statistics.median(times)
            flops = 2 * n**3
            print(f"torch {name} n={n} median_ms={med:.3f} tflops={flops / med / 1e9:.2f} err={err:.1f}", flush=True)
            results[f"{name}/{n}"] = {"median_ms": med, "bytes": flops}
            del a, b, c, ref
            torch.cuda.empty_cache()
    doc = {"baselines": [{"table": "matmul", "column": "cuBLAS (torch)", "reference": True, "results": results}]}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
