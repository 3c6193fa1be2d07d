//! A graph read, built and oriented by all ranks together.
//!
//! * **Read** ([`read_graph`]): each rank reads its byte range of an edge list (cut at line
//!   breaks, errors naming the file's line; after a column header line, which one process
//!   skips too) and parses it as the one-process reader does. Integer ids in use are agreed
//!   on by an or-reduction of their bitmaps; labels are numbered in order of first
//!   appearance through their owners (`labels`); either way the nodes are numbered exactly
//!   as one process numbers them. A coordinate Matrix Market file is read in byte ranges of
//!   its body (`mtx`). Other inputs (gzip, standard input, METIS, a byte-order mark) are
//!   read whole by every rank, and each keeps its share.
//! * **Build** (same function): each undirected edge `{u, v}` goes to the rank owning the
//!   block of ids holding its *home* end (`home`: the lower id or the higher, by the ids'
//!   parity, so that a rank's share follows its nodes' degrees and not their order), which
//!   groups its edges into rows and merges repeats (`rows::rows_of`); degrees are summed
//!   over ranks.
//! * **Orient** ([`orient`]): every rank ranks the nodes by `(degree, id)`, as
//!   [`OrientedGraph::from_graph`] does, and sends each edge to the provisional owner of its
//!   lower end's row (rows cut at equal edge counts), which builds the rows and sums their
//!   intersection work row by row; the rows are then cut into ranges of about equal work and
//!   move there as whole rows.
//! * **Share** ([`share_on_host`], the read of `trident cluster` under mpirun): the first
//!   rank of each host reads the whole graph and passes it to the host's other ranks through
//!   [`Comm::host_share`] (one shared-memory window per host over MPI); [`orient_on_host`]
//!   (the read of `trident triangles` under mpirun) passes each rank its share of the whole
//!   oriented graph the same way.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use rayon::prelude::*;

mod columns;
mod gzip;
#[cfg(test)]
pub(crate) use gzip::read_gz_in;
pub(super) mod host;
mod labels;
mod mtx;
mod rows;
mod share;
pub use host::{orient_on_host, CutGraph};
use rows::{rows_of, weighted_rows, Weighted};
use share::first_rank_read;
pub use share::{share_on_host, share_on_host_or_part, GraphOrPart};

use super::{all_gather, all_to_all, block_owner, reduce_one, route_owned, Comm, Op, Phases};
use crate::error::{Error, Result};
use crate::graph::{id_label, DenseIds, Graph};
use crate::io::edgelist::{self, EdgeListOptions, IdMode};
use crate::io::{self, ReadOptions};
use crate::triangles::OrientedGraph;

/// How the nodes of a [`DistGraph`] are named in outputs.
#[derive(Debug, Clone)]
enum Names {
    /// By number.
    Numbers,
    /// By the file's ids (the ids in use, numbered in increasing order).
    Ids(DenseIds),
    /// By number from 1 (a Matrix Market file's rows).
    OneBased,
    /// Every label (rank 0 of a graph read whole); other ranks keep none.
    Labels(Vec<String>),
}

/// One rank's share of an undirected simple graph read by all ranks.
#[derive(Debug, Clone)]
pub struct DistGraph {
    n: usize,
    /// This rank's block of ids ([`block_owner`]) starts here.
    lo: usize,
    /// The rows of this rank's block (`indptr` from 0): row `u` holds the `v` of every edge
    /// `{u, v}` whose [`home`] is `u`, sorted, each once.
    indptr: Vec<u64>,
    adj: Vec<u32>,
    /// The weights of `adj`'s edges (R-MCL's weighted networks; a repeated edge keeps its
    /// largest weight, as one process keeps it), `None` when unweighted or dropped.
    weights: Option<Vec<f64>>,
    /// Edges of the whole graph.
    num_edges: u64,
    /// Self-loop lines of the whole input, dropped.
    self_loops: u64,
    /// Every node's degree.
    degree: Vec<u32>,
    names: Names,
    notes: Vec<String>,
    parallel_read: bool,
    phases: Phases,
}

impl DistGraph {
    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.n
    }
    /// Number of undirected edges of the whole graph.
    pub fn num_edges(&self) -> u64 {
        self.num_edges
    }
    /// Self-loops dropped from the whole input.
    pub fn self_loops_dropped(&self) -> u64 {
        self.self_loops
    }
    /// Degree of node `v`.
    pub fn degree(&self, v: usize) -> usize {
        self.degree[v] as usize
    }
    /// The label of node `v` (on rank 0; other ranks of a graph read whole name numbers).
    pub fn label(&self, v: usize) -> String {
        match &self.names {
            Names::Numbers => v.to_string(),
            Names::Ids(ids) => id_label(ids.id_of(v)),
            Names::OneBased => id_label(v as u64 + 1),
            Names::Labels(l) => l.get(v).cloned().unwrap_or_else(|| v.to_string()),
        }
    }
    /// The reader's remarks (header lines skipped and the like).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
    /// Whether each rank read its own byte range (`false`: every rank read the whole file).
    pub fn parallel_read(&self) -> bool {
        self.parallel_read
    }
    /// This rank's time in each phase of the read and build.
    pub fn phases(&self) -> &Phases {
        &self.phases
    }
    /// This rank's edges (`u << 32 | v`, `u < v`), in no particular order.
    pub fn local_edges(&self) -> Result<Vec<u64>> {
        by_rows(&self.indptr, |r, out| {
            let u = (self.lo + r) as u32;
            for (o, &v) in out.iter_mut().zip(self.row(r)) {
                *o = key(u, v);
            }
        })
    }
    /// Local row `r` (node `lo + r`).
    fn row(&self, r: usize) -> &[u32] {
        &self.adj[self.indptr[r] as usize..self.indptr[r + 1] as usize]
    }

    /// Every rank's share of `g`, which every rank holds whole.
    pub fn from_graph(c: &dyn Comm, g: &Graph) -> Result<Self> {
        let n = g.num_nodes();
        let (p, me) = (c.size(), c.rank());
        let lo = super::block_start(me, n as u64, p) as usize;
        let hi = super::block_start(me + 1, n as u64, p) as usize;
        let lens: Vec<u64> = (lo..hi)
            .into_par_iter()
            .map(|u| {
                let w = u as u32;
                g.neighbors(u).iter().filter(|&&v| home(w, v) == w).count() as u64
            })
            .collect();
        let mut indptr = vec![0u64; hi - lo + 1];
        for (r, &l) in lens.iter().enumerate() {
            indptr[r + 1] = indptr[r] + l;
        }
        let adj = by_rows(&indptr, |r, out| {
            let w = (lo + r) as u32;
            let kept = g.neighbors(lo + r).iter().filter(|&&v| home(w, v) == w);
            for (o, &v) in out.iter_mut().zip(kept) {
                *o = v;
            }
        })?;
        let degree = (0..n).into_par_iter().map(|v| g.degree(v) as u32).collect();
        let names = if me == 0 && g.labels().is_some() {
            Names::Labels((0..n).into_par_iter().map(|v| g.label(v)).collect())
        } else {
            Names::Numbers
        };
        Ok(Self {
            n,
            lo,
            indptr,
            adj,
            weights: None,
            num_edges: g.num_edges() as u64,
            self_loops: g.self_loops_dropped() as u64,
            degree,
            names,
            notes: g.notes().to_vec(),
            parallel_read: false,
            phases: Phases::default(),
        })
    }

    /// The graph of `edges` on nodes `0..n` (any order and direction, duplicates and
    /// self-loops allowed), each rank holding some of them: merged and shared out.
    pub fn from_edges(c: &dyn Comm, n: usize, edges: &[(u32, u32)]) -> Result<Self> {
        if let Some(&(u, v)) = edges.iter().find(|&&(u, v)| u.max(v) as usize >= n) {
            return Err(Error::invalid(
                "graph",
                format!("edge ({u}, {v}) of a graph of {n} nodes"),
            ));
        }
        let loops = edges.iter().filter(|&&(u, v)| u == v).count() as u64;
        let keys: Vec<u64> = edges
            .par_iter()
            .filter(|&&(u, v)| u != v)
            .map(|&(u, v)| homed(u, v))
            .collect();
        build(
            c,
            n,
            (keys, None),
            reduce_one(c, loops, Op::Sum)?,
            Names::Numbers,
            Vec::new(),
            (true, Phases::default()),
        )
    }
}

/// One value per entry of the rows of `indptr` (from 0): `fill(r, out)` writes row `r`'s,
/// in parallel over blocks of rows, into one fresh array (pages touched by the writing
/// threads; no collect of pieces and no copy).
fn by_rows<T: bytemuck::Pod + Send>(
    indptr: &[u64],
    fill: impl Fn(usize, &mut [T]) + Sync,
) -> Result<Vec<T>> {
    const BLOCK: usize = 2048;
    let rows = indptr.len() - 1;
    let len = indptr[rows] as usize;
    let mut out = super::zeroed::<T>(len, "rows")?;
    let mut blocks: Vec<(usize, &mut [T])> = Vec::with_capacity(rows.div_ceil(BLOCK));
    let mut rest: &mut [T] = &mut out;
    for b0 in (0..rows).step_by(BLOCK) {
        let b1 = (b0 + BLOCK).min(rows);
        let (head, tail) =
            std::mem::take(&mut rest).split_at_mut((indptr[b1] - indptr[b0]) as usize);
        blocks.push((b0, head));
        rest = tail;
    }
    blocks.into_par_iter().for_each(|(b0, block)| {
        let base = indptr[b0];
        for r in b0..(b0 + BLOCK).min(rows) {
            fill(
                r,
                &mut block[(indptr[r] - base) as usize..(indptr[r + 1] - base) as usize],
            );
        }
    });
    Ok(out)
}

/// The bytes `start..end` of `f`, read by several threads at once (positioned reads of
/// large pieces into one fresh buffer): one thread copies a page-cached file at a fraction
/// of the memory bandwidth.
fn read_range(f: &File, start: u64, end: u64) -> std::io::Result<Vec<u8>> {
    const PIECE: usize = 64 << 20;
    let mut bytes = vec![0u8; (end - start) as usize];
    bytes
        .par_chunks_mut(PIECE)
        .enumerate()
        .try_for_each(|(i, piece)| read_at(f, piece, start + (i * PIECE) as u64))?;
    Ok(bytes)
}

#[cfg(unix)]
fn read_at(f: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, at)
}

#[cfg(not(unix))]
fn read_at(f: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    // One reader at a time where there are no positioned reads.
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let mut f = f;
    f.seek(SeekFrom::Start(at))?;
    f.read_exact(buf)
}

/// The end of edge `{u, v}` whose row holds it: the lower id when the two ids have the same
/// parity, else the higher. Every node is the home of about half of its edges whatever its
/// place in the id order, so each rank's block of rows holds about its share of the edges
/// (with the lower id always, the first block would hold three quarters at two ranks).
#[inline]
fn home(u: u32, v: u32) -> u32 {
    if (u ^ v) & 1 == 0 {
        u.min(v)
    } else {
        u.max(v)
    }
}

/// Edge `{u, v}` as the key `home << 32 | other end` ([`home`]).
#[inline]
fn homed(u: u32, v: u32) -> u64 {
    let h = home(u, v);
    (h as u64) << 32 | (u ^ v ^ h) as u64
}

/// Edge `{u, v}` as the key `min << 32 | max`.
#[inline]
fn key(u: u32, v: u32) -> u64 {
    (u.min(v) as u64) << 32 | u.max(v) as u64
}

/// Merges the undirected edges `keys` ([`homed`]) of every rank: each goes to the owner of
/// its home's block, which groups them into rows and drops repeats; degrees are summed.
fn build(
    c: &dyn Comm,
    n: usize,
    (keys, weights): (Vec<u64>, Option<Vec<f64>>),
    self_loops: u64,
    names: Names,
    notes: Vec<String>,
    (parallel_read, mut phases): (bool, Phases),
) -> Result<DistGraph> {
    let p = c.size();
    let lo = super::block_start(c.rank(), n as u64, p) as usize;
    let hi = super::block_start(c.rank() + 1, n as u64, p) as usize;
    let owner = |k: u64| block_owner(k >> 32, n as u64, p);
    let (indptr, adj, weights) = match weights {
        None => {
            let edges = route_owned(c, keys, |&k| owner(k))?;
            phases.lap("route");
            let (indptr, adj) = rows_of(&edges, lo, hi, true)?;
            (indptr, adj, None)
        }
        Some(w) => {
            if w.len() != keys.len() {
                return Err(Error::backend("dist", "weights for other edges (a bug)"));
            }
            let edges: Vec<Weighted> = keys
                .par_iter()
                .zip(w)
                .map(|(&key, w)| Weighted { key, w })
                .collect();
            drop(keys);
            let edges = route_owned(c, edges, |e| owner(e.key))?;
            phases.lap("route");
            let (indptr, adj, w) = weighted_rows(edges, lo, hi)?;
            (indptr, adj, Some(w))
        }
    };
    phases.lap("rows");
    // Degrees: a row's length, plus one for each time a node is another row's far end.
    let mut degree = vec![0u32; n];
    {
        use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
        let d: Vec<AtomicU32> = std::iter::repeat_with(Default::default).take(n).collect();
        adj.par_iter().with_min_len(1 << 14).for_each(|&v| {
            d[v as usize].fetch_add(1, Relaxed);
        });
        degree
            .par_iter_mut()
            .zip(d)
            .for_each(|(x, a)| *x = a.into_inner());
        degree[lo..hi]
            .par_iter_mut()
            .zip(indptr.par_windows(2))
            .for_each(|(x, w)| *x += (w[1] - w[0]) as u32);
    }
    c.all_reduce_u32(&mut degree, Op::Sum)?;
    let num_edges = reduce_one(c, adj.len() as u64, Op::Sum)?;
    phases.lap("degrees");
    Ok(DistGraph {
        n,
        lo,
        indptr,
        adj,
        weights,
        num_edges,
        self_loops,
        degree,
        names,
        notes,
        parallel_read,
        phases,
    })
}

/// Reads the graph file `path` on every rank (see the module documentation): what
/// [`io::read_graph_limited`] reads, the same nodes and edges, shared out. Every rank must
/// call it with the same arguments.
pub fn read_graph(
    c: &dyn Comm,
    path: &Path,
    opts: &EdgeListOptions,
    read: &ReadOptions,
) -> Result<DistGraph> {
    if let Some(g) = read_ranges(c, path, opts, read, false)? {
        return Ok(g);
    }
    let g = io::read_graph_limited(path, opts, read)?;
    DistGraph::from_graph(c, &g)
}

/// [`read_graph`] of a graph whose weights matter (R-MCL's network): `Some` where the ranks
/// read it in byte ranges, its weights kept ([`DistGraph`]'s rows carry them; a repeated
/// edge keeps its largest weight, as one process keeps it): an integer-id edge list, with
/// or without a weight column, or a coordinate Matrix Market file (its values the weights);
/// else `None` on every rank (labels, gzip…: the caller reads it otherwise). Every rank
/// must call it with the same arguments.
pub fn read_graph_weighted(
    c: &dyn Comm,
    path: &Path,
    opts: &EdgeListOptions,
    read: &ReadOptions,
) -> Result<Option<DistGraph>> {
    read_ranges(c, path, opts, read, true)
}

/// The graph read in byte ranges ([`read_graph`]), its weights kept where `keep` (a Matrix
/// Market file's values among them), else dropped; `None` for any file not read so. An
/// edge list whose ids are not all integers (or that the `Labels` mode names) is read as
/// labels in byte ranges too ([`labels::numbered_labels`]); one with a column header line
/// is read after it, as one process skips it.
fn read_ranges(
    c: &dyn Comm,
    path: &Path,
    opts: &EdgeListOptions,
    read: &ReadOptions,
    keep: bool,
) -> Result<Option<DistGraph>> {
    if c.size() == 1 {
        return Ok(None);
    }
    if let Some(g) = mtx::read_mtx(c, path, read, keep)? {
        return Ok(Some(g));
    }
    if let Some(g) = gzip::read_gz(c, path, opts, read, keep)? {
        return Ok(Some(g));
    }
    let Some(plan) = agreed_plan(c, path, opts, read, |_| true)? else {
        return Ok(None);
    };
    let mut phases = Phases::default();
    if opts.ids != IdMode::Labels {
        let body = plan.header.as_ref().map_or(plan.start, |h| h.2);
        let (outcome, name) = read_part(c, path, &plan, body, opts, &mut phases)?;
        // 0: every rank's ids are integers; 1: some too wide; 2: some not integers.
        let code = match &outcome {
            edgelist::PartOutcome::Edges(_) => 0,
            edgelist::PartOutcome::Wide => 1,
            edgelist::PartOutcome::NotNumeric => 2,
        };
        match (reduce_one(c, code, Op::Max)?, outcome) {
            (0, edgelist::PartOutcome::Edges(mut edges)) => {
                if !keep {
                    edges.weights = None;
                }
                let notes = header_note(&name, &plan.header);
                return numbered(c, Part { edges, name }, opts, notes, phases).map(Some);
            }
            // Labels, the header line among them (one process finds the rest not numeric
            // and reads every line as labels).
            (2, _) if opts.ids == IdMode::Auto => phases = Phases::default(),
            _ => return Ok(None),
        }
    }
    labels::numbered_labels(c, path, &plan, opts, keep, phases).map(Some)
}

/// One process's note for a column header line skipped (`(line, text, offset after)`).
fn header_note(name: &str, header: &Option<(usize, String, u64)>) -> Vec<String> {
    header
        .iter()
        .map(|(ln, line, _)| format!("{name}:{ln}: skipped the header line {line}"))
        .collect()
}

/// The byte-range plan of `path` ([`edgelist::range_plan`]) where `fits` it and the file is
/// below the input limit, agreed by every rank (`None` on every rank where some rank has
/// none: a rank that cannot read the file leaves it to the whole-file readers, which report
/// it as one process does).
fn agreed_plan(
    c: &dyn Comm,
    path: &Path,
    opts: &EdgeListOptions,
    read: &ReadOptions,
    fits: impl Fn(&edgelist::RangePlan) -> bool,
) -> Result<Option<edgelist::RangePlan>> {
    let plan = edgelist::range_plan(path, opts).filter(|p| p.len < read.input_limit() && fits(p));
    let none = reduce_one(c, u64::from(plan.is_none()), Op::Max)?;
    Ok(plan.filter(|_| none == 0))
}

/// This rank's part of `path` read in byte ranges (see [`read_graph`]) when every rank can
/// read it so (an integer-id edge list of more than one rank, without a header line; its
/// weights, if it has a weight column, in the part), else `None` on every rank. Every rank
/// decides the same way from the file's head; a rank that finds the file unreadable reports
/// it, and the others fall back with it (the whole-file reader then reports the error the
/// same way one process does).
fn ranged_part(
    c: &dyn Comm,
    path: &Path,
    opts: &EdgeListOptions,
    read: &ReadOptions,
    phases: &mut Phases,
) -> Result<Option<Part>> {
    if c.size() == 1 || opts.ids == IdMode::Labels {
        return Ok(None);
    }
    let Some(plan) = agreed_plan(c, path, opts, read, |p| p.header.is_none())? else {
        return Ok(None);
    };
    let (outcome, name) = read_part(c, path, &plan, plan.start, opts, phases)?;
    let part = match outcome {
        edgelist::PartOutcome::Edges(edges) => Some(Part { edges, name }),
        _ => None,
    };
    let fallback = reduce_one(c, u64::from(part.is_none()), Op::Max)?;
    Ok(part.filter(|_| fallback == 0))
}

/// Reads the graph file `path` with the help of every rank, and gives every rank all of it:
/// the graph [`io::read_graph_limited`] gives one process, node for node and edge for edge.
/// A plain integer-id edge list (with or without weights) is read in byte ranges, each rank parsing its
/// own as the one-process reader parses the file (errors name the file's line); the parsed
/// edges are gathered in file order and numbered and built as one process does. Any other
/// input is read whole by every rank. Every rank must call it with the same arguments. With
/// the graph: whether it was read in byte ranges.
pub fn read_graph_whole(
    c: &dyn Comm,
    path: &Path,
    opts: &EdgeListOptions,
    read: &ReadOptions,
) -> Result<(Graph, bool)> {
    if let Some(part) = ranged_part(c, path, opts, read, &mut Phases::default())? {
        let e = part.edges;
        let (src, _) = all_gather(c, &e.src)?;
        let (dst, _) = all_gather(c, &e.dst)?;
        // Every rank decided the weight column alike, from the file's head.
        let weights = match &e.weights {
            Some(w) => Some(all_gather(c, w)?.0),
            None => None,
        };
        let (loop_ids, _) = all_gather(c, &e.loop_ids)?;
        let self_loops = reduce_one(c, e.self_loops as u64, Op::Sum)? as usize;
        let max = reduce_one(c, e.max.map_or(0, |m| m + 1), Op::Max)?;
        // No data line anywhere: the whole-file reader says so, as for one process.
        if !(src.is_empty() && loop_ids.is_empty() && self_loops == 0) {
            let whole = edgelist::PartEdges {
                src,
                dst,
                loop_ids,
                self_loops,
                max: max.checked_sub(1),
                weights,
            };
            return Ok((edgelist::graph_from_part(whole, opts, &part.name)?, true));
        }
    }
    Ok((io::read_graph_limited(path, opts, read)?, false))
}

/// A rank's parsed byte range.
struct Part {
    edges: edgelist::PartEdges,
    name: String,
}

/// The position of the first line that starts at or after `at` (`len` if none).
fn line_start(mut f: &File, at: u64, len: u64) -> std::io::Result<u64> {
    if at == 0 || at >= len {
        return Ok(at.min(len));
    }
    let mut pos = at - 1;
    let mut buf = vec![0u8; 1 << 16];
    f.seek(SeekFrom::Start(pos))?;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            return Ok(len);
        }
        if let Some(i) = memchr::memchr(b'\n', &buf[..k]) {
            return Ok(pos + i as u64 + 1);
        }
        pos += k as u64;
    }
}

/// This rank's byte range of the body of `plan`'s file (from `body`, cut at line starts)
/// and the number of the file's lines before it.
fn range_of(
    c: &dyn Comm,
    path: &Path,
    plan: &edgelist::RangePlan,
    body: u64,
    phases: &mut Phases,
) -> Result<(Vec<u8>, usize)> {
    let (p, me) = (c.size() as u64, c.rank() as u64);
    let io_err = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let (f, len) = (&plan.file, plan.len);
    let span = len - body.min(len);
    // The body starts a line (after a header, or a byte-order mark); the other cuts are
    // moved to the next line start.
    let cut = |k: u64| -> Result<u64> {
        if k == 0 {
            return Ok(body.min(len));
        }
        let at = line_start(f, body + span * k / p, len).map_err(io_err)?;
        Ok(at.max(body))
    };
    let (start, end) = (cut(me)?, cut(me + 1)?);
    let bytes = read_range(f, start, end).map_err(io_err)?;
    let mut head = vec![0u8; body as usize];
    read_at(f, &mut head, 0).map_err(io_err)?;
    phases.lap("read");
    // The lines before this range, so that errors name the file's line.
    let lines = memchr::memchr_iter(b'\n', &bytes).count() as u64;
    let before = memchr::memchr_iter(b'\n', &head).count();
    let skip = before + super::exclusive_sum(c, lines)? as usize;
    // A line past the text limit fails the file, as one process refuses it.
    io::check_range_lines(&bytes, &path.display().to_string(), skip)?;
    Ok((bytes, skip))
}

/// Reads and parses this rank's byte range of the body of `plan`'s file (from `body`) as
/// integer ids; with the file's name.
fn read_part(
    c: &dyn Comm,
    path: &Path,
    plan: &edgelist::RangePlan,
    body: u64,
    opts: &EdgeListOptions,
    phases: &mut Phases,
) -> Result<(edgelist::PartOutcome, String)> {
    let (bytes, skip) = range_of(c, path, plan, body, phases)?;
    let name = path.display().to_string();
    let part = edgelist::parse_part(&bytes, &name, opts, skip, plan.weights)?;
    phases.lap("parse");
    Ok((part, name))
}

/// The nodes numbered as one process numbers them (see [`IdMode`]): ids as given
/// (`Numeric`), or the ids in use in increasing order (`Auto`), from the or of every rank's
/// bitmap of its ids; then the graph built.
fn numbered(
    c: &dyn Comm,
    part: Part,
    opts: &EdgeListOptions,
    notes: Vec<String>,
    mut phases: Phases,
) -> Result<DistGraph> {
    let e = part.edges;
    let max = e.max.map_or(0, |m| m + 1);
    let max = reduce_one(c, max, Op::Max)?;
    let self_loops = reduce_one(c, e.self_loops as u64, Op::Sum)?;
    let edges_total = reduce_one(c, e.src.len() as u64, Op::Sum)?;
    if edges_total == 0 && self_loops == 0 {
        return Err(crate::io::perr(
            &part.name,
            None,
            crate::ParseErrorKind::Empty,
            "no edges in the file",
        ));
    }
    let (n, names, map) = match opts.ids {
        IdMode::Numeric => (max as usize, Names::Numbers, None),
        _ => {
            let words = (max as usize).div_ceil(64);
            let marks: Vec<std::sync::atomic::AtomicU64> = std::iter::repeat_with(Default::default)
                .take(words)
                .collect();
            [&e.src, &e.dst, &e.loop_ids]
                .into_par_iter()
                .flat_map(|ids| ids.par_chunks(1 << 16))
                .for_each(|chunk| {
                    use std::sync::atomic::Ordering::Relaxed;
                    for &id in chunk {
                        let (w, b) = (&marks[(id >> 6) as usize], 1u64 << (id & 63));
                        // Most ids repeat: test before the (locked) write.
                        if w.load(Relaxed) & b == 0 {
                            w.fetch_or(b, Relaxed);
                        }
                    }
                });
            let mut bits: Vec<u64> = marks.into_iter().map(|a| a.into_inner()).collect();
            c.all_reduce_u64(&mut bits, Op::Or)?;
            let map = DenseIds::new(bits);
            let n = map.len();
            if n as u64 == max {
                (n, Names::Numbers, None)
            } else {
                (n, Names::Ids(map.clone()), Some(map))
            }
        }
    };
    let keys: Vec<u64> = e
        .src
        .par_iter()
        .zip(&e.dst)
        .map(|(&u, &v)| {
            let (u, v) = match &map {
                Some(m) => (m.get(u), m.get(v)),
                None => (u, v),
            };
            homed(u, v)
        })
        .collect();
    let weights = e.weights;
    phases.lap("ids");
    build(
        c,
        n,
        (keys, weights),
        self_loops,
        names,
        notes,
        (true, phases),
    )
}

/// One rank's rows of a distributed [`OrientedGraph`]: the degree-ordered orientation of a
/// [`DistGraph`], nodes relabelled by rank as there, rows cut over the ranks.
#[derive(Debug, Clone)]
pub struct DistOriented {
    n: usize,
    m: u64,
    /// Rank `r` holds rows `splits[r]..splits[r + 1]`.
    splits: Vec<usize>,
    /// This rank's rows: `indptr` from 0, `adj` their out-neighbours, sorted.
    indptr: Vec<u64>,
    adj: Vec<u32>,
    /// `original[r]`: the graph's id of node `r`.
    original: Vec<u32>,
    phases: Phases,
}

impl DistOriented {
    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.n
    }
    /// Number of oriented edges of the whole graph.
    pub fn num_edges(&self) -> u64 {
        self.m
    }
    /// Every rank's rows: rank `r` holds `splits()[r]..splits()[r + 1]`.
    pub fn splits(&self) -> &[usize] {
        &self.splits
    }
    /// This rank's first row.
    pub fn first_row(&self, c: &dyn Comm) -> usize {
        self.splits[c.rank()]
    }
    /// This rank's row pointers (from 0) and out-neighbours.
    pub fn local(&self) -> (&[u64], &[u32]) {
        (&self.indptr, &self.adj)
    }
    /// The graph's id of every node, in rank order.
    pub fn original(&self) -> &[u32] {
        &self.original
    }
    /// This rank's time in each phase of the orientation.
    pub fn phases(&self) -> &Phases {
        &self.phases
    }
}

/// Orients `g` by `(degree, id)` rank, in distributed form (see the module documentation).
pub fn orient(c: &dyn Comm, g: &DistGraph) -> Result<DistOriented> {
    let mut phases = Phases::default();
    let n = g.n;
    let p = c.size();
    let mut keys: Vec<u64> = (0..n)
        .into_par_iter()
        .map(|v| (g.degree[v] as u64) << 32 | v as u64)
        .collect();
    keys.par_sort_unstable();
    let original: Vec<u32> = keys.par_iter().map(|&k| k as u32).collect();
    drop(keys);
    let mut rank = vec![0u32; n];
    for (r, &v) in original.iter().enumerate() {
        rank[v as usize] = r as u32;
    }
    let oriented = by_rows(&g.indptr, |r, out| {
        let a = rank[g.lo + r];
        for (o, &v) in out.iter_mut().zip(g.row(r)) {
            *o = key(a, rank[v as usize]);
        }
    })?;
    drop(rank);
    phases.lap("rank");
    // Out-degrees of every row, summed over ranks, then rows cut at equal edge counts.
    let mut outdeg = vec![0u32; n];
    {
        use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
        let d: Vec<AtomicU32> = std::iter::repeat_with(Default::default).take(n).collect();
        oriented.par_iter().for_each(|&k| {
            d[(k >> 32) as usize].fetch_add(1, Relaxed);
        });
        outdeg
            .par_iter_mut()
            .zip(d)
            .for_each(|(x, a)| *x = a.into_inner());
    }
    c.all_reduce_u32(&mut outdeg, Op::Sum)?;
    let m: u64 = outdeg.par_iter().map(|&d| d as u64).sum();
    phases.lap("out-degrees");
    // The rows first go to provisional owners, cut at equal edge counts (known from the
    // out-degrees alone), where they are built; each rank then sums its rows' work
    // ([`edge_cost`]) row by row, with no atomics and no second pass over every edge's ends,
    // and the rows, already built and sorted, move as whole ranges to their final owners
    // (rows cut at equal work).
    let prov = edge_splits(&outdeg, m, p);
    let owner = |row: u64| prov.partition_point(|&s| s as u64 <= row) - 1;
    let mine = route_owned(c, oriented, |&k| owner(k >> 32).min(p - 1))?;
    phases.lap("route");
    let (q0, q1) = (prov[c.rank()], prov[c.rank() + 1]);
    let (qptr, qadj) = rows_of(&mine, q0, q1, false)?;
    drop(mine);
    phases.lap("rows");
    let cost: Vec<u64> = (q0..q1)
        .into_par_iter()
        .with_min_len(1 << 10)
        .map(|u| {
            let i = u - q0;
            let du = outdeg[u];
            qadj[qptr[i] as usize..qptr[i + 1] as usize]
                .iter()
                .map(|&v| edge_cost(du, outdeg[v as usize]))
                .fold(0u64, u64::wrapping_add)
        })
        .collect();
    let splits = cost_splits(c, &cost, q0, n)?;
    drop(cost);
    phases.lap("cost");
    let (r0, r1) = (splits[c.rank()], splits[c.rank() + 1]);
    let (indptr, adj) = if splits == prov {
        (qptr, qadj)
    } else {
        move_rows(c, &splits, q0, &qptr, &qadj, r1 - r0)?
    };
    phases.lap("move");
    if let Some(r) = (r0..r1).find(|&r| indptr[r - r0 + 1] - indptr[r - r0] != outdeg[r] as u64) {
        return Err(Error::backend(
            "dist",
            format!(
                "rank {} received {} edges of row {r}, which has {}",
                c.rank(),
                indptr[r - r0 + 1] - indptr[r - r0],
                outdeg[r]
            ),
        ));
    }
    Ok(DistOriented {
        n,
        m,
        splits,
        indptr,
        adj,
        original,
        phases,
    })
}

/// [`edge_splits`] of every rank's row costs together (rank `r`'s `cost` are those of its
/// rows `first..`, the ranks' rows consecutive and in rank order, `n` rows in all), without
/// gathering them: each rank finds in its own rows the first row at which each cut's share
/// of the total work is reached, and the cuts are the least over the ranks.
fn cost_splits(c: &dyn Comm, cost: &[u64], first: usize, n: usize) -> Result<Vec<usize>> {
    let p = c.size();
    let mine = cost.iter().copied().fold(0u64, u64::wrapping_add);
    let (totals, _) = all_gather(c, &[mine])?;
    let before = totals[..c.rank()]
        .iter()
        .copied()
        .fold(0u64, u64::wrapping_add);
    let work = totals.iter().copied().fold(0u64, u64::wrapping_add);
    // Cut r is the first row whose work before it reaches work * r / p (as edge_splits).
    let mut cuts = vec![n as u64; p + 1];
    cuts[0] = 0;
    let mut acc = before;
    let mut r = 1;
    for (i, &w) in cost.iter().enumerate() {
        while r < p && acc >= work * r as u64 / p as u64 {
            cuts[r] = (first + i) as u64;
            r += 1;
        }
        acc = acc.wrapping_add(w);
    }
    c.all_reduce_u64(&mut cuts, Op::Min)?;
    Ok(cuts.into_iter().map(|x| x as usize).collect())
}

/// The built rows `first..` of this rank (`indptr` from 0, `adj`) moved to the ranks that
/// own them by `splits` (rank `r` holds rows `splits[r]..splits[r + 1]`); returns this
/// rank's rows, `rows` of them. Every rank's rows are contiguous and their ranges in rank
/// order, so what goes to each rank is one contiguous piece of `adj`, and what arrives,
/// concatenated in rank order, is this rank's rows in order: two exchanges of whole pieces,
/// no sort and no regrouping.
fn move_rows(
    c: &dyn Comm,
    splits: &[usize],
    first: usize,
    indptr: &[u64],
    adj: &[u32],
    rows: usize,
) -> Result<(Vec<u64>, Vec<u32>)> {
    let p = c.size();
    let last = first + indptr.len() - 1;
    let lens: Vec<u32> = indptr
        .par_windows(2)
        .map(|w| (w[1] - w[0]) as u32)
        .collect();
    // Rows first..last cut at the owners' boundaries.
    let cut: Vec<usize> = (0..=p)
        .map(|r| splits[r].clamp(first, last) - first)
        .collect();
    let row_counts: Vec<usize> = cut.windows(2).map(|w| w[1] - w[0]).collect();
    let adj_counts: Vec<usize> = cut
        .windows(2)
        .map(|w| (indptr[w[1]] - indptr[w[0]]) as usize)
        .collect();
    let (got, _) = all_to_all(c, &lens, &row_counts)?;
    drop(lens);
    if got.len() != rows {
        return Err(Error::backend(
            "dist",
            format!("rank {} received {} rows, owns {rows}", c.rank(), got.len()),
        ));
    }
    let (out, _) = all_to_all(c, adj, &adj_counts)?;
    let mut ptr = vec![0u64; rows + 1];
    for (r, &l) in got.iter().enumerate() {
        ptr[r + 1] = ptr[r] + u64::from(l);
    }
    Ok((ptr, out))
}

/// Per-edge cost of the GPU's flattened search, in binary-search steps, besides the searches
/// ([`edge_cost`]): the set-up of an edge (its place in the work-group's prefix sum, the cut
/// search in `N+(v)`, the row cache) costs as much as this many steps of the searches.
/// Fitted to every rank's counting time on 4 GPUs, cut two ways (`benches/results/
/// distributed.md`, "Balancing the triangle count").
const EDGE_SETUP: u64 = 640;

/// The estimated cost, in binary-search steps, of the oriented edge `u -> v` whose rows hold
/// `du` and `dv` out-neighbours, as the GPU's flattened search (`tc_search_flat`) spends it:
/// the set-up [`EDGE_SETUP`], then, for each element of the shorter of `N+(v)` and the rest
/// of `N+(u)` (on average half of it), a binary search in the longer (about log2 of its
/// length). The set-up dominates the many edges of short rows, which a cost of "the shorter
/// list" alone misses: the rank holding them counted longest.
pub(super) fn edge_cost(du: u32, dv: u32) -> u64 {
    let log2 = |x: u32| u64::from(32 - (x + 1).leading_zeros());
    let items = u64::from(du.div_ceil(2).min(dv));
    EDGE_SETUP + items * log2(du.max(dv))
}

/// Rows `0..n` cut into `p` ranges of about `m / p` of the rows' `weight` each (by its
/// prefix sums, `m` their total): `p + 1` boundaries from 0 to `n`.
pub(super) fn edge_splits<W: Copy + Into<u64>>(weight: &[W], m: u64, p: usize) -> Vec<usize> {
    let n = weight.len();
    let mut splits = vec![0usize; p + 1];
    let mut acc = 0u64;
    let mut r = 1;
    for (v, &d) in weight.iter().enumerate() {
        while r < p && acc >= m * r as u64 / p as u64 {
            splits[r] = v;
            r += 1;
        }
        acc += d.into();
    }
    for s in splits.iter_mut().take(p).skip(r) {
        *s = n;
    }
    splits[p] = n;
    splits
}

impl DistOriented {
    /// The whole oriented graph on every rank ([`OrientedGraph`], with its relabelling).
    pub fn gather(&self, c: &dyn Comm) -> Result<OrientedGraph> {
        let lens: Vec<u64> = self.indptr.windows(2).map(|w| w[1] - w[0]).collect();
        let (lens, _) = all_gather(c, &lens)?;
        let (adj, _) = all_gather(c, &self.adj)?;
        let mut indptr = vec![0u64; self.n + 1];
        for (r, &l) in lens.iter().enumerate() {
            indptr[r + 1] = indptr[r] + l;
        }
        Ok(OrientedGraph::from_sorted_parts(
            indptr,
            adj,
            Some(self.original.clone()),
        ))
    }
}
