//! `trident svd`: singular values (and vectors) of a dense matrix from `.npy` or Matrix Market,
//! on a chosen backend, checked with `trident_core::svd::validity` and timed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use trident_core::svd::{self, QrOrder, SvdPrecondition, Vectors};
use trident_core::{io, Dense, Error, Result, Scalar, Svd, SvdOptions};

use crate::files::Files;
use crate::select::{self, AnyBackend, BackendChoice};
use crate::Precision;

/// Singular value decomposition by one-sided block Jacobi.
#[derive(clap::Args)]
pub struct Args {
    /// A 2-D NumPy `.npy` file (`<f4` or `<f8`) or a Matrix Market file (`.mtx`).
    path: PathBuf,
    /// Write U as `.npy`.
    #[arg(long)]
    u: Option<PathBuf>,
    /// Write Vᵀ as `.npy`.
    #[arg(long)]
    vt: Option<PathBuf>,
    /// Write the singular values, one per line.
    #[arg(short = 's', long = "values")]
    values: Option<PathBuf>,
    /// Full U (m × m) and Vᵀ (n × n) instead of thin.
    #[arg(long)]
    full: bool,
    /// Preconditioning: `auto` (from the shape), `none` (plain Jacobi), `qr` (QR1), `qrlq`
    /// (QR2).
    #[arg(long, default_value = "auto")]
    method: String,
    /// Rotation order of the preconditioning QRs: `auto`, `flat` (Sameh–Kuck on GPUs), `tree`
    /// or `tree:ROWS` (TSQR-style panels of ROWS rows).
    #[arg(long, default_value = "auto")]
    qr_order: String,
    /// Jacobi block size (columns per block; GPUs: 1 ..= 16; default: the backend's).
    #[arg(long)]
    block: Option<usize>,
    /// GPUs: work-groups per block pair, each over a chunk of the rows (default: from the
    /// shape).
    #[arg(long)]
    chunks: Option<usize>,
    /// Decompose this many more times after the first (warm: the kernels are loaded) and
    /// print the median, lowest and highest time; 0 to 100000.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=100_000))]
    repeat: u64,
    /// Time every phase of each decomposition (upload, QR, Jacobi, U and V; each waits for
    /// the device) and print them on stderr (also TRIDENT_SVD_TRACE=1).
    #[arg(long)]
    trace: bool,
    /// Which backend runs it.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendChoice,
    /// Element type.
    #[arg(long, value_enum, default_value = "f64")]
    precision: Precision,
}

pub fn run(args: Args) -> Result<()> {
    let precondition = match args.method.as_str() {
        "auto" => None,
        m => Some(SvdPrecondition::parse(m).ok_or_else(|| {
            Error::invalid(
                "option",
                format!("--method {m}: expected auto, none, qr or qrlq"),
            )
        })?),
    };
    // Every output is checked before any work; all are written at the end, or none.
    let files = Files::declare(
        &[Some(&args.path)],
        &[
            args.values.as_deref(),
            args.u.as_deref(),
            args.vt.as_deref(),
        ],
    )?;
    match args.precision {
        Precision::F32 => run_t::<f32>(&args, precondition, files),
        Precision::F64 => run_t::<f64>(&args, precondition, files),
    }
}

/// Reads a dense matrix, the format told from the content (`.npy` or Matrix Market, never
/// from the name), refusing 1-D arrays, empty matrices (and, through the readers, integer
/// dtypes).
fn load<T: Scalar>(path: &Path) -> Result<Dense<T>> {
    let a = io::read_dense_limited::<T>(path, &crate::env::read_options())?;
    if a.rows() == 0 || a.cols() == 0 {
        return Err(Error::invalid(
            "input",
            format!(
                "{}: empty {} x {} matrix",
                path.display(),
                a.rows(),
                a.cols()
            ),
        ));
    }
    Ok(a)
}

/// The phase times of a traced SVD ([`SvdOptions::trace`]), one line each on stderr.
fn print_phases(phases: &[svd::SvdPhase]) {
    for p in phases {
        crate::errln!("svd trace: {}: {:.3} ms", p.name, p.seconds * 1e3);
    }
}

fn run_t<T: Scalar + std::fmt::LowerExp>(
    args: &Args,
    pre: Option<SvdPrecondition>,
    mut files: Files,
) -> Result<()>
where
    AnyBackend: SvdOn<T>,
{
    // The input is read and checked before the backends are probed.
    let a = load::<T>(&args.path)?;
    let (m, n) = a.shape();
    let want_vectors = args.u.is_some() || args.vt.is_some() || args.full;
    let qr_order = QrOrder::parse(&args.qr_order).ok_or_else(|| {
        Error::invalid(
            "option",
            format!(
                "--qr-order {}: expected auto, flat, tree or tree:ROWS",
                args.qr_order
            ),
        )
    })?;
    let opts = SvdOptions {
        precondition: pre,
        qr_order,
        block_size: args.block,
        row_chunks: args.chunks,
        vectors: match (want_vectors, args.full) {
            (false, _) => Vectors::Thin, // formed anyway: validity is checked on them
            (true, false) => Vectors::Thin,
            (true, true) => Vectors::Full,
        },
        trace: args.trace || crate::env::svd_trace(),
        ..SvdOptions::default()
    };
    let b = &select::open(args.backend)?;
    crate::outln!("backend: {b}")?;
    crate::outln!("matrix: {m} x {n} ({})", T::NAME)?;
    let t = Instant::now();
    let r = b.svd_on(&a, &opts)?;
    let secs = t.elapsed().as_secs_f64();
    print_phases(&r.phases);
    crate::outln!(
        "method {}{}: {} sweeps ({:.3} ms per sweep), {:.3} ms in all",
        match r.precondition {
            SvdPrecondition::None => "none (Jacobi on A)",
            SvdPrecondition::Qr => "qr (Jacobi on R)",
            SvdPrecondition::QrLq => "qrlq (Jacobi on L)",
        },
        if pre.is_none() {
            ", chosen by auto"
        } else {
            ""
        },
        r.sweeps,
        secs * 1e3 / r.sweeps.max(1) as f64,
        secs * 1e3
    )?;
    if args.repeat > 0 {
        let mut times = Vec::with_capacity(args.repeat as usize);
        for _ in 0..args.repeat {
            let t = Instant::now();
            let r = b.svd_on(&a, &opts)?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            print_phases(&r.phases);
        }
        times.sort_by(f64::total_cmp);
        crate::outln!(
            "repeated {} times: median {:.3} ms (lowest {:.3}, highest {:.3})",
            times.len(),
            times[times.len() / 2],
            times[0],
            times[times.len() - 1]
        )?;
    }
    if !r.converged {
        crate::errln!(
            "warning: not converged after {} sweeps: largest cosine {:.3e} > tol {:.3e}",
            r.sweeps,
            r.off,
            r.tol
        );
    }
    let v = svd::validity(a.view(), &r).map_err(|m| Error::backend("check", m))?;
    crate::outln!("{v}")?;
    v.check().map_err(|m| Error::backend("check", m))?;
    let k = r.s.len();
    let show: Vec<String> = r.s.iter().take(5).map(|s| format!("{s:.6e}")).collect();
    crate::outln!(
        "s: {}{} (σ_min {:.6e})",
        show.join(", "),
        if k > 5 { ", …" } else { "" },
        r.s.last().copied().unwrap_or_else(T::zero)
    )?;
    let mut wrote = Vec::new();
    if let Some(p) = &args.values {
        files.write(p, |f| {
            for s in &r.s {
                writeln!(f, "{s:e}")?;
            }
            Ok(())
        })?;
        wrote.push(p);
    }
    if let (Some(p), Some(u)) = (&args.u, &r.u) {
        files.write(p, |f| io::npy::write_npy_to(f, u))?;
        wrote.push(p);
    }
    if let (Some(p), Some(vt)) = (&args.vt, &r.vt) {
        files.write(p, |f| io::npy::write_npy_to(f, vt))?;
        wrote.push(p);
    }
    files.commit()?;
    for p in wrote {
        crate::outln!("wrote {}", p.display())?;
    }
    Ok(())
}

/// The SVD on whichever backend an [`AnyBackend`] holds.
pub(crate) trait SvdOn<T: Scalar> {
    fn svd_on(&self, a: &Dense<T>, opts: &SvdOptions) -> Result<svd::SvdResult<T>>;
}

macro_rules! svd_on {
    ($($t:ty),*) => {$(
        impl SvdOn<$t> for AnyBackend {
            fn svd_on(&self, a: &Dense<$t>, opts: &SvdOptions) -> Result<svd::SvdResult<$t>> {
                crate::with_backend!(self, be => Svd::<$t>::svd(be, a.view(), opts))
            }
        }
    )*};
}
svd_on!(f32, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_inputs_are_clear_errors() {
        let dir = std::env::temp_dir().join(format!("trident-svd-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let one_d = dir.join("v.npy");
        let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        let pad = (64 - (10 + header.len() + 1) % 64) % 64;
        let h = format!("{header}{}\n", " ".repeat(pad));
        bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
        bytes.extend_from_slice(h.as_bytes());
        for x in [1.0f64, 2.0, 3.0] {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        std::fs::write(&one_d, &bytes).unwrap();
        let e = load::<f64>(&one_d).unwrap_err().to_string();
        assert!(e.contains("1-D"), "{e}");
        let ints = dir.join("i.npy");
        std::fs::write(
            &ints,
            String::from_utf8_lossy(&bytes)
                .replace("<f8", "<i8")
                .as_bytes(),
        )
        .unwrap();
        assert!(load::<f64>(&ints).is_err());
        let empty = dir.join("e.npy");
        io::npy::write_npy(&empty, &Dense::<f64>::zeros(0, 3)).unwrap();
        assert!(load::<f64>(&empty)
            .unwrap_err()
            .to_string()
            .contains("empty"));
        let nan = dir.join("n.npy");
        let mut a = Dense::<f64>::identity(3);
        a.set(1, 1, f64::NAN);
        io::npy::write_npy(&nan, &a).unwrap();
        assert!(load::<f64>(&nan)
            .unwrap_err()
            .to_string()
            .contains("finite"));
        let cpu = AnyBackend::Cpu(trident_cpu::Cpu::new());
        assert!(matches!(
            cpu.svd_on(&a, &SvdOptions::default()),
            Err(Error::Invalid { .. })
        ));
        std::fs::remove_dir_all(&dir).ok();
    }
}
