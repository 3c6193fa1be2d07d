//! The invariants of `Csr::new` and `EllpackR::new` that the GPU launches rely on (every
//! violation is an `Error::Invalid`, never a panic or an accepted matrix), and lossless round
//! trips between the formats, checked against the raw entries.

use proptest::prelude::*;
use trident_core::{Coo, Csr, EllpackR, Error};

fn invalid<T: std::fmt::Debug>(r: trident_core::Result<T>, what: &str) {
    match r {
        Err(Error::Invalid { .. }) => {}
        other => panic!("{what}: expected Error::Invalid, got {other:?}"),
    }
}

#[test]
fn csr_new_rejects_every_broken_invariant() {
    let ok = Csr::<f64, u32>::new(2, 3, vec![0, 1, 3], vec![2, 0, 1], vec![1.0, 2.0, 3.0]);
    assert!(ok.is_ok());
    invalid(
        Csr::<f64, u32>::new(2, 3, vec![0, 1], vec![2], vec![1.0]),
        "indptr too short",
    );
    invalid(
        Csr::<f64, u32>::new(2, 3, vec![1, 1, 3], vec![2, 0, 1], vec![1.0, 2.0, 3.0]),
        "indptr[0] != 0",
    );
    invalid(
        Csr::<f64, u32>::new(2, 3, vec![0, 2, 1], vec![2, 0, 1], vec![1.0, 2.0, 3.0]),
        "decreasing indptr",
    );
    invalid(
        Csr::<f64, u32>::new(2, 3, vec![0, 1, 4], vec![2, 0, 1], vec![1.0, 2.0, 3.0]),
        "indptr past the end",
    );
    invalid(
        Csr::<f64, u32>::new(2, 3, vec![0, 1, 3], vec![2, 0, 3], vec![1.0, 2.0, 3.0]),
        "column out of range",
    );
    invalid(
        Csr::<f64, u32>::new(2, 3, vec![0, 1, 3], vec![2, 1, 0], vec![1.0, 2.0, 3.0]),
        "unsorted columns",
    );
    invalid(
        Csr::<f64, u32>::new(2, 3, vec![0, 1, 3], vec![2, 1, 1], vec![1.0, 2.0, 3.0]),
        "duplicate columns",
    );
    invalid(
        Csr::<f64, u32>::new(2, 3, vec![0, 1, 3], vec![2, 0, 1], vec![1.0, 2.0]),
        "values shorter than indices",
    );
}

#[test]
fn ellpack_new_rejects_every_broken_invariant() {
    // [[1, 0, 2], [0, 3, 0]]: width 2, column-major slots.
    let ok = EllpackR::<f32>::new(
        2,
        3,
        2,
        vec![1.0, 3.0, 2.0, 0.0],
        vec![0, 1, 2, 0],
        vec![2, 1],
    );
    assert!(ok.is_ok());
    invalid(
        EllpackR::<f32>::new(2, 3, 2, vec![1.0, 3.0, 2.0], vec![0, 1, 2, 0], vec![2, 1]),
        "values too short",
    );
    invalid(
        EllpackR::<f32>::new(2, 3, 2, vec![1.0, 3.0, 2.0, 0.0], vec![0, 1, 2], vec![2, 1]),
        "columns too short",
    );
    invalid(
        EllpackR::<f32>::new(2, 3, 2, vec![1.0, 3.0, 2.0, 0.0], vec![0, 1, 2, 0], vec![2]),
        "row lengths too short",
    );
    invalid(
        EllpackR::<f32>::new(
            2,
            3,
            2,
            vec![1.0, 3.0, 2.0, 0.0],
            vec![0, 1, 2, 0],
            vec![3, 1],
        ),
        "row longer than the width",
    );
    invalid(
        EllpackR::<f32>::new(
            2,
            3,
            2,
            vec![1.0, 3.0, 2.0, 0.0],
            vec![0, 3, 2, 0],
            vec![2, 1],
        ),
        "column out of range",
    );
    invalid(
        EllpackR::<f32>::new(
            2,
            3,
            2,
            vec![1.0, 3.0, 2.0, 0.0],
            vec![2, 1, 0, 0],
            vec![2, 1],
        ),
        "decreasing columns in a row",
    );
    invalid(
        EllpackR::<f32>::new(
            2,
            3,
            2,
            vec![1.0, 3.0, 2.0, 0.0],
            vec![1, 1, 1, 0],
            vec![2, 1],
        ),
        "repeated column in a row",
    );
    invalid(
        EllpackR::<f32>::new(usize::MAX, 3, 2, vec![], vec![], vec![]),
        "rows * width overflows",
    );
    // Padding is not an invariant: anything may sit there.
    assert!(EllpackR::<f32>::new(
        2,
        3,
        2,
        vec![1.0, 3.0, 2.0, f32::NAN],
        vec![0, 1, 2, 7],
        vec![2, 1]
    )
    .is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// COO → CSR → ELLPACK-R → CSR keeps exactly the summed raw entries.
    #[test]
    fn round_trips_keep_the_raw_entries(
        rows in 0usize..40,
        cols in 0usize..40,
        raw in proptest::collection::vec((0usize..40, 0usize..40, -8i32..8), 0..200),
    ) {
        let raw: Vec<(usize, usize, f64)> = raw
            .into_iter()
            .filter(|&(r, c, _)| r < rows && c < cols)
            .map(|(r, c, v)| (r, c, f64::from(v)))
            .collect();
        let mut coo = Coo::<f64>::new(rows, cols);
        for &(r, c, v) in &raw {
            coo.push(r, c, v).unwrap();
        }
        let csr: Csr<f64, u32> = coo.to_csr().unwrap();
        let ell = EllpackR::<f64>::from_csr(&csr).unwrap();
        let back: Csr<f64, u32> = ell.to_csr().unwrap();
        prop_assert_eq!(&back, &csr);
        // Independently: the dense sum of the raw entries.
        let mut dense = vec![0.0; rows * cols];
        for &(r, c, v) in &raw {
            dense[r * cols + c] += v;
        }
        let mut seen = vec![0.0; rows * cols];
        for i in 0..rows {
            for k in 0..ell.row_lengths()[i] as usize {
                let (c, v) = ell.entry(i, k);
                seen[i * cols + c] = v;
            }
        }
        prop_assert_eq!(seen, dense);
    }
}
