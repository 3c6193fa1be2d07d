//! NumPy reader on arbitrary bytes: errors are fine, panics are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use trident_core::io::parse_npy;

fuzz_target!(|data: &[u8]| {
    if let Ok(d) = parse_npy::<f64>(data, "fuzz.npy") {
        assert_eq!(d.as_slice().len(), d.rows() * d.cols());
        assert!(d.as_slice().iter().all(|v| v.is_finite()));
    }
    let _ = parse_npy::<f32>(data, "fuzz.npy");
});
