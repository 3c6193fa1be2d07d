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

/// A line chart per precision of the `matmul` table, drawn with `plotters`: GFLOP/s (the
/// benchmark's throughput, `2 n³` "bytes", so [`super::Measurement::gbps`] is GFLOP/s) against
/// n on a log axis, one line per column (backends' algorithms and the baselines). `None`
/// without such data.
pub(super) fn svg(table: &Table) -> Option<String> {
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
    let mut out = String::new();
    draw(&panels, &mut out).ok()?;
    Some(out)
}

/// Draws the panels of [`svg`] into `out`.
fn draw(
    panels: &BTreeMap<String, BTreeMap<String, BTreeMap<u64, f64>>>,
    out: &mut String,
) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;

    let height = 360 * panels.len() as u32;
    let root = SVGBackend::with_string(out, (860, height)).into_drawing_area();
    root.fill(&WHITE)?;
    for (area, (precision, lines)) in root.split_evenly((panels.len(), 1)).iter().zip(panels) {
        let ns: Vec<u64> = lines.values().flat_map(|l| l.keys().copied()).collect();
        let lo = ns.iter().copied().min().unwrap_or(1).max(1) as f64;
        let hi = (ns.iter().copied().max().unwrap_or(2) as f64).max(2.0 * lo);
        let gmax = lines
            .values()
            .flat_map(|l| l.values().copied())
            .fold(0.0f64, f64::max)
            * 1.1;
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("matmul {precision}: GFLOP/s (higher is better)"),
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(
                (lo / 1.2..hi * 1.2).log_scale().base(2.0),
                0.0..gmax.max(1.0),
            )?;
        chart
            .configure_mesh()
            .x_desc("n")
            .y_desc("GFLOP/s")
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()?;
        for (i, (column, pts)) in lines.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|(n, g)| (*n as f64, *g)),
                    color.stroke_width(2),
                ))?
                .label(column.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
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
        if let Some(out) = std::env::var_os("TRIDENT_XTASK_PLOT_OUT") {
            std::fs::write(out, &plot).unwrap();
        }
        assert!(plot.starts_with("<svg") && plot.trim_end().ends_with("</svg>"));
        let columns: std::collections::BTreeSet<&String> =
            t.values().flat_map(|row| row.keys()).collect();
        assert_eq!(columns.len(), 4);
        for column in columns {
            assert!(plot.contains(column.as_str()), "no legend entry {column}");
        }
        // No tiled column: nothing.
        let mut t2 = Table::new();
        t2.entry("f64/64".into())
            .or_default()
            .insert("cpu winograd".into(), m(1.0));
        assert!(crossovers(&t2).is_empty());
    }
}
