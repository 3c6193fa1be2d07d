//! `trident spmv`: y = A·1 on a chosen backend, checked against the reference and timed.

use std::path::{Path, PathBuf};
use std::time::Instant;

use trident_core::io;
use trident_core::spmv::{self as spmv_ref, RowReference};
use trident_core::{
    Coo, Csr, Dense, EllpackR, Error, Result, ResultExt, Scalar, Spmv, SpmvOptions,
};

use crate::files::Files;
use crate::select::{self, AnyBackend, BackendChoice};
use crate::{median, Precision};

/// y = A x with A read from a file (converted to ELLPACK-R) and x = all ones; checks y
/// against the reference and reports the time per product.
#[derive(clap::Args)]
pub struct Args {
    /// A Matrix Market file (`.mtx`) or an edge list (adjacency matrix of the graph).
    path: PathBuf,
    /// Which backend runs the product.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendChoice,
    /// Element type.
    #[arg(long, value_enum, default_value = "f32")]
    precision: Precision,
    /// How many timed products (the median is reported), 1 to 100000.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    repeat: u32,
    /// Write y as a NumPy `.npy` column vector.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Slot passes (kernel launches per product) on GPU backends, 1 to 4096; default: planned
    /// from the matrix and the device's cache. The CPU ignores it.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    passes: Option<u32>,
}

pub fn run(args: Args) -> Result<()> {
    // Every output is checked before any work; y is written at the end, or not at all.
    let files = Files::declare(&[Some(&args.path)], &[args.output.as_deref()])?;
    match args.precision {
        Precision::F32 => spmv::<f32>(&args, files),
        Precision::F64 => spmv::<f64>(&args, files),
    }
}

/// Reads a matrix, telling the format from the content: Matrix Market as a general sparse
/// matrix, a `.npy` array as a dense one, an edge list as the graph's adjacency matrix.
fn load_matrix<T: Scalar>(path: &Path) -> Result<Csr<T>> {
    let input = io::Input::read_limited(path, &crate::env::read_options())?;
    let name = input.name.clone();
    let csr = match input.detect() {
        io::Detected::MatrixMarket => io::parse_matrix_market::<T>(&input.bytes, &name)?
            .into_coo()
            .to_csr(),
        io::Detected::Npy => Coo::from_dense(&io::parse_npy::<T>(&input.bytes, &name)?).to_csr(),
        _ => {
            let g = io::graph_from_input(&input)?;
            crate::print_notes(g.notes());
            g.to_csr()
        }
    };
    csr.context(|| name)
}

fn spmv<T: BackendScalar>(args: &Args, mut files: Files) -> Result<()> {
    let (path, repeat, output) = (&args.path, args.repeat as usize, args.output.as_deref());
    // The input is read and checked before the backends are probed.
    let csr = load_matrix::<T>(path)?;
    let a = EllpackR::<T>::from_csr(&csr).context(|| path.display())?;
    // The CSR copy is not needed again: its row pointers alone are 8 bytes a row.
    drop(csr);
    let b = &select::open(args.backend)?;
    crate::outln!("backend: {b}")?;
    crate::outln!(
        "matrix: {} x {}, {} non-zeros, ELLPACK-R width {}",
        a.rows(),
        a.cols(),
        a.nnz(),
        a.width()
    )?;
    let x = vec![T::one(); a.cols()];
    let opts = SpmvOptions {
        passes: args.passes.map(|p| p as usize),
        ..SpmvOptions::default()
    };
    let (y, times) = T::timed_spmv(b, &a, &x, &opts, repeat.max(1))?;
    let reference: Vec<RowReference> = spmv_ref::reference_abs(&a, &x)
        .into_iter()
        .zip(a.row_lengths())
        .map(|((value, magnitude), &n)| RowReference {
            value,
            magnitude,
            entries: n as usize,
        })
        .collect();
    // NaN compares as the worst possible error, never as 0.
    let worst = y
        .iter()
        .zip(&reference)
        .map(|(got, r)| {
            let err = (Scalar::to_f64(*got) - r.value).abs() / r.magnitude.max(f64::MIN_POSITIVE);
            if err.is_nan() {
                f64::INFINITY
            } else {
                err
            }
        })
        .fold(0f64, f64::max);
    spmv_ref::check_result(&y, &reference).map_err(|m| {
        Error::backend(
            "check",
            format!("the product is wrong beyond the SpMV tolerance: {m}"),
        )
    })?;
    let median = median(times);
    // Compulsory traffic: values and column indices once, row lengths, y written, x read once.
    let size = std::mem::size_of::<T>();
    let bytes = (a.nnz() * (size + 4) + a.rows() * (4 + size) + a.cols() * size) as f64;
    crate::outln!(
        "y = A·1: sum {:.6e}",
        y.iter().map(|v| Scalar::to_f64(*v)).sum::<f64>()
    )?;
    crate::outln!("max relative error vs reference: {worst:.2e}")?;
    crate::outln!(
        "median time per product: {:.3} ms ({:.1} GB/s effective)",
        median * 1e3,
        bytes / median / 1e9
    )?;
    if let Some(out) = output {
        let col = Dense::from_vec(y.len(), 1, y)?;
        files.write(out, |f| io::npy::write_npy_to(f, &col))?;
        files.commit()?;
        crate::outln!("wrote {}", out.display())?;
    }
    Ok(())
}

/// The element types every compiled-in backend supports, dispatched to the chosen backend.
trait BackendScalar: Scalar {
    /// [`run_spmv`] on whichever backend `b` holds.
    fn timed_spmv(
        b: &AnyBackend,
        a: &EllpackR<Self>,
        x: &[Self],
        opts: &SpmvOptions,
        repeat: usize,
    ) -> Result<(Vec<Self>, Vec<f64>)>;
}

macro_rules! backend_scalar {
    ($($t:ty),*) => {$(
        impl BackendScalar for $t {
            fn timed_spmv(
                b: &AnyBackend,
                a: &EllpackR<$t>,
                x: &[$t],
                opts: &SpmvOptions,
                repeat: usize,
            ) -> Result<(Vec<$t>, Vec<f64>)> {
                crate::with_backend!(b, be => run_spmv(be, a, x, opts, repeat))
            }
        }
    )*};
}
backend_scalar!(f32, f64);

/// Uploads once, runs `repeat` timed products on the device, downloads y.
fn run_spmv<T: Scalar, B: Spmv<T>>(
    b: &B,
    a: &EllpackR<T>,
    x: &[T],
    opts: &SpmvOptions,
    repeat: usize,
) -> Result<(Vec<T>, Vec<f64>)> {
    let da = b.upload_ellpack_with(a, opts)?;
    let dx = b.upload(x)?;
    let mut dy = b.zeros(a.rows())?;
    b.spmv(&da, &dx, &mut dy)?; // warm-up (kernel load, caches)
    b.synchronize()?;
    let mut times = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        let t = Instant::now();
        b.spmv(&da, &dx, &mut dy)?;
        b.synchronize()?;
        times.push(t.elapsed().as_secs_f64());
    }
    Ok((b.download(&dy)?, times))
}
