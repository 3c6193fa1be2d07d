//! The input path of the CLI's graph and matrix commands on arbitrary bytes: content
//! detection (banner, npy and gzip magic), the graph reader it picks, the conversion to CSR
//! in f32 (non-finite weights must be errors) and to ELLPACK-R (allocations fallible).
//! Run with `-rss_limit_mb=2048`: a memory bomb must be an error, not an abort.
#![no_main]

use libfuzzer_sys::fuzz_target;
use trident_core::io::{self, Detected, Input};
use trident_core::EllpackR;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = Input::from_bytes(data.to_vec(), "fuzz.in") else {
        return;
    };
    match input.detect() {
        Detected::MatrixMarket => {
            if let Ok(m) = io::parse_matrix_market::<f32>(&input.bytes, "fuzz.mtx") {
                if let Ok(csr) = m.into_coo().to_csr::<u32>() {
                    assert!(csr.values().iter().all(|v| v.is_finite()));
                }
            }
        }
        Detected::Npy => {
            let _ = io::parse_npy::<f32>(&input.bytes, "fuzz.npy");
        }
        _ => {}
    }
    if let Ok(g) = io::graph_from_input(&input) {
        if let Ok(csr) = g.to_csr::<f32>() {
            assert!(csr.values().iter().all(|v| v.is_finite()));
            let _ = EllpackR::<f32>::from_csr(&csr);
        }
    }
});
