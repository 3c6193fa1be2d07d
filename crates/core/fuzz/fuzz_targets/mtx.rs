//! Matrix Market reader on arbitrary bytes: errors are fine, panics are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use trident_core::io::mtx;

fuzz_target!(|data: &[u8]| {
    let _ = mtx::parse_header(data, "fuzz.mtx");
    let _ = mtx::parse_matrix_market::<f64>(data, "fuzz.mtx");
    if let Ok(m) = mtx::parse_matrix_market::<f32>(data, "fuzz.mtx") {
        // Whatever parses must be a valid matrix.
        let (r, c) = m.shape();
        let coo = m.into_coo();
        assert_eq!(coo.shape(), (r, c));
        assert!(coo.iter().all(|(i, j, v)| i < r && j < c && v.is_finite()));
    }
});
