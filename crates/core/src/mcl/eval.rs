//! Scoring predicted clusters against gold-standard complexes (e.g. CYC2008), as in the
//! protein-complex literature (Brohée & van Helden 2006; Nepusz et al. 2012):
//!
//! * **matched fraction**: of the complexes of size ≥ 3, the fraction matched by some cluster
//!   with overlap score `|A∩B|² / (|A|·|B|) ≥ 0.25`;
//! * **sensitivity** `Sn = Σ_i max_j T_ij / Σ_i |C_i|` and **positive predictive value**
//!   `PPV = Σ_j max_i T_ij / Σ_j Σ_i T_ij` over the contingency table `T_ij = |C_i ∩ K_j|`
//!   (complexes `C_i`, clusters `K_j`), and **geometric accuracy** `√(Sn·PPV)`;
//! * **modularity** of the partition on the network (weighted when the graph is).
//!
//! Complex members absent from the network are dropped (a complex left with < 3 members is
//! not counted); clusters of size < 3 are ignored for the matched fraction, as is usual.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::graph::Graph;

/// Quality scores of a clustering (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scores {
    /// Complexes (size ≥ 3 in the network) considered.
    pub complexes: usize,
    /// Of those, how many some cluster matches.
    pub matched: usize,
    /// `matched / complexes`.
    pub matched_fraction: f64,
    /// Sensitivity.
    pub sensitivity: f64,
    /// Positive predictive value.
    pub ppv: f64,
    /// `√(sensitivity · ppv)`.
    pub accuracy: f64,
    /// Newman modularity of the partition.
    pub modularity: f64,
}

/// Reads complexes: one per line, members separated by whitespace; `#` lines and blank lines
/// are skipped.
pub fn read_complexes(path: impl AsRef<Path>) -> Result<Vec<Vec<String>>> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect())
}

/// Scores `clusters` (node numbers of `g`) against `complexes` (labels of `g`'s nodes).
pub fn score(g: &Graph, clusters: &[Vec<usize>], complexes: &[Vec<String>]) -> Scores {
    let ids: HashMap<String, usize> = (0..g.num_nodes()).map(|u| (g.label(u), u)).collect();
    let cx: Vec<Vec<usize>> = complexes
        .iter()
        .map(|c| {
            let mut v: Vec<usize> = c.iter().filter_map(|l| ids.get(l).copied()).collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .filter(|c| c.len() >= 3)
        .collect();
    let n = g.num_nodes();
    let mut of = vec![usize::MAX; n];
    for (j, c) in clusters.iter().enumerate() {
        for &u in c {
            if u < n {
                of[u] = j;
            }
        }
    }
    // Contingency rows: per complex, the counts per cluster.
    let mut matched = 0;
    let mut sn_num = 0usize;
    let mut sn_den = 0usize;
    let mut col_max: HashMap<usize, usize> = HashMap::new();
    let mut col_sum: HashMap<usize, usize> = HashMap::new();
    for c in &cx {
        let mut t: HashMap<usize, usize> = HashMap::new();
        for &u in c {
            if of[u] != usize::MAX {
                *t.entry(of[u]).or_insert(0) += 1;
            }
        }
        let hit = t.iter().any(|(&j, &x)| {
            let k = clusters[j].len();
            k >= 3 && (x * x) as f64 / (c.len() * k) as f64 >= 0.25
        });
        matched += usize::from(hit);
        sn_num += t.values().copied().max().unwrap_or(0);
        sn_den += c.len();
        for (&j, &x) in &t {
            let m = col_max.entry(j).or_insert(0);
            *m = (*m).max(x);
            *col_sum.entry(j).or_insert(0) += x;
        }
    }
    let sensitivity = ratio(sn_num, sn_den);
    let ppv = ratio(col_max.values().sum(), col_sum.values().sum());
    Scores {
        complexes: cx.len(),
        matched,
        matched_fraction: ratio(matched, cx.len()),
        sensitivity,
        ppv,
        accuracy: (sensitivity * ppv).sqrt(),
        modularity: modularity(g, &of),
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Newman modularity `Σ_c (L_c/m − (d_c/2m)²)` of the partition `of` (cluster per node), with
/// edge weights when `g` has them.
pub fn modularity(g: &Graph, of: &[usize]) -> f64 {
    let mut two_m = 0.0;
    let mut inside: HashMap<usize, f64> = HashMap::new();
    let mut degree: HashMap<usize, f64> = HashMap::new();
    for u in 0..g.num_nodes() {
        let nb = g.neighbors(u);
        let ws = g.neighbor_weights(u);
        for (t, &v) in nb.iter().enumerate() {
            let w = ws.map_or(1.0, |w| w[t]);
            two_m += w;
            *degree.entry(of[u]).or_insert(0.0) += w;
            if of[u] == of[v as usize] {
                *inside.entry(of[u]).or_insert(0.0) += w;
            }
        }
    }
    if two_m == 0.0 {
        return 0.0;
    }
    degree
        .iter()
        .map(|(c, &d)| inside.get(c).copied().unwrap_or(0.0) / two_m - (d / two_m).powi(2))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfect_clusters_score_one() {
        let g = Graph::from_edges(6, [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)]).unwrap();
        let clusters = vec![vec![0, 1, 2], vec![3, 4, 5]];
        let cx = vec![
            vec!["0".into(), "1".into(), "2".into()],
            vec!["3".into(), "4".into(), "5".into(), "99".into()],
        ];
        let s = score(&g, &clusters, &cx);
        assert_eq!((s.complexes, s.matched), (2, 2));
        assert_eq!((s.sensitivity, s.ppv, s.accuracy), (1.0, 1.0, 1.0));
        assert!((s.modularity - 0.5).abs() < 1e-12);
    }
}
