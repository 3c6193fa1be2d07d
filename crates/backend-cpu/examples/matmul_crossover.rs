//! The CPU backend's Strassen crossover, quickly: host-to-host `matmul` of tiled, Strassen,
//! Winograd and fused at the given sizes and Strassen levels, medians (and spread) of several
//! runs, every product checked on sampled rows first. Lighter than the criterion benchmark
//! (`benches/benches/matmul.rs`), which builds every backend; run it beside
//! `benches/numpy_matmul.py` for the OpenBLAS baseline:
//!
//! ```text
//! RAYON_NUM_THREADS=2 taskset -c 0,1 cargo run --release -p trident-cpu \
//!     --example matmul_crossover -- 1024,2048,4096 5 1,2
//! ```
//!
//! Arguments: sizes (default 1024,2048), runs per product (default 5), Strassen levels
//! (default 1). Environment: `PRECISION=f64|f32` (default both), `ALGS=strassen,winograd,fused`
//! (the recursive algorithms timed beside tiled; default all). Prints `f64 n=2048 winograd L=1 median_ms=... gflops=... min_ms=... max_ms=...`, and for
//! each recursive case the paired speedup over tiled (each round's tiled time over the case's
//! time in the same round, so drift in the machine's speed cancels): its median and range, the
//! rounds won, and a one-sided sign test's p-value (the chance of as many wins if neither
//! were faster).

use std::time::Instant;

use trident_core::matmul::{check_sampled, execute_host, Algorithm};
use trident_core::{Dense, MatMul, MatMulOptions, Scalar};
use trident_cpu::Cpu;

fn arg_list(i: usize, default: &str) -> Vec<usize> {
    std::env::args()
        .nth(i)
        .unwrap_or_else(|| default.to_string())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

/// A deterministic `n x n` matrix with entries in [-1, 1).
fn random<T: Scalar>(n: usize, seed: u64) -> Dense<T> {
    let mut x = seed;
    let v = (0..n * n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            T::from_f64((x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0)
        })
        .collect();
    Dense::from_vec(n, n, v).expect("n x n values")
}

/// Whether `ALGS` (comma-separated algorithm names; default all) names `name`.
fn wanted(name: &str) -> bool {
    std::env::var("ALGS").map_or(true, |v| v.split(',').any(|a| a.trim() == name))
}

/// Times every case at every size in interleaved rounds (each round runs each case once),
/// so that load from other processes hits all cases alike.
fn study<T: Scalar>(cpu: &Cpu, sizes: &[usize], runs: usize, levels: &[usize])
where
    Cpu: MatMul<T>,
{
    for &n in sizes {
        let a = random::<T>(n, 1);
        let b = random::<T>(n, 2);
        let mut cases = vec![(Algorithm::Tiled, 0)];
        for &l in levels {
            for alg in [Algorithm::Strassen, Algorithm::Winograd, Algorithm::Fused] {
                if wanted(alg.name()) {
                    cases.push((alg, l));
                }
            }
        }
        let opts = |alg: Algorithm, l: usize| MatMulOptions::with(alg, (l > 0).then_some(l));
        for &(alg, l) in &cases {
            let o = opts(alg, l);
            let c = cpu.matmul(a.view(), b.view(), &o).expect("matmul");
            let s = cpu.plan(n, n, n, &o);
            if let Err(e) = check_sampled(a.view(), b.view(), c.as_slice(), &s, 16) {
                eprintln!("{} n={n} {} L={l}: wrong result: {e}", T::NAME, alg.name());
                std::process::exit(1);
            }
        }
        let mut ms = vec![Vec::new(); cases.len()];
        for r in 0..runs {
            // Alternate the order every round, so no case always runs first.
            let mut order: Vec<usize> = (0..cases.len()).collect();
            if r % 2 == 1 {
                order.reverse();
            }
            for i in order {
                let (alg, l) = cases[i];
                let o = opts(alg, l);
                let t = Instant::now();
                std::hint::black_box(cpu.matmul(a.view(), b.view(), &o).expect("matmul"));
                ms[i].push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        // Paired: each round's tiled time over the case's time in the same round.
        for (&(alg, l), t) in cases.iter().zip(&ms).skip(1) {
            let mut ratio: Vec<f64> = ms[0].iter().zip(t).map(|(x, y)| x / y).collect();
            let wins = ratio.iter().filter(|&&x| x > 1.0).count();
            ratio.sort_by(f64::total_cmp);
            println!(
                "{} n={n} {} L={l} paired speedup over tiled: median={:.3} min={:.3} max={:.3} \
                 wins={wins}/{runs} sign_test_p={:.4}",
                T::NAME,
                alg.name(),
                ratio[runs / 2],
                ratio[0],
                ratio[runs - 1],
                sign_test(wins, runs)
            );
        }
        for (&(alg, l), ms) in cases.iter().zip(&mut ms) {
            ms.sort_by(f64::total_cmp);
            let med = ms[ms.len() / 2];
            let gflops = 2.0 * (n as f64).powi(3) / med / 1e6;
            println!(
                "{} n={n} {} L={l} median_ms={med:.1} gflops={gflops:.1} min_ms={:.1} max_ms={:.1}",
                T::NAME,
                alg.name(),
                ms[0],
                ms[ms.len() - 1]
            );
        }
    }
}

/// The base kernel on an `n x n` block of a `2n x 2n` matrix (a Strassen leaf's strides)
/// against the same product on contiguous `n x n` matrices.
fn leaf<T: Scalar>(cpu: &Cpu, sizes: &[usize], runs: usize)
where
    Cpu: MatMul<T>,
{
    for &n in sizes {
        let a = random::<T>(2 * n, 1);
        let b = random::<T>(2 * n, 2);
        let (ac, bc) = (random::<T>(n, 1), random::<T>(n, 2));
        let av = trident_core::DenseView::new(n, n, 2 * n, a.as_slice()).expect("view");
        let bv = trident_core::DenseView::new(n, n, 2 * n, b.as_slice()).expect("view");
        let opts = MatMulOptions::with(Algorithm::Tiled, None);
        let mut t = [Vec::new(), Vec::new()];
        for _ in 0..runs {
            for (i, (x, y)) in [(ac.view(), bc.view()), (av, bv)].into_iter().enumerate() {
                let s = Instant::now();
                std::hint::black_box(cpu.matmul(x, y, &opts).expect("matmul"));
                t[i].push(s.elapsed().as_secs_f64() * 1e3);
            }
        }
        // The schedule's additions alone (base products skipped), as execute_host
        // runs them, for one and two levels of the 2n product.
        for levels in [1, 2] {
            let o = MatMulOptions::with(Algorithm::Winograd, Some(levels));
            let s = MatMul::<T>::plan(cpu, 2 * n, 2 * n, 2 * n, &o);
            let mut c = vec![T::zero(); 4 * n * n];
            let mut w = vec![T::zero(); s.workspace];
            let mut t: Vec<f64> = (0..runs)
                .map(|_| {
                    let st = Instant::now();
                    execute_host(&s, a.as_slice(), b.as_slice(), &mut c, &mut w, |_| {})
                        .expect("schedule");
                    st.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            t.sort_by(f64::total_cmp);
            println!(
                "{} n={} winograd L={levels} additions only: median_ms={:.1} min_ms={:.1}",
                T::NAME,
                2 * n,
                t[runs / 2],
                t[0]
            );
        }
        for (i, name) in ["contiguous", "stride 2n"].into_iter().enumerate() {
            t[i].sort_by(f64::total_cmp);
            println!(
                "{} n={n} tiled {name}: median_ms={:.1} min_ms={:.1} max_ms={:.1}",
                T::NAME,
                t[i][runs / 2],
                t[i][0],
                t[i][runs - 1]
            );
        }
    }
}

/// One-sided sign test: the chance of at least `wins` wins in `runs` fair coin flips.
fn sign_test(wins: usize, runs: usize) -> f64 {
    let mut c = 1.0f64; // C(runs, k), from k = 0
    let mut tail = 0.0;
    for k in 0..=runs {
        if k >= wins {
            tail += c;
        }
        c = c * (runs - k) as f64 / (k + 1) as f64;
    }
    tail / 2f64.powi(runs as i32)
}

fn main() {
    let sizes = arg_list(1, "1024,2048");
    let runs = arg_list(2, "5").first().copied().unwrap_or(5).max(1);
    let levels = arg_list(3, "1");
    let cpu = Cpu::new();
    println!("threads={}", rayon::current_num_threads());
    if std::env::var_os("LEAF").is_some() {
        leaf::<f64>(&cpu, &sizes, runs);
        return;
    }
    let precision = std::env::var("PRECISION").unwrap_or_default();
    if precision != "f32" {
        study::<f64>(&cpu, &sizes, runs, &levels);
    }
    if precision != "f64" {
        study::<f32>(&cpu, &sizes, runs, &levels);
    }
}
