//! The backend conformance suite (feature `conformance`).
//!
//! Every check is a plain function `fn(&B) -> Result<(), String>` so that it can run both as a
//! `#[test]` (through [`spmv_conformance_tests!`](crate::spmv_conformance_tests), which each
//! backend crate instantiates) and from `cargo xtask validate`, which prints a
//! backend × check table. Random inputs come from proptest; `PROPTEST_CASES` sets the count.
//!
//! GPU backends that find no device are skipped, unless `REQUIRE_GPU=1` is set, in which case
//! a missing device fails the test so a broken GPU run cannot pass silently.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::backend::{Backend, Spmv};
use crate::coo::Coo;
use crate::csr::Csr;
use crate::ellpack::EllpackR;
use crate::error::{Error, Result};
use crate::reference;
use crate::scalar::Scalar;

/// One named conformance check.
pub struct Check<B> {
    /// Stable name, also the `#[test]` name.
    pub name: &'static str,
    /// Runs the check; `Err` says what disagreed.
    pub run: fn(&B) -> Result<(), String>,
}

/// True when `REQUIRE_GPU=1`: a missing device is then a failure, not a skip.
pub fn require_gpu() -> bool {
    std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// Turns a backend constructor's result into `Some(backend)`, `None` (skip: no device), or a
/// panic (no device under `REQUIRE_GPU=1`, or any other start-up failure).
pub fn acquire<B: Backend>(made: Result<B>) -> Option<B> {
    match made {
        Ok(b) => Some(b),
        Err(e) if e.is_no_device() && !require_gpu() => {
            eprintln!("skipping conformance checks: {e}");
            None
        }
        Err(e) => panic!("backend failed to start: {e}"),
    }
}

/// Runs the check called `name` from `checks` on `b`, panicking with its message on failure.
pub fn run_named<B>(b: &B, checks: &[Check<B>], name: &str) {
    let check = checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no conformance check named {name}"));
    if let Err(msg) = (check.run)(b) {
        panic!("{name}: {msg}");
    }
}

/// The SpMV checks, in table order.
pub fn spmv_checks<B: Spmv<f32> + Spmv<f64>>() -> Vec<Check<B>> {
    vec![
        Check {
            name: "spmv_vectors_roundtrip_f32",
            run: vectors_roundtrip::<f32, B>,
        },
        Check {
            name: "spmv_vectors_roundtrip_f64",
            run: vectors_roundtrip::<f64, B>,
        },
        Check {
            name: "spmv_random_f32",
            run: random::<f32, B>,
        },
        Check {
            name: "spmv_random_f64",
            run: random::<f64, B>,
        },
        Check {
            name: "spmv_edge_cases_f32",
            run: edge_cases::<f32, B>,
        },
        Check {
            name: "spmv_edge_cases_f64",
            run: edge_cases::<f64, B>,
        },
        Check {
            name: "spmv_large_f32",
            run: large::<f32, B>,
        },
        Check {
            name: "spmv_large_f64",
            run: large::<f64, B>,
        },
        Check {
            name: "spmv_chained_on_device_f32",
            run: chained::<f32, B>,
        },
        Check {
            name: "spmv_chained_on_device_f64",
            run: chained::<f64, B>,
        },
        Check {
            name: "spmv_shape_mismatch_is_error",
            run: shape_mismatch::<B>,
        },
        Check {
            name: "out_of_memory_is_error",
            run: out_of_memory::<B>,
        },
    ]
}

/// Instantiates the SpMV conformance suite as `#[test]`s for backend type `$ty`, built by the
/// expression `$make` (of type `trident_core::Result<$ty>`), once per test binary.
#[macro_export]
macro_rules! spmv_conformance_tests {
    ($ty:ty, $make:expr) => {
        $crate::__conformance_tests!(
            $ty,
            $make,
            spmv_checks;
            spmv_vectors_roundtrip_f32,
            spmv_vectors_roundtrip_f64,
            spmv_random_f32,
            spmv_random_f64,
            spmv_edge_cases_f32,
            spmv_edge_cases_f64,
            spmv_large_f32,
            spmv_large_f64,
            spmv_chained_on_device_f32,
            spmv_chained_on_device_f64,
            spmv_shape_mismatch_is_error,
            out_of_memory_is_error
        );
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_tests {
    ($ty:ty, $make:expr, $list:ident; $($name:ident),+ $(,)?) => {
        fn __conformance_backend() -> ::std::option::Option<&'static $ty> {
            static BACKEND: ::std::sync::OnceLock<::std::option::Option<$ty>> =
                ::std::sync::OnceLock::new();
            BACKEND
                .get_or_init(|| $crate::conformance::acquire::<$ty>($make))
                .as_ref()
        }
        $(
            #[test]
            fn $name() {
                if let ::std::option::Option::Some(b) = __conformance_backend() {
                    $crate::conformance::run_named(
                        b,
                        &$crate::conformance::$list::<$ty>(),
                        stringify!($name),
                    );
                }
            }
        )+
        #[test]
        fn conformance_suite_is_complete() {
            let listed: ::std::vec::Vec<&str> = $crate::conformance::$list::<$ty>()
                .iter()
                .map(|c| c.name)
                .collect();
            assert_eq!(listed, [$(stringify!($name)),+]);
        }
    };
}

fn runner(cases: u32) -> TestRunner {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

/// A random sparse matrix description: shape, entries, and an optional dense row.
#[derive(Debug, Clone)]
struct SparseCase {
    rows: usize,
    cols: usize,
    entries: Vec<(usize, usize, f64)>,
    x: Vec<f64>,
}

fn sparse_case() -> impl Strategy<Value = SparseCase> {
    (0usize..120, 0usize..120, 0u32..4, any::<bool>())
        .prop_flat_map(|(rows, cols, density_level, dense_row)| {
            let max_nnz = if rows == 0 || cols == 0 {
                0
            } else {
                (rows * cols * (density_level as usize)) / 8
            };
            let entry = (0..rows.max(1), 0..cols.max(1), -1.0f64..1.0);
            (
                Just(rows),
                Just(cols),
                proptest::collection::vec(entry, 0..=max_nnz),
                proptest::collection::vec(-1.0f64..1.0, cols),
                Just(dense_row),
                0..rows.max(1),
            )
        })
        .prop_map(|(rows, cols, mut entries, x, dense_row, which)| {
            if dense_row && rows > 0 {
                entries.extend((0..cols).map(|j| (which, j, 0.5 + (j % 7) as f64 / 8.0)));
            }
            SparseCase {
                rows,
                cols,
                entries,
                x,
            }
        })
}

fn build<T: Scalar>(case: &SparseCase) -> Result<(EllpackR<T>, Vec<T>)> {
    let mut coo = Coo::<T>::new(case.rows, case.cols);
    for &(r, c, v) in &case.entries {
        coo.push(r, c, T::from_f64(v))?;
    }
    let csr: Csr<T, u32> = coo.to_csr()?;
    let a = EllpackR::from_csr(&csr)?;
    let x = case.x.iter().map(|&v| T::from_f64(v)).collect();
    Ok((a, x))
}

/// Checks `y` against the f64 reference within the [`Spmv`] accuracy contract.
fn compare<T: Scalar>(a: &EllpackR<T>, x: &[T], y: &[T]) -> Result<(), String> {
    if y.len() != a.rows() {
        return Err(format!("y has {} entries, expected {}", y.len(), a.rows()));
    }
    let exact = reference::spmv(a, x);
    let mag = reference::spmv_abs(a, x);
    let eps = T::EPS.to_f64();
    for i in 0..a.rows() {
        let len = a.row_lengths()[i] as f64;
        let tol = (len + 3.0) * 4.0 * eps * mag[i] + T::min_positive_value().to_f64();
        let err = (y[i].to_f64() - exact[i].to_f64()).abs();
        if err.is_nan() || err > tol {
            return Err(format!(
                "row {i}: got {}, expected {} (|error| {err:e} > tolerance {tol:e}); matrix {} x {}, width {}",
                y[i],
                exact[i],
                a.rows(),
                a.cols(),
                a.width()
            ));
        }
    }
    Ok(())
}

fn run_case<T: Scalar, B: Spmv<T>>(b: &B, a: &EllpackR<T>, x: &[T]) -> Result<(), String> {
    let y = b.spmv_host(a, x).map_err(|e| e.to_string())?;
    compare(a, x, &y)
}

fn vectors_roundtrip<T: Scalar, B: Spmv<T>>(b: &B) -> Result<(), String> {
    for n in [0usize, 1, 7, 1000, 100_003] {
        let host: Vec<T> = (0..n).map(|i| T::from_f64(i as f64 * 0.25 - 3.0)).collect();
        let d = b.upload(&host).map_err(|e| e.to_string())?;
        if b.len(&d) != n {
            return Err(format!(
                "uploaded {n} values, device vector has {}",
                b.len(&d)
            ));
        }
        let back = b.download(&d).map_err(|e| e.to_string())?;
        if back != host {
            return Err(format!("round trip of {n} values changed them"));
        }
        let z = b.zeros(n).map_err(|e| e.to_string())?;
        let zb = b.download(&z).map_err(|e| e.to_string())?;
        if zb.iter().any(|v| *v != T::zero()) || zb.len() != n {
            return Err(format!("zeros({n}) is not {n} zeros"));
        }
    }
    Ok(())
}

fn random<T: Scalar, B: Spmv<T>>(b: &B) -> Result<(), String> {
    runner(64)
        .run(&sparse_case(), |case| {
            let (a, x) = build::<T>(&case).map_err(|e| TestCaseError::fail(e.to_string()))?;
            run_case(b, &a, &x).map_err(TestCaseError::fail)
        })
        .map_err(|e| e.to_string())
}

fn edge_cases<T: Scalar, B: Spmv<T>>(b: &B) -> Result<(), String> {
    let cases: Vec<SparseCase> = vec![
        // n = 0
        SparseCase {
            rows: 0,
            cols: 0,
            entries: vec![],
            x: vec![],
        },
        // 0 rows, some columns; some rows, 0 columns
        SparseCase {
            rows: 0,
            cols: 5,
            entries: vec![],
            x: vec![1.0; 5],
        },
        SparseCase {
            rows: 4,
            cols: 0,
            entries: vec![],
            x: vec![],
        },
        // n = 1, empty and full
        SparseCase {
            rows: 1,
            cols: 1,
            entries: vec![],
            x: vec![2.0],
        },
        SparseCase {
            rows: 1,
            cols: 1,
            entries: vec![(0, 0, -3.5)],
            x: vec![2.0],
        },
        // all rows empty: width 0
        SparseCase {
            rows: 50,
            cols: 50,
            entries: vec![],
            x: vec![1.0; 50],
        },
        // one dense row among empty ones (width = cols, heavy padding)
        SparseCase {
            rows: 300,
            cols: 257,
            entries: (0..257).map(|j| (123, j, 1.0 / (j + 1) as f64)).collect(),
            x: (0..257).map(|j| (j as f64).sin()).collect(),
        },
        // diagonal with every other row empty
        SparseCase {
            rows: 1001,
            cols: 1001,
            entries: (0..1001)
                .step_by(2)
                .map(|i| (i, i, i as f64 + 0.5))
                .collect(),
            x: (0..1001).map(|j| 1.0 - j as f64 / 1000.0).collect(),
        },
        // duplicates in the input are summed before the product
        SparseCase {
            rows: 2,
            cols: 3,
            entries: vec![(0, 1, 1.0), (0, 1, 2.0), (1, 2, 4.0), (1, 0, -1.0)],
            x: vec![1.0, 2.0, 3.0],
        },
    ];
    for (k, case) in cases.iter().enumerate() {
        let (a, x) = build::<T>(case).map_err(|e| e.to_string())?;
        run_case(b, &a, &x).map_err(|e| format!("edge case {k}: {e}"))?;
    }
    // The duplicate case has a known exact answer.
    let (a, x) = build::<T>(&cases[8]).map_err(|e| e.to_string())?;
    let y = b.spmv_host(&a, &x).map_err(|e| e.to_string())?;
    if y != [T::from_f64(6.0), T::from_f64(11.0)] {
        return Err(format!("duplicates: expected [6, 11], got {y:?}"));
    }
    Ok(())
}

/// A deterministic pseudo-random matrix large enough to need many thread blocks / work-groups.
fn large_case(rows: usize, cols: usize, max_len: usize) -> SparseCase {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut entries = Vec::new();
    for i in 0..rows {
        let len = (next() % (max_len as u64 + 1)) as usize;
        for _ in 0..len {
            let c = (next() % cols as u64) as usize;
            let v = (next() % 2001) as f64 / 1000.0 - 1.0;
            entries.push((i, c, v));
        }
    }
    let x = (0..cols)
        .map(|_| (next() % 2001) as f64 / 1000.0 - 1.0)
        .collect();
    SparseCase {
        rows,
        cols,
        entries,
        x,
    }
}

fn large<T: Scalar, B: Spmv<T>>(b: &B) -> Result<(), String> {
    let case = large_case(200_003, 150_001, 24);
    let (a, x) = build::<T>(&case).map_err(|e| e.to_string())?;
    run_case(b, &a, &x)
}

fn chained<T: Scalar, B: Spmv<T>>(b: &B) -> Result<(), String> {
    let case = large_case(20_000, 20_000, 12);
    let (a, x) = build::<T>(&case).map_err(|e| e.to_string())?;
    let e = |e: Error| e.to_string();
    let da = b.upload_ellpack(&a).map_err(e)?;
    let dx = b.upload(&x).map_err(e)?;
    let mut dy = b.zeros(a.rows()).map_err(e)?;
    let mut dz = b.zeros(a.rows()).map_err(e)?;
    // z = A (A x), with y never leaving the device between the two products.
    b.spmv(&da, &dx, &mut dy).map_err(e)?;
    b.spmv(&da, &dy, &mut dz).map_err(e)?;
    let y = b.download(&dy).map_err(e)?;
    let z = b.download(&dz).map_err(e)?;
    compare(&a, &x, &y).map_err(|m| format!("first product: {m}"))?;
    compare(&a, &y, &z).map_err(|m| format!("second product: {m}"))?;
    // The device matrix is reusable and reports its shape.
    if b.ellpack_shape(&da) != a.shape() {
        return Err(format!(
            "device matrix shape {:?}, expected {:?}",
            b.ellpack_shape(&da),
            a.shape()
        ));
    }
    Ok(())
}

fn shape_mismatch<B: Spmv<f32>>(b: &B) -> Result<(), String> {
    let case = large_case(10, 8, 3);
    let (a, _) = build::<f32>(&case).map_err(|e| e.to_string())?;
    let e = |e: Error| e.to_string();
    let da = b.upload_ellpack(&a).map_err(e)?;
    let bad_x = b.upload(&[1.0f32; 7]).map_err(e)?;
    let mut y = b.zeros(10).map_err(e)?;
    match b.spmv(&da, &bad_x, &mut y) {
        Err(Error::Shape(_)) => {}
        other => {
            return Err(format!(
                "x of wrong length: expected a shape error, got {other:?}"
            ))
        }
    }
    let x = b.upload(&[1.0f32; 8]).map_err(e)?;
    let mut bad_y = b.zeros(9).map_err(e)?;
    match b.spmv(&da, &x, &mut bad_y) {
        Err(Error::Shape(_)) => Ok(()),
        other => Err(format!(
            "y of wrong length: expected a shape error, got {other:?}"
        )),
    }
}

/// A 4 TiB request must come back as [`Error::OutOfMemory`], not abort the process, and the
/// backend must stay usable afterwards.
fn out_of_memory<B: Spmv<f32>>(b: &B) -> Result<(), String> {
    const HUGE: usize = 1 << 40; // f32 elements: 4 TiB
    match b.zeros(HUGE) {
        Err(Error::OutOfMemory { .. }) => {}
        Err(e) => return Err(format!("zeros(2^40): expected out of memory, got: {e}")),
        Ok(_) => return Err("zeros(2^40) of f32 (4 TiB) succeeded".into()),
    }
    let v = b.upload(&[1.0f32, 2.0, 3.0]).map_err(|e| e.to_string())?;
    match b.download(&v) {
        Ok(back) if back == [1.0, 2.0, 3.0] => Ok(()),
        other => Err(format!(
            "after the failed allocation, a round trip gave {other:?}"
        )),
    }
}
