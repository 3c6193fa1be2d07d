//! Shared helpers for the benchmarks: fast generation of the SpMV inputs straight into
//! ELLPACK-R arrays, the byte-traffic model used for criterion's throughput, backend selection
//! from the environment, and the raw CSR dumps that `benches/torch_spmv.py` reads.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use rayon::prelude::*;
use trident_core::EllpackR;

/// Entries per row of the SpMV benchmark matrices.
pub const SPMV_WIDTH: usize = 16;

/// Default row (and column) count of the SpMV benchmark matrices.
pub const SPMV_DEFAULT_ROWS: usize = 10_000_000;

/// Rows per parallel generation task.
const GEN_CHUNK: usize = 1 << 14;

/// Row count of the SpMV inputs: env `TRIDENT_SPMV_ROWS`, else [`SPMV_DEFAULT_ROWS`].
pub fn spmv_rows() -> usize {
    match std::env::var("TRIDENT_SPMV_ROWS") {
        Ok(v) => v.trim().replace('_', "").parse().unwrap_or_else(|_| {
            eprintln!("TRIDENT_SPMV_ROWS={v:?} is not a row count; using {SPMV_DEFAULT_ROWS}");
            SPMV_DEFAULT_ROWS
        }),
        Err(_) => SPMV_DEFAULT_ROWS,
    }
}

/// The compulsory memory traffic of an SpMV `y = A x` (f32 values, 32-bit indices) on a
/// `rows x cols` matrix holding `nnz` stored entries: what any implementation must move at least
/// once, so bytes / time is a lower bound on the bandwidth used and is directly comparable with
/// the memory's peak (3.35 TB/s on an H100 SXM):
///
/// ```text
/// bytes = nnz * (4 + 4)   values and column indices, each read once
///       + rows * 4        row lengths rl (CSR: row pointers)
///       + rows * 4        y, written once
///       + cols * 4        x, read at least once
/// ```
///
/// With 16 entries per row and `rows == cols` this is 140 bytes per row. Repeated x reads
/// (random columns) are extra traffic that this model does not credit.
/// `benches/torch_spmv.py` uses the same formula for the cuSPARSE CSR baseline.
pub fn spmv_bytes(rows: usize, cols: usize, nnz: usize) -> u64 {
    (nnz * (4 + 4) + rows * 4 + rows * 4 + cols * 4) as u64
}

/// One step of splitmix64: a good 64-bit mix, used to seed per-row generators and for
/// counter-based values (so that parallel generation is deterministic).
#[inline]
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A xorshift64 generator (never seeded with 0).
#[derive(Debug, Clone)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator seeded from `seed` (any value).
    pub fn new(seed: u64) -> Self {
        Self(splitmix64(seed) | 1)
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut s = self.0;
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        self.0 = s;
        s
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-shift (bias below 2^-32 for n < 2^32).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// A value in `[-1, 1)` determined by `(seed, i)` alone.
#[inline]
pub fn unit_value(seed: u64, i: u64) -> f32 {
    let bits = splitmix64(seed ^ i.wrapping_mul(0xD1B5_4A32_D192_ED03)) >> 40; // 24 bits
    (bits as f32) * (2.0 / (1u64 << 24) as f32) - 1.0
}

/// A dense vector of `n` values in `[-1, 1)`.
pub fn random_vector(n: usize, seed: u64) -> Vec<f32> {
    (0..n)
        .into_par_iter()
        .map(|i| unit_value(seed, i as u64))
        .collect()
}

/// Fills a `rows x cols` ELLPACK-R matrix with `width = min(16, cols)` entries in every row;
/// `row_cols(i, &mut rng, &mut buf)` writes row `i`'s sorted, distinct columns into `buf`.
/// Values are random in `[-1, 1)`. Rows are generated in parallel, directly column-major.
fn fill_ellpack(
    rows: usize,
    cols: usize,
    seed: u64,
    row_cols: impl Fn(usize, &mut XorShift, &mut [u32]) + Sync,
) -> EllpackR<f32> {
    let width = SPMV_WIDTH.min(cols);
    let slots = rows * width;
    let mut col_idx = vec![0u32; slots];
    // Column-major: slice k holds entry k of every row. Split each slice into the same row
    // chunks, and hand chunk c of every slice to one task.
    let mut per_k: Vec<std::slice::ChunksMut<'_, u32>> = col_idx
        .chunks_mut(rows.max(1))
        .map(|s| s.chunks_mut(GEN_CHUNK))
        .collect();
    let chunks = rows.div_ceil(GEN_CHUNK);
    let tasks: Vec<Vec<&mut [u32]>> = (0..chunks)
        .map(|_| {
            per_k
                .iter_mut()
                .map(|it| it.next().expect("one chunk per task"))
                .collect()
        })
        .collect();
    tasks.into_par_iter().enumerate().for_each(|(c, mut ks)| {
        let mut buf = vec![0u32; width];
        let base = c * GEN_CHUNK;
        let n = ks.first().map_or(0, |s| s.len());
        for off in 0..n {
            let i = base + off;
            let mut rng = XorShift::new(seed ^ (i as u64).wrapping_mul(0xA24B_AED4_963E_E407));
            row_cols(i, &mut rng, &mut buf);
            for (k, s) in ks.iter_mut().enumerate() {
                s[off] = buf[k];
            }
        }
    });
    let values: Vec<f32> = (0..slots)
        .into_par_iter()
        .map(|p| unit_value(seed.rotate_left(17), p as u64))
        .collect();
    let rl = vec![width as u32; rows];
    EllpackR::new(rows, cols, width, values, col_idx, rl)
        .expect("generated ELLPACK-R arrays satisfy the invariants")
}

/// `rows x cols` (`cols <= u32::MAX`), 16 entries per row at distinct, sorted, uniformly
/// random columns; random values in `[-1, 1)`.
pub fn random_ellpack(rows: usize, cols: usize, seed: u64) -> EllpackR<f32> {
    assert!(cols <= u32::MAX as usize, "columns must fit in u32");
    fill_ellpack(rows, cols, seed, |_, rng, buf| {
        let w = buf.len();
        let mut n = 0;
        while n < w {
            let c = rng.below(cols as u64) as u32;
            // Rejection keeps the columns distinct; with w = 16 and many columns this almost
            // never loops.
            if !buf[..n].contains(&c) {
                buf[n] = c;
                n += 1;
            }
        }
        buf.sort_unstable();
    })
}

/// `n x n` banded: row `i` holds columns `i-8 ..= i+7`, shifted to stay inside `0..n` at the
/// edges (so every row still has 16 distinct columns); random values in `[-1, 1)`.
pub fn banded_ellpack(n: usize, seed: u64) -> EllpackR<f32> {
    assert!(n <= u32::MAX as usize, "columns must fit in u32");
    fill_ellpack(n, n, seed, |i, _, buf| {
        let w = buf.len();
        let half = SPMV_WIDTH / 2;
        let start = i.saturating_sub(half).min(n - w);
        for (k, c) in buf.iter_mut().enumerate() {
            *c = (start + k) as u32;
        }
    })
}

/// Writes `a` in CSR and `x` as raw little-endian files in `dir`, for `benches/torch_spmv.py`:
///
/// - `<name>.indptr.i64.bin`: `rows + 1` row pointers (i64)
/// - `<name>.indices.i32.bin`: `nnz` column indices (i32), sorted within each row
/// - `<name>.values.f32.bin`: `nnz` values (f32)
/// - `<name>.x.f32.bin`: `cols` entries of x (f32)
/// - `<name>.meta.json`: `{"name", "rows", "cols", "nnz", "bytes"}` (`bytes` = [`spmv_bytes`])
pub fn dump_csr(dir: &Path, name: &str, a: &EllpackR<f32>, x: &[f32]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let create = |suffix: &str| -> std::io::Result<BufWriter<File>> {
        Ok(BufWriter::with_capacity(
            1 << 20,
            File::create(dir.join(format!("{name}.{suffix}")))?,
        ))
    };
    let rows = a.rows();
    let rl = a.row_lengths();
    let mut indptr = create("indptr.i64.bin")?;
    let mut indices = create("indices.i32.bin")?;
    let mut values = create("values.f32.bin")?;
    let mut nnz = 0i64;
    indptr.write_all(&nnz.to_le_bytes())?;
    for (i, &len) in rl.iter().enumerate() {
        for k in 0..len as usize {
            let (c, v) = a.entry(i, k);
            indices.write_all(&(c as i32).to_le_bytes())?;
            values.write_all(&v.to_le_bytes())?;
        }
        nnz += i64::from(len);
        indptr.write_all(&nnz.to_le_bytes())?;
    }
    indptr.flush()?;
    indices.flush()?;
    values.flush()?;
    let mut xs = create("x.f32.bin")?;
    for v in x {
        xs.write_all(&v.to_le_bytes())?;
    }
    xs.flush()?;
    let meta = format!(
        "{{\"name\": \"{name}\", \"rows\": {rows}, \"cols\": {}, \"nnz\": {nnz}, \"bytes\": {}}}\n",
        a.cols(),
        spmv_bytes(rows, a.cols(), nnz as usize)
    );
    std::fs::write(dir.join(format!("{name}.meta.json")), meta)
}

/// The path in the environment variable `var` when it is set and not empty (the GPU runtime
/// to load: `TRIDENT_CUDA_LIBRARY`, `TRIDENT_OPENCL_LIBRARY`).
fn library(var: &str) -> Option<std::path::PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(Into::into)
}

/// The CUDA backend on the device of `TRIDENT_CUDA_DEVICE` (default 0), with the driver
/// library of `TRIDENT_CUDA_LIBRARY` when set: the benchmarks read them here, the library
/// reads no environment.
pub fn open_cuda() -> trident_core::Result<trident_cuda::Cuda> {
    if let Some(lib) = library(trident_cuda::LIBRARY_ENV) {
        trident_cuda::set_driver_library(&lib)?;
    }
    let ordinal = std::env::var(trident_cuda::DEVICE_ENV).ok();
    let device = trident_cuda::parse_ordinal(ordinal.as_deref())?;
    trident_cuda::Cuda::with_options(&trident_cuda::CudaOptions::new(device))
}

/// The OpenCL backend on the device of the `TRIDENT_OPENCL_PLATFORM` /
/// `TRIDENT_OPENCL_DEVICE` filters (see [`trident_opencl::Selector`]), through the ICD loader
/// of `TRIDENT_OPENCL_LIBRARY` when set.
pub fn open_opencl() -> trident_core::Result<trident_opencl::OpenCl> {
    if let Some(lib) = library(trident_opencl::ENV_LIBRARY) {
        trident_opencl::set_icd_library(&lib)?;
    }
    let var = |name| std::env::var(name).ok();
    trident_opencl::OpenCl::select(&trident_opencl::Selector::from_filters(
        var(trident_opencl::ENV_PLATFORM).as_deref(),
        var(trident_opencl::ENV_DEVICE).as_deref(),
    ))
}

/// Which backends to benchmark: env `TRIDENT_BENCH_BACKENDS` (comma-separated names, e.g.
/// `cpu,cuda`); all when unset or empty.
#[derive(Debug, Clone)]
pub struct BackendFilter {
    names: Option<Vec<String>>,
}

impl BackendFilter {
    /// Reads `TRIDENT_BENCH_BACKENDS`.
    pub fn from_env() -> Self {
        let names = std::env::var("TRIDENT_BENCH_BACKENDS")
            .ok()
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_ascii_lowercase())
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
            })
            .filter(|v| !v.is_empty());
        Self { names }
    }

    /// True if `backend` should run.
    pub fn wants(&self, backend: &str) -> bool {
        match &self.names {
            None => true,
            Some(n) => n.iter().any(|b| b == backend),
        }
    }

    /// True if `backend` was named explicitly.
    pub fn names_explicitly(&self, backend: &str) -> bool {
        match &self.names {
            None => false,
            Some(n) => n.iter().any(|b| b == backend),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_rows_are_sorted_distinct_and_full() {
        let a = random_ellpack(1000, 5000, 7);
        assert_eq!(a.width(), 16);
        assert_eq!(a.nnz(), 16_000);
        // EllpackR::new already checked sorted/distinct/in range; check it is not degenerate.
        let distinct: std::collections::HashSet<usize> =
            (0..1000).map(|i| a.entry(i, 0).0).collect();
        assert!(distinct.len() > 500);
    }

    #[test]
    fn banded_shifts_at_the_edges() {
        let a = banded_ellpack(100, 1);
        let row = |i: usize| (0..16).map(|k| a.entry(i, k).0).collect::<Vec<_>>();
        assert_eq!(row(0), (0..16).collect::<Vec<_>>());
        assert_eq!(row(50), (42..58).collect::<Vec<_>>());
        assert_eq!(row(99), (84..100).collect::<Vec<_>>());
        let tiny = banded_ellpack(5, 1);
        assert_eq!(tiny.width(), 5);
    }

    #[test]
    fn generation_is_deterministic() {
        assert_eq!(random_ellpack(300, 300, 3), random_ellpack(300, 300, 3));
        assert_eq!(random_vector(10, 2), random_vector(10, 2));
    }

    #[test]
    fn dump_round_trips() {
        let dir = std::env::temp_dir().join(format!("trident-dump-{}", std::process::id()));
        let a = banded_ellpack(40, 2);
        let x = random_vector(40, 3);
        dump_csr(&dir, "banded", &a, &x).unwrap();
        let indptr = std::fs::read(dir.join("banded.indptr.i64.bin")).unwrap();
        assert_eq!(indptr.len(), 41 * 8);
        let last = i64::from_le_bytes(indptr[40 * 8..].try_into().unwrap());
        assert_eq!(last, 640);
        let vals = std::fs::read(dir.join("banded.values.f32.bin")).unwrap();
        let v0 = f32::from_le_bytes(vals[..4].try_into().unwrap());
        assert_eq!(v0, a.entry(0, 0).1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn byte_model_matches_the_documented_formula() {
        let rows = 10_000_000;
        assert_eq!(spmv_bytes(rows, rows, rows * 16), 140 * rows as u64);
    }
}
