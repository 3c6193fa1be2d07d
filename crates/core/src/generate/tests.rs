//! Both generators: reproducible whatever the threads, their degrees, exact tallies, and
//! files that read back.

use super::*;

#[test]
fn reproducible_whatever_the_threads() {
    let a = kronecker(10, 8, 7).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let b = pool.install(|| kronecker(10, 8, 7).unwrap());
    assert_eq!(a, b);
    assert_ne!(a, kronecker(10, 8, 8).unwrap());
    assert_eq!(a.src.len(), 8 << 10);
    assert!(a.src.iter().chain(&a.dst).all(|&x| (x as usize) < a.nodes));
}

#[test]
fn skewed_degrees() {
    let g = kronecker(12, 16, 1).unwrap().to_graph().unwrap();
    let max = (0..g.num_nodes()).map(|v| g.degree(v)).max().unwrap();
    let mean = 2.0 * g.num_edges() as f64 / g.num_nodes() as f64;
    assert!(max as f64 > 10.0 * mean, "max {max}, mean {mean}");
}

#[test]
fn bad_scale() {
    assert!(kronecker(0, 16, 1).is_err());
    assert!(kronecker(40, 16, 1).is_err());
}

#[test]
fn writes_snap_that_reads_back() {
    let k = kronecker(6, 4, 3).unwrap();
    let dir = std::env::temp_dir().join(format!("trident-kron-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("k.txt");
    k.write_snap(&p, "test").unwrap();
    let g = crate::io::read_graph_auto(&p).unwrap();
    let h = k.to_graph().unwrap();
    // The reader numbers nodes by first appearance or by id; edge counts agree anyway.
    assert_eq!(g.num_edges(), h.num_edges());
    std::fs::remove_dir_all(&dir).ok();
}

fn small() -> PlantedOptions {
    PlantedOptions {
        nodes: 3000,
        communities: 60,
        degree: 16.0,
        mixing: 0.2,
        seed: 5,
    }
}

#[test]
fn planted_is_reproducible_whatever_the_threads() {
    let a = planted(&small()).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let b = pool.install(|| planted(&small()).unwrap());
    assert_eq!(a, b);
    let c = planted(&PlantedOptions { seed: 6, ..small() }).unwrap();
    assert_ne!(a.edges, c.edges);
}

#[test]
fn planted_degree_mixing_and_sizes() {
    let o = PlantedOptions {
        nodes: 20_000,
        communities: 100,
        degree: 20.0,
        mixing: 0.3,
        seed: 1,
    };
    let p = planted(&o).unwrap();
    let m = p.edges.src.len();
    assert_eq!(m, 200_000);
    // Sizes: 200 each; every node in exactly one.
    let cs = p.communities();
    assert_eq!(cs.len(), 100);
    assert!(cs.iter().all(|c| c.len() == 200));
    // No self-loops; the drawn degree (both ends) has mean D and every node starts
    // exactly m / n edges.
    assert!(p.edges.src.iter().zip(&p.edges.dst).all(|(u, v)| u != v));
    let mut deg = vec![0u32; o.nodes];
    for (&u, &v) in p.edges.src.iter().zip(&p.edges.dst) {
        deg[u as usize] += 1;
        deg[v as usize] += 1;
    }
    let mean = deg.iter().map(|&d| d as f64).sum::<f64>() / o.nodes as f64;
    assert!((mean - 20.0).abs() < 1e-9, "{mean}");
    // In-degree is binomial-like: no node far from D.
    assert!(deg.iter().all(|&d| (8..=40).contains(&d)));
    // Mixing: the fraction of edges between communities is μ within 4σ
    // (σ = √(μ(1−μ)/m) ≈ 0.001).
    let cross = p
        .edges
        .src
        .iter()
        .zip(&p.edges.dst)
        .filter(|(&u, &v)| p.community[u as usize] != p.community[v as usize])
        .count() as f64
        / m as f64;
    assert!((cross - 0.3).abs() < 0.005, "{cross}");
    // Cross edges spread over the communities: none has far more or fewer cross-edge
    // ends than its share (edges are stored as unordered pairs, so both ends count).
    let mut per = vec![0usize; 100];
    for (&u, &v) in p.edges.src.iter().zip(&p.edges.dst) {
        let (a, b) = (p.community[u as usize], p.community[v as usize]);
        if a != b {
            per[a as usize] += 1;
            per[b as usize] += 1;
        }
    }
    let share = (2.0 * 0.3 * m as f64) / 100.0;
    assert!(per.iter().all(|&x| (x as f64 - share).abs() < 0.2 * share));
    // The simple graph keeps every edge: they are distinct.
    let g = p.edges.to_graph().unwrap();
    assert_eq!(g.num_edges(), m);
    // Labels are permuted: community is not a function of node-number ranges.
    assert!(cs[0].windows(2).any(|w| w[1] != w[0] + 1));
}

/// The distinct undirected pairs of an edge list, counted independently of the
/// generator (a hash set of ordered pairs).
fn distinct_pairs(e: &EdgeArrays) -> usize {
    e.src
        .iter()
        .zip(&e.dst)
        .map(|(&u, &v)| (u.min(v), u.max(v)))
        .collect::<std::collections::HashSet<_>>()
        .len()
}

#[test]
fn planted_edges_are_distinct_and_counted_exactly() {
    // Dense communities (the example had 178 distinct of 1000 reported), a
    // README-like sparse case, both classes dense, and mixing 0 and 1.
    for (nodes, communities, degree, mixing) in [
        (20, 2, 8.0, 0.2),
        (20, 2, 9.0, 0.0),
        (2000, 20, 40.0, 0.2),
        (30, 3, 19.0, 0.55),
        (40, 4, 6.0, 1.0),
        (10, 1, 9.0, 0.0),
    ] {
        let o = PlantedOptions {
            nodes,
            communities,
            degree,
            mixing,
            seed: 9,
        };
        let p = planted(&o).unwrap();
        let m = (nodes as f64 * degree / 2.0).round() as usize;
        assert_eq!(p.edges.src.len(), m, "{o:?}");
        assert_eq!(distinct_pairs(&p.edges), m, "{o:?}");
        assert!(p.edges.src.iter().zip(&p.edges.dst).all(|(u, v)| u != v));
        let cross = p
            .edges
            .src
            .iter()
            .zip(&p.edges.dst)
            .filter(|(&u, &v)| p.community[u as usize] != p.community[v as usize])
            .count();
        assert_eq!(cross, (mixing * m as f64).round() as usize, "{o:?}");
        let t = p.edges.tally().unwrap();
        assert_eq!((t.distinct, t.duplicates, t.self_loops), (m, 0, 0));
    }
}

#[test]
fn planted_refuses_what_cannot_be_met() {
    // Communities of 10 nodes: at most 9 neighbours inside, so degree 100 (or 12 at
    // mixing 0) cannot be met; 40 nodes in 2 communities have only 400 cross pairs.
    for (nodes, communities, degree, mixing) in
        [(20, 2, 100.0, 0.2), (20, 2, 10.0, 0.0), (40, 2, 42.0, 1.0)]
    {
        let e = planted(&PlantedOptions {
            nodes,
            communities,
            degree,
            mixing,
            seed: 1,
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("distinct edges"), "{e}");
    }
}

#[test]
fn kronecker_tally_matches_an_independent_count() {
    let k = kronecker(8, 16, 2).unwrap();
    let t = k.tally().unwrap();
    let loops = k.src.iter().zip(&k.dst).filter(|(u, v)| u == v).count();
    let distinct: std::collections::HashSet<_> = k
        .src
        .iter()
        .zip(&k.dst)
        .filter(|(u, v)| u != v)
        .map(|(&u, &v)| (u.min(v), u.max(v)))
        .collect();
    let mut used = vec![false; k.nodes];
    for &(u, v) in &distinct {
        used[u as usize] = true;
        used[v as usize] = true;
    }
    assert_eq!(t.drawn, 16 << 8);
    assert_eq!(t.self_loops, loops);
    assert_eq!(t.distinct, distinct.len());
    assert_eq!(t.duplicates, t.drawn - loops - distinct.len());
    assert_eq!(t.nodes_without_edges, used.iter().filter(|&&x| !x).count());
    assert!(t.duplicates > 0 && t.self_loops > 0 && t.nodes_without_edges > 0);
    assert_eq!(k.to_graph().unwrap().num_edges(), t.distinct);
}

#[test]
fn planted_without_mixing_has_no_cross_edges() {
    let p = planted(&PlantedOptions {
        mixing: 0.0,
        ..small()
    })
    .unwrap();
    assert!(p
        .edges
        .src
        .iter()
        .zip(&p.edges.dst)
        .all(|(&u, &v)| p.community[u as usize] == p.community[v as usize]));
}

#[test]
fn planted_rejects_bad_parameters() {
    for o in [
        PlantedOptions {
            nodes: 1,
            ..small()
        },
        PlantedOptions {
            communities: 0,
            ..small()
        },
        PlantedOptions {
            communities: 1501,
            ..small()
        },
        PlantedOptions {
            degree: 0.0,
            ..small()
        },
        PlantedOptions {
            degree: f64::NAN,
            ..small()
        },
        PlantedOptions {
            mixing: 1.5,
            ..small()
        },
        PlantedOptions {
            communities: 1,
            mixing: 0.1,
            ..small()
        },
    ] {
        assert!(planted(&o).is_err(), "{o:?}");
    }
}

#[test]
fn planted_files_read_back_with_their_labels() {
    let p = planted(&PlantedOptions {
        nodes: 200,
        communities: 10,
        degree: 6.0,
        mixing: 0.1,
        seed: 3,
    })
    .unwrap();
    let dir = std::env::temp_dir().join(format!("trident-planted-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (e, c) = (dir.join("p.txt"), dir.join("p.communities"));
    p.edges.write_snap(&e, "test").unwrap();
    p.write_communities(&c).unwrap();
    let g = crate::io::read_graph_auto(&e).unwrap();
    assert_eq!(g.num_edges(), p.edges.to_graph().unwrap().num_edges());
    // Every community member names a node of the graph by its label, and the labels'
    // adjacency agrees with the drawn edges.
    let cx = crate::mcl::eval::read_complexes(&c).unwrap();
    assert_eq!(cx.len(), 10);
    let ids: std::collections::HashMap<String, usize> =
        (0..g.num_nodes()).map(|u| (g.label(u), u)).collect();
    let (u, v) = (p.edges.src[0], p.edges.dst[0]);
    let (a, b) = (ids[&u.to_string()], ids[&v.to_string()]);
    assert!(g.neighbors(a).contains(&(b as u32)));
    assert!(cx.iter().flatten().all(|l| ids.contains_key(l)));
    std::fs::remove_dir_all(&dir).ok();
}
