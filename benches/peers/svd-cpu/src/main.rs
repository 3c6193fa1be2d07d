//! Issue 7's CPU SVD bar: trident's CPU backend beside nalgebra's and faer's SVD on the same
//! seeded random matrices, in one process (U and Vᵀ, thin), runs alternating between the
//! libraries, medians of `--runs`. Every library's singular values are checked first against
//! an f64 reference (faer's f64 SVD of the same values, widened) within
//! `trident_core::svd::values_tolerance`, and trident's result also against
//! `trident_core::svd::validity` (residual, orthogonality); any failure exits non-zero.
//!
//! ```text
//! cargo run --release --manifest-path benches/peers/svd-cpu/Cargo.toml -- \
//!     [--shapes 256x256,512x512,1024x1024,4096x256] [--prec f64,f32] [--runs 5] [--npy DIR]
//! ```
//!
//! With `--npy DIR` it writes each matrix (`DIR/<prec>_<m>x<n>.npy`), the reference values
//! (`..._ref.npy`, f64) and its medians (`DIR/rust.tsv`) for `svd_numpy.py`, which times
//! numpy/LAPACK `gesdd` on the same data and prints the four-way table (see `run.sh`).
//! Threads: rayon's default (all cores) for trident and faer; nalgebra is sequential.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use faer::Mat;
use trident_core::svd::{self, Vectors};
use trident_core::{Dense, Scalar, Svd, SvdOptions};
use trident_cpu::Cpu;

/// The libraries timed, in the order of the table.
const LIBS: [&str; 3] = ["trident", "nalgebra", "faer"];

struct Args {
    shapes: Vec<(usize, usize)>,
    precs: Vec<String>,
    runs: usize,
    npy: Option<PathBuf>,
    /// Libraries timed (all of [`LIBS`] by default; the others print as `-`).
    libs: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        shapes: vec![(256, 256), (512, 512), (1024, 1024), (4096, 256)],
        precs: vec!["f64".into(), "f32".into()],
        runs: 5,
        npy: None,
        libs: LIBS.iter().map(|s| s.to_string()).collect(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v = it.next().ok_or_else(|| format!("{k} needs a value"))?;
        match k.as_str() {
            "--shapes" => {
                a.shapes = v
                    .split(',')
                    .map(|s| {
                        let (m, n) = s.split_once('x').ok_or(format!("shape {s}: MxN"))?;
                        Ok((
                            m.parse().map_err(|e| format!("{s}: {e}"))?,
                            n.parse().map_err(|e| format!("{s}: {e}"))?,
                        ))
                    })
                    .collect::<Result<_, String>>()?
            }
            "--prec" => a.precs = v.split(',').map(str::to_owned).collect(),
            "--runs" => a.runs = v.parse().map_err(|e| format!("--runs {v}: {e}"))?,
            "--npy" => a.npy = Some(v.into()),
            "--libs" => a.libs = v.split(',').map(str::to_owned).collect(),
            _ => return Err(format!("unknown option {k}")),
        }
    }
    if a.runs == 0 {
        return Err("--runs 0".into());
    }
    Ok(a)
}

/// The benchmark matrix: xorshift64 values in `[−0.5, 0.5)`, row-major (the same generator
/// and seed as `crates/backend-cpu/examples/svd_vs_nalgebra.rs`), seeded by the shape.
fn matrix<T: Scalar>(m: usize, n: usize) -> Dense<T> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ ((m as u64) << 32 | n as u64);
    Dense::from_fn(m, n, |_, _| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        T::from_f64((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
    })
}

/// User + system CPU seconds of this process (all threads), from `/proc/self/stat` (clock
/// ticks of 1/100 s); 0 where unavailable.
fn cpu_seconds() -> f64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // fields after the command's closing parenthesis: state is field 3, utime 14, stime 15
    let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

/// `v` in f64 (exact).
fn f64_of<T: Scalar>(v: T) -> f64 {
    Scalar::to_f64(v)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Checks `got` against the f64 reference within the SVD's value tolerance.
fn check_values<T: Scalar>(
    lib: &str,
    (m, n): (usize, usize),
    got: &[f64],
    reference: &[f64],
) -> Result<(), String> {
    if got.len() != reference.len() {
        return Err(format!(
            "{lib} {m}x{n}: {} values, expected {}",
            got.len(),
            reference.len()
        ));
    }
    let tol = svd::values_tolerance::<T>(m, n);
    let scale = reference.first().copied().unwrap_or(0.0);
    for (i, (g, r)) in got.iter().zip(reference).enumerate() {
        tol.check(*g, *r, scale)
            .map_err(|e| format!("{lib} {} {m}x{n}: s[{i}]: {e}", T::NAME))?;
    }
    Ok(())
}

/// The scalar types every library here takes.
trait Peer: Scalar + nalgebra::RealField + faer::traits::RealField {}
impl Peer for f32 {}
impl Peer for f64 {}

struct Inputs<T: Peer> {
    a: Dense<T>,
    na: nalgebra::DMatrix<T>,
    fa: Mat<T>,
}

/// One timed call of library `lib`: (wall seconds, CPU seconds, singular values).
fn time_one<T: Peer>(cpu: &Cpu, lib: &str, x: &Inputs<T>) -> Result<(f64, f64, Vec<f64>), String>
where
    Cpu: Svd<T>,
{
    let opts = SvdOptions {
        vectors: Vectors::Thin,
        ..SvdOptions::default()
    };
    let (c0, t0) = (cpu_seconds(), Instant::now());
    let s: Vec<f64> = match lib {
        "trident" => {
            let r = cpu.svd(x.a.view(), &opts).map_err(|e| e.to_string())?;
            let (wall, cpu_s) = (t0.elapsed().as_secs_f64(), cpu_seconds() - c0);
            svd::validity(x.a.view(), &r)
                .and_then(|v| v.check())
                .map_err(|e| format!("trident {}: {e}", T::NAME))?;
            return Ok((wall, cpu_s, r.s.iter().map(|v| f64_of(*v)).collect()));
        }
        "nalgebra" => {
            let m = x.na.clone();
            let (c0, t0) = (cpu_seconds(), Instant::now());
            let r = m.svd(true, true);
            let out = (t0.elapsed().as_secs_f64(), cpu_seconds() - c0);
            if r.u.is_none() || r.v_t.is_none() {
                return Err("nalgebra: no vectors".into());
            }
            let mut s: Vec<f64> = r.singular_values.iter().map(|v| f64_of(*v)).collect();
            s.sort_by(|a, b| b.total_cmp(a));
            return Ok((out.0, out.1, s));
        }
        "faer" => {
            let r = x.fa.thin_svd().map_err(|e| format!("faer: {e:?}"))?;
            let s = r.S().column_vector();
            s.iter().map(|v| f64_of(*v)).collect()
        }
        _ => return Err(format!("unknown library {lib}")),
    };
    Ok((t0.elapsed().as_secs_f64(), cpu_seconds() - c0, s))
}

/// Writes a row-major `rows × cols` `.npy` file (format 1.0) of f32 or f64 values.
fn write_npy<T: Scalar>(path: &Path, shape: &[usize], data: &[T]) -> Result<(), String> {
    let descr = if T::NAME == "f32" { "<f4" } else { "<f8" };
    let shape_s = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_s}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for v in data {
        if T::NAME == "f32" {
            out.extend_from_slice(&(f64_of(*v) as f32).to_le_bytes());
        } else {
            out.extend_from_slice(&f64_of(*v).to_le_bytes());
        }
    }
    std::fs::write(path, out).map_err(|e| format!("{}: {e}", path.display()))
}

/// Benchmarks one precision and shape; returns the table row's medians `(wall, cpu)` per
/// library.
fn bench<T: Peer>(cpu: &Cpu, (m, n): (usize, usize), args: &Args) -> Result<Vec<(f64, f64)>, String>
where
    Cpu: Svd<T>,
{
    let a = matrix::<T>(m, n);
    let na = a.to_nalgebra();
    let fa = Mat::<T>::from_fn(m, n, |i, j| a.view().get(i, j));
    // the f64 reference from the same (widened) values
    let fa64 = Mat::<f64>::from_fn(m, n, |i, j| f64_of(a.view().get(i, j)));
    let reference: Vec<f64> = fa64
        .singular_values()
        .map_err(|e| format!("reference svd: {e:?}"))?;
    if let Some(dir) = &args.npy {
        let stem = format!("{}_{m}x{n}", T::NAME);
        write_npy::<T>(&dir.join(format!("{stem}.npy")), &[m, n], a.as_slice())?;
        write_npy::<f64>(
            &dir.join(format!("{stem}_ref.npy")),
            &[reference.len()],
            &reference,
        )?;
    }
    let x = Inputs { a, na, fa };
    let mut wall = vec![Vec::new(); LIBS.len()];
    let mut cpus = vec![Vec::new(); LIBS.len()];
    // one untimed, checked call each, then the runs, rotating the order every run
    let on: Vec<usize> = (0..LIBS.len())
        .filter(|&l| args.libs.iter().any(|s| s == LIBS[l]))
        .collect();
    for &l in &on {
        let (_, _, s) = time_one(cpu, LIBS[l], &x)?;
        check_values::<T>(LIBS[l], (m, n), &s, &reference)?;
    }
    for r in 0..args.runs {
        for k in 0..on.len() {
            let l = on[(r + k) % on.len()];
            let (w, c, _) = time_one(cpu, LIBS[l], &x)?;
            wall[l].push(w);
            cpus[l].push(c);
        }
    }
    Ok(wall
        .into_iter()
        .zip(cpus)
        .map(|(w, c)| {
            if w.is_empty() {
                (f64::NAN, f64::NAN)
            } else {
                (median(w), median(c))
            }
        })
        .collect())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("svd-cpu-peers: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(dir) = &args.npy {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("svd-cpu-peers: {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    }
    let cpu = Cpu::new();
    println!(
        "SVD (thin U, V), {} rayon threads, medians of {} alternating runs; ms wall (ms CPU)\n",
        rayon::current_num_threads(),
        args.runs
    );
    println!("| shape | prec | trident | nalgebra | faer | nalgebra / trident | faer / trident |");
    println!("|---|---|---|---|---|---|---|");
    let mut tsv = String::new();
    for prec in &args.precs {
        for &(m, n) in &args.shapes {
            let row = match prec.as_str() {
                "f32" => bench::<f32>(&cpu, (m, n), &args),
                "f64" => bench::<f64>(&cpu, (m, n), &args),
                p => Err(format!("unknown precision {p}")),
            };
            let row = match row {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("svd-cpu-peers: FAILED: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let cell = |(w, c): (f64, f64)| format!("{:.1} ({:.0})", w * 1e3, c * 1e3);
            println!(
                "| {m}x{n} | {prec} | {} | {} | {} | {:.2} | {:.2} |",
                cell(row[0]),
                cell(row[1]),
                cell(row[2]),
                row[1].0 / row[0].0,
                row[2].0 / row[0].0
            );
            for (lib, (w, c)) in LIBS.iter().zip(&row) {
                if w.is_nan() {
                    continue;
                }
                let _ = writeln!(tsv, "{prec}\t{m}x{n}\t{lib}\t{:.6}\t{:.6}", w, c);
            }
        }
    }
    if let Some(dir) = &args.npy {
        if let Err(e) = std::fs::write(dir.join("rust.tsv"), tsv) {
            eprintln!("svd-cpu-peers: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
