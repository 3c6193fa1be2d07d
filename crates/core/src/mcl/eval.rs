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
//! [`Scores`] says how many complexes the file has, how many of them have ≥ 3 members, and
//! how many of those keep ≥ 3 in the network, so that the denominator is not mistaken for
//! the file's count. Complexes that share no label with the network, or of which none keeps 3
//! members in it, are refused ([`GoldStandard::resolve`]): there would be nothing to score.
//!
//! [`check_partition`] checks clusters read from a file (`cluster --from`): overlapping
//! clusters are refused, naming the node; nodes in no cluster are counted (the caller warns).

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
    /// Complexes in the file ([`GoldStandard::in_file`]).
    pub in_file: usize,
    /// Complexes of the file with ≥ 3 distinct members ([`GoldStandard::large_in_file`]).
    pub large_in_file: usize,
}

/// Complexes resolved against a network: the node sets scored and the counts the report
/// needs.
#[derive(Debug, Clone, PartialEq)]
pub struct GoldStandard {
    /// Complexes with ≥ 3 members in the network, as sorted node numbers.
    pub sets: Vec<Vec<usize>>,
    /// Complexes in the file.
    pub in_file: usize,
    /// Complexes of the file with ≥ 3 distinct members (in the network or not).
    pub large_in_file: usize,
    /// Distinct members of all complexes.
    pub members: usize,
    /// Of those, the nodes of the network.
    pub members_in_network: usize,
}

impl GoldStandard {
    /// Resolves `complexes` (labels) against `g`'s nodes. Refused (an error saying why, with
    /// an example label) when no member is a node of `g`, or when no complex keeps 3 members
    /// in `g`: nothing could be scored, and a `0/0` report would hide it.
    pub fn resolve(g: &Graph, complexes: &[Vec<String>]) -> Result<Self> {
        let ids = Ids::new(g);
        let mut members: std::collections::HashSet<&str> = std::collections::HashSet::new();
        let mut found = 0;
        let mut large_in_file = 0;
        let mut sets = Vec::new();
        for c in complexes {
            let mut distinct: Vec<&str> = c.iter().map(String::as_str).collect();
            distinct.sort_unstable();
            distinct.dedup();
            large_in_file += usize::from(distinct.len() >= 3);
            let mut v = Vec::new();
            for &l in &distinct {
                let u = ids.get(l);
                if members.insert(l) && u.is_some() {
                    found += 1;
                }
                v.extend(u);
            }
            v.sort_unstable();
            v.dedup();
            if v.len() >= 3 {
                sets.push(v);
            }
        }
        let example = complexes.iter().flatten().next();
        if complexes.is_empty() {
            return Err(Error::invalid("complexes", "the file holds no complex"));
        }
        if found == 0 {
            return Err(Error::invalid(
                "complexes",
                format!(
                    "no member of the {} complexes ({} distinct labels, e.g. {:?}) is a node \
                     of the network: they share no label with it (another organism or \
                     naming?); nothing to score",
                    complexes.len(),
                    members.len(),
                    example.map_or("", String::as_str)
                ),
            ));
        }
        if sets.is_empty() {
            return Err(Error::invalid(
                "complexes",
                format!(
                    "none of the {} complexes has 3 members in the network ({found} of their \
                     {} distinct labels are nodes); nothing to score",
                    complexes.len(),
                    members.len()
                ),
            ));
        }
        Ok(Self {
            sets,
            in_file: complexes.len(),
            large_in_file,
            members: members.len(),
            members_in_network: found,
        })
    }
}

/// What [`check_partition`] found in clusters that overlap nowhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    /// Nodes of the network in no cluster.
    pub missing: usize,
    /// The first of them (smallest node number), if any.
    pub first_missing: Option<usize>,
}

/// Checks that `clusters` (node numbers below `n`) form a partition of a subset of the
/// nodes: a node in two clusters (or twice in one) is an error naming it (by `label`) and the
/// two clusters (1-based, in the given order); nodes in no cluster are counted.
pub fn check_partition(
    n: usize,
    clusters: &[Vec<usize>],
    label: impl Fn(usize) -> String,
) -> Result<Coverage> {
    let mut of = vec![usize::MAX; n];
    for (c, members) in clusters.iter().enumerate() {
        for &u in members {
            if u >= n {
                return Err(Error::invalid(
                    "clusters",
                    format!("cluster {}: node {u} is not a node of the network", c + 1),
                ));
            }
            if of[u] != usize::MAX {
                let what = if of[u] == c {
                    format!("cluster {} names node {} twice", c + 1, label(u))
                } else {
                    format!(
                        "node {} is in cluster {} and in cluster {}: the clusters overlap, \
                         and the scores assume a partition",
                        label(u),
                        of[u] + 1,
                        c + 1
                    )
                };
                return Err(Error::invalid("clusters", what));
            }
            of[u] = c;
        }
    }
    let first_missing = of.iter().position(|&c| c == usize::MAX);
    Ok(Coverage {
        missing: of.iter().filter(|&&c| c == usize::MAX).count(),
        first_missing,
    })
}

/// Reads complexes: one per line, members separated by whitespace; `#` lines and blank lines
/// are skipped.
pub fn read_complexes(path: impl AsRef<Path>) -> Result<Vec<Vec<String>>> {
    read_complexes_limited(path, &crate::io::ReadOptions::default())
}

/// [`read_complexes`] with the input limits of `read`.
pub fn read_complexes_limited(
    path: impl AsRef<Path>,
    read: &crate::io::ReadOptions,
) -> Result<Vec<Vec<String>>> {
    let path = path.as_ref();
    // The readers' limits: binary data and endless lines are refused early.
    let text = crate::io::read_text_limited(path, read)?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect())
}

/// Node numbers of `g` by label. A graph without labels names its nodes by number, so a
/// label is parsed (only the canonical decimal form names a node, as [`Graph::label`] writes
/// it); otherwise the labels are borrowed into one map, not copied.
enum Ids<'g> {
    Numbers(usize),
    Labels(HashMap<&'g str, usize>),
}

impl<'g> Ids<'g> {
    fn new(g: &'g Graph) -> Self {
        match g.labels() {
            None => Ids::Numbers(g.num_nodes()),
            Some(l) => Ids::Labels(l.iter().enumerate().map(|(u, s)| (s.as_str(), u)).collect()),
        }
    }

    fn get(&self, label: &str) -> Option<usize> {
        match self {
            Ids::Numbers(n) => {
                let canonical = label == "0" || !(label.starts_with('0') || label.starts_with('+'));
                let u: usize = label.parse().ok().filter(|_| canonical)?;
                (u < *n).then_some(u)
            }
            Ids::Labels(m) => m.get(label).copied(),
        }
    }
}

/// Scores `clusters` (node numbers of `g`) against `complexes` (labels of `g`'s nodes):
/// [`GoldStandard::resolve`] (its refusals included), then [`score_gold`].
pub fn score(g: &Graph, clusters: &[Vec<usize>], complexes: &[Vec<String>]) -> Result<Scores> {
    Ok(score_gold(
        g,
        clusters,
        &GoldStandard::resolve(g, complexes)?,
    ))
}

/// Scores `clusters` (node numbers of `g`) against resolved complexes.
///
/// Linear in the sizes of the network, the clusters and the complexes: a node→cluster map,
/// then per complex the overlap counts of the clusters its members fall in (a dense counter
/// reset through the list of touched clusters), never a clusters × complexes table.
pub fn score_gold(g: &Graph, clusters: &[Vec<usize>], gold: &GoldStandard) -> Scores {
    let cx = &gold.sets;
    let n = g.num_nodes();
    let mut of = vec![usize::MAX; n];
    for (j, c) in clusters.iter().enumerate() {
        for &u in c {
            if u < n {
                of[u] = j;
            }
        }
    }
    // Contingency rows: per complex, the counts per cluster (dense, reset after each row).
    let k = clusters.len();
    let mut matched = 0;
    let mut sn_num = 0usize;
    let mut sn_den = 0usize;
    let mut col_max = vec![0usize; k];
    let mut col_sum = vec![0usize; k];
    let mut count = vec![0usize; k];
    let mut touched: Vec<usize> = Vec::new();
    for c in cx {
        touched.clear();
        for &u in c {
            let j = of[u];
            if j != usize::MAX {
                if count[j] == 0 {
                    touched.push(j);
                }
                count[j] += 1;
            }
        }
        let mut hit = false;
        let mut best = 0;
        for &j in &touched {
            let x = std::mem::take(&mut count[j]);
            let size = clusters[j].len();
            hit |= size >= 3 && (x * x) as f64 / (c.len() * size) as f64 >= 0.25;
            best = best.max(x);
            col_max[j] = col_max[j].max(x);
            col_sum[j] += x;
        }
        matched += usize::from(hit);
        sn_num += best;
        sn_den += c.len();
    }
    let sensitivity = ratio(sn_num, sn_den);
    let ppv = ratio(col_max.iter().sum(), col_sum.iter().sum());
    Scores {
        complexes: cx.len(),
        matched,
        matched_fraction: ratio(matched, cx.len()),
        sensitivity,
        ppv,
        accuracy: (sensitivity * ppv).sqrt(),
        modularity: modularity(g, &of),
        in_file: gold.in_file,
        large_in_file: gold.large_in_file,
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
/// edge weights when `g` has them. Nodes marked `usize::MAX` (in no cluster) count as one
/// group of their own.
///
/// Linear in the edges: the cluster numbers are made dense first (one pass over `of`), so
/// the per-edge work is two array updates.
pub fn modularity(g: &Graph, of: &[usize]) -> f64 {
    // Dense group numbers, in order of first appearance.
    let mut dense: HashMap<usize, usize> = HashMap::new();
    let group: Vec<usize> = of
        .iter()
        .map(|&c| {
            let next = dense.len();
            *dense.entry(c).or_insert(next)
        })
        .collect();
    let mut two_m = 0.0;
    let mut inside = vec![0.0f64; dense.len()];
    let mut degree = vec![0.0f64; dense.len()];
    for u in 0..g.num_nodes() {
        let nb = g.neighbors(u);
        let ws = g.neighbor_weights(u);
        let gu = group[u];
        let (mut d, mut l) = (0.0, 0.0);
        for (t, &v) in nb.iter().enumerate() {
            let w = ws.map_or(1.0, |w| w[t]);
            d += w;
            if group[v as usize] == gu {
                l += w;
            }
        }
        two_m += d;
        degree[gu] += d;
        inside[gu] += l;
    }
    if two_m == 0.0 {
        return 0.0;
    }
    inside
        .iter()
        .zip(&degree)
        .map(|(&l, &d)| l / two_m - (d / two_m).powi(2))
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
        let s = score(&g, &clusters, &cx).unwrap();
        assert_eq!((s.complexes, s.matched), (2, 2));
        assert_eq!((s.sensitivity, s.ppv, s.accuracy), (1.0, 1.0, 1.0));
        assert!((s.modularity - 0.5).abs() < 1e-12);
    }
    #[test]
    fn numeric_labels_match_only_their_canonical_form() {
        // Unlabelled graph: node u is named "u"; "01" and "+1" name no node, "6" is absent.
        let g = Graph::from_edges(6, [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)]).unwrap();
        let clusters = vec![vec![0, 1, 2], vec![3, 4, 5]];
        let cx: Vec<Vec<String>> = vec![
            vec!["0".into(), "01".into(), "+1".into(), "2".into(), "6".into()],
            vec!["3".into(), "4".into(), "5".into()],
        ];
        let s = score(&g, &clusters, &cx).unwrap();
        // The first complex keeps two members (< 3) and is dropped.
        assert_eq!((s.complexes, s.matched), (1, 1));
    }

    #[test]
    fn labelled_graph_and_split_complex() {
        let g = Graph::from_edges(6, [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)])
            .unwrap()
            .with_labels(["a", "b", "c", "d", "e", "f"].map(String::from).to_vec())
            .unwrap();
        // Clusters {a,b,c,d} and {e,f}; complex {c,d,e,f}: counts 2 and 2.
        let clusters = vec![vec![0, 1, 2, 3], vec![4, 5]];
        let cx: Vec<Vec<String>> = vec![["c", "d", "e", "f", "0"].map(String::from).to_vec()];
        let s = score(&g, &clusters, &cx).unwrap();
        // Overlap with {a,b,c,d}: 4/16 = 0.25 (matched); {e,f} has < 3 members.
        assert_eq!((s.complexes, s.matched), (1, 1));
        assert_eq!(s.sensitivity, 0.5);
        assert_eq!(s.ppv, 1.0);
        // Modularity by hand: m = 6; inside {a,b,c,d}: 3 edges, degree 2+2+2+2 = 8; {e,f}: 1
        // edge, degree 4. Q = 3/6 - (8/12)^2 + 1/6 - (4/12)^2.
        let q = 3.0 / 6.0 - (8.0f64 / 12.0).powi(2) + 1.0 / 6.0 - (4.0f64 / 12.0).powi(2);
        assert!((s.modularity - q).abs() < 1e-12);
    }

    #[test]
    fn complexes_sharing_no_label_are_refused() {
        let g = Graph::from_edges(6, [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)])
            .unwrap()
            .with_labels(["a", "b", "c", "d", "e", "f"].map(String::from).to_vec())
            .unwrap();
        let clusters = vec![vec![0, 1, 2], vec![3, 4, 5]];
        let none: Vec<Vec<String>> = vec![["x", "y", "z"].map(String::from).to_vec()];
        let e = score(&g, &clusters, &none).unwrap_err().to_string();
        assert!(e.contains("share no label"), "{e}");
        assert!(e.contains("\"x\""), "{e}");
        // Some labels shared, but no complex keeps 3 members: refused too.
        let two: Vec<Vec<String>> = vec![["a", "b", "z"].map(String::from).to_vec()];
        let e = score(&g, &clusters, &two).unwrap_err().to_string();
        assert!(e.contains("none of the 1 complexes has 3 members"), "{e}");
        assert!(score(&g, &clusters, &[]).is_err());
    }

    #[test]
    fn the_counts_of_the_file_are_reported() {
        let g = Graph::from_edges(6, [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)]).unwrap();
        let clusters = vec![vec![0, 1, 2], vec![3, 4, 5]];
        // Four complexes: two of size >= 3 in the network, one of size 3 outside it (two
        // members absent), one of size 2; a repeated member counts once.
        let cx: Vec<Vec<String>> = [
            vec!["0", "1", "2"],
            vec!["3", "4", "5", "5"],
            vec!["0", "98", "99"],
            vec!["1", "1", "2"],
        ]
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
        let s = score(&g, &clusters, &cx).unwrap();
        assert_eq!((s.matched, s.complexes), (2, 2));
        assert_eq!((s.in_file, s.large_in_file), (4, 3));
        let gold = GoldStandard::resolve(&g, &cx).unwrap();
        assert_eq!((gold.members, gold.members_in_network), (8, 6));
    }

    #[test]
    fn overlapping_clusters_are_refused_and_missing_nodes_counted() {
        let name = |u: usize| format!("n{u}");
        let e = check_partition(5, &[vec![0, 1], vec![2, 1]], name)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("node n1 is in cluster 1 and in cluster 2"),
            "{e}"
        );
        let e = check_partition(5, &[vec![0, 0]], name)
            .unwrap_err()
            .to_string();
        assert!(e.contains("names node n0 twice"), "{e}");
        assert!(check_partition(2, &[vec![0, 2]], name).is_err());
        let c = check_partition(5, &[vec![0, 1], vec![3]], name).unwrap();
        assert_eq!((c.missing, c.first_missing), (2, Some(2)));
        let c = check_partition(2, &[vec![1], vec![0]], name).unwrap();
        assert_eq!((c.missing, c.first_missing), (0, None));
    }
}
