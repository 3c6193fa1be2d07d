//! A rough SpMV throughput measurement (ignored by default; run it on a GPU with
//! `cargo test --release -p trident-opencl --test throughput -- --ignored --nocapture`).

use std::time::Instant;

use trident_core::{Backend, DeviceVectors, EllpackR, Spmv};
use trident_opencl::{ClScalar, OpenCl};

/// A `rows x rows` matrix with `per_row` pseudo-random columns in every row.
fn matrix<T: ClScalar>(rows: usize, per_row: usize) -> EllpackR<T> {
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut cols = Vec::with_capacity(rows * per_row);
    for _ in 0..rows {
        let mut row: Vec<u32> = (0..per_row)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s % rows as u64) as u32
            })
            .collect();
        row.sort_unstable();
        row.dedup();
        while row.len() < per_row {
            // Rare duplicates: pad with distinct columns past the largest.
            let next = (row.last().copied().unwrap_or(0) + 1) % rows as u32;
            if !row.contains(&next) {
                row.push(next);
            }
            row.sort_unstable();
        }
        cols.push(row);
    }
    let mut values = vec![T::zero(); rows * per_row];
    let mut col_idx = vec![0u32; rows * per_row];
    for (i, row) in cols.iter().enumerate() {
        for (k, &c) in row.iter().enumerate() {
            values[k * rows + i] = T::from_f64(1.0 / (1 + k) as f64);
            col_idx[k * rows + i] = c;
        }
    }
    EllpackR::new(
        rows,
        rows,
        per_row,
        values,
        col_idx,
        vec![per_row as u32; rows],
    )
    .expect("valid matrix")
}

fn measure<T: ClScalar>(b: &OpenCl, rows: usize, per_row: usize) {
    let a = matrix::<T>(rows, per_row);
    let da = b.upload_ellpack(&a).unwrap();
    let dx = b.upload(&vec![T::one(); rows]).unwrap();
    let mut dy = b.zeros(rows).unwrap();
    for _ in 0..3 {
        b.spmv(&da, &dx, &mut dy).unwrap();
    }
    b.synchronize().unwrap();
    let reps = 50;
    let t = Instant::now();
    for _ in 0..reps {
        b.spmv(&da, &dx, &mut dy).unwrap();
    }
    b.synchronize().unwrap();
    let secs = t.elapsed().as_secs_f64() / reps as f64;
    let nnz = (rows * per_row) as f64;
    let sz = std::mem::size_of::<T>() as f64;
    // Matrix values + column indices + row lengths + y, and x at least once.
    let bytes = nnz * (sz + 4.0) + rows as f64 * (4.0 + 2.0 * sz);
    println!(
        "{}: {rows} rows x {per_row}: {:.3} ms, {:.1} GFLOP/s, {:.0} GB/s (compulsory traffic)",
        T::NAME,
        secs * 1e3,
        2.0 * nnz / secs / 1e9,
        bytes / secs / 1e9
    );
    let y = b.download(&dy).unwrap();
    let expect: f64 = (0..per_row).map(|k| 1.0 / (1 + k) as f64).sum();
    assert!((y[rows / 2].to_f64() - expect).abs() < 1e-3 * expect);
}

#[test]
#[ignore = "a measurement, not a check; run on a GPU"]
fn spmv_throughput() {
    let b = match OpenCl::new() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("skipping: {e}");
            return;
        }
    };
    println!(
        "{} (work-group {:?})",
        b.device(),
        b.spmv_work_group_size::<f32>()
    );
    let rows = if b.is_gpu() { 4_000_000 } else { 200_000 };
    measure::<f32>(&b, rows, 16);
    if b.has_fp64() {
        measure::<f64>(&b, rows, 16);
    }
}
