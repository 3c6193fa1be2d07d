//! Dense `C = A B` on every backend present, tiled, Strassen, Winograd and fused (ABC
//! Strassen: the last level's additions inside the base kernel) side by side.
//!
//! Table `matmul`: one criterion group per precision and size, `matmul/<f32|f64>/<n>` (the
//! row), one benchmark per backend and algorithm, `<backend> <algorithm>` (the column), so
//! that `xtask bench-report` puts them beside the same-run vendor baselines
//! (`benches/baselines/torch_matmul.py`: cuBLAS through torch, TF32 off; `benches/
//! numpy_matmul.py`: OpenBLAS) whose rows are named alike. Each times a device-resident
//! `gemm(n, n, n, &a, &b, &mut c)` followed by `synchronize()`, inputs uploaded once; the
//! Strassen levels are the backend's automatic choice for an explicit Strassen/Winograd (at
//! least one; printed). Where the backend has a tensor-core base kernel for the precision (CUDA
//! f64 on sm_90+, chosen by default), the SIMT kernel is timed too, as `<backend>
//! tiled-simt`. Throughput is `BytesDecimal(2 n³)`: the report's "GB/s" column is
//! **GFLOP/s**.
//!
//! Table `matmul_transfer`: host-to-host `matmul` (uploads and download included) of the
//! tiled algorithm per host-memory mode (`<backend> pageable|pinned|mapped`) on GPU
//! backends. `pinned` and `mapped` stage through page-locked memory that the backend keeps
//! across calls; the checked call before timing allocates (or grows) it, so the timings are
//! the steady state of repeated products, not the one-off allocation.
//!
//! Before timing, every product is checked on 16 sampled rows against the f64 reference
//! within `trident_core::matmul::tolerance`; a wrong answer exits non-zero.
//!
//! Environment:
//! - `TRIDENT_MATMUL_SIZES=1024,2048`: sizes for GPU backends (default 1024, 2048, 4096, 8192,
//!   16384); `TRIDENT_MATMUL_CPU_SIZES` for the CPU (default 1024, 2048, 4096: its
//!   crossover lies between 2048 and 4096).
//! - `TRIDENT_MATMUL_LEVELS=2`: force the Strassen levels instead of the automatic choice.
//! - `TRIDENT_MATMUL_PRECISIONS=f32`: only these precisions (default `f32,f64`).
//! - `TRIDENT_MATMUL_ALGORITHMS=tiled,fused`: only these algorithms in table `matmul`
//!   (default all four; `none` skips the table, e.g. to run the transfer study alone).
//! - `TRIDENT_MATMUL_TRANSFER_SIZES=1024,4096`: sizes of table `matmul_transfer` (default:
//!   the GPU sizes up to 4096; empty: none).
//! - `TRIDENT_BENCH_BACKENDS=cpu,cuda,...`: only these backends; OpenCL on a CPU device (PoCL)
//!   only when named there or with `TRIDENT_BENCH_OPENCL_CPU=1`.

use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
use trident_benches::{unit_value, BackendFilter};
use trident_core::matmul::{check_sampled, Algorithm};
use trident_core::{BaseKernel, Dense, HostMemory, MatMul, MatMulOptions, Result, Scalar};
use trident_cpu::Cpu;
use trident_cuda::Cuda;
use trident_opencl::OpenCl;

const ALGORITHMS: [Algorithm; 4] = [
    Algorithm::Tiled,
    Algorithm::Strassen,
    Algorithm::Winograd,
    Algorithm::Fused,
];

fn sizes(var: &str, default: &[usize]) -> Vec<usize> {
    std::env::var(var)
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| default.to_vec())
}

/// `TRIDENT_MATMUL_ALGORITHMS` (names as [`Algorithm::name`]), or all of [`ALGORITHMS`].
fn algorithms() -> Vec<Algorithm> {
    match std::env::var("TRIDENT_MATMUL_ALGORITHMS") {
        Ok(v) => ALGORITHMS
            .into_iter()
            .filter(|a| v.split(',').any(|s| s.trim() == a.name()))
            .collect(),
        Err(_) => ALGORITHMS.to_vec(),
    }
}

/// Whether `TRIDENT_MATMUL_PRECISIONS` (default both) includes `name`.
fn wants_precision(name: &str) -> bool {
    std::env::var("TRIDENT_MATMUL_PRECISIONS")
        .map_or(true, |v| v.split(',').any(|s| s.trim() == name))
}

fn random<T: Scalar>(n: usize, seed: u64) -> Dense<T> {
    Dense::from_vec(
        n,
        n,
        (0..n * n)
            .map(|i| T::from_f64(f64::from(unit_value(seed, i as u64))))
            .collect(),
    )
    .expect("n x n values")
}

/// Checks one product on the device, then times `gemm` + `synchronize`.
fn bench_on<T: Scalar, B: MatMul<T>>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    b: &B,
    a: &Dense<T>,
    bm: &Dense<T>,
) {
    let n = a.rows();
    let levels = std::env::var("TRIDENT_MATMUL_LEVELS")
        .ok()
        .and_then(|v| v.parse().ok());
    let setup = || -> Result<_> {
        let da = b.upload(a.as_slice())?;
        let db = b.upload(bm.as_slice())?;
        let dc = b.upload(&vec![T::nan(); n * n])?;
        Ok((da, db, dc))
    };
    let (da, db, mut dc) = match setup() {
        Ok(v) => v,
        Err(e) => {
            eprintln!("matmul bench: skipping {} {} n={n}: {e}", b.name(), T::NAME);
            return;
        }
    };
    // The default (automatic) base kernel for every algorithm; where the backend has a
    // tensor-core kernel for T (CUDA f64 on sm_90+), also the SIMT kernel, tiled.
    let algorithms = algorithms();
    let mut variants: Vec<(Algorithm, BaseKernel)> =
        algorithms.iter().map(|&a| (a, BaseKernel::Auto)).collect();
    if b.has_tensor_core_kernel() && algorithms.contains(&Algorithm::Tiled) {
        variants.push((Algorithm::Tiled, BaseKernel::Simt));
    }
    for (algorithm, kernel) in variants {
        let opts = MatMulOptions {
            base_kernel: kernel,
            ..MatMulOptions::with(algorithm, levels)
        };
        let s = b.plan(n, n, n, &opts);
        let id = match kernel {
            BaseKernel::Auto => format!("{} {}", b.name(), algorithm.name()),
            k => format!("{} {}-{}", b.name(), algorithm.name(), k.name()),
        };
        let run = |dc: &mut B::Vector| -> Result<()> {
            b.gemm(n, n, n, &da, &db, dc, &opts)?;
            b.synchronize()
        };
        if let Err(e) = run(&mut dc) {
            eprintln!("matmul bench: {id} {} n={n} failed: {e}", T::NAME);
            std::process::exit(1);
        }
        let c = b.download(&dc).expect("download");
        match check_sampled(a.view(), bm.view(), &c, &s, 16) {
            Ok(err) => eprintln!(
                "matmul bench: {id} {} n={n}: {} levels, {} products, error {err:.1} ε‖A‖‖B‖",
                T::NAME,
                s.levels,
                s.products()
            ),
            Err(msg) => {
                eprintln!("matmul bench: {id} {} n={n}: WRONG RESULT: {msg}", T::NAME);
                std::process::exit(1);
            }
        }
        group.bench_function(id, |bench| {
            bench.iter(|| run(&mut dc).expect("gemm failed"))
        });
    }
}

/// Times host-to-host `matmul` (tiled) per host-memory mode.
fn bench_transfer<T: Scalar, B: MatMul<T>>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    b: &B,
    a: &Dense<T>,
    bm: &Dense<T>,
) {
    for mode in [HostMemory::Pageable, HostMemory::Pinned, HostMemory::Mapped] {
        let opts = MatMulOptions {
            host_memory: mode,
            ..MatMulOptions::with(Algorithm::Tiled, None)
        };
        let s = b.plan(a.rows(), bm.cols(), a.cols(), &opts);
        let id = format!("{} {}", b.name(), mode.name());
        match b.matmul(a.view(), bm.view(), &opts) {
            Ok(c) => {
                if let Err(msg) = check_sampled(a.view(), bm.view(), c.as_slice(), &s, 16) {
                    eprintln!("matmul bench: {id}: WRONG RESULT: {msg}");
                    std::process::exit(1);
                }
            }
            Err(e) => {
                eprintln!("matmul bench: skipping {id}: {e}");
                continue;
            }
        }
        group.bench_function(id, |bench| {
            bench.iter(|| b.matmul(a.view(), bm.view(), &opts).expect("matmul failed"))
        });
    }
}

fn run_precision<T: Scalar>(
    c: &mut Criterion,
    cpu: Option<&Cpu>,
    cuda: Option<&Cuda>,
    opencl: Option<&OpenCl>,
) where
    Cpu: MatMul<T>,
    Cuda: MatMul<T>,
    OpenCl: MatMul<T>,
{
    if !wants_precision(T::NAME) {
        return;
    }
    let gpu = sizes("TRIDENT_MATMUL_SIZES", &[1024, 2048, 4096, 8192, 16384]);
    let cpu_sizes = sizes("TRIDENT_MATMUL_CPU_SIZES", &[1024, 2048, 4096]);
    let transfer: Vec<usize> = match std::env::var("TRIDENT_MATMUL_TRANSFER_SIZES") {
        Ok(v) => v.split(',').filter_map(|s| s.trim().parse().ok()).collect(),
        Err(_) => gpu.iter().copied().filter(|&n| n <= 4096).collect(),
    };
    let table = !algorithms().is_empty();
    let mut all: Vec<usize> = gpu
        .iter()
        .chain(&cpu_sizes)
        .copied()
        .filter(|n| table || transfer.contains(n))
        .chain(transfer.iter().copied())
        .collect();
    all.sort_unstable();
    all.dedup();
    for &n in &all {
        let has_gpu = cuda.is_some() || opencl.is_some();
        let on_gpu = table && gpu.contains(&n) && has_gpu;
        let on_cpu = table && cpu_sizes.contains(&n) && cpu.is_some();
        let on_transfer = transfer.contains(&n) && has_gpu;
        if !on_gpu && !on_cpu && !on_transfer {
            continue;
        }
        let a = random::<T>(n, 1);
        let bm = random::<T>(n, 2);
        if on_gpu || on_cpu {
            let mut group = c.benchmark_group(format!("matmul/{}/{n}", T::NAME));
            group
                .sampling_mode(SamplingMode::Flat)
                .sample_size(10)
                .throughput(Throughput::BytesDecimal(2 * (n as u64).pow(3)));
            if on_cpu {
                bench_on(&mut group, cpu.expect("checked"), &a, &bm);
            }
            if on_gpu {
                if let Some(b) = cuda {
                    bench_on(&mut group, b, &a, &bm);
                }
                if let Some(b) = opencl {
                    bench_on(&mut group, b, &a, &bm);
                }
            }
            group.finish();
        }
        if on_transfer {
            let mut group = c.benchmark_group(format!("matmul_transfer/{}/{n}", T::NAME));
            group
                .sampling_mode(SamplingMode::Flat)
                .sample_size(10)
                .throughput(Throughput::BytesDecimal(2 * (n as u64).pow(3)));
            if let Some(b) = cuda {
                bench_transfer(&mut group, b, &a, &bm);
            }
            if let Some(b) = opencl {
                bench_transfer(&mut group, b, &a, &bm);
            }
            group.finish();
        }
    }
}

fn start<B>(name: &str, filter: &BackendFilter, make: impl FnOnce() -> Result<B>) -> Option<B> {
    if !filter.wants(name) {
        return None;
    }
    match make() {
        Ok(b) => Some(b),
        Err(e) => {
            eprintln!("matmul bench: skipping {name}: {e}");
            None
        }
    }
}

fn main() {
    let filter = BackendFilter::from_env();
    let cpu = filter.wants("cpu").then(Cpu::new);
    let cuda = start("cuda", &filter, trident_benches::open_cuda);
    let opencl = start("opencl", &filter, trident_benches::open_opencl).filter(|cl| {
        let ok = cl.is_gpu()
            || filter.names_explicitly("opencl")
            || std::env::var("TRIDENT_BENCH_OPENCL_CPU").is_ok_and(|v| v == "1");
        if !ok {
            eprintln!(
                "matmul bench: skipping opencl on a CPU device (name it in TRIDENT_BENCH_BACKENDS)"
            );
        }
        ok
    });
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .without_plots()
        .configure_from_args();
    run_precision::<f32>(&mut c, cpu.as_ref(), cuda.as_ref(), opencl.as_ref());
    run_precision::<f64>(&mut c, cpu.as_ref(), cuda.as_ref(), opencl.as_ref());
    c.final_summary();
}
