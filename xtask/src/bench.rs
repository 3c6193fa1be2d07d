//! `xtask bench` and `xtask bench-report`: run the criterion benchmarks, then summarise
//! criterion's results as markdown tables and an SVG bar chart.
//!
//! The report reads every `<dir>/**/new/benchmark.json` (criterion's id of the benchmark:
//! group, function, throughput) with the `estimates.json` beside it (the median). A group id
//! `FILE/INPUT` (e.g. `spmv/random`) is one row of table `FILE`, and the function id (`cpu`,
//! `cuda`, `opencl`) is the column: benches that compare backends name their groups so. Any
//! other group `NAME` is table `NAME` with one row per function and a single `time` column.
//!
//! Baselines measured in the same run outside criterion (vendor libraries through torch or
//! CuPy, peer programs such as GAP's `tc` or `mcl`) join the tables as extra columns from
//! JSON files (`--baseline FILE`, repeatable):
//! `{"baselines": [{"table": "matmul", "column": "cuBLAS", "reference": true,
//!   "results": {"f32/8192": {"median_ms": 21.4, "bytes": 123}}}]}`; `reference: true` makes
//! the column the one each row's speed-ups are stated against. The older
//! `{"results": {INPUT: {"median_ms", "bytes"}}}` of `benches/torch_spmv.py` is table `spmv`,
//! column `torch (cuSPARSE)`, the reference.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{cargo, fail, flag_value, target_dir, usage, Context, Result};

mod crossover;

/// Column order of the known backends; others follow alphabetically.
const BACKEND_ORDER: [&str; 3] = ["cpu", "cuda", "opencl"];

/// Column name of the torch (cuSPARSE) baseline.
const TORCH: &str = "torch (cuSPARSE)";

pub fn run(args: &[String]) -> Result {
    let mut algorithm = None;
    let mut backends: Vec<String> = Vec::new();
    let mut torch = None;
    let mut baselines: Vec<PathBuf> = Vec::new();
    let mut passthrough: Vec<String> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--" {
            passthrough.extend(args[i + 1..].iter().cloned());
            break;
        } else if let Some(v) = flag_value(args, &mut i, "--backend")? {
            backends.extend(v.split(',').map(|s| s.trim().to_ascii_lowercase()));
        } else if let Some(v) = flag_value(args, &mut i, "--torch")? {
            torch = Some(PathBuf::from(v));
        } else if let Some(v) = flag_value(args, &mut i, "--baseline")? {
            baselines.push(PathBuf::from(v));
        } else if args[i].starts_with('-') {
            return Err(usage(format!("unexpected option `{}`", args[i])));
        } else if algorithm.is_none() {
            algorithm = Some(args[i].clone());
        } else {
            return Err(usage(format!("unexpected argument `{}`", args[i])));
        }
        i += 1;
    }

    let criterion_dir = std::env::var_os("CRITERION_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join("criterion"));
    let mut cmd = cargo();
    cmd.args(["bench", "-p", "trident-benches"]);
    match &algorithm {
        Some(a) => cmd.args(["--bench", a]),
        None => cmd.arg("--benches"),
    };
    cmd.env("CRITERION_HOME", &criterion_dir);
    if !backends.is_empty() {
        cmd.env("TRIDENT_BENCH_BACKENDS", backends.join(","));
    }
    if !passthrough.is_empty() {
        cmd.arg("--").args(&passthrough);
    }
    eprintln!("running {cmd:?}");
    let status = cmd.status().context("running cargo bench")?;
    if !status.success() {
        return Err(fail(format!("cargo bench failed ({status})")));
    }
    report(&criterion_dir, torch.as_deref(), &baselines)
}

pub fn report_cmd(args: &[String]) -> Result {
    let mut dir = None;
    let mut torch = None;
    let mut baselines = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if let Some(v) = flag_value(args, &mut i, "--torch")? {
            torch = Some(PathBuf::from(v));
        } else if let Some(v) = flag_value(args, &mut i, "--baseline")? {
            baselines.push(PathBuf::from(v));
        } else if args[i].starts_with('-') || dir.is_some() {
            return Err(usage(format!("unexpected argument `{}`", args[i])));
        } else {
            dir = Some(PathBuf::from(&args[i]));
        }
        i += 1;
    }
    let dir = dir.ok_or_else(|| usage("bench-report needs the criterion directory"))?;
    report(&dir, torch.as_deref(), &baselines)
}

/// One measured benchmark.
#[derive(Debug, Clone)]
struct Measurement {
    /// Median time per iteration, nanoseconds.
    median_ns: f64,
    /// Bytes per iteration (criterion's `Throughput::Bytes` or `BytesDecimal`), if set.
    bytes: Option<u64>,
}

impl Measurement {
    /// Effective bandwidth, GB/s (bytes per nanosecond).
    fn gbps(&self) -> Option<f64> {
        self.bytes.map(|b| b as f64 / self.median_ns)
    }
}

/// One bench file's results: input → backend → measurement.
type Table = BTreeMap<String, BTreeMap<String, Measurement>>;

/// Bench file → its table.
type Results = BTreeMap<String, Table>;

/// Bench file → the column its speed-ups are stated against.
type References = BTreeMap<String, String>;

/// Writes `<dir>/report.md` and `<dir>/report.svg` and prints the markdown.
fn report(dir: &Path, torch: Option<&Path>, baselines: &[PathBuf]) -> Result {
    if !dir.is_dir() {
        return Err(fail(format!("{}: no such directory", dir.display())));
    }
    let mut results = Results::new();
    let mut found = Vec::new();
    find_benchmarks(dir, &mut found);
    for bench_json in &found {
        match read_measurement(bench_json) {
            Ok((file, input, backend, m)) => {
                results
                    .entry(file)
                    .or_default()
                    .entry(input)
                    .or_default()
                    .insert(backend, m);
            }
            Err(e) => eprintln!("bench-report: ignoring {}: {e}", bench_json.display()),
        }
    }
    if results.is_empty() {
        return Err(fail(format!(
            "no criterion results (*/new/benchmark.json) under {}",
            dir.display()
        )));
    }
    let mut references = References::new();
    if let Some(path) = torch {
        add_torch(&mut results, path)?;
        references.insert("spmv".into(), TORCH.into());
    }
    for path in baselines {
        add_baselines(&mut results, &mut references, path)?;
    }
    let md = markdown(&results, &references);
    let svg = svg(&results);
    let (md_path, svg_path) = (dir.join("report.md"), dir.join("report.svg"));
    std::fs::write(&md_path, &md).context(format!("writing {}", md_path.display()))?;
    std::fs::write(&svg_path, svg).context(format!("writing {}", svg_path.display()))?;
    if let Some(plot) = results.get("matmul").and_then(crossover::svg) {
        let path = dir.join("report_matmul.svg");
        std::fs::write(&path, plot).context(format!("writing {}", path.display()))?;
        eprintln!("bench-report: wrote {} (GFLOP/s against n)", path.display());
    }
    println!("{md}");
    eprintln!(
        "bench-report: wrote {} and {}",
        md_path.display(),
        svg_path.display()
    );
    Ok(())
}

/// Every `new/benchmark.json` under `dir` (not following links; `report` dirs skipped).
fn find_benchmarks(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let Ok(kind) = e.file_type() else { continue };
        let path = e.path();
        if kind.is_dir() && e.file_name() != "report" {
            if e.file_name() == "new" && path.join("benchmark.json").is_file() {
                out.push(path.join("benchmark.json"));
            } else {
                find_benchmarks(&path, out);
            }
        }
    }
}

fn read_json(path: &Path) -> std::result::Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `(file, input, backend, measurement)` of one criterion benchmark.
fn read_measurement(
    bench_json: &Path,
) -> std::result::Result<(String, String, String, Measurement), String> {
    let id = read_json(bench_json)?;
    let group = id["group_id"].as_str().ok_or("no group_id")?.to_string();
    let function = id["function_id"].as_str().map(str::to_string);
    let value = id["value_str"].as_str().map(str::to_string);
    let bytes = id["throughput"]["Bytes"]
        .as_u64()
        .or_else(|| id["throughput"]["BytesDecimal"].as_u64());
    let estimates = read_json(&bench_json.with_file_name("estimates.json"))?;
    let median_ns = estimates["median"]["point_estimate"]
        .as_f64()
        .ok_or("estimates.json has no median.point_estimate")?;
    // `FILE/INPUT` + function = backend: a backend comparison. Otherwise (a plain group
    // `NAME` of functions, optionally with parameters), one row per function.
    let with_value = |s: String| match &value {
        Some(v) => format!("{s} ({v})"),
        None => s,
    };
    let (file, input, backend) = match group.split_once('/') {
        Some((f, i)) => (
            f.to_string(),
            with_value(i.to_string()),
            function.unwrap_or_else(|| "time".to_string()),
        ),
        None => (
            group.clone(),
            with_value(function.unwrap_or_else(|| group.clone())),
            "time".to_string(),
        ),
    };
    Ok((file, input, backend, Measurement { median_ns, bytes }))
}

/// Adds the torch results (`{"results": {INPUT: {"median_ms", "bytes"}}}`, as written by
/// `benches/torch_spmv.py`) as backend [`TORCH`] of table `spmv`.
fn add_torch(results: &mut Results, path: &Path) -> Result {
    let v = read_json(path).map_err(|e| fail(format!("reading {}: {e}", path.display())))?;
    let Some(inputs) = v["results"].as_object() else {
        return Err(fail(format!("{}: no \"results\" object", path.display())));
    };
    let table = results.entry("spmv".to_string()).or_default();
    for (input, r) in inputs {
        let Some(ms) = r["median_ms"].as_f64() else {
            continue;
        };
        table.entry(input.clone()).or_default().insert(
            TORCH.to_string(),
            Measurement {
                median_ns: ms * 1e6,
                bytes: r["bytes"].as_u64(),
            },
        );
    }
    Ok(())
}

/// Adds the columns of a `{"baselines": [...]}` file (see the module documentation).
fn add_baselines(results: &mut Results, references: &mut References, path: &Path) -> Result {
    let v = read_json(path).map_err(|e| fail(format!("reading {}: {e}", path.display())))?;
    let Some(list) = v["baselines"].as_array() else {
        return Err(fail(format!("{}: no \"baselines\" array", path.display())));
    };
    for b in list {
        let (Some(table_name), Some(column), Some(inputs)) = (
            b["table"].as_str(),
            b["column"].as_str(),
            b["results"].as_object(),
        ) else {
            return Err(fail(format!(
                "{}: a baseline needs \"table\", \"column\" and \"results\"",
                path.display()
            )));
        };
        let table = results.entry(table_name.to_string()).or_default();
        for (input, r) in inputs {
            let Some(ms) = r["median_ms"].as_f64() else {
                continue;
            };
            table.entry(input.clone()).or_default().insert(
                column.to_string(),
                Measurement {
                    median_ns: ms * 1e6,
                    bytes: r["bytes"].as_u64(),
                },
            );
        }
        if b["reference"].as_bool() == Some(true) {
            references.insert(table_name.to_string(), column.to_string());
        }
    }
    Ok(())
}

/// Backend columns of one table, in [`BACKEND_ORDER`], then others, then torch.
fn columns(table: &Table) -> Vec<String> {
    let mut names: Vec<String> = table.values().flat_map(|row| row.keys().cloned()).collect();
    names.sort_by_key(|n| {
        let rank = BACKEND_ORDER
            .iter()
            .position(|b| b == n)
            .unwrap_or(if n == TORCH {
                usize::MAX
            } else {
                BACKEND_ORDER.len()
            });
        (rank, n.clone())
    });
    names.dedup();
    names
}

/// `ns` with a unit that keeps 3–4 significant digits.
fn format_time(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.3} µs", ns / 1e3)
    } else {
        format!("{ns:.1} ns")
    }
}

fn markdown(results: &Results, references: &References) -> String {
    let mut md = String::from("# Benchmark report\n\nMedian time per iteration (criterion), with the effective bandwidth where the benchmark \
         sets a byte count. Speed-up = baseline median / backend median (above 1: faster than \
         the baseline).\n");
    for (file, table) in results {
        let cols = columns(table);
        let baseline = references
            .get(file)
            .filter(|r| cols.contains(r))
            .map_or("cpu", String::as_str);
        let with_ratio = cols.len() > 1 && cols.iter().any(|c| c == baseline);
        let _ = write!(md, "\n## {file}\n\n| input |");
        for c in &cols {
            let _ = write!(md, " {c} |");
        }
        if with_ratio {
            let _ = write!(md, " speed-up vs {baseline} |");
        }
        md += "\n| --- |";
        md += &" ---: |".repeat(cols.len());
        md += if with_ratio { " --- |\n" } else { "\n" };
        for (input, row) in table {
            let _ = write!(md, "| {input} |");
            for c in &cols {
                let cell = row.get(c).map_or_else(
                    || "–".to_string(),
                    |m| match m.gbps() {
                        Some(g) => format!("{} ({g:.1} GB/s)", format_time(m.median_ns)),
                        None => format_time(m.median_ns),
                    },
                );
                let _ = write!(md, " {cell} |");
            }
            if !with_ratio {
                md += "\n";
                continue;
            }
            let ratios: Vec<String> = match row.get(baseline) {
                Some(base) => cols
                    .iter()
                    .filter(|c| c.as_str() != baseline)
                    .filter_map(|c| row.get(c).map(|m| (c, m)))
                    .map(|(c, m)| format!("{c} {:.2}×", base.median_ns / m.median_ns))
                    .collect(),
                None => Vec::new(),
            };
            let ratio = if ratios.is_empty() {
                "–".to_string()
            } else {
                ratios.join(", ")
            };
            let _ = writeln!(md, " {ratio} |");
        }
        if file == "matmul" {
            md += &crossover::markdown(table);
        }
    }
    md
}

/// Escapes text for SVG.
fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const COLORS: [&str; 6] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1",
];

/// A decade of nanoseconds as a short axis label: `1 ns`, `10 µs`, `100 ms`, `1 s`.
fn decade_label(exp: i32) -> String {
    let (unit, base) = match exp {
        ..=2 => ("ns", 0),
        3..=5 => ("µs", 3),
        6..=8 => ("ms", 6),
        _ => ("s", 9),
    };
    format!("{} {unit}", 10u64.pow((exp - base).clamp(0, 18) as u32))
}

/// A grouped bar chart per bench file (inputs × backends), medians on a log scale, stacked.
fn svg(results: &Results) -> String {
    const BAR: f64 = 26.0;
    const GAP: f64 = 30.0;
    const PLOT_H: f64 = 240.0;
    const LEFT: f64 = 70.0;
    const TOP: f64 = 50.0;
    const PANEL_H: f64 = PLOT_H + 120.0;
    const CHAR_W: f64 = 7.0;
    const LEGEND_W: f64 = 200.0;

    struct Panel<'a> {
        file: &'a str,
        table: &'a Table,
        cols: Vec<String>,
        /// Width of each input's group of bars.
        widths: Vec<f64>,
    }
    let panels: Vec<Panel> = results
        .iter()
        .map(|(file, table)| {
            let cols = columns(table);
            let widths = table
                .keys()
                .map(|input| (cols.len() as f64 * BAR).max(input.chars().count() as f64 * CHAR_W))
                .collect();
            Panel {
                file,
                table,
                cols,
                widths,
            }
        })
        .collect();
    let title =
        |file: &str| format!("{file}: median time per iteration (log scale, lower is better)");
    let plot_w = |p: &Panel| p.widths.iter().map(|w| w + GAP).sum::<f64>() + GAP;
    let width = panels
        .iter()
        .map(|p| {
            (LEFT + plot_w(p) + LEGEND_W).max(LEFT + title(p.file).chars().count() as f64 * 8.5)
        })
        .fold(480.0, f64::max);
    let height = panels.len() as f64 * PANEL_H + 20.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    for (n, p) in panels.iter().enumerate() {
        let y0 = n as f64 * PANEL_H + TOP;
        let bottom = y0 + PLOT_H;
        let pw = plot_w(p);
        let all: Vec<f64> = p
            .table
            .values()
            .flat_map(|r| r.values().map(|m| m.median_ns))
            .filter(|v| *v > 0.0)
            .collect();
        let lo = all
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min)
            .log10()
            .floor();
        let hi = all
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
            .log10()
            .ceil()
            .max(lo + 1.0);
        let y_of = |ns: f64| y0 + PLOT_H * (1.0 - (ns.log10() - lo) / (hi - lo));
        let _ = writeln!(
            s,
            "<text x=\"{:.0}\" y=\"{:.0}\" font-size=\"15\" font-weight=\"bold\">{}</text>",
            LEFT - 40.0,
            y0 - 25.0,
            xml(&title(p.file))
        );
        // Decade grid lines with labels.
        let mut d = lo;
        while d <= hi + 1e-9 {
            let y = y_of(10f64.powf(d));
            let _ = writeln!(
                s,
                "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\n\
                 <text x=\"{:.0}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#555\">{}</text>",
                LEFT + pw,
                LEFT - 6.0,
                y + 4.0,
                xml(&decade_label(d as i32))
            );
            d += 1.0;
        }
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{y0}\" x2=\"{LEFT}\" y2=\"{bottom:.1}\" stroke=\"#333\"/>\n\
             <line x1=\"{LEFT}\" y1=\"{bottom:.1}\" x2=\"{:.1}\" y2=\"{bottom:.1}\" stroke=\"#333\"/>",
            LEFT + pw,
        );
        let mut gx = LEFT + GAP;
        for ((input, row), gw) in p.table.iter().zip(&p.widths) {
            let bars_x = gx + (gw - p.cols.len() as f64 * BAR) / 2.0;
            for (k, c) in p.cols.iter().enumerate() {
                let Some(m) = row.get(c) else { continue };
                let x = bars_x + k as f64 * BAR;
                let y = y_of(m.median_ns).min(bottom - 1.0);
                let (lx, ly) = (x + BAR / 2.0, y - 4.0);
                let time = xml(&format_time(m.median_ns));
                let _ = writeln!(
                    s,
                    "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\">\
                     <title>{} {}: {time}</title></rect>\n\
                     <text x=\"{lx:.1}\" y=\"{ly:.1}\" font-size=\"9\" \
                     transform=\"rotate(-60 {lx:.1} {ly:.1})\">{time}</text>",
                    BAR - 3.0,
                    bottom - y,
                    COLORS[k % COLORS.len()],
                    xml(input),
                    xml(c),
                );
            }
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                gx + gw / 2.0,
                bottom + 18.0,
                xml(input)
            );
            gx += gw + GAP;
        }
        for (k, c) in p.cols.iter().enumerate() {
            let ly = y0 + 10.0 + k as f64 * 18.0;
            let lx = LEFT + pw + 20.0;
            let _ = writeln!(
                s,
                "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n\
                 <text x=\"{:.1}\" y=\"{ly:.1}\">{}</text>",
                ly - 10.0,
                COLORS[k % COLORS.len()],
                lx + 18.0,
                xml(c)
            );
        }
    }
    s += "</svg>\n";
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn fake_result(dir: &Path, group: &str, function: &str, median_ns: f64) {
        let d = dir.join(group.replace('/', "_")).join(function).join("new");
        write(
            &d.join("benchmark.json"),
            &format!(
                r#"{{"group_id":"{group}","function_id":"{function}","value_str":null,
                   "throughput":{{"Bytes":2000000000}},"full_id":"{group}/{function}",
                   "directory_name":"x","title":"x"}}"#
            ),
        );
        write(
            &d.join("estimates.json"),
            &format!(r#"{{"median":{{"point_estimate":{median_ns}}}}}"#),
        );
    }

    #[test]
    fn report_tables_ratios_and_svg() {
        let dir = std::env::temp_dir().join(format!("xtask-report-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        fake_result(&dir, "spmv/random", "cpu", 100e6);
        fake_result(&dir, "spmv/random", "cuda", 2e6);
        fake_result(&dir, "spmv/banded", "cpu", 50e6);
        fake_result(&dir, "read", "parse_edges", 1e9);
        let torch = dir.join("torch.json");
        write(
            &torch,
            r#"{"results":{"random":{"median_ms":1.0,"bytes":2000000000}}}"#,
        );
        report(&dir, Some(&torch), &[]).unwrap();
        let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(md.contains("## spmv"), "{md}");
        assert!(md.contains("## read"), "{md}");
        assert!(
            md.contains("| random | 100.000 ms (20.0 GB/s) | 2.000 ms (1000.0 GB/s) | 1.000 ms (2000.0 GB/s) | cpu 0.01×, cuda 0.50× |"),
            "{md}"
        );
        assert!(
            md.contains("| parse_edges | 1.000 s (2.0 GB/s) |\n"),
            "{md}"
        );
        let svg = std::fs::read_to_string(dir.join("report.svg")).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn times_pick_a_unit() {
        assert_eq!(format_time(12.0), "12.0 ns");
        assert_eq!(format_time(1.5e4), "15.000 µs");
        assert_eq!(format_time(2.5e6), "2.500 ms");
        assert_eq!(format_time(3e9), "3.000 s");
    }
}
