//! One-sided block Jacobi SVD (U and Vᵀ, thin) on every backend present, with nalgebra's SVD
//! (Golub–Kahan, f64 or f32, one thread) as the same-run CPU baseline.
//!
//! One criterion group per precision and shape, `svd/f32-4096x4096`: table `svd`, row
//! `f32-4096x4096`, columns `cpu`, `cuda`, `opencl`, `nalgebra`. Every backend's result is
//! checked with `trident_core::svd::validity` before timing; a wrong answer exits non-zero.
//! Sweeps and time per sweep are printed for each backend.
//!
//! Environment:
//! - `TRIDENT_SVD_SHAPES=MxN,...`: shapes (default `512x512,4096x128`; on the H100:
//!   `4096x4096,32768x256`, the shapes of `benches/baselines/torch_svd.py`).
//! - `TRIDENT_SVD_PRECISIONS=f32,f64` (default both).
//! - `TRIDENT_BENCH_BACKENDS=cpu,cuda,opencl,nalgebra`: only these (default: all present;
//!   OpenCL on a CPU device only when named).
//! - `TRIDENT_SVD_BLOCK=B`: Jacobi block size (GPUs: `1 ..= 16`; default the backend's).
//! - `TRIDENT_SVD_CHUNKS=C`: GPUs: work-groups per block pair (1: the fused one-launch round;
//!   default automatic, see `JacobiPlan::auto_chunks`).
//! - `TRIDENT_SVD_QR_ORDER=auto|flat|tree|tree:ROWS`: the QRs' rotation order (default auto:
//!   the tree on GPUs for tall matrices).
//! - `TRIDENT_SVD_QR=1`: also time the Givens QR (thin `Q`) alone on tall shapes (`m ≥ 2n`),
//!   group `qr/f32-MxN` (same-run baseline: `torch.linalg.qr` in `benches/baselines/torch_svd.py`).
//! - `TRIDENT_SVD_TRACE=1`: every SVD call prints its phases (host prepare + upload, QR,
//!   Jacobi with its sweep count, `U = Q₁ [J; 0]`, downloads, host finish) to stderr, each
//!   ended by a device synchronize (`SvdOptions::trace`); for a separate diagnostic
//!   run, not for the timed one.
//! - `TRIDENT_SVD_NALGEBRA_MAX=N`: skip nalgebra above N·N·N flops-ish (`m·n·min(m,n)`,
//!   default 2^33: it is single-threaded and slow on 4096²).

use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode};
use trident_benches::BackendFilter;
use trident_core::svd::{self, QrOrder, Vectors};
use trident_core::{Dense, Qr, QrOptions, Result, Scalar, Svd, SvdOptions};
use trident_cpu::Cpu;
use trident_cuda::Cuda;
use trident_opencl::OpenCl;

fn fail(message: &str) -> ! {
    eprintln!("svd bench: FAILED: {message}");
    std::process::exit(1)
}

fn start<B>(name: &str, filter: &BackendFilter, make: impl FnOnce() -> Result<B>) -> Option<B> {
    if !filter.wants(name) {
        return None;
    }
    match make() {
        Ok(b) => Some(b),
        Err(e) if e.is_no_device() && !trident_core::testing::require_gpu() => {
            eprintln!("svd bench: skipping {name}: {e}");
            None
        }
        Err(e) => fail(&format!("{name} failed to start: {e}")),
    }
}

/// A reproducible matrix with entries in [-0.5, 0.5) and a known-ish spread of values.
fn matrix<T: Scalar>(m: usize, n: usize, seed: u64) -> Dense<T> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    Dense::from_fn(m, n, |_, _| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        T::from_f64((x >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
    })
}

fn opts() -> SvdOptions {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    SvdOptions {
        vectors: Vectors::Thin,
        block_size: env("TRIDENT_SVD_BLOCK").map(|v| {
            v.parse()
                .unwrap_or_else(|_| fail(&format!("TRIDENT_SVD_BLOCK={v}: not a number")))
        }),
        row_chunks: env("TRIDENT_SVD_CHUNKS").map(|v| {
            v.parse()
                .unwrap_or_else(|_| fail(&format!("TRIDENT_SVD_CHUNKS={v}: not a number")))
        }),
        qr_order: env("TRIDENT_SVD_QR_ORDER").map_or(QrOrder::Auto, |v| {
            QrOrder::parse(&v).unwrap_or_else(|| {
                fail(&format!(
                    "TRIDENT_SVD_QR_ORDER={v}: expected auto, flat, tree or tree:ROWS"
                ))
            })
        }),
        trace: env("TRIDENT_SVD_TRACE").is_some_and(|v| v != "0"),
        ..SvdOptions::default()
    }
}

/// The phase times of a traced SVD (`TRIDENT_SVD_TRACE`), one line each on stderr.
fn print_phases(phases: &[svd::SvdPhase]) {
    for p in phases {
        eprintln!("svd trace: {}: {:.3} ms", p.name, p.seconds * 1e3);
    }
}

/// Checks one SVD on `b`, then times it.
fn bench_on<T: Scalar, B: Svd<T>>(group: &mut BenchmarkGroup<'_, WallTime>, b: &B, a: &Dense<T>) {
    let name = b.name();
    let t = Instant::now();
    let r = match b.svd(a.view(), &opts()) {
        Ok(r) => r,
        Err(e) => fail(&format!("{name}: {e}")),
    };
    let secs = t.elapsed().as_secs_f64();
    print_phases(&r.phases);
    match svd::validity(a.view(), &r).and_then(|v| v.check().map(|()| v)) {
        Ok(v) => eprintln!(
            "svd bench: {name} on {}: {:?}, {} sweeps, {:.1} ms/sweep; {v}",
            b.device(),
            r.precondition,
            r.sweeps,
            secs * 1e3 / r.sweeps.max(1) as f64
        ),
        Err(m) => fail(&format!("{name} computed a wrong SVD: {m}")),
    }
    if !r.converged {
        fail(&format!("{name}: not converged after {} sweeps", r.sweeps));
    }
    group.bench_function(name, |bench| {
        bench.iter(|| {
            let r = b.svd(a.view(), &opts()).expect("svd failed");
            print_phases(&r.phases);
        })
    });
}

/// Checks one Givens QR (thin `Q`, the backend's automatic order: the tree on GPUs for tall
/// matrices) on `b`, then times it.
fn bench_qr<T: Scalar, B: Qr<T>>(group: &mut BenchmarkGroup<'_, WallTime>, b: &B, a: &Dense<T>) {
    let name = b.name();
    let opts = QrOptions {
        q: Vectors::Thin,
        order: opts().qr_order,
    };
    let t = Instant::now();
    let f = match b.qr(a.view(), &opts) {
        Ok(f) => f,
        Err(e) => fail(&format!("{name} qr: {e}")),
    };
    let secs = t.elapsed().as_secs_f64();
    match svd::qr_validity(a.view(), &f) {
        Ok((orth, res)) => eprintln!(
            "qr bench: {name} on {}: {:.1} ms; max|QᵀQ−I| {orth:.2e}, max|QR−A| {res:.2e}",
            b.device(),
            secs * 1e3
        ),
        Err(m) => fail(&format!("{name} computed a wrong QR: {m}")),
    }
    group.bench_function(name, |bench| {
        bench.iter(|| {
            b.qr(a.view(), &opts).expect("qr failed");
        })
    });
}

fn bench_nalgebra<T: Scalar + nalgebra::RealField>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    a: &Dense<T>,
) {
    let na = a.to_nalgebra();
    let s = na.clone().svd(true, true);
    if s.u.is_none() || s.v_t.is_none() {
        fail("nalgebra formed no vectors");
    }
    group.bench_function("nalgebra", |bench| {
        bench.iter(|| na.clone().svd(true, true))
    });
}

fn run<T: Scalar + nalgebra::RealField>(
    c: &mut Criterion,
    filter: &BackendFilter,
    cpu: Option<&Cpu>,
    cuda: Option<&Cuda>,
    opencl: Option<&OpenCl>,
    (m, n): (usize, usize),
) where
    Cuda: Svd<T> + Qr<T>,
    OpenCl: Svd<T> + Qr<T>,
{
    let a = matrix::<T>(m, n, 7);
    if m >= 2 * n && std::env::var("TRIDENT_SVD_QR").is_ok_and(|v| v == "1") {
        // The preconditioning QR alone (group `qr/f32-32768x256`).
        let mut group = c.benchmark_group(format!("qr/{}-{m}x{n}", T::NAME));
        group.sampling_mode(SamplingMode::Flat);
        if let Some(b) = cpu {
            bench_qr(&mut group, b, &a);
        }
        if let Some(b) = cuda {
            bench_qr(&mut group, b, &a);
        }
        if let Some(b) = opencl {
            bench_qr(&mut group, b, &a);
        }
        group.finish();
    }
    let mut group = c.benchmark_group(format!("svd/{}-{m}x{n}", T::NAME));
    group.sampling_mode(SamplingMode::Flat);
    if let Some(b) = cpu {
        bench_on(&mut group, b, &a);
    }
    if let Some(b) = cuda {
        bench_on(&mut group, b, &a);
    }
    if let Some(b) = opencl {
        bench_on(&mut group, b, &a);
    }
    let limit: f64 = std::env::var("TRIDENT_SVD_NALGEBRA_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or((1u64 << 33) as f64);
    if filter.wants("nalgebra") && (m * n * m.min(n)) as f64 <= limit {
        bench_nalgebra(&mut group, &a);
    }
    group.finish();
}

fn main() {
    let filter = BackendFilter::from_env();
    let cpu = filter.wants("cpu").then(Cpu::new);
    let cuda = start("cuda", &filter, trident_benches::open_cuda);
    let opencl = start("opencl", &filter, trident_benches::open_opencl)
        .filter(|cl| cl.is_gpu() || filter.names_explicitly("opencl"));
    let shapes: Vec<(usize, usize)> = std::env::var("TRIDENT_SVD_SHAPES")
        .unwrap_or_else(|_| "512x512,4096x128".into())
        .split(',')
        .filter_map(|s| {
            let (m, n) = s.trim().split_once('x')?;
            Some((m.parse().ok()?, n.parse().ok()?))
        })
        .collect();
    let precisions = std::env::var("TRIDENT_SVD_PRECISIONS").unwrap_or_else(|_| "f32,f64".into());
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5))
        .without_plots()
        .configure_from_args();
    for &shape in &shapes {
        if precisions.contains("f32") {
            run::<f32>(
                &mut c,
                &filter,
                cpu.as_ref(),
                cuda.as_ref(),
                opencl.as_ref(),
                shape,
            );
        }
        if precisions.contains("f64") {
            run::<f64>(
                &mut c,
                &filter,
                cpu.as_ref(),
                cuda.as_ref(),
                opencl.as_ref(),
                shape,
            );
        }
    }
    c.final_summary();
}
