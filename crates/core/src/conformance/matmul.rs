//! Dense matmul conformance: `C = A B` on host views (contiguous and strided, with the padding
//! between rows poisoned with NaN) and on device vectors (the output starting as NaN), for
//! every algorithm (tiled, Strassen, Winograd, fused ABC Strassen) with 0, 1 and 2 Strassen
//! levels forced on small odd shapes (a tiny cutoff,
//! so that the recursion and the peeling run in CI), against the f64 [`reference`](crate::matmul::reference()) within
//! [`tolerance`](crate::matmul::tolerance()); small-integer products compared exactly at 1 to 3 levels (so that a
//! dropped or sign-flipped product term fails at every level, which a tolerance at 3 levels
//! can let through); the additions' row loop (forced through
//! [`MatMulOptions::add_max_groups`], and reached by a tall product); NaN/Inf propagation
//! with every output entry checked against the classical product's, on every algorithm;
//! shape errors and a product too big for the device.

mod nonfinite;

use proptest::prelude::*;

use super::{run_proptest, Check};
use crate::backend::DeviceVectors;
use crate::dense::{Dense, DenseView};
use crate::error::Error;
use crate::matmul::{
    self, check_result, max_abs, reference, relative_error, Algorithm, BaseKernel, HostMemory,
    MatMul, MatMulOptions, ADD_MAX_GROUPS,
};
use crate::scalar::Scalar;
use nonfinite::{all_finite_scan, nan_inf};

/// The matmul checks, in table order.
pub fn checks<B: MatMul<f32> + MatMul<f64>>() -> Vec<Check<B>> {
    vec![
        Check {
            name: "matmul_random_f32",
            run: random::<f32, B>,
        },
        Check {
            name: "matmul_random_f64",
            run: random::<f64, B>,
        },
        Check {
            name: "matmul_shapes_f32",
            run: shapes::<f32, B>,
        },
        Check {
            name: "matmul_shapes_f64",
            run: shapes::<f64, B>,
        },
        Check {
            name: "matmul_device_garbage_output_f32",
            run: device_garbage_output::<f32, B>,
        },
        Check {
            name: "matmul_device_garbage_output_f64",
            run: device_garbage_output::<f64, B>,
        },
        Check {
            name: "matmul_base_kernels_f32",
            run: base_kernels::<f32, B>,
        },
        Check {
            name: "matmul_base_kernels_f64",
            run: base_kernels::<f64, B>,
        },
        Check {
            name: "matmul_error_per_level_f32",
            run: error_per_level::<f32, B>,
        },
        Check {
            name: "matmul_error_per_level_f64",
            run: error_per_level::<f64, B>,
        },
        Check {
            name: "matmul_exact_small_integers_f32",
            run: exact_small_integers::<f32, B>,
        },
        Check {
            name: "matmul_exact_small_integers_f64",
            run: exact_small_integers::<f64, B>,
        },
        Check {
            name: "matmul_additions_row_loop",
            run: additions_row_loop::<B>,
        },
        Check {
            name: "matmul_host_memory_modes",
            run: host_memory_modes::<B>,
        },
        Check {
            name: "matmul_nan_inf_propagate",
            run: nan_inf::<B>,
        },
        Check {
            name: "matmul_all_finite_scan",
            run: all_finite_scan::<B>,
        },
        Check {
            name: "matmul_shape_mismatch_is_error",
            run: shape_mismatch::<B>,
        },
        Check {
            name: "matmul_huge_is_out_of_memory",
            run: huge::<B>,
        },
    ]
}

/// Instantiates the matmul conformance suite as `#[test]`s for backend type `$ty`, built by
/// the expression `$make` (of type `trident_core::Result<$ty>`), once per test binary.
#[macro_export]
macro_rules! matmul_conformance_tests {
    ($ty:ty, $make:expr) => {
        $crate::conformance_tests!(
            $ty,
            $make,
            matmul::checks;
            matmul_random_f32,
            matmul_random_f64,
            matmul_shapes_f32,
            matmul_shapes_f64,
            matmul_device_garbage_output_f32,
            matmul_device_garbage_output_f64,
            matmul_base_kernels_f32,
            matmul_base_kernels_f64,
            matmul_error_per_level_f32,
            matmul_error_per_level_f64,
            matmul_exact_small_integers_f32,
            matmul_exact_small_integers_f64,
            matmul_additions_row_loop,
            matmul_host_memory_modes,
            matmul_nan_inf_propagate,
            matmul_all_finite_scan,
            matmul_shape_mismatch_is_error,
            matmul_huge_is_out_of_memory
        );
    };
}

/// Leaf order forced in the checks, so that small shapes recurse.
const TINY_CUTOFF: usize = 4;

const ALGORITHMS: [Algorithm; 4] = [
    Algorithm::Tiled,
    Algorithm::Strassen,
    Algorithm::Winograd,
    Algorithm::Fused,
];

/// One product to check: shape, padding of each input's rows, data seed, algorithm, levels.
#[derive(Debug, Clone)]
struct Case {
    m: usize,
    n: usize,
    k: usize,
    pad_a: usize,
    pad_b: usize,
    seed: u64,
    algorithm: Algorithm,
    levels: Option<usize>,
    kernel: BaseKernel,
    /// [`MatMulOptions::add_max_groups`].
    add_max_groups: Option<usize>,
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A value in [-1, 1) from `(seed, i)`.
fn unit(seed: u64, i: usize) -> f64 {
    (splitmix(seed ^ (i as u64).wrapping_mul(0x2545_F491_4F6C_DD1D)) >> 11) as f64
        / (1u64 << 53) as f64
        * 2.0
        - 1.0
}

/// A `rows x cols` row-major buffer with `pad` NaNs after each row (stride `cols + pad`).
fn padded<T: Scalar>(rows: usize, cols: usize, pad: usize, seed: u64) -> (Vec<T>, usize) {
    let stride = cols + pad;
    let mut v = vec![T::nan(); rows * stride];
    for i in 0..rows {
        for j in 0..cols {
            v[i * stride + j] = T::from_f64(unit(seed, i * cols + j));
        }
    }
    (v, stride)
}

fn err(e: Error) -> String {
    e.to_string()
}

/// Runs `case` through [`MatMul::matmul`] on strided views and checks it.
fn run_case<T: Scalar, B: MatMul<T>>(b: &B, c: &Case) -> Result<(), String> {
    run_case_with::<T, B>(b, c, HostMemory::Pageable)
}

/// [`run_case`] with host transfers through `host_memory`.
fn run_case_with<T: Scalar, B: MatMul<T>>(
    b: &B,
    c: &Case,
    host_memory: HostMemory,
) -> Result<(), String> {
    let (av, lda) = padded::<T>(c.m, c.k, c.pad_a, c.seed);
    let (bv, ldb) = padded::<T>(c.k, c.n, c.pad_b, c.seed ^ 0xB);
    let a = DenseView::new(c.m, c.k, lda, &av).map_err(err)?;
    let bm = DenseView::new(c.k, c.n, ldb, &bv).map_err(err)?;
    let opts = MatMulOptions {
        strassen_cutoff: Some(TINY_CUTOFF),
        base_kernel: c.kernel,
        host_memory,
        add_max_groups: c.add_max_groups,
        ..MatMulOptions::with(c.algorithm, c.levels)
    };
    let got = b
        .matmul(a, bm, &opts)
        .map_err(|e| format!("{} transfers: {}", host_memory.name(), err(e)))?;
    if got.shape() != (c.m, c.n) {
        return Err(format!(
            "C is {:?}, expected {} x {}",
            got.shape(),
            c.m,
            c.n
        ));
    }
    let schedule = b.plan(c.m, c.n, c.k, &opts);
    let r = reference(a, bm).map_err(err)?;
    check_result(
        got.as_slice(),
        &r,
        c.n,
        c.k,
        max_abs(a) * max_abs(bm),
        &schedule,
    )
}

fn case() -> impl Strategy<Value = Case> {
    let dim = prop_oneof![1 => Just(1usize), 1 => 0usize..3, 6 => 1usize..90];
    (
        dim.clone(),
        dim.clone(),
        dim,
        0usize..4,
        0usize..4,
        any::<u64>(),
        0usize..ALGORITHMS.len(),
        prop_oneof![Just(None), Just(Some(1)), Just(Some(2))],
    )
        .prop_map(|(m, n, k, pad_a, pad_b, seed, alg, levels)| Case {
            m,
            n,
            k,
            pad_a,
            pad_b,
            seed,
            algorithm: ALGORITHMS[alg],
            levels,
            kernel: BaseKernel::Auto,
            add_max_groups: None,
        })
}

fn random<T: Scalar, B: MatMul<T>>(b: &B) -> Result<(), String> {
    run_proptest(32, &case(), |c| run_case::<T, B>(b, &c))
}

/// Fixed edge shapes, each with every algorithm and 1 and 2 levels forced.
fn shapes<T: Scalar, B: MatMul<T>>(b: &B) -> Result<(), String> {
    let shapes: &[(usize, usize, usize)] = &[
        (1, 1, 1),
        (300, 2, 3),   // tall
        (2, 300, 3),   // wide
        (67, 129, 45), // odd: peeling at every level
        (97, 89, 101), // primes
        (64, 64, 64),  // exact halving
        (40, 33, 1),   // k = 1
        (5, 7, 0),     // k = 0: C = 0
        (0, 7, 5),
        (7, 0, 5),
        (128, 128, 130), // one full tile plus k remainder
        (129, 131, 8),
    ];
    for &(m, n, k) in shapes {
        for algorithm in ALGORITHMS {
            for levels in [Some(1), Some(2)] {
                let c = Case {
                    m,
                    n,
                    k,
                    pad_a: (m + k) % 3,
                    pad_b: (n + 1) % 2,
                    seed: (m * 1000 + n * 10 + k) as u64,
                    algorithm,
                    levels,
                    kernel: BaseKernel::Auto,
                    add_max_groups: None,
                };
                run_case::<T, B>(b, &c)?;
            }
        }
    }
    // Zero matrices: an exact 0 whatever the algorithm.
    for algorithm in ALGORITHMS {
        let z = Dense::<T>::zeros(33, 33);
        let opts = MatMulOptions {
            strassen_cutoff: Some(TINY_CUTOFF),
            ..MatMulOptions::with(algorithm, Some(2))
        };
        let c = b.matmul(z.view(), z.view(), &opts).map_err(err)?;
        if c.as_slice().iter().any(|v| *v != T::zero()) {
            return Err(format!("{algorithm:?}: 0 · 0 is not 0"));
        }
    }
    Ok(())
}

/// Every [`HostMemory`] mode on a sequence of products that grows, shrinks, switches
/// precision and passes empty matrices, so that a backend's reused staging memory is
/// reallocated, reused with stale contents larger than the product, and retyped; then two
/// threads multiplying at once (one may find the staging memory busy).
fn host_memory_modes<B: MatMul<f32> + MatMul<f64>>(b: &B) -> Result<(), String> {
    let shapes: &[(usize, usize, usize)] = &[
        (70, 50, 60),
        (5, 3, 4),
        (0, 9, 4),
        (131, 129, 67),
        (9, 0, 3),
        (33, 31, 35),
        (4, 6, 0),
        (1, 1, 1),
    ];
    for mode in [HostMemory::Pageable, HostMemory::Pinned, HostMemory::Mapped] {
        for (i, &(m, n, k)) in shapes.iter().enumerate() {
            let c = Case {
                m,
                n,
                k,
                pad_a: i % 3,
                pad_b: (i + 1) % 2,
                seed: 77 + i as u64,
                algorithm: ALGORITHMS[i % ALGORITHMS.len()],
                levels: Some(1),
                kernel: BaseKernel::Auto,
                add_max_groups: None,
            };
            if i % 2 == 0 {
                run_case_with::<f32, B>(b, &c, mode)?;
            } else {
                run_case_with::<f64, B>(b, &c, mode)?;
            }
        }
        std::thread::scope(|scope| {
            let jobs: Vec<_> = (0..3u64)
                .map(|t| {
                    scope.spawn(move || {
                        for r in 0..3u64 {
                            let d = 20 + 17 * t as usize + 5 * r as usize;
                            let c = Case {
                                m: d,
                                n: d + 3,
                                k: d + 1,
                                pad_a: 1,
                                pad_b: 0,
                                seed: 1000 + 10 * t + r,
                                algorithm: Algorithm::Tiled,
                                levels: None,
                                kernel: BaseKernel::Auto,
                                add_max_groups: None,
                            };
                            run_case_with::<f32, B>(b, &c, mode)?;
                        }
                        Ok::<(), String>(())
                    })
                })
                .collect();
            jobs.into_iter().try_for_each(|j| {
                j.join()
                    .map_err(|_| format!("{} transfers: a thread panicked", mode.name()))?
            })
        })?;
    }
    Ok(())
}

/// [`MatMul::gemm`] on device vectors with `C` starting as NaN, twice into the same output.
fn device_garbage_output<T: Scalar, B: MatMul<T>>(b: &B) -> Result<(), String> {
    let (m, n, k) = (53, 71, 38);
    let (av, _) = padded::<T>(m, k, 0, 11);
    let (bv, _) = padded::<T>(k, n, 0, 12);
    let a = DenseView::new(m, k, k, &av).map_err(err)?;
    let bm = DenseView::new(k, n, n, &bv).map_err(err)?;
    let r = reference(a, bm).map_err(err)?;
    let scale = max_abs(a) * max_abs(bm);
    let da = b.upload(&av).map_err(err)?;
    let db = b.upload(&bv).map_err(err)?;
    let mut dc = b.upload(&vec![T::nan(); m * n]).map_err(err)?;
    for algorithm in ALGORITHMS {
        for levels in [Some(1), Some(2)] {
            let opts = MatMulOptions::with(algorithm, levels);
            for _ in 0..2 {
                b.gemm(m, n, k, &da, &db, &mut dc, &opts).map_err(err)?;
                let c = b.download(&dc).map_err(err)?;
                let s = b.plan(m, n, k, &opts);
                check_result(&c, &r, n, k, scale, &s)?;
            }
        }
    }
    Ok(())
}

/// Each base kernel forced ([`BaseKernel::Simt`], and [`BaseKernel::TensorCore`] where
/// [`MatMul::has_tensor_core_kernel`] says it exists, else it must be
/// [`Error::Unsupported`]), on shapes that cut the 128 x 128 block tiles and the k steps of 8
/// and 4 everywhere (odd, prime, one-past-a-tile, k = 1 and 0), tiled and under Winograd and
/// Strassen (whose leaves and peeled edges run on the same kernel), on host views and on
/// device vectors whose output starts as NaN.
fn base_kernels<T: Scalar, B: MatMul<T>>(b: &B) -> Result<(), String> {
    let mut kernels = vec![BaseKernel::Simt];
    if b.has_tensor_core_kernel() {
        kernels.push(BaseKernel::TensorCore);
    } else {
        let one = Dense::<T>::identity(2);
        let opts = MatMulOptions {
            base_kernel: BaseKernel::TensorCore,
            ..MatMulOptions::default()
        };
        match b.matmul(one.view(), one.view(), &opts) {
            Err(Error::Unsupported(_)) => {}
            other => {
                return Err(format!(
                    "tensor-core kernel forced where there is none: expected Unsupported, got \
                     {other:?}"
                ))
            }
        }
    }
    // (m, n, k, padding of A's rows, of B's rows). Unpadded shapes that are multiples of 8
    // give blocks (and quadrants, and quadrants of quadrants) of at least 128 x 128 with
    // leading dimensions and offsets that are multiples of 4: the kernels' vector-load path.
    let shapes: &[(usize, usize, usize, usize, usize)] = &[
        (1, 1, 1, 0, 1),
        (97, 89, 101, 2, 1),  // primes
        (129, 131, 13, 1, 0), // one past a tile, k not a multiple of 4 or 8
        (128, 128, 4, 0, 0),  // one exact tile, a half k step, vector loads
        (131, 257, 3, 2, 1),  // k = 3 < 4
        (255, 130, 37, 1, 1),
        (40, 33, 1, 2, 0),
        (5, 7, 0, 0, 0),      // C = beta C = 0
        (256, 264, 48, 0, 0), // vector loads in every quadrant (one level)
        (512, 520, 72, 0, 4), // and two levels down
        (264, 256, 40, 4, 0), // whole tiles plus an edge, aligned
    ];
    for &kernel in &kernels {
        for &(m, n, k, pad_a, pad_b) in shapes {
            for (algorithm, levels) in [
                (Algorithm::Tiled, None),
                (Algorithm::Winograd, Some(1)),
                (Algorithm::Strassen, Some(2)),
                (Algorithm::Fused, Some(1)),
                (Algorithm::Fused, Some(2)),
            ] {
                let c = Case {
                    m,
                    n,
                    k,
                    pad_a,
                    pad_b,
                    seed: (m * 7919 + n * 31 + k) as u64,
                    algorithm,
                    levels,
                    kernel,
                    add_max_groups: None,
                };
                run_case::<T, B>(b, &c)
                    .map_err(|e| format!("{} kernel, {m}x{k}·{k}x{n}: {e}", kernel.name()))?;
            }
        }
        // Device vectors, output starting as NaN (beta = 0 must not read it).
        let (m, n, k) = (133, 129, 67);
        let (av, _) = padded::<T>(m, k, 0, 41);
        let (bv, _) = padded::<T>(k, n, 0, 42);
        let a = DenseView::new(m, k, k, &av).map_err(err)?;
        let bm = DenseView::new(k, n, n, &bv).map_err(err)?;
        let r = reference(a, bm).map_err(err)?;
        let da = b.upload(&av).map_err(err)?;
        let db = b.upload(&bv).map_err(err)?;
        let mut dc = b.upload(&vec![T::nan(); m * n]).map_err(err)?;
        for algorithm in ALGORITHMS {
            let opts = MatMulOptions {
                base_kernel: kernel,
                ..MatMulOptions::with(algorithm, Some(1))
            };
            b.gemm(m, n, k, &da, &db, &mut dc, &opts).map_err(err)?;
            let got = b.download(&dc).map_err(err)?;
            let s = b.plan(m, n, k, &opts);
            check_result(&got, &r, n, k, max_abs(a) * max_abs(bm), &s)
                .map_err(|e| format!("{} kernel, gemm: {e}", kernel.name()))?;
        }
    }
    Ok(())
}

/// The measured error of every algorithm at 0..=3 levels on a 256-cube product, printed (in
/// units of `ε ‖A‖_M ‖B‖_M`) beside the Higham bound it must stay under.
fn error_per_level<T: Scalar, B: MatMul<T>>(b: &B) -> Result<(), String> {
    let nn = 256;
    let (av, _) = padded::<T>(nn, nn, 0, 21);
    let (bv, _) = padded::<T>(nn, nn, 0, 22);
    let a = DenseView::new(nn, nn, nn, &av).map_err(err)?;
    let bm = DenseView::new(nn, nn, nn, &bv).map_err(err)?;
    let r = reference(a, bm).map_err(err)?;
    let scale = max_abs(a) * max_abs(bm);
    let mut line = format!("matmul error {} n={nn} ({}):", T::NAME, b.name());
    for algorithm in [Algorithm::Strassen, Algorithm::Winograd, Algorithm::Fused] {
        for levels in 0..=3 {
            let opts = MatMulOptions::with(
                if levels == 0 {
                    Algorithm::Tiled
                } else {
                    algorithm
                },
                Some(levels),
            );
            if levels == 0 && algorithm != Algorithm::Strassen {
                continue;
            }
            let c = b.matmul(a, bm, &opts).map_err(err)?;
            let s = b.plan(nn, nn, nn, &opts);
            let e = relative_error(c.as_slice(), &r, scale);
            let bound = matmul::tolerance::<T>(s.algorithm, s.levels, nn).factor;
            line += &format!(" {}L{}={e:.1}(≤{bound:.0})", s.algorithm.name(), s.levels);
            check_result(c.as_slice(), &r, nn, nn, scale, &s)?;
        }
    }
    eprintln!("{line}");
    Ok(())
}

/// A `rows x cols` row-major buffer of small integers in `-2..=2` from `(seed, i)`: every
/// product of a schedule of up to 3 levels over them (inner dimension up to 64) is an
/// integer below 2^24 at every step, exact in f32 and f64.
fn small_integers<T: Scalar>(rows: usize, cols: usize, seed: u64) -> Vec<T> {
    (0..rows * cols)
        .map(|i| T::from_f64((splitmix(seed ^ (i as u64) << 8) % 5) as f64 - 2.0))
        .collect()
}

/// Small-integer products, exact in the precision, compared exactly with the exact
/// [`reference`], for every algorithm at 1, 2 and 3 levels on shapes with and without
/// peeling, on host views and on device vectors whose output starts as NaN (with the
/// additions' row loop forced on some): a dropped, repeated or sign-flipped product or
/// addition term at any level, or an entry left unwritten, changes an integer.
fn exact_small_integers<T: Scalar, B: MatMul<T>>(b: &B) -> Result<(), String> {
    let shapes: &[(usize, usize, usize)] = &[(64, 64, 64), (67, 61, 59), (40, 72, 48), (9, 17, 33)];
    for (si, &(m, n, k)) in shapes.iter().enumerate() {
        let av = small_integers::<T>(m, k, 100 + si as u64);
        let bv = small_integers::<T>(k, n, 200 + si as u64);
        let a = DenseView::new(m, k, k, &av).map_err(err)?;
        let bm = DenseView::new(k, n, n, &bv).map_err(err)?;
        let r = reference(a, bm).map_err(err)?;
        let da = b.upload(&av).map_err(err)?;
        let db = b.upload(&bv).map_err(err)?;
        let mut dc = b.upload(&vec![T::nan(); m * n]).map_err(err)?;
        for algorithm in ALGORITHMS {
            for levels in 1..=3usize {
                let opts = MatMulOptions {
                    strassen_cutoff: Some(TINY_CUTOFF),
                    add_max_groups: (levels == 2).then_some(3),
                    ..MatMulOptions::with(algorithm, Some(levels))
                };
                let s = b.plan(m, n, k, &opts);
                let what = |path: &str| {
                    format!(
                        "{path} {m}x{k}·{k}x{n}, {} with {} levels",
                        s.algorithm.name(),
                        s.levels
                    )
                };
                let c = b.matmul(a, bm, &opts).map_err(err)?;
                exact(c.as_slice(), &r, n).map_err(|e| format!("{}: {e}", what("matmul")))?;
                b.gemm(m, n, k, &da, &db, &mut dc, &opts).map_err(err)?;
                let c = b.download(&dc).map_err(err)?;
                exact(&c, &r, n).map_err(|e| format!("{}: {e}", what("gemm")))?;
                // Poison the output again for the next product.
                dc = b.upload(&vec![T::nan(); m * n]).map_err(err)?;
            }
        }
    }
    Ok(())
}

/// Every entry of `c` equals `want` exactly.
fn exact<T: Scalar>(c: &[T], want: &[f64], n: usize) -> Result<(), String> {
    if c.len() != want.len() {
        return Err(format!(
            "C has {} entries, expected {}",
            c.len(),
            want.len()
        ));
    }
    match (0..c.len()).find(|&i| Scalar::to_f64(c[i]) != want[i]) {
        None => Ok(()),
        Some(i) => Err(format!(
            "C[{}, {}] = {:e}, expected exactly {}",
            i / n.max(1),
            i % n.max(1),
            Scalar::to_f64(c[i]),
            want[i]
        )),
    }
}

/// The additions' row loop (`matadd_<T>`'s work-groups striding over more rows than there
/// are groups): forced with [`MatMulOptions::add_max_groups`] of 1, 2 and 7 on Strassen's
/// and Winograd's additions at 1 and 2 levels, and reached with the default limit by a tall,
/// thin product whose quadrants have more than [`ADD_MAX_GROUPS`] rows.
fn additions_row_loop<B: MatMul<f32> + MatMul<f64>>(b: &B) -> Result<(), String> {
    let mut i = 0u64;
    for add_max_groups in [Some(1), Some(2), Some(7)] {
        for algorithm in [Algorithm::Strassen, Algorithm::Winograd, Algorithm::Fused] {
            for (m, n, k, levels) in [(67, 45, 61, 1), (131, 40, 70, 2), (33, 300, 20, 2)] {
                i += 1;
                let c = Case {
                    m,
                    n,
                    k,
                    pad_a: (i % 3) as usize,
                    pad_b: (i % 2) as usize,
                    seed: 500 + i,
                    algorithm,
                    levels: Some(levels),
                    kernel: BaseKernel::Auto,
                    add_max_groups,
                };
                let r = if i.is_multiple_of(2) {
                    run_case::<f32, B>(b, &c)
                } else {
                    run_case::<f64, B>(b, &c)
                };
                r.map_err(|e| format!("add_max_groups {add_max_groups:?}: {e}"))?;
            }
        }
    }
    // Quadrants of 2 * ADD_MAX_GROUPS + 3 rows: the default limit's row loop.
    let m = 2 * (2 * ADD_MAX_GROUPS + 3);
    for algorithm in [Algorithm::Strassen, Algorithm::Winograd] {
        let c = Case {
            m,
            n: 4,
            k: 4,
            pad_a: 0,
            pad_b: 1,
            seed: 900,
            algorithm,
            levels: Some(1),
            kernel: BaseKernel::Auto,
            add_max_groups: None,
        };
        run_case::<f32, B>(b, &c).map_err(|e| format!("{m} x 4 · 4 x 4: {e}"))?;
    }
    Ok(())
}

fn shape_mismatch<B: MatMul<f32> + MatMul<f64>>(b: &B) -> Result<(), String> {
    let a = Dense::<f32>::zeros(3, 4);
    let bm = Dense::<f32>::zeros(5, 2);
    match b.matmul(a.view(), bm.view(), &MatMulOptions::default()) {
        Err(Error::Shape(_)) => {}
        other => return Err(format!("3x4 · 5x2: expected a shape error, got {other:?}")),
    }
    let da = b.upload(&[1.0f64; 12]).map_err(err)?;
    let db = b.upload(&[1.0f64; 7]).map_err(err)?;
    let mut dc = DeviceVectors::<f64>::zeros(b, 6).map_err(err)?;
    match MatMul::<f64>::gemm(b, 3, 2, 4, &da, &db, &mut dc, &MatMulOptions::default()) {
        Err(Error::Shape(_)) => Ok(()),
        other => Err(format!(
            "gemm 3x4 · 4x2 with B of 7 values: expected a shape error, got {other:?}"
        )),
    }
}

/// A `2^20 x 1 · 1 x 2^20` product (4 TiB of f32 output) is [`Error::OutOfMemory`] saying how
/// much it needs, and the backend still works afterwards.
fn huge<B: MatMul<f32> + MatMul<f64>>(b: &B) -> Result<(), String> {
    const N: usize = 1 << 20;
    let col = vec![1.0f32; N];
    let a = DenseView::new(N, 1, 1, &col).map_err(err)?;
    let bm = DenseView::new(1, N, N, &col).map_err(err)?;
    match b.matmul(a, bm, &MatMulOptions::default()) {
        Err(Error::OutOfMemory { message, .. }) if message.contains("bytes") => {}
        Err(e) => {
            return Err(format!(
                "2^20 x 2^20 output: expected out of memory, got {e}"
            ))
        }
        Ok(_) => return Err("a 4 TiB product succeeded".into()),
    }
    let one = Dense::<f32>::identity(2);
    let c = b
        .matmul(one.view(), one.view(), &MatMulOptions::default())
        .map_err(err)?;
    if c != one {
        return Err(format!("after the failed product, I · I = {c:?}"));
    }
    Ok(())
}
