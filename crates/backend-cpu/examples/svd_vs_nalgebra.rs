//! The CPU backend's SVD (U and Vᵀ) beside nalgebra's on the same random square matrix, one
//! process, medians of `REPEATS` runs (a quick check of issue 7's CPU bar; the criterion
//! benchmark `svd` is the reference):
//!
//! ```text
//! cargo run --release -p trident-cpu --example svd_vs_nalgebra -- N [REPEATS] [f32|f64]
//! ```

use std::time::Instant;

use trident_core::svd::{self, Vectors};
use trident_core::{Dense, Scalar, Svd, SvdOptions};
use trident_cpu::Cpu;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn run<T: Scalar + nalgebra::RealField>(n: usize, repeats: usize) {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let a = Dense::<T>::from_fn(n, n, |_, _| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        <T as Scalar>::from_f64((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
    });
    let cpu = Cpu::new();
    let opts = SvdOptions {
        vectors: Vectors::Thin,
        ..SvdOptions::default()
    };
    let mut ours = Vec::new();
    let mut sweeps = 0;
    for _ in 0..repeats {
        let t = Instant::now();
        let r = cpu.svd(a.view(), &opts).expect("svd");
        ours.push(t.elapsed().as_secs_f64());
        sweeps = r.sweeps;
        svd::validity(a.view(), &r)
            .and_then(|v| v.check())
            .expect("valid");
    }
    let na = a.to_nalgebra();
    let mut theirs = Vec::new();
    for _ in 0..repeats {
        let m = na.clone();
        let t = Instant::now();
        let s = m.svd(true, true);
        theirs.push(t.elapsed().as_secs_f64());
        assert!(s.u.is_some());
    }
    let (o, t) = (median(ours), median(theirs));
    println!(
        "{} {n}x{n}: trident cpu {:.3} s ({sweeps} sweeps, {} threads), nalgebra {:.3} s: {:.2}x",
        T::NAME,
        o,
        rayon::current_num_threads(),
        t,
        t / o
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(512);
    let repeats: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(3);
    match args.next().as_deref() {
        Some("f32") => run::<f32>(n, repeats),
        _ => run::<f64>(n, repeats),
    }
}
