//! Property tests in the spirit of the cargo-fuzz targets (`crates/core/fuzz`): arbitrary
//! bytes, and valid files with random mutations, never make a reader panic, and whatever
//! parses is a valid matrix or graph.

use proptest::prelude::*;
use trident_core::io::{self, mtx, EdgeListOptions, IdMode};
use trident_core::Graph;

const MTX_SEEDS: &[&str] = &[
    "%%MatrixMarket matrix coordinate real general\n% c\n3 4 3\n1 1 1.5\n3 4 -2e3\n2 2 7\n",
    "%%MatrixMarket matrix coordinate pattern symmetric\r\n4 4 3\r\n2 1\r\n3 3\r\n4 1\r\n",
    "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 5\n3 1 -2\n",
    "%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n",
    "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n",
];

const EDGE_SEEDS: &[&str] = &[
    "# SNAP\r\n0\t1\r\n1\t2\r\n2\t0\r\n2 2\r\n",
    "1 2 0.5\n2 3 1e-3\n3 1 7\n",
    "YAL001C\tYBR123C\t0.98\nYBR123C YDR362C 0.5\n",
    "a b\nb c\n\n% x\nc a\n",
    "  10 20\n20 30 \n+30 10\n",
];

fn npy_seed(fortran: bool, shape: &str, n: usize, f4: bool) -> Vec<u8> {
    let mut h = format!(
        "{{'descr': '{}', 'fortran_order': {}, 'shape': {shape}, }}",
        if f4 { "<f4" } else { "<f8" },
        if fortran { "True" } else { "False" }
    );
    while (h.len() + 11) & 63 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend_from_slice(&(h.len() as u16).to_le_bytes());
    v.extend_from_slice(h.as_bytes());
    for k in 0..n {
        if f4 {
            v.extend_from_slice(&(k as f32).to_le_bytes());
        } else {
            v.extend_from_slice(&(k as f64 * 0.5).to_le_bytes());
        }
    }
    v
}

fn npy_seeds() -> Vec<Vec<u8>> {
    vec![
        npy_seed(false, "(2, 3)", 6, false),
        npy_seed(true, "(3, 2)", 6, false),
        npy_seed(false, "(4,)", 4, true),
    ]
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Truncate(usize),
    Splice(usize, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let interesting = prop_oneof![
        Just(b"0".to_vec()),
        Just(b"-1".to_vec()),
        Just(b"nan".to_vec()),
        Just(b"inf".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b" ".to_vec()),
        Just(b"%".to_vec()),
        Just(b"#".to_vec()),
        Just(b"99999999999999999999".to_vec()),
        Just(b"4294967295".to_vec()),
        Just(b"1e308".to_vec()),
        Just(b"(".to_vec()),
        Just(b"'".to_vec()),
        proptest::collection::vec(any::<u8>(), 0..8),
    ];
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::Flip(p, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::Insert(p, b)),
        any::<usize>().prop_map(Mutation::Delete),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), interesting).prop_map(|(p, s)| Mutation::Splice(p, s)),
    ]
}

fn mutate(mut v: Vec<u8>, muts: &[Mutation]) -> Vec<u8> {
    for m in muts {
        let len = v.len();
        match m {
            Mutation::Flip(p, b) if len > 0 => v[p % len] = *b,
            Mutation::Insert(p, b) => v.insert(p % (len + 1), *b),
            Mutation::Delete(p) if len > 0 => {
                v.remove(p % len);
            }
            Mutation::Truncate(p) => v.truncate(p % (len + 1)),
            Mutation::Splice(p, s) => {
                let at = p % (len + 1);
                v.splice(at..at, s.iter().copied());
            }
            _ => {}
        }
    }
    v
}

fn check_graph(g: &Graph) {
    let n = g.num_nodes();
    for u in 0..n {
        let nb = g.neighbors(u);
        assert!(nb.windows(2).all(|w| w[0] < w[1]));
        assert!(nb.iter().all(|&v| (v as usize) < n && v as usize != u));
    }
    if let Some(l) = g.labels() {
        assert_eq!(l.len(), n);
    }
}

fn all_readers(bytes: &[u8]) {
    let _ = mtx::parse_header(bytes, "p.mtx");
    if let Ok(m) = mtx::parse_matrix_market::<f64>(bytes, "p.mtx") {
        let (r, c) = m.shape();
        let coo = m.into_coo();
        assert!(coo.iter().all(|(i, j, v)| i < r && j < c && v.is_finite()));
    }
    let _ = mtx::parse_matrix_market::<f32>(bytes, "p.mtx");
    for ids in [IdMode::Auto, IdMode::Labels, IdMode::Numeric] {
        // Numeric mode allocates up to the largest id; keep the ids small there.
        if ids == IdMode::Numeric
            && bytes
                .split(|b| !b.is_ascii_digit())
                .any(|run| run.len() > 6)
        {
            continue;
        }
        for weighted in [None, Some(true), Some(false)] {
            for loop_only_nodes in [false, true] {
                let opts = EdgeListOptions {
                    ids,
                    weighted,
                    loop_only_nodes,
                };
                if let Ok(g) = io::parse_edge_list(bytes, "p.txt", &opts) {
                    check_graph(&g);
                }
            }
        }
    }
    if let Ok(d) = io::parse_npy::<f64>(bytes, "p.npy") {
        assert_eq!(d.as_slice().len(), d.rows() * d.cols());
    }
    let _ = io::parse_npy::<f32>(bytes, "p.npy");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        all_readers(&bytes);
    }

    #[test]
    fn arbitrary_text_never_panics(s in "[0-9a-z .%#\t\r\n+-]{0,200}") {
        all_readers(s.as_bytes());
        let with_banner = format!("%%MatrixMarket matrix coordinate real general\n{s}");
        all_readers(with_banner.as_bytes());
    }

    #[test]
    fn mutated_mtx_never_panics(
        k in 0..MTX_SEEDS.len(),
        muts in proptest::collection::vec(mutation(), 1..6),
    ) {
        all_readers(&mutate(MTX_SEEDS[k].as_bytes().to_vec(), &muts));
    }

    #[test]
    fn mutated_edge_lists_never_panic(
        k in 0..EDGE_SEEDS.len(),
        muts in proptest::collection::vec(mutation(), 1..6),
    ) {
        all_readers(&mutate(EDGE_SEEDS[k].as_bytes().to_vec(), &muts));
    }

    #[test]
    fn mutated_npy_never_panics(
        k in 0..3usize,
        muts in proptest::collection::vec(mutation(), 1..4),
    ) {
        all_readers(&mutate(npy_seeds()[k].clone(), &muts));
    }
}

#[test]
fn seeds_parse() {
    for s in MTX_SEEDS {
        mtx::parse_matrix_market::<f64>(s.as_bytes(), "seed").unwrap();
    }
    for s in EDGE_SEEDS {
        let g = io::parse_edge_list(s.as_bytes(), "seed", &EdgeListOptions::default()).unwrap();
        check_graph(&g);
    }
    for s in npy_seeds() {
        io::parse_npy::<f64>(&s, "seed").unwrap();
    }
}
