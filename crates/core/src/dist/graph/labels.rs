//! A labelled edge list read in byte ranges, its labels numbered over the ranks exactly as
//! one process numbers them (in order of first appearance in the file), with no rank
//! holding every label but rank 0, which keeps the names to write them.
//!
//! Each rank parses its range ([`edgelist::parse_labels_part`]: its labels in order of
//! first appearance in it). A label's *owner* is a rank chosen by a hash of its text; each
//! rank sends its labels to their owners, and an owner finds for each label the first rank
//! that holds it (the ranges are in file order, so that rank's range holds its first
//! appearance; [`edgelist::number_pieces`], which numbers one process's pieces of a file
//! the same way, in parallel). Each rank then numbers the labels it holds first, in its order, after the
//! ranks before it (an exclusive sum of their counts): the file's order of first
//! appearance. The numbers go back through the owners to every rank that holds the label.

use std::hash::BuildHasher;
use std::path::Path;

use rayon::prelude::*;

use super::{build, homed, range_of, reduce_one, Comm, DistGraph, Names, Op, Phases};
use crate::comm::{all_to_all, exclusive_sum};
use crate::error::Result;
use crate::io::edgelist::{self, EdgeListOptions};

/// The labelled edge list of `plan`'s file read in byte ranges by every rank, numbered and
/// built as one process reads it in the `Labels` mode (or `Auto`, finding labels): every
/// line a data line but a weighted file's header (its weight not a number), the first data
/// line's fields deciding the weight column; weights kept where `keep`. Collective.
pub(super) fn numbered_labels(
    c: &dyn Comm,
    path: &Path,
    plan: &edgelist::RangePlan,
    opts: &EdgeListOptions,
    keep: bool,
    mut phases: Phases,
) -> Result<DistGraph> {
    let body = plan.label_header.as_ref().map_or(plan.start, |h| h.2);
    let (bytes, skip) = range_of(c, path, plan, body, &mut phases)?;
    let name = path.display().to_string();
    let notes = super::header_note(&name, &plan.label_header);
    let part = edgelist::parse_labels_part(&bytes, &name, opts, (skip, plan.labelled), None)?;
    phases.lap("parse");
    let any = reduce_one(c, u64::from(part.any), Op::Max)?;
    if any == 0 {
        return Err(crate::io::perr(
            &name,
            None,
            crate::ParseErrorKind::Empty,
            "no edges in the file",
        ));
    }
    let (global, first) = number(c, &part.labels)?;
    let n = reduce_one(c, first.len() as u64, Op::Sum)?;
    if u32::try_from(n).is_err() {
        return Err(crate::io::perr(
            &name,
            None,
            crate::ParseErrorKind::IndexOutOfRange,
            "more than 2^32 nodes",
        ));
    }
    // Rank 0 keeps every name, in the nodes' order: each rank's first-held labels, in rank
    // order.
    let firsts: Vec<&[u8]> = first.iter().map(|&j| part.labels[j as usize]).collect();
    let names = to_root(c, &firsts)?;
    drop(firsts);
    let self_loops = reduce_one(c, part.self_loops as u64, Op::Sum)?;
    let keys: Vec<u64> = part
        .src
        .par_iter()
        .zip(&part.dst)
        .map(|(&u, &v)| homed(global[u as usize], global[v as usize]))
        .collect();
    let weights = if keep { part.weights } else { None };
    drop(bytes);
    phases.lap("ids");
    let names = match names {
        Some(all) => Names::Labels(all),
        None => Names::Numbers,
    };
    build(
        c,
        n as usize,
        (keys, weights),
        self_loops,
        names,
        notes,
        (true, phases),
    )
}

/// Every rank's `labels` (distinct, in order of first appearance in its range; the ranges
/// in file order) numbered in order of first appearance over the ranks: the node of each
/// of this rank's labels, and which of them this rank holds first (positions in `labels`,
/// in their order; their nodes are consecutive). Collective.
fn number(c: &dyn Comm, labels: &[&[u8]]) -> Result<(Vec<u32>, Vec<u32>)> {
    let p = c.size();
    // A fixed hash (every rank the same): any collisions cost balance, not correctness.
    let hasher = foldhash::quality::FixedState::with_seed(0x0074_7269_6465_6e74);
    let owner: Vec<usize> = labels
        .par_iter()
        .map(|l| (hasher.hash_one(l) % p as u64) as usize)
        .collect();
    // This rank's labels in the order they are sent (by owner, then in this rank's order).
    let mut counts = vec![0usize; p];
    for &o in &owner {
        counts[o] += 1;
    }
    let mut next: Vec<usize> = counts
        .iter()
        .scan(0, |at, &k| {
            *at += k;
            Some(*at - k)
        })
        .collect();
    let mut sent = vec![0u32; labels.len()];
    for (j, &o) in owner.iter().enumerate() {
        sent[next[o]] = j as u32;
        next[o] += 1;
    }
    drop(owner);
    let in_order: Vec<&[u8]> = sent.iter().map(|&j| labels[j as usize]).collect();
    let (text, lens, from) = exchange_text(c, &in_order, &counts)?;
    drop(in_order);
    // The owner's side: the labels received, each rank's in its order and the ranks in
    // rank order, numbered in order of first appearance (`edgelist::number_pieces`, in
    // parallel): a label's number is its group here, and the rank that holds it first is
    // the one whose labels take the group's number first.
    let mut received: Vec<&[u8]> = Vec::with_capacity(lens.len());
    let mut at = 0usize;
    for &len in &lens {
        received.push(&text[at..at + len as usize]);
        at += len as usize;
    }
    let mut segments: Vec<&[&[u8]]> = Vec::with_capacity(p);
    let mut rest = &received[..];
    for &k in &from {
        let (seg, tail) = rest.split_at(k);
        segments.push(seg);
        rest = tail;
    }
    let (distinct, maps, base) = edgelist::number_pieces(&segments);
    let distinct = distinct.len();
    let firsts: Vec<u32> = maps
        .iter()
        .enumerate()
        .flat_map(|(q, m)| {
            let (lo, hi) = (base[q] as u32, base[q + 1] as u32);
            m.iter().map(move |&g| u32::from((lo..hi).contains(&g)))
        })
        .collect();
    let groups = maps.concat();
    drop(segments);
    drop(received);
    // Back to the senders: which of their labels they hold first.
    let (first_flags, _) = all_to_all(c, &firsts, &from)?;
    let mut held_first = vec![false; labels.len()];
    for (&j, &f) in sent.iter().zip(&first_flags) {
        held_first[j as usize] = f != 0;
    }
    let first: Vec<u32> = (0..labels.len() as u32)
        .filter(|&j| held_first[j as usize])
        .collect();
    let base = exclusive_sum(c, first.len() as u64)?;
    let mut node = vec![u32::MAX; labels.len()];
    for (k, &j) in first.iter().enumerate() {
        node[j as usize] = (base + k as u64) as u32;
    }
    // The first holders' numbers to the owners, and the owners' to every holder.
    let mine: Vec<u32> = sent.iter().map(|&j| node[j as usize]).collect();
    let (numbered, _) = all_to_all(c, &mine, &counts)?;
    let mut of_group = vec![u32::MAX; distinct];
    for (&g, &x) in groups.iter().zip(&numbered) {
        if x != u32::MAX {
            of_group[g as usize] = x;
        }
    }
    let answers: Vec<u32> = groups.iter().map(|&g| of_group[g as usize]).collect();
    let (got, _) = all_to_all(c, &answers, &from)?;
    for (&j, &x) in sent.iter().zip(&got) {
        node[j as usize] = x;
    }
    if node.contains(&u32::MAX) {
        return Err(crate::Error::backend(
            "dist",
            "a label left unnumbered (a bug)",
        ));
    }
    Ok((node, first))
}

/// Labels sent to ranks (`counts[r]` of `items`, in order, to rank `r`): the text received
/// (every label's bytes, one after another), each label's length, and how many came from
/// each rank (in rank order).
fn exchange_text(
    c: &dyn Comm,
    items: &[&[u8]],
    counts: &[usize],
) -> Result<(Vec<u8>, Vec<u32>, Vec<usize>)> {
    let lens: Vec<u32> = items.iter().map(|l| l.len() as u32).collect();
    let mut bytes_to = vec![0usize; counts.len()];
    let mut at = 0usize;
    for (r, &k) in counts.iter().enumerate() {
        bytes_to[r] = lens[at..at + k].iter().map(|&x| x as usize).sum();
        at += k;
    }
    let text = items.concat();
    let (lens, from) = all_to_all(c, &lens, counts)?;
    let (text, _) = all_to_all(c, &text, &bytes_to)?;
    Ok((text, lens, from))
}

/// Every rank's `labels` on rank 0, in rank order (`None` on the other ranks).
fn to_root(c: &dyn Comm, labels: &[&[u8]]) -> Result<Option<Vec<String>>> {
    let mut counts = vec![0usize; c.size()];
    counts[0] = labels.len();
    let (text, lens, _) = exchange_text(c, labels, &counts)?;
    if c.rank() != 0 {
        return Ok(None);
    }
    let mut at = 0usize;
    let mut names = Vec::with_capacity(lens.len());
    for &len in &lens {
        let l = &text[at..at + len as usize];
        at += len as usize;
        // Every label was checked as UTF-8 where it was parsed.
        names.push(String::from_utf8_lossy(l).into_owned());
    }
    Ok(Some(names))
}
