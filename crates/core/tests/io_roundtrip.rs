//! Write then read: Matrix Market (COO and dense) and `.npy` give back the same values.

use std::path::PathBuf;

use proptest::prelude::*;
use trident_core::io::{self, MatrixMarket};
use trident_core::{Coo, Dense};

fn tmp(name: &str) -> PathBuf {
    static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("trident_rt_{}_{k}_{name}", std::process::id()))
}

/// Finite values of every magnitude, including the awkward ones.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
        (-1e6f64..1e6),
        Just(0.0),
        Just(-0.0),
        Just(f64::MIN_POSITIVE),
        Just(f64::MAX),
        Just(5e-324),
    ]
}

fn dense() -> impl Strategy<Value = Dense<f64>> {
    (0usize..6, 0usize..6).prop_flat_map(|(r, c)| {
        proptest::collection::vec(value(), r * c)
            .prop_map(move |v| Dense::from_vec(r, c, v).unwrap())
    })
}

fn coo() -> impl Strategy<Value = Coo<f64>> {
    (1usize..8, 1usize..8).prop_flat_map(|(r, c)| {
        proptest::collection::vec((0..r, 0..c, value()), 0..20).prop_map(move |t| {
            let mut m = Coo::new(r, c);
            for (i, j, v) in t {
                m.push(i, j, v).unwrap();
            }
            m
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn mtx_coo_roundtrip(m in coo()) {
        let p = tmp("coo.mtx");
        io::write_coo(&p, &m).unwrap();
        let back = io::read_coo::<f64>(&p);
        let _ = std::fs::remove_file(&p);
        let back = back.unwrap();
        prop_assert_eq!(back.shape(), m.shape());
        prop_assert_eq!(back.row_indices(), m.row_indices());
        prop_assert_eq!(back.col_indices(), m.col_indices());
        // Bitwise equality (so -0.0 stays -0.0).
        let bits = |c: &Coo<f64>| c.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&back), bits(&m));
    }

    #[test]
    fn mtx_dense_roundtrip(d in dense()) {
        let p = tmp("dense.mtx");
        io::write_dense(&p, &d).unwrap();
        let back = io::read_matrix_market::<f64>(&p);
        let _ = std::fs::remove_file(&p);
        match back.unwrap() {
            MatrixMarket::Dense(b) => {
                prop_assert_eq!(b.shape(), d.shape());
                let bits = |x: &Dense<f64>| x.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                prop_assert_eq!(bits(&b), bits(&d));
            }
            MatrixMarket::Sparse(_) => prop_assert!(false, "array file read as sparse"),
        }
    }

    #[test]
    fn npy_roundtrip(d in dense()) {
        let p = tmp("a.npy");
        io::write_npy(&p, &d).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        let back = io::read_npy::<f64>(&p);
        let _ = std::fs::remove_file(&p);
        // The data starts at a multiple of 64, as NumPy writes it.
        prop_assert_eq!((bytes.len() - d.as_slice().len() * 8) % 64, 0);
        let back = back.unwrap();
        let bits = |x: &Dense<f64>| x.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        // A 1-column matrix is written as 2-D, so the shape survives too.
        prop_assert_eq!(back.shape(), d.shape());
        prop_assert_eq!(bits(&back), bits(&d));
    }
}

#[test]
fn f32_roundtrips() {
    let d = Dense::from_vec(
        2,
        3,
        vec![0.1f32, -3.4e38, 1.0e-45, 7.0, f32::MIN_POSITIVE, 123.456],
    )
    .unwrap();
    let p = tmp("f32.npy");
    io::write_npy(&p, &d).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    assert!(bytes.windows(5).any(|w| w == b"'<f4'"));
    assert_eq!(io::read_npy::<f32>(&p).unwrap(), d);
    let _ = std::fs::remove_file(&p);
    let p = tmp("f32.mtx");
    io::write_dense(&p, &d).unwrap();
    assert_eq!(io::read_dense::<f32>(&p).unwrap(), d);
    io::write_coo(&p, &Coo::from_dense(&d)).unwrap();
    assert_eq!(io::read_coo::<f32>(&p).unwrap().to_dense(), d);
    let _ = std::fs::remove_file(&p);
}

#[test]
fn written_files_are_readable_as_text() {
    let d = Dense::from_vec(2, 2, vec![1.0, 2.5, 1e-300, -4.0]).unwrap();
    let p = tmp("t.mtx");
    io::write_dense(&p, &d).unwrap();
    let s = std::fs::read_to_string(&p).unwrap();
    let _ = std::fs::remove_file(&p);
    assert!(s.starts_with("%%MatrixMarket matrix array real general\n"));
    // Column-major: 1, 1e-300, 2.5, -4.
    let vals: Vec<&str> = s.lines().skip(3).collect();
    assert_eq!(vals, ["1", "1e-300", "2.5", "-4"]);
}
