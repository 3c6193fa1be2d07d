//! SpMV conformance: `y = A x` on ELLPACK-R matrices against an f64 reference computed from
//! the raw entries (not from the converted matrix the backend gets), with `y` starting as NaN,
//! padding poisoned with NaN, every slot-pass count forced, and products repeated into the
//! same output.

use proptest::prelude::*;

use super::{run_proptest, Check};
use crate::coo::Coo;
use crate::csr::Csr;
use crate::ellpack::EllpackR;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::spmv::{self, RowReference, Spmv, SpmvOptions};

/// The SpMV checks, in table order.
pub fn checks<B: Spmv<f32> + Spmv<f64>>() -> Vec<Check<B>> {
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
            name: "spmv_vectors_roundtrip_large_f32",
            run: vectors_roundtrip_large::<f32, B>,
        },
        Check {
            name: "spmv_vectors_roundtrip_large_f64",
            run: vectors_roundtrip_large::<f64, B>,
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
            name: "spmv_garbage_output_every_pass_count_f32",
            run: garbage_output_every_pass_count::<f32, B>,
        },
        Check {
            name: "spmv_garbage_output_every_pass_count_f64",
            run: garbage_output_every_pass_count::<f64, B>,
        },
        Check {
            name: "spmv_poisoned_padding_f32",
            run: poisoned_padding::<f32, B>,
        },
        Check {
            name: "spmv_poisoned_padding_f64",
            run: poisoned_padding::<f64, B>,
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
        $crate::conformance_tests!(
            $ty,
            $make,
            spmv::checks;
            spmv_vectors_roundtrip_f32,
            spmv_vectors_roundtrip_f64,
            spmv_vectors_roundtrip_large_f32,
            spmv_vectors_roundtrip_large_f64,
            spmv_random_f32,
            spmv_random_f64,
            spmv_edge_cases_f32,
            spmv_edge_cases_f64,
            spmv_large_f32,
            spmv_large_f64,
            spmv_chained_on_device_f32,
            spmv_chained_on_device_f64,
            spmv_garbage_output_every_pass_count_f32,
            spmv_garbage_output_every_pass_count_f64,
            spmv_poisoned_padding_f32,
            spmv_poisoned_padding_f64,
            spmv_shape_mismatch_is_error,
            out_of_memory_is_error
        );
    };
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

/// The f64 reference of `y = A x` for `case`, from its raw entries and `x` rounded to `T`
/// (what the backend receives), independent of the COO → CSR → ELLPACK-R conversion.
fn reference<T: Scalar>(case: &SparseCase, x: &[T]) -> Vec<RowReference> {
    let xs: Vec<f64> = x.iter().map(|v| Scalar::to_f64(*v)).collect();
    spmv::reference_from_entries(
        case.rows,
        case.entries
            .iter()
            .map(|&(r, c, v)| (r, c, T::from_f64(v).to_f64())),
        &xs,
    )
}

/// Checks `y` against the independent reference of `case` within [`spmv::tolerance`].
fn compare<T: Scalar>(case: &SparseCase, x: &[T], y: &[T]) -> Result<(), String> {
    spmv::check_result(y, &reference(case, x))
        .map_err(|m| format!("{m}; matrix {} x {}", case.rows, case.cols))
}

/// Checks `y` against the f64 product of the device matrix `a` (for chained products, whose
/// input is itself a computed vector).
fn compare_ellpack<T: Scalar>(a: &EllpackR<T>, x: &[T], y: &[T]) -> Result<(), String> {
    let reference: Vec<RowReference> = spmv::reference_abs(a, x)
        .into_iter()
        .zip(a.row_lengths())
        .map(|((value, magnitude), &n)| RowReference {
            value,
            magnitude,
            entries: n as usize,
        })
        .collect();
    spmv::check_result(y, &reference)
}

/// Runs `case` on `b` with `y` starting as NaN, and checks it.
fn run_case<T: Scalar, B: Spmv<T>>(b: &B, case: &SparseCase) -> Result<(), String> {
    let (a, x) = build::<T>(case).map_err(|e| e.to_string())?;
    let e = |e: Error| e.to_string();
    let da = b.upload_ellpack(&a).map_err(e)?;
    let dx = b.upload(&x).map_err(e)?;
    let mut dy = b.upload(&vec![T::nan(); a.rows()]).map_err(e)?;
    b.spmv(&da, &dx, &mut dy).map_err(e)?;
    let y = b.download(&dy).map_err(e)?;
    compare(case, &x, &y)
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

/// Vectors past the sizes at which backends stage their copies (a GPU backend's page-locked
/// ring: 1 MiB and slots of 16 MiB, 64 MiB in all): just over 1 MiB, over a slot, and over the
/// whole ring, uploaded and read back into a poisoned buffer, value for value (no value is
/// the poison, and neighbouring chunks hold different values).
fn vectors_roundtrip_large<T: Scalar, B: Spmv<T>>(b: &B) -> Result<(), String> {
    let size = std::mem::size_of::<T>();
    for bytes in [(1 << 20) + 8, (16 << 20) + 24, 5 * (16 << 20) + 40] {
        let n = bytes / size;
        // Integers below 2^24, exact in f32; never -7.
        let host: Vec<T> = (0..n)
            .map(|i| T::from_f64(((i as u64).wrapping_mul(2_654_435_761) % 16_000_057) as f64))
            .collect();
        let d = b.upload(&host).map_err(|e| e.to_string())?;
        let mut back = vec![T::from_f64(-7.0); n];
        b.download_into(&d, &mut back).map_err(|e| e.to_string())?;
        if let Some(i) = (0..n).find(|&i| back[i] != host[i]) {
            return Err(format!(
                "round trip of {n} values ({bytes} bytes): value {i} came back as {}, not {}",
                back[i].to_f64(),
                host[i].to_f64()
            ));
        }
    }
    Ok(())
}

fn random<T: Scalar, B: Spmv<T>>(b: &B) -> Result<(), String> {
    run_proptest(64, &sparse_case(), |case| run_case::<T, B>(b, &case))
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
        run_case::<T, B>(b, case).map_err(|e| format!("edge case {k}: {e}"))?;
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
    run_case::<T, B>(b, &large_case(200_003, 150_001, 24))
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
    compare(&case, &x, &y).map_err(|m| format!("first product: {m}"))?;
    compare_ellpack(&a, &y, &z).map_err(|m| format!("second product: {m}"))?;
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

/// `y` starts as NaN; for every slot-pass count from 1 to the width (and one beyond), the
/// product runs twice into the same `y`. A kernel that adds into `y` instead of overwriting
/// it, or that mishandles a pass boundary, fails. Every third pass count runs on one
/// work-group and every third on five ([`SpmvOptions::max_groups`]), so that a kernel's loop
/// over more rows than its grid covers runs too.
fn garbage_output_every_pass_count<T: Scalar, B: Spmv<T>>(b: &B) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    // Rows of every length from 0 to 9 and random columns over a wide x, so that every slot
    // and every odd pass start is exercised.
    let mut case = large_case(3001, 40_000, 9);
    case.entries
        .extend((0..9).map(|j| (17, j * 4000 + 5, 0.25)));
    let (a, x) = build::<T>(&case).map_err(e)?;
    let expected = reference(&case, &x);
    let dx = b.upload(&x).map_err(e)?;
    for passes in 1..=a.width() + 1 {
        let da = b
            .upload_ellpack_with(
                &a,
                &SpmvOptions {
                    passes: Some(passes),
                    // CUDA's grid-stride loop over the rows, forced on some pass counts.
                    max_groups: [None, Some(1), Some(5)][passes % 3],
                },
            )
            .map_err(e)?;
        let mut dy = b.upload(&vec![T::nan(); a.rows()]).map_err(e)?;
        for round in 0..2 {
            b.spmv(&da, &dx, &mut dy).map_err(e)?;
            let y = b.download(&dy).map_err(e)?;
            spmv::check_result(&y, &expected)
                .map_err(|m| format!("{passes} passes, product {}: {m}", round + 1))?;
        }
    }
    Ok(())
}

/// Padding values are NaN and padding columns point anywhere in range: a kernel that reads
/// past a row's length gets NaN into `y`.
fn poisoned_padding<T: Scalar, B: Spmv<T>>(b: &B) -> Result<(), String> {
    let e = |e: Error| e.to_string();
    for case in [
        large_case(5000, 3000, 13),
        SparseCase {
            rows: 300,
            cols: 257,
            entries: (0..257).map(|j| (123, j, 1.0 / (j + 1) as f64)).collect(),
            x: (0..257).map(|j| (j as f64).cos()).collect(),
        },
    ] {
        let (a, x) = build::<T>(&case).map_err(e)?;
        let poisoned = poison_padding(&a).map_err(e)?;
        for passes in [None, Some(2), Some(a.width().max(1))] {
            let da = b
                .upload_ellpack_with(
                    &poisoned,
                    &SpmvOptions {
                        passes,
                        max_groups: passes.map(|_| 2),
                    },
                )
                .map_err(e)?;
            let dx = b.upload(&x).map_err(e)?;
            let mut dy = b.upload(&vec![T::nan(); a.rows()]).map_err(e)?;
            b.spmv(&da, &dx, &mut dy).map_err(e)?;
            let y = b.download(&dy).map_err(e)?;
            compare(&case, &x, &y).map_err(|m| format!("passes {passes:?}: {m}"))?;
        }
    }
    Ok(())
}

/// `a` with NaN in every padding value and a varying in-range column in every padding slot.
pub fn poison_padding<T: Scalar>(a: &EllpackR<T>) -> Result<EllpackR<T>> {
    let (rows, cols) = a.shape();
    let mut values = a.values().to_vec();
    let mut col_idx = a.col_indices().to_vec();
    for i in 0..rows {
        for k in a.row_lengths()[i] as usize..a.width() {
            values[k * rows + i] = T::nan();
            col_idx[k * rows + i] = ((i * 31 + k * 7) % cols.max(1)) as u32;
        }
    }
    EllpackR::new(
        rows,
        cols,
        a.width(),
        values,
        col_idx,
        a.row_lengths().to_vec(),
    )
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
