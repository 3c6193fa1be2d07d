//! Times the CUDA ELLPACK-R SpMV kernel on a random square matrix with a fixed row length.
//!
//! ```text
//! cargo run --release -p trident-cuda --example spmv_timing -- [rows] [row_len] [reps] [random|banded]
//! ```
//!
//! Defaults: 10 000 000 rows, 16 entries per row, 50 repetitions, random, f32 and f64.
//! `random`: each row has `row_len` distinct uniformly random columns (sorted); `banded`: row
//! `i` has the columns `i - row_len/2 ..` (shifted inside the matrix at the edges). One
//! product per type is checked against the host on sampled rows; times are per product,
//! device-resident, measured with a stream synchronize. `TRIDENT_CUDA_SPMV_PASSES` (read here, into
//! `SpmvOptions::passes`) forces the number of slot passes.

use std::time::Instant;

use trident_core::{Backend, DeviceVectors, EllpackR, Spmv, SpmvOptions};
use trident_cuda::{Cuda, CudaScalar};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let banded = match args.last().map(String::as_str) {
        Some("banded") => true,
        Some("random") => false,
        _ => {
            args.push("random".into());
            false
        }
    };
    args.pop();
    let args: Vec<usize> = args
        .iter()
        .map(|a| {
            a.parse()
                .expect("arguments: [rows] [row_len] [reps] [random|banded]")
        })
        .collect();
    let rows = args.first().copied().unwrap_or(10_000_000);
    let len = args.get(1).copied().unwrap_or(16).clamp(1, rows.max(1));
    let reps = args.get(2).copied().unwrap_or(50).max(1);

    let cuda = match Cuda::new() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("spmv_timing: {e}");
            let skip = e.is_no_device() && !trident_core::testing::require_gpu();
            std::process::exit(if skip { 0 } else { 1 });
        }
    };
    println!("device: {}", cuda.device());
    run::<f32>(&cuda, rows, len, reps, banded);
    run::<f64>(&cuda, rows, len, reps, banded);
}

fn run<T: CudaScalar>(cuda: &Cuda, rows: usize, len: usize, reps: usize, banded: bool) {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let slots = rows * len;
    let mut values = vec![T::zero(); slots];
    let mut cols = vec![0u32; slots];
    let mut row = vec![0u32; len];
    for i in 0..rows {
        if banded {
            let start = i.saturating_sub(len / 2).min(rows - len);
            for (k, c) in row.iter_mut().enumerate() {
                *c = (start + k) as u32;
            }
        } else {
            let mut n = 0;
            while n < len {
                let c = (next() % rows as u64) as u32;
                if !row[..n].contains(&c) {
                    row[n] = c;
                    n += 1;
                }
            }
            row.sort_unstable();
        }
        for (k, &c) in row.iter().enumerate() {
            cols[k * rows + i] = c;
            values[k * rows + i] = T::from_f64((next() % 2001) as f64 / 1000.0 - 1.0);
        }
    }
    let rl = vec![len as u32; rows];
    let a = EllpackR::new(rows, rows, len, values, cols, rl).expect("valid matrix");
    let x: Vec<T> = (0..rows)
        .map(|_| T::from_f64((next() % 2001) as f64 / 1000.0 - 1.0))
        .collect();

    let t = Instant::now();
    let passes = std::env::var("TRIDENT_CUDA_SPMV_PASSES")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&p| p >= 1);
    let da = cuda
        .upload_ellpack_with(
            &a,
            &SpmvOptions {
                passes,
                ..SpmvOptions::default()
            },
        )
        .expect("upload A");
    let dx = cuda.upload(&x).expect("upload x");
    let mut dy = cuda.zeros(rows).expect("alloc y");
    cuda.synchronize().expect("sync");
    let upload = t.elapsed();

    // Check one product on sampled rows.
    cuda.spmv(&da, &dx, &mut dy).expect("spmv");
    let y = cuda.download(&dy).expect("download");
    if let Err(m) = trident_core::spmv::check_sampled(&a, &x, &y, 4096) {
        eprintln!("spmv_timing: wrong product: {m}");
        std::process::exit(1);
    }

    // Warm up, then time.
    for _ in 0..3 {
        cuda.spmv(&da, &dx, &mut dy).expect("spmv");
    }
    cuda.synchronize().expect("sync");
    let t = Instant::now();
    for _ in 0..reps {
        cuda.spmv(&da, &dx, &mut dy).expect("spmv");
    }
    cuda.synchronize().expect("sync");
    let per = t.elapsed().as_secs_f64() / reps as f64;

    let ts = std::mem::size_of::<T>();
    // A (values + u32 columns), rl, y, and x read once: the compulsory traffic.
    let bytes = slots * (ts + 4) + rows * 4 + rows * ts + rows * ts;
    println!(
        "{} {}: {rows} rows x {len}, {} pass(es): {:.3} ms per product, {:.0} GB/s effective \
         (compulsory {:.2} GB); upload {:.2} s; sampled rows within tolerance",
        T::NAME,
        if banded { "banded" } else { "random" },
        da.plan().passes.len(),
        per * 1e3,
        bytes as f64 / per / 1e9,
        bytes as f64 / 1e9,
        upload.as_secs_f64(),
    );
}
