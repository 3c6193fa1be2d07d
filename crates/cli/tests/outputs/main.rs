//! The output files of `triangles`, `matmul`, `spmv` and `generate`, compared with answers
//! computed here, independently of the library: brute-force triangle counts from the edge
//! list, a naive f64 triple loop for the product, row sums of the Matrix Market text for
//! y = A·1, and the generators' files parsed and checked against their own reports. Every
//! case runs on the CPU and on OpenCL (PoCL here); with no OpenCL device the OpenCL half
//! skips through `trident_core::testing::skip`, so `REQUIRE_GPU=1` makes it fail.
//!
//! Assertions are on content (numbers, node sets, shapes, dtypes), not on layout: comment
//! lines, a header row and column order of the reports may change.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use trident_core::testing::{self, Needs};

mod generate;
mod matmul;
mod spmv;
mod triangles;

const BIN: &str = env!("CARGO_BIN_EXE_trident");

fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trident-outputs-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn trident(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run trident")
}

/// Runs `trident args`, requires success, returns stdout.
fn ok(args: &[&str]) -> String {
    let o = trident(args);
    assert!(
        o.status.success(),
        "trident {args:?} failed ({}):\n{}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The backends to run: the CPU, and OpenCL when a device opens (else a skip, which
/// `REQUIRE_GPU=1` turns into a failure; a start-up failure other than "no device" fails).
fn backends() -> Vec<&'static str> {
    #[cfg(feature = "opencl")]
    {
        static OPENCL: OnceLock<Result<(), String>> = OnceLock::new();
        let opened = OPENCL.get_or_init(|| match trident_opencl::OpenCl::new() {
            Ok(_) => Ok(()),
            Err(e) if e.is_no_device() => Err(testing::Report(&e).to_string()),
            Err(e) => panic!("OpenCL failed to start: {}", testing::Report(&e)),
        });
        match opened {
            Ok(()) => vec!["cpu", "opencl"],
            Err(why) => {
                testing::skip(Needs::Gpu, format!("the CLI's OpenCL outputs: {why}"));
                vec!["cpu"]
            }
        }
    }
    #[cfg(not(feature = "opencl"))]
    {
        testing::skip(Needs::Gpu, "trident built without the opencl feature");
        vec!["cpu"]
    }
}

/// The integer right before ` word` (first such), e.g. `num_before("9 nodes", "nodes")`.
fn num_before(text: &str, word: &str) -> Option<u64> {
    let pat = format!(" {word}");
    let mut from = 0;
    while let Some(i) = text[from..].find(&pat) {
        let at = from + i;
        let head = &text[..at];
        let digits: String = head
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if !digits.is_empty() {
            return digits.parse().ok();
        }
        from = at + pat.len();
    }
    None
}

/// The first integer after `key` on the first line starting with `key`.
fn field_u64(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.trim_start().starts_with(key))?;
    let rest = &line.trim_start()[key.len()..];
    let digits: String = rest
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

// ---------------------------------------------------------------------------------------
// Independent references
// ---------------------------------------------------------------------------------------

/// A simple undirected graph keyed by the labels of the file: self-loops dropped,
/// duplicate and reversed edges merged.
#[derive(Default)]
struct Simple {
    adj: BTreeMap<String, BTreeSet<String>>,
}

impl Simple {
    fn node(&mut self, a: &str) {
        self.adj.entry(a.to_string()).or_default();
    }
    fn edge(&mut self, a: &str, b: &str) {
        self.node(a);
        self.node(b);
        if a != b {
            self.adj.get_mut(a).unwrap().insert(b.to_string());
            self.adj.get_mut(b).unwrap().insert(a.to_string());
        }
    }
    fn edges(&self) -> usize {
        self.adj.values().map(BTreeSet::len).sum::<usize>() / 2
    }
    /// Per-node triangle counts by brute force over neighbour pairs.
    fn triangles(&self) -> BTreeMap<String, u64> {
        self.adj
            .iter()
            .map(|(v, nb)| {
                let nb: Vec<&String> = nb.iter().collect();
                let mut t = 0;
                for i in 0..nb.len() {
                    let ni = &self.adj[nb[i]];
                    for w in &nb[i + 1..] {
                        if ni.contains(*w) {
                            t += 1;
                        }
                    }
                }
                (v.clone(), t)
            })
            .collect()
    }
}

/// A whitespace-separated edge list (`#`/`%` comments, optional weight column).
fn parse_edge_list(text: &str) -> Simple {
    let mut g = Simple::default();
    for l in text.lines() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('#') || l.starts_with('%') {
            continue;
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        g.edge(f[0], f[1]);
    }
    g
}

/// A Matrix Market file, read here: (rows, cols, entries with 0-based indices), symmetric
/// and skew-symmetric storage expanded, pattern entries 1, `array` files column-major.
fn parse_mtx(text: &str) -> (usize, usize, Vec<(usize, usize, f64)>) {
    let mut lines = text.lines();
    let banner = lines.next().unwrap().to_ascii_lowercase();
    let b: Vec<&str> = banner.split_whitespace().collect();
    assert_eq!(b[0], "%%matrixmarket");
    let (format, field, sym) = (b[2], b[3], b[4]);
    let mut data = lines.filter(|l| !l.trim().is_empty() && !l.starts_with('%'));
    let size: Vec<usize> = data
        .next()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let (r, c) = (size[0], size[1]);
    let mut e = Vec::new();
    let mut push = |i: usize, j: usize, v: f64| {
        e.push((i, j, v));
        if i != j {
            match sym {
                "symmetric" => e.push((j, i, v)),
                "skew-symmetric" => e.push((j, i, -v)),
                _ => {}
            }
        }
    };
    if format == "array" {
        let vals: Vec<f64> = data.map(|l| l.trim().parse().unwrap()).collect();
        let mut k = 0;
        for j in 0..c {
            let start = match sym {
                "general" => 0,
                "symmetric" => j,
                _ => j + 1,
            };
            for i in start..r {
                push(i, j, vals[k]);
                k += 1;
            }
        }
        assert_eq!(k, vals.len());
    } else {
        for l in data {
            let f: Vec<&str> = l.split_whitespace().collect();
            let i: usize = f[0].parse().unwrap();
            let j: usize = f[1].parse().unwrap();
            let v = if field == "pattern" {
                1.0
            } else {
                f[2].parse().unwrap()
            };
            push(i - 1, j - 1, v);
        }
    }
    (r, c, e)
}

// ---------------------------------------------------------------------------------------
// .npy by hand
// ---------------------------------------------------------------------------------------

/// Writes a 2-D little-endian C-order `.npy` (f32 when `single`).
fn write_npy(path: &Path, rows: usize, cols: usize, data: &[f64], single: bool) {
    assert_eq!(data.len(), rows * cols);
    let descr = if single { "<f4" } else { "<f8" };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend_from_slice(&(header.len() as u16).to_le_bytes());
    b.extend_from_slice(header.as_bytes());
    for &v in data {
        if single {
            b.extend_from_slice(&(v as f32).to_le_bytes());
        } else {
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::write(path, b).unwrap();
}

/// Reads a `.npy` of `<f4`/`<f8`: (descr, shape, values in C order as f64).
fn read_npy(path: &Path) -> (String, Vec<usize>, Vec<f64>) {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&b[..6], b"\x93NUMPY", "{}: not a .npy", path.display());
    let (hlen, start) = match b[6] {
        1 => (u16::from_le_bytes([b[8], b[9]]) as usize, 10),
        _ => (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12),
    };
    let header = std::str::from_utf8(&b[start..start + hlen]).unwrap();
    let value_of = |key: &str| -> &str {
        let i = header.find(&format!("'{key}'")).unwrap() + key.len() + 2;
        header[i..].trim_start_matches([':', ' '])
    };
    let descr = value_of("descr");
    let descr = descr[1..descr[1..].find('\'').unwrap() + 1].to_string();
    let fortran = value_of("fortran_order").starts_with("True");
    let shape_text = value_of("shape");
    let shape: Vec<usize> = shape_text[1..shape_text.find(')').unwrap()]
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    let body = &b[start + hlen..];
    let vals: Vec<f64> = match descr.as_str() {
        "<f8" => body
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        "<f4" => body
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        d => panic!("{}: unexpected dtype {d}", path.display()),
    };
    assert_eq!(vals.len(), shape.iter().product::<usize>(), "{header}");
    let vals = if fortran && shape.len() == 2 {
        let (r, c) = (shape[0], shape[1]);
        (0..r * c).map(|k| vals[(k % c) * r + k / c]).collect()
    } else {
        vals
    };
    (descr, shape, vals)
}
