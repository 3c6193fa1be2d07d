//! `trident matmul`: C = A B for two `.npy` matrices on a chosen backend, checked against the
//! f64 reference (all rows up to 2^30 multiply-adds, else 64 sampled rows) and timed.

use std::path::{Path, PathBuf};
use std::time::Instant;

use trident_core::matmul::{self as mm, Algorithm};
use trident_core::{
    io, BaseKernel, Dense, Error, HostMemory, MatMul, MatMulOptions, Result, Scalar,
};

use crate::files::Files;
use crate::select::{self, AnyBackend, BackendChoice};
use crate::{median, Precision};

/// The `--algorithm` choices.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum AlgorithmArg {
    /// Winograd with levels from the shape and backend (tiled when small).
    Auto,
    /// The base kernel only.
    Tiled,
    /// Strassen's 7-product, 18-addition recursion.
    Strassen,
    /// The Strassen–Winograd 7-product, 15-addition recursion.
    Winograd,
    /// ABC Strassen: the last level's additions fused into the base kernel (Winograd above).
    Fused,
}

/// The `--host-memory` choices.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum HostMemoryArg {
    /// Ordinary copies.
    Pageable,
    /// Through page-locked staging buffers.
    Pinned,
    /// Zero-copy mapped host memory.
    Mapped,
}

/// The `--kernel` choices.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum KernelArg {
    /// The backend's fastest (CUDA f64 on sm_90+: the FP64 tensor cores).
    Auto,
    /// The SIMT tiled kernel.
    Simt,
    /// The tensor-core kernel (CUDA f64, compute capability 9.0+; an error elsewhere).
    Tensor,
}

/// C = A B for two `.npy` matrices (2-D, float32 or float64; NaN and Inf propagate);
/// checks C against the f64 reference and reports the time and GFLOP/s (2 m n k / time).
#[derive(clap::Args)]
pub struct Args {
    /// A (m x k), a 2-D `.npy` file.
    a: PathBuf,
    /// B (k x n), a 2-D `.npy` file.
    b: PathBuf,
    /// Write C as `.npy`.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Algorithm.
    #[arg(long, value_enum, default_value = "auto")]
    algorithm: AlgorithmArg,
    /// Strassen levels (default: from the shape and the backend).
    #[arg(long)]
    levels: Option<usize>,
    /// Smallest leaf order of the automatic level choice (default: the backend's).
    #[arg(long)]
    cutoff: Option<usize>,
    /// Which backend runs the product.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendChoice,
    /// Element type (inputs are converted). Default: the inputs' (f64 if either is f64).
    #[arg(long, value_enum)]
    precision: Option<Precision>,
    /// Host transfer mode of GPU backends (timed, transfers included).
    #[arg(long, value_enum, default_value = "pageable")]
    host_memory: HostMemoryArg,
    /// Base kernel of the products.
    #[arg(long, value_enum, default_value = "auto")]
    kernel: KernelArg,
    /// Timed products (the median is reported), 1 to 100000.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    repeat: u64,
}

pub fn run(args: Args) -> Result<()> {
    // Every output is checked before any work; C is written at the end, or not at all.
    let files = Files::declare(&[Some(&args.a), Some(&args.b)], &[args.output.as_deref()])?;
    // The inputs are read (losslessly, as f64) and checked before the backends are probed.
    let (a, a_type) = read(&args.a)?;
    let (bm, b_type) = read(&args.b)?;
    mm::check_shapes(a.shape(), bm.shape())
        .map_err(|e| e.context(format!("{} · {}", args.a.display(), args.b.display())))?;
    let precision = args
        .precision
        .unwrap_or(if a_type == "f32" && b_type == "f32" {
            Precision::F32
        } else {
            Precision::F64
        });
    let b = select::open(args.backend)?;
    crate::outln!("backend: {b}")?;
    let opts = MatMulOptions {
        algorithm: match args.algorithm {
            AlgorithmArg::Auto => Algorithm::Auto,
            AlgorithmArg::Tiled => Algorithm::Tiled,
            AlgorithmArg::Strassen => Algorithm::Strassen,
            AlgorithmArg::Winograd => Algorithm::Winograd,
            AlgorithmArg::Fused => Algorithm::Fused,
        },
        levels: args.levels,
        strassen_cutoff: args.cutoff,
        host_memory: match args.host_memory {
            HostMemoryArg::Pageable => HostMemory::Pageable,
            HostMemoryArg::Pinned => HostMemory::Pinned,
            HostMemoryArg::Mapped => HostMemory::Mapped,
        },
        base_kernel: match args.kernel {
            KernelArg::Auto => BaseKernel::Auto,
            KernelArg::Simt => BaseKernel::Simt,
            KernelArg::Tensor => BaseKernel::TensorCore,
        },
        ..MatMulOptions::default()
    };
    let inputs = Inputs {
        a,
        b: bm,
        types: [a_type, b_type],
    };
    match precision {
        Precision::F32 => matmul::<f32>(&b, &args, &opts, inputs, files),
        Precision::F64 => matmul::<f64>(&b, &args, &opts, inputs, files),
    }
}

/// A and B as read (f64 holds either stored type exactly), with their stored types.
struct Inputs {
    a: Dense<f64>,
    b: Dense<f64>,
    types: [&'static str; 2],
}

/// A `.npy` matrix as f64, and the element type the file stores.
fn read(path: &Path) -> Result<(Dense<f64>, &'static str)> {
    io::npy::npy_matrix_of::<f64>(&io::Input::read_limited(path, &crate::env::read_options())?)
}

/// `m` in `T`; a finite value beyond `T`'s range is an error naming the file.
fn convert<T: Scalar>(m: Dense<f64>, path: &Path) -> Result<Dense<T>> {
    let (rows, cols) = m.shape();
    let over = m
        .as_slice()
        .iter()
        .position(|&x| x.is_finite() && !T::from_f64(x).is_finite());
    if let Some(i) = over {
        return Err(Error::invalid(
            "input",
            format!(
                "{}: element ({}, {}) = {:e} overflows {} (use --precision f64)",
                path.display(),
                i / cols.max(1),
                i % cols.max(1),
                m.as_slice()[i],
                T::NAME
            ),
        ));
    }
    let vals: Vec<T> = m.into_vec().into_iter().map(T::from_f64).collect();
    Dense::from_vec(rows, cols, vals)
}

fn matmul<T: BackendScalar>(
    b: &AnyBackend,
    args: &Args,
    opts: &MatMulOptions,
    inputs: Inputs,
    mut files: Files,
) -> Result<()> {
    let inputs_finite = inputs.a.as_slice().iter().all(|v| v.is_finite())
        && inputs.b.as_slice().iter().all(|v| v.is_finite());
    let types = inputs.types;
    let a = convert::<T>(inputs.a, &args.a)?;
    let bm = convert::<T>(inputs.b, &args.b)?;
    let (m, n, k) = mm::check_shapes(a.shape(), bm.shape())
        .map_err(|e| e.context(format!("{} · {}", args.a.display(), args.b.display())))?;
    let (c, times, schedule) = T::timed(b, &a, &bm, opts, args.repeat as usize)?;
    crate::outln!(
        "C = A B: {m} x {k} · {k} x {n}, {} ({} from {} · {}{}), {}{} with {} Strassen levels \
         ({} base products, workspace {} values), host memory {}, {} base kernel",
        T::NAME,
        T::NAME,
        types[0],
        types[1],
        if args.precision.is_some() {
            ", --precision"
        } else {
            ", the inputs' type"
        },
        schedule.algorithm.name(),
        match schedule.substituted {
            Some((alg, levels)) => format!(
                " (the classical product instead of {} with {levels} levels: {})",
                alg.name(),
                if inputs_finite {
                    "the inputs' values are so large that Strassen-type sums could overflow"
                } else {
                    "an input holds NaN or infinity, which Strassen-type sums spread beyond \
                     its row or column"
                }
            ),
            None => String::new(),
        },
        schedule.levels,
        schedule.products(),
        schedule.workspace,
        opts.host_memory.name(),
        opts.base_kernel.name()
    )?;
    let full = (m as u128) * (n as u128) * (k as u128) <= 1 << 30;
    let rows = if full { m } else { 64 };
    // Finite inputs and an infinite product: the product overflows the element type. Where
    // the f64 reference does not (an f32 product), the check fails: said as an overflow, not
    // as a wrong product. Where it does too (f64), the infinities are IEEE's answer: noted.
    let overflow = inputs_finite
        .then(|| c.as_slice().iter().position(|v| !v.is_finite()))
        .flatten()
        .map(|i| {
            format!(
                "C({}, {}) = {} overflows {}: the product's values exceed its range (largest \
                 finite {:e})",
                i / n.max(1),
                i % n.max(1),
                c.as_slice()[i],
                T::NAME,
                T::max_value().to_f64(),
            )
        });
    let err =
        mm::check_sampled(a.view(), bm.view(), c.as_slice(), &schedule, rows).map_err(|msg| {
            match &overflow {
                Some(o) => Error::invalid(
                    "product",
                    format!(
                        "{o}{}",
                        if T::NAME == "f32" {
                            "; use --precision f64"
                        } else {
                            ""
                        }
                    ),
                ),
                None => Error::backend(
                    "check",
                    format!("the product is wrong beyond the matmul tolerance: {msg}"),
                ),
            }
        })?;
    if let Some(o) = &overflow {
        crate::errln!("note: {o}");
    }
    let bound = mm::tolerance::<T>(schedule.algorithm, schedule.levels, k).factor;
    crate::outln!(
        "max error vs f64 reference ({}): {err:.1} ε‖A‖‖B‖ (bound {bound:.0})",
        if full { "all rows" } else { "64 sampled rows" }
    )?;
    let t = median(times);
    let flops = 2.0 * m as f64 * n as f64 * k as f64;
    crate::outln!(
        "median time per product (transfers included): {:.3} ms, {:.1} GFLOP/s",
        t * 1e3,
        flops / t / 1e9
    )?;
    if let Some(out) = &args.output {
        files.write(out, |f| io::npy::write_npy_to(f, &c))?;
        files.commit()?;
        crate::outln!("wrote {}", out.display())?;
    }
    Ok(())
}

/// The element types every compiled-in backend supports, dispatched to the chosen backend.
trait BackendScalar: Scalar {
    /// [`run_matmul`] on whichever backend `b` holds.
    fn timed(
        b: &AnyBackend,
        a: &Dense<Self>,
        bm: &Dense<Self>,
        opts: &MatMulOptions,
        repeat: usize,
    ) -> Result<(Dense<Self>, Vec<f64>, mm::Schedule)>;
}

macro_rules! backend_scalar {
    ($($t:ty),*) => {$(
        impl BackendScalar for $t {
            fn timed(
                b: &AnyBackend,
                a: &Dense<$t>,
                bm: &Dense<$t>,
                opts: &MatMulOptions,
                repeat: usize,
            ) -> Result<(Dense<$t>, Vec<f64>, mm::Schedule)> {
                crate::with_backend!(b, be => run_matmul(be, a, bm, opts, repeat))
            }
        }
    )*};
}
backend_scalar!(f32, f64);

/// One warm-up product, then `repeat` timed host-to-host products.
fn run_matmul<T: Scalar, B: MatMul<T>>(
    b: &B,
    a: &Dense<T>,
    bm: &Dense<T>,
    opts: &MatMulOptions,
    repeat: usize,
) -> Result<(Dense<T>, Vec<f64>, mm::Schedule)> {
    let schedule = b.plan_for(a.view(), bm.view(), opts)?;
    let mut c = b.matmul(a.view(), bm.view(), opts)?;
    let mut times = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        let t = Instant::now();
        c = b.matmul(a.view(), bm.view(), opts)?;
        times.push(t.elapsed().as_secs_f64());
    }
    Ok((c, times, schedule))
}
