//! Edge-list reading throughput (bytes of input per second): all cores by default, one
//! core under `RAYON_NUM_THREADS=1` (the reader is parallel throughout: file read, parse,
//! numbering, CSR build; the result is the same for any thread count).
//!
//! Generates a synthetic SNAP-style numeric edge list (`u<TAB>v` lines grouped by source with
//! random targets, a `#` comment header, every node `0..n` used, average degree about 20)
//! into the system temp folder and measures
//!
//! * `read/parse_edges`: bytes already in memory → [`EdgeList`] (parsing and numbering),
//! * `read/read_graph`: the whole `read_graph` from the file (read, parse, build the CSR graph),
//!   and
//! * `read/parse_labels`: the same edges with every id a label (`Y` before each number, as
//!   a PPI network names its proteins) → [`EdgeList`] in the `Labels` mode (parsing, and
//!   numbering the labels in order of first appearance); its throughput counts the labelled
//!   bytes.
//!
//! The size is `TRIDENT_READ_BENCH_MB` (default 64 MB). A 1 GB input, on every core and on
//! one:
//!
//! ```text
//! TRIDENT_READ_BENCH_MB=1024 cargo bench -p trident-benches --bench read
//! RAYON_NUM_THREADS=1 TRIDENT_READ_BENCH_MB=1024 cargo bench -p trident-benches --bench read
//! ```
//!
//! The phases (read, parse, build) and CPU time, for any file (e.g. a `trident generate
//! kronecker` graph): `crates/core/examples/read_profile.rs`.
//!
//! [`EdgeList`]: trident_core::io::EdgeList

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use trident_core::io::{parse_edges, read_graph, EdgeListOptions, IdMode};

fn bench_size_bytes() -> u64 {
    let mb: u64 = std::env::var("TRIDENT_READ_BENCH_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&m| m > 0)
        .unwrap_or(64);
    mb * 1024 * 1024
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn push_uint(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut k = buf.len();
    loop {
        k -= 1;
        buf[k] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[k..]);
}

/// Writes about `bytes` bytes of edge list to `path` (reused when already there). Every
/// node `0..n` has out-edges, so the numbering is kept (no relabelling, no labels).
fn generate(path: &Path, bytes: u64) -> u64 {
    if let Ok(m) = std::fs::metadata(path) {
        if m.len() >= bytes {
            return m.len();
        }
    }
    // About 16 bytes a line and 8.5 lines a node: one pass over the nodes fills ~85% of
    // the size, the rest comes from a second pass.
    let nodes = (bytes / 160).max(1000);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let f = std::fs::File::create(path).expect("create bench file");
    let mut w = std::io::BufWriter::with_capacity(1 << 22, f);
    let mut chunk = Vec::with_capacity(1 << 20);
    chunk.extend_from_slice(b"# Synthetic benchmark graph\n# FromNodeId\tToNodeId\n");
    let mut written = 0u64;
    'outer: loop {
        for u in 0..nodes {
            let deg = 1 + rng.next() % 16;
            for _ in 0..deg {
                push_uint(&mut chunk, u);
                chunk.push(b'\t');
                push_uint(&mut chunk, rng.next() % nodes);
                chunk.push(b'\n');
            }
            if chunk.len() >= 1 << 20 {
                w.write_all(&chunk).expect("write bench file");
                written += chunk.len() as u64;
                chunk.clear();
                if written >= bytes {
                    break 'outer;
                }
            }
        }
    }
    w.write_all(&chunk).expect("write bench file");
    written += chunk.len() as u64;
    w.flush().expect("write bench file");
    written
}

fn bench_read(c: &mut Criterion) {
    let want = bench_size_bytes();
    let path: PathBuf = std::env::temp_dir().join(format!(
        "trident_read_bench_v2_{}mb.txt",
        want / (1024 * 1024)
    ));
    let size = generate(&path, want);
    let opts = EdgeListOptions::default();
    let name = path.display().to_string();

    let mut g = c.benchmark_group("read");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(if size > 256 << 20 { 30 } else { 5 }));
    g.throughput(Throughput::Bytes(size));

    let bytes = std::fs::read(&path).expect("read bench file");
    g.bench_function("parse_edges", |b| {
        b.iter(|| parse_edges(&bytes, &name, &opts).expect("parse"))
    });
    let labelled = labelled(&bytes);
    drop(bytes);
    g.bench_function("read_graph", |b| {
        b.iter(|| read_graph(&path, &opts).expect("read_graph"))
    });
    g.throughput(Throughput::Bytes(labelled.len() as u64));
    let labels = EdgeListOptions {
        ids: IdMode::Labels,
        ..EdgeListOptions::default()
    };
    g.bench_function("parse_labels", |b| {
        b.iter(|| parse_edges(&labelled, &name, &labels).expect("parse labels"))
    });
    g.finish();
}

/// `text` with every id of a data line a label: `Y` before it.
fn labelled(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 4);
    for line in text.split_inclusive(|&b| b == b'\n') {
        if line.first() == Some(&b'#') {
            out.extend_from_slice(line);
            continue;
        }
        let mut start = true;
        for &b in line {
            if start && b.is_ascii_digit() {
                out.push(b'Y');
            }
            start = !b.is_ascii_digit();
            out.push(b);
        }
    }
    out
}

criterion_group!(benches, bench_read);
criterion_main!(benches);
