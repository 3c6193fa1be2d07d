//! ELLPACK-R SpMV (f32) on every backend present, side by side.
//!
//! One criterion group per input (`spmv/random`, `spmv/banded`), one benchmark per backend
//! (`cpu`, `cuda`, `opencl`). Each times a device-resident `spmv(&A, &x, &mut y)` followed by
//! `synchronize()`; the matrix and vectors are uploaded once, outside the timing loop, and one
//! product is checked against the host before timing. Throughput is the byte model of
//! [`trident_benches::spmv_bytes`], given as `Throughput::BytesDecimal` so that criterion's
//! "thrpt" is the effective memory bandwidth in GB/s (10^9), the unit of the report.
//!
//! Environment:
//! - `TRIDENT_SPMV_ROWS`: rows (= columns) of each matrix, default 10 000 000.
//! - `TRIDENT_BENCH_BACKENDS=cpu,cuda,...`: only these backends (default: all present).
//! - `TRIDENT_BENCH_OPENCL_CPU=1`: also time OpenCL on a CPU device (e.g. PoCL), which is
//!   otherwise skipped because it is slow at 10M rows; naming `opencl` in
//!   `TRIDENT_BENCH_BACKENDS` does the same.
//! - `TRIDENT_SPMV_DUMP=<dir>`: also write each input as raw CSR for `benches/torch_spmv.py`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
use trident_benches::{
    banded_ellpack, dump_csr, random_ellpack, random_vector, spmv_bytes, spmv_rows, BackendFilter,
};
use trident_core::{EllpackR, Result, Spmv};
use trident_cpu::Cpu;
use trident_cuda::Cuda;
use trident_opencl::OpenCl;

/// Rows checked against the host before timing.
const CHECK_SAMPLES: usize = 4096;

/// The backends that started (and were selected).
struct Backends {
    cpu: Option<Cpu>,
    cuda: Option<Cuda>,
    opencl: Option<OpenCl>,
}

/// Starts a GPU backend, turning "no device" and other start-up errors into a printed note.
fn start<B>(name: &str, filter: &BackendFilter, make: impl FnOnce() -> Result<B>) -> Option<B> {
    if !filter.wants(name) {
        return None;
    }
    match make() {
        Ok(b) => Some(b),
        Err(e) if e.is_no_device() && !trident_core::testing::require_gpu() => {
            eprintln!("spmv bench: skipping {name}: {e}");
            None
        }
        Err(e) => fail(&format!("{name} failed to start: {e}")),
    }
}

impl Backends {
    fn start(filter: &BackendFilter) -> Self {
        let cpu = filter.wants("cpu").then(Cpu::new);
        let cuda = start("cuda", filter, trident_benches::open_cuda);
        let opencl = start("opencl", filter, trident_benches::open_opencl).filter(|cl| {
            let cpu_ok = std::env::var("TRIDENT_BENCH_OPENCL_CPU").is_ok_and(|v| v == "1")
                || filter.names_explicitly("opencl");
            if !cl.is_gpu() && !cpu_ok {
                eprintln!(
                    "spmv bench: skipping opencl on {} (not a GPU; set TRIDENT_BENCH_OPENCL_CPU=1 to include it)",
                    trident_core::Backend::device(cl)
                );
            }
            cl.is_gpu() || cpu_ok
        });
        Self { cpu, cuda, opencl }
    }
}

/// Uploads `a` and `x` to `b`, checks one product, then times `spmv` + `synchronize`.
fn bench_on<B: Spmv<f32>>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    b: &B,
    a: &EllpackR<f32>,
    x: &[f32],
) {
    let name = b.name();
    let setup = || -> Result<_> {
        let da = b.upload_ellpack(a)?;
        let dx = b.upload(x)?;
        let mut dy = b.zeros(a.rows())?;
        b.spmv(&da, &dx, &mut dy)?;
        b.synchronize()?;
        let y = b.download(&dy)?;
        Ok((da, dx, dy, y))
    };
    let (da, dx, mut dy, y) = match setup() {
        Ok(v) => v,
        Err(e) => fail(&format!("{name}: {e}")),
    };
    if let Err(m) = trident_core::spmv::check_sampled(a, x, &y, CHECK_SAMPLES) {
        fail(&format!("{name} computed a wrong product: {m}"));
    }
    drop(y);
    eprintln!("spmv bench: {name} on {}", b.device());
    group.bench_function(name, |bench| {
        bench.iter(|| {
            b.spmv(&da, &dx, &mut dy).expect("spmv failed");
            b.synchronize().expect("synchronize failed");
        })
    });
}

/// A benchmark that cannot run or gets a wrong answer exits non-zero, so `run.sh` fails.
fn fail(message: &str) -> ! {
    eprintln!("spmv bench: FAILED: {message}");
    std::process::exit(1)
}

fn main() {
    let filter = BackendFilter::from_env();
    let backends = Backends::start(&filter);
    let rows = spmv_rows();
    let dump = std::env::var_os("TRIDENT_SPMV_DUMP").map(PathBuf::from);
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .without_plots()
        .configure_from_args();

    let x = random_vector(rows, 3);
    for input in ["random", "banded"] {
        let t = Instant::now();
        let a = match input {
            "random" => random_ellpack(rows, rows, 1),
            _ => banded_ellpack(rows, 2),
        };
        eprintln!(
            "spmv bench: {input}: {rows} rows x {} entries generated in {:.2?}",
            a.width(),
            t.elapsed()
        );
        if let Some(dir) = &dump {
            let t = Instant::now();
            match dump_csr(dir, input, &a, &x) {
                Ok(()) => eprintln!(
                    "spmv bench: {input} dumped to {} in {:.2?}",
                    dir.display(),
                    t.elapsed()
                ),
                Err(e) => eprintln!("spmv bench: dumping {input} to {}: {e}", dir.display()),
            }
        }
        let mut group = c.benchmark_group(format!("spmv/{input}"));
        group
            .throughput(Throughput::BytesDecimal(spmv_bytes(
                a.rows(),
                a.cols(),
                a.nnz(),
            )))
            .sampling_mode(SamplingMode::Flat);
        if let Some(b) = &backends.cpu {
            bench_on(&mut group, b, &a, &x);
        }
        if let Some(b) = &backends.cuda {
            bench_on(&mut group, b, &a, &x);
        }
        if let Some(b) = &backends.opencl {
            bench_on(&mut group, b, &a, &x);
        }
        group.finish();
    }
    c.final_summary();
}
