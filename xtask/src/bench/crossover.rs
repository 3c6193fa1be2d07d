//! The Strassen crossover of the `matmul` table: for each backend and precision, from which
//! n each recursive algorithm (`<backend> strassen|winograd|fused`) beats the same backend's
//! tiled kernel (`<backend> tiled`) at that n and at every larger n measured.
//!
//! Rows of the table are `<precision>/<n>` (`f32/8192`), columns `<backend> <algorithm>`
//! (benches/benches/matmul.rs), plus baseline columns, which are ignored here.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::Table;

/// The recursive algorithms, as the benchmark names its columns.
const RECURSIVE: [&str; 3] = ["strassen", "winograd", "fused"];

/// One line of the crossover table.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Crossover {
    pub backend: String,
    pub precision: String,
    pub algorithm: String,
    /// The smallest n from which the algorithm is faster than tiled at every measured n
    /// (`None`: not faster at the largest n).
    pub from: Option<u64>,
    /// The largest n measured for both, and tiled time / algorithm time there.
    pub largest: (u64, f64),
}

/// The crossovers of a `matmul` table (sorted by backend, precision, algorithm).
pub(super) fn crossovers(table: &Table) -> Vec<Crossover> {
    // (backend, precision, algorithm) -> n -> median ns
    let mut series: BTreeMap<(String, String, String), BTreeMap<u64, f64>> = BTreeMap::new();
    for (input, row) in table {
        let Some((precision, n)) = input.split_once('/') else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        for (column, m) in row {
            let Some((backend, algorithm)) = column.split_once(' ') else {
                continue;
            };
            series
                .entry((backend.into(), precision.into(), algorithm.into()))
                .or_default()
                .insert(n, m.median_ns);
        }
    }
    let mut out = Vec::new();
    for ((backend, precision, algorithm), times) in &series {
        if !RECURSIVE.contains(&algorithm.as_str()) {
            continue;
        }
        let Some(tiled) = series.get(&(backend.clone(), precision.clone(), "tiled".into())) else {
            continue;
        };
        let both: Vec<(u64, f64)> = times
            .iter()
            .filter_map(|(n, t)| tiled.get(n).map(|tt| (*n, tt / t)))
            .collect();
        let Some(&largest) = both.last() else {
            continue;
        };
        let mut from = None;
        for &(n, speedup) in both.iter().rev() {
            if speedup > 1.0 {
                from = Some(n);
            } else {
                break;
            }
        }
        out.push(Crossover {
            backend: backend.clone(),
            precision: precision.clone(),
            algorithm: algorithm.clone(),
            from,
            largest,
        });
    }
    out
}

/// The markdown section (empty when there is nothing to report).
pub(super) fn markdown(table: &Table) -> String {
    let rows = crossovers(table);
    if rows.is_empty() {
        return String::new();
    }
    let mut md = String::from(
        "\n### matmul: Strassen crossover\n\nThe smallest n from which each recursive \
         algorithm beats the same backend's tiled kernel at every larger n measured, and its \
         speed-up over tiled at the largest n.\n\n| backend | precision | algorithm | \
         crossover n | speed-up at largest n |\n| --- | --- | --- | ---: | ---: |\n",
    );
    for r in rows {
        let from = r.from.map_or_else(|| "none".to_string(), |n| n.to_string());
        let _ = writeln!(
            md,
            "| {} | {} | {} | {from} | {:.3}× (n = {}) |",
            r.backend, r.precision, r.algorithm, r.largest.1, r.largest.0
        );
    }
    md
}

/// A line chart per precision of the `matmul` table: GFLOP/s (the benchmark's throughput,
/// `2 n³` "bytes", so [`super::Measurement::gbps`] is GFLOP/s) against n on a log2 axis, one
/// line per column (backends' algorithms and the baselines). `None` without such data.
pub(super) fn svg(table: &Table) -> Option<String> {
    const W: f64 = 760.0;
    const PANEL_H: f64 = 330.0;
    const LEFT: f64 = 70.0;
    const TOP: f64 = 40.0;
    const PLOT_W: f64 = 470.0;
    const PLOT_H: f64 = 240.0;
    // precision -> column -> n -> GFLOP/s
    let mut panels: BTreeMap<String, BTreeMap<String, BTreeMap<u64, f64>>> = BTreeMap::new();
    for (input, row) in table {
        let Some((precision, n)) = input.split_once('/') else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else { continue };
        for (column, m) in row {
            if let Some(g) = m.gbps().filter(|g| g.is_finite() && *g > 0.0) {
                panels
                    .entry(precision.into())
                    .or_default()
                    .entry(column.clone())
                    .or_default()
                    .insert(n, g);
            }
        }
    }
    if panels.is_empty() {
        return None;
    }
    let h = PANEL_H * panels.len() as f64;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{h}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>\n"
    );
    for (p, (precision, lines)) in panels.iter().enumerate() {
        let y0 = p as f64 * PANEL_H + TOP;
        let ns: Vec<u64> = lines.values().flat_map(|l| l.keys().copied()).collect();
        let (lo, hi) = (
            ns.iter().copied().min().unwrap_or(1).max(1) as f64,
            ns.iter().copied().max().unwrap_or(2).max(2) as f64,
        );
        let (lx0, lx1) = (lo.log2(), hi.log2().max(lo.log2() + 1.0));
        let gmax = lines
            .values()
            .flat_map(|l| l.values().copied())
            .fold(0.0f64, f64::max)
            * 1.1;
        let x = |n: u64| LEFT + ((n as f64).log2() - lx0) / (lx1 - lx0) * PLOT_W;
        let y = |g: f64| y0 + PLOT_H - g / gmax * PLOT_H;
        let _ = writeln!(
            s,
            "<text x=\"{LEFT}\" y=\"{}\" font-size=\"14\">matmul {} — GFLOP/s (higher is \
             better)</text>",
            y0 - 14.0,
            super::xml(precision)
        );
        let _ = writeln!(
            s,
            "<rect x=\"{LEFT}\" y=\"{y0}\" width=\"{PLOT_W}\" height=\"{PLOT_H}\" \
             fill=\"none\" stroke=\"#999\"/>"
        );
        for i in 0..=4 {
            let g = gmax * i as f64 / 4.0;
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{g:.0}</text>",
                LEFT - 6.0,
                y(g) + 4.0
            );
        }
        let mut sizes = ns.clone();
        sizes.sort_unstable();
        sizes.dedup();
        for n in &sizes {
            let _ = writeln!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{n}</text>",
                x(*n),
                y0 + PLOT_H + 16.0
            );
        }
        for (i, (column, pts)) in lines.iter().enumerate() {
            let color = super::COLORS[i % super::COLORS.len()];
            let dash = if i >= super::COLORS.len() {
                " stroke-dasharray=\"5,3\""
            } else {
                ""
            };
            let path: Vec<String> = pts
                .iter()
                .map(|(n, g)| format!("{:.1},{:.1}", x(*n), y(*g)))
                .collect();
            let _ = writeln!(
                s,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" \
                 stroke-width=\"2\"{dash}/>",
                path.join(" ")
            );
            let ly = y0 + 10.0 + 16.0 * i as f64;
            let lx = LEFT + PLOT_W + 20.0;
            let _ = writeln!(
                s,
                "<line x1=\"{lx}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{color}\" \
                 stroke-width=\"2\"{dash}/><text x=\"{}\" y=\"{}\">{}</text>",
                lx + 20.0,
                lx + 26.0,
                ly + 4.0,
                super::xml(column)
            );
        }
    }
    s += "</svg>\n";
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::super::Measurement;
    use super::*;

    fn m(ms: f64) -> Measurement {
        Measurement {
            median_ns: ms * 1e6,
            bytes: None,
        }
    }

    #[test]
    fn crossover_is_the_start_of_the_last_winning_run() {
        let mut t = Table::new();
        for (n, tiled, win, fused) in [
            (1024u64, 1.0, 1.2, 1.1),
            (2048, 8.0, 7.0, 8.5), // a win that does not last
            (4096, 64.0, 66.0, 70.0),
            (8192, 512.0, 480.0, 530.0),
            (16384, 4096.0, 3500.0, 3000.0),
        ] {
            let row = t.entry(format!("f32/{n}")).or_default();
            row.insert("cuda tiled".into(), m(tiled));
            row.insert("cuda winograd".into(), m(win));
            row.insert("cuda fused".into(), m(fused));
            row.insert("cuBLAS (torch)".into(), m(1.0));
        }
        let c = crossovers(&t);
        assert_eq!(c.len(), 2);
        let fused = &c[0];
        assert_eq!(
            (fused.algorithm.as_str(), fused.from),
            ("fused", Some(16384))
        );
        let win = &c[1];
        assert_eq!((win.algorithm.as_str(), win.from), ("winograd", Some(8192)));
        assert!((win.largest.1 - 4096.0 / 3500.0).abs() < 1e-12);
        assert!(markdown(&t).contains("| cuda | f32 | winograd | 8192 |"));
        // No throughput: no plot; with it, one line per column.
        assert!(svg(&t).is_none());
        for row in t.values_mut() {
            for m in row.values_mut() {
                m.bytes = Some(1_000_000_000);
            }
        }
        let plot = svg(&t).expect("a plot");
        assert_eq!(plot.matches("<polyline").count(), 4);
        if let Some(out) = std::env::var_os("TRIDENT_XTASK_PLOT_OUT") {
            std::fs::write(out, &plot).unwrap();
        }
        // No tiled column: nothing.
        let mut t2 = Table::new();
        t2.entry("f64/64".into())
            .or_default()
            .insert("cpu winograd".into(), m(1.0));
        assert!(crossovers(&t2).is_empty());
    }
}
