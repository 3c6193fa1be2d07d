//! Packing `M`'s columns for the exchanges between ranks (`mcl_block_sums`,
//! `mcl_scan_blocks`, `mcl_pack`, `mcl_unpack` of `kernels/opencl/mcl.cl`): a column's
//! entries only, in column order, at offsets from the columns' lengths; a window of that
//! order at a time, so that the replicated gather of `M` goes in rounds of bounded buffers
//! ([`gather_rounds`]).

// Kernel launches are `unsafe`: each says why in its `// SAFETY:` note.
#![allow(unsafe_code)]

use super::{GpuPlan, PACK_WG, REDUCE_WG};
use crate::comm::{all_gather, Comm};
use crate::device::{Buf, Device, Geometry, KernelHandle};
use crate::error::{Error, Result};
use crate::mcl::Columns;
use crate::scalar::Scalar;

/// The buffers of the packed gathers between replicating ranks: the block offsets of this
/// rank's new columns and of all of `M`, the packed total, and one round's packed entries
/// ([`GpuPlan::round`]: this rank's share of the round, and the round gathered from every
/// rank), not every rank's columns.
pub(super) struct Packing<D: Device, T: Scalar> {
    sums_own: Buf<D, u64>,
    sums_all: Buf<D, u64>,
    total: Buf<D, u64>,
    sidx: Buf<D, u32>,
    sval: Buf<D, T>,
    ridx: Buf<D, u32>,
    rval: Buf<D, T>,
}

impl<D: Device, T: Scalar> Packing<D, T> {
    /// The buffers of `plan`'s replicated gathers (`what` names them in errors).
    pub(super) fn new(d: &D, plan: &GpuPlan, what: &str) -> Result<Self> {
        let blocks = |x: usize| x.div_ceil(PACK_WG) + 1;
        let part = plan.share().min(plan.own * plan.k).max(1);
        Ok(Self {
            sums_own: Buf::zeroed(d, blocks(plan.own), what)?,
            sums_all: Buf::zeroed(d, blocks(plan.n), what)?,
            total: Buf::zeroed(d, 1, what)?,
            sidx: Buf::uninit(d, part, what)?,
            sval: Buf::uninit(d, part, what)?,
            ridx: Buf::uninit(d, plan.round, what)?,
            rval: Buf::uninit(d, plan.round, what)?,
        })
    }
}

/// The packed entries that one `mcl_pack` / `mcl_unpack` launch moves: those at packed
/// positions `lo..hi` (held in the packed array at `x - lo + at`), in the blocks `blocks` of
/// [`PACK_WG`] columns (those that meet the window).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Window {
    blocks: std::ops::Range<usize>,
    lo: u64,
    hi: u64,
    at: u64,
}

impl Window {
    /// Every entry of the first `n` columns, at its position.
    pub(super) fn all(n: usize) -> Self {
        Self {
            blocks: 0..n.div_ceil(PACK_WG),
            lo: 0,
            hi: u64::MAX,
            at: 0,
        }
    }

    /// The entries `lo..hi` of columns whose block offsets are `sums` (one per block, then
    /// the total, as `mcl_scan_blocks` leaves them): only the blocks that hold some of them.
    fn of(sums: &[u64], lo: u64, hi: u64) -> Self {
        let nb = sums.len().saturating_sub(1);
        // Block b holds the entries sums[b]..sums[b + 1].
        let first = sums[1..].partition_point(|&end| end <= lo);
        let last = sums[..nb].partition_point(|&start| start < hi);
        Self {
            blocks: first..last.max(first),
            lo,
            hi,
            at: 0,
        }
    }

    /// The same entries, held in the packed array from `at` on.
    fn at(self, at: u64) -> Self {
        Self { at, ..self }
    }
}

/// The block offsets of the first `n` lengths `len` (or, with a selection `sel`, of
/// `len[sel[j]]` for `j < n`) into `sums` (`n / PACK_WG` rounded up, plus one) and the total
/// into `total` (`mcl_block_sums`, `mcl_scan_blocks`).
pub(super) fn launch_offsets<T: Scalar, D: Device>(
    d: &D,
    n: usize,
    (len, sel): (&Buf<D, u32>, Option<&Buf<D, u32>>),
    sums: &Buf<D, u64>,
    total: &Buf<D, u64>,
) -> Result<()> {
    let nb = n.div_ceil(PACK_WG);
    let k_sums = d.kernel::<T>("mcl", "mcl_block_sums")?;
    let mut args = d.launch(&k_sums);
    args.arg(n as u64)
        .arg(len)
        .arg(u32::from(sel.is_some()))
        .arg(sel.unwrap_or(len))
        .arg(sums);
    // SAFETY: (u64 n, const u32 *len, u32 has_sel, const u32 *sel, u64 *sums): nb groups of
    // exactly PACK_WG items (the kernel's bound); items j < n read len[j] (len holds at least
    // n) or, selected, sel[j] (sel holds at least n) and len[sel[j]] (every caller's
    // selection indexes len), group g writes sums[g] (nb + 1 entries).
    unsafe { args.launch(Geometry::linear(nb, PACK_WG)) }?;
    let k_scan = d.kernel::<T>("mcl", "mcl_scan_blocks")?;
    let wg = k_scan.group_limit().min(REDUCE_WG);
    let mut args = d.launch(&k_scan);
    args.arg(nb as u64).arg(sums).arg(total);
    // SAFETY: (u64 nb, u64 *sums, u64 *total): one group of a power-of-two size at most
    // WG_MAX touches sums[0..=nb] (nb + 1 entries) and total[0] (1 entry).
    unsafe { args.launch(Geometry::linear(1, wg)) }?;
    Ok(())
}

/// [`MarkovCluster::pack_round_trip`] on a device: `m` packed and unpacked into poisoned
/// slots in one round, then again in rounds of [`ROUND_TRIP_ROUND`] entries, the last round
/// first (a launch that moves more than its window overwrites a later window's entries,
/// already in place, and shows). Each round is packed into a poisoned buffer from its second
/// entry on, one entry longer than the round, whose first and last entries must stay
/// poisoned.
pub(super) fn pack_round_trip<T: Scalar, D: Device>(d: &D, m: &Columns<T>) -> Result<Columns<T>> {
    let (n, k) = (m.n, m.k);
    let a = "R-MCL packing round trip";
    let fail = |what: String| Error::backend(d.name(), format!("{a}: {what}"));
    let (idx, val, len) = (
        Buf::upload(d, &m.idx, a)?,
        Buf::upload(d, &m.val, a)?,
        Buf::upload(d, &m.len, a)?,
    );
    let sums = Buf::<D, u64>::zeroed(d, n.div_ceil(PACK_WG) + 1, a)?;
    let total = Buf::<D, u64>::zeroed(d, 1, a)?;
    launch_offsets::<T, D>(d, n, (&len, None), &sums, &total)?;
    let offs = sums.download(d, a)?;
    let entries = total.download(d, a)?[0];
    if entries != m.entries() || offs.last() != Some(&entries) {
        return Err(fail(format!(
            "{entries} entries counted ({:?} by the block offsets), {} in M",
            offs.last(),
            m.entries()
        )));
    }
    let slots = (n * k).max(1);
    let (poison_idx, poison_val) = (u32::MAX - 1, T::from_f64(-9.0));
    let mut first: Option<Columns<T>> = None;
    for round in [entries.max(1), ROUND_TRIP_ROUND as u64] {
        // Fresh slots poisoned, so that an entry the unpacking misses shows.
        let (oidx, oval) = (
            Buf::upload(d, &vec![u32::MAX; slots], a)?,
            Buf::upload(d, &vec![T::from_f64(-7.0); slots], a)?,
        );
        for r in (0..entries.div_ceil(round)).rev() {
            let (lo, hi) = (r * round, entries.min((r + 1) * round));
            let w = (hi - lo) as usize;
            let (pidx, pval) = (
                Buf::upload(d, &vec![poison_idx; w + 2], a)?,
                Buf::upload(d, &vec![poison_val; w + 2], a)?,
            );
            let win = Window::of(&offs, lo, hi).at(1);
            launch_pack(
                d,
                (false, &win),
                (n, k),
                (&len, None),
                &sums,
                (&idx, &val),
                (&pidx, &pval),
            )?;
            let (gi, gv) = (pidx.download(d, a)?, pval.download(d, a)?);
            for g in [0, w + 1] {
                if gi[g] != poison_idx || gv[g].to_f64() != poison_val.to_f64() {
                    return Err(fail(format!(
                        "packing the entries {lo}..{hi} at 1.. wrote at {g} ({}, {})",
                        gi[g],
                        gv[g].to_f64()
                    )));
                }
            }
            launch_pack(
                d,
                (true, &win),
                (n, k),
                (&len, None),
                &sums,
                (&oidx, &oval),
                (&pidx, &pval),
            )?;
        }
        let got = Columns {
            n,
            k,
            idx: oidx.download_head(d, n * k, a)?,
            val: oval.download_head(d, n * k, a)?,
            len: m.len.clone(),
        };
        match &first {
            None => first = Some(got),
            Some(f) => {
                if let Some(j) = (0..n).find(|&j| got.column(j) != f.column(j)) {
                    return Err(fail(format!(
                        "in rounds of {round} entries, column {j} came back as {:?}, in one \
                         round as {:?}",
                        got.column(j),
                        f.column(j)
                    )));
                }
            }
        }
    }
    Ok(first.expect("one round at least"))
}

/// Entries per round of the second pass of [`pack_round_trip`]: a prime, so that rounds
/// start inside columns and inside blocks.
const ROUND_TRIP_ROUND: usize = 37;

/// `mcl_pack` (`unpack` false: the entries of the first `n` columns of `idx`/`val` (width
/// `k`) into `pidx`/`pval`) or `mcl_unpack` (the reverse), at the offsets `sums` of `len`:
/// those of the window `w` only (nothing is launched for an empty one).
pub(super) fn launch_pack<T: Scalar, D: Device>(
    d: &D,
    (unpack, w): (bool, &Window),
    (n, k): (usize, usize),
    (len, sel): (&Buf<D, u32>, Option<&Buf<D, u32>>),
    sums: &Buf<D, u64>,
    (idx, val): (&Buf<D, u32>, &Buf<D, T>),
    (pidx, pval): (&Buf<D, u32>, &Buf<D, T>),
) -> Result<()> {
    if w.blocks.is_empty() {
        return Ok(());
    }
    let kern = d.kernel::<T>("mcl", if unpack { "mcl_unpack" } else { "mcl_pack" })?;
    let mut args = d.launch(&kern);
    args.arg(n as u64)
        .arg(k as u32)
        .arg(w.blocks.start as u64)
        .arg(w.lo)
        .arg(w.hi)
        .arg(w.at);
    let (from, to) = if unpack {
        ((pidx, pval), (idx, val))
    } else {
        ((idx, val), (pidx, pval))
    };
    args.arg(from.0)
        .arg(from.1)
        .arg(len)
        .arg(u32::from(sel.is_some()))
        .arg(sel.unwrap_or(len))
        .arg(sums)
        .arg(to.0)
        .arg(to.1);
    // SAFETY: (u64 n, u32 K, u64 g0, u64 lo, u64 hi, u64 at, src idx/val, const u32 *len,
    // u32 has_sel, const u32 *sel, const u64 *offs, dst idx/val), as in the kernel file:
    // groups of exactly PACK_WG items, group g taking block g0 + g of the window's blocks,
    // all below n / PACK_WG rounded up; column j < n (selected: column sel[j], sel holding at
    // least n entries, each a column of idx/val and len) moves those of its len <= K entries
    // whose packed position x (offs[j / PACK_WG] + its block offset) lies in lo..hi, between
    // its K slots of idx/val (every column's, K each) and x - lo + at of pidx/pval, which
    // hold at least at + min(hi, total of len) - lo entries (every caller sizes them so,
    // counted first: a round's buffers, an exchange's packed entries, or full columns n*K);
    // offs has n / PACK_WG + 1 entries.
    unsafe { args.launch(Geometry::linear(w.blocks.len(), PACK_WG)) }?;
    Ok(())
}

/// Columns' entries on a device: their row indices and values (`K` slots a column).
pub(super) type Entries<'a, D, T> = (&'a Buf<D, u32>, &'a Buf<D, T>);

/// The replicated gather of `M` after an iteration: every rank's new columns (`own`: this
/// rank's, `plan.own` of them) into all of `M` (`all`, `plan.n` columns) on every rank. The
/// lengths are gathered whole, the entries in rounds of at most [`GpuPlan::round`]: in each,
/// every rank packs its next [`GpuPlan::share`] entries (its columns' entries in column
/// order), the parts are gathered (device to device where the backend can, else through the
/// hosts), and every rank unpacks each part into its place. Returns whether the gathers went
/// device to device, and the bytes this rank received.
pub(super) fn gather_rounds<T: Scalar, D: Device>(
    d: &D,
    c: &dyn Comm,
    plan: &GpuPlan,
    pk: &mut Packing<D, T>,
    (ours, own_len): (Entries<'_, D, T>, &Buf<D, u32>),
    (all, all_len): (Entries<'_, D, T>, &mut Buf<D, u32>),
) -> Result<(bool, u64)> {
    let (n, own, k) = (plan.n, plan.own, plan.k);
    let what = "gathering R-MCL's columns";
    launch_offsets::<T, D>(d, own, (own_len, None), &pk.sums_own, &pk.total)?;
    let offs_own = pk.sums_own.download(d, what)?;
    let mine = offs_own[own.div_ceil(PACK_WG)];
    let entries = all_gather(c, &[mine])?.0;
    // Rank r's entries are the packed positions starts[r]..starts[r + 1].
    let mut starts = vec![0u64];
    for &e in &entries {
        starts.push(starts[starts.len() - 1] + e);
    }
    let all_entries = starts[entries.len()];
    let cols: Vec<usize> = plan.splits.windows(2).map(|w| w[1] - w[0]).collect();
    let t = std::mem::size_of::<T>();
    let bytes =
        |counts: &[usize], w: usize| -> Vec<usize> { counts.iter().map(|&x| x * w).collect() };
    let device = d.gather_mem(c, own_len.mem(), &bytes(&cols, 4), all_len.mem(), what)?;
    if !device {
        let len = all_gather(c, &own_len.download(d, what)?)?.0;
        *all_len = Buf::upload(d, &len, what)?;
    }
    launch_offsets::<T, D>(d, n, (&*all_len, None), &pk.sums_all, &pk.total)?;
    let offs_all = pk.sums_all.download(d, what)?;
    // The gathered lengths must account for the ranks' entries, or the unpacking would
    // read past them.
    let counted = offs_all[n.div_ceil(PACK_WG)];
    if counted != all_entries {
        return Err(Error::backend(
            d.name(),
            format!(
                "{what}: the lengths count {counted} entries, the ranks sent {all_entries} (a bug)"
            ),
        ));
    }
    let me = c.rank();
    // Every rank sends `share` entries of its own in a round (all of them send at once), so
    // rank q's part of round r is its packed entries r·share.. (r + 1)·share, and the round
    // holds the ranks' parts in rank order.
    let share = plan.share() as u64;
    let rounds = entries.iter().map(|e| e.div_ceil(share)).max().unwrap_or(0);
    // The last round first: the order is free, and this one shows a launch that moves more
    // than its window (it would overwrite a later round's entries, already in place).
    for r in (0..rounds).rev() {
        let part = |q: usize| {
            (
                (r * share).min(entries[q]),
                ((r + 1) * share).min(entries[q]),
            )
        };
        let counts: Vec<usize> = (0..entries.len())
            .map(|q| {
                let (a, b) = part(q);
                (b - a) as usize
            })
            .collect();
        let (a, b) = part(me);
        let send = (&pk.sidx, &pk.sval);
        let win = Window::of(&offs_own, a, b);
        launch_pack(
            d,
            (false, &win),
            (own, k),
            (own_len, None),
            &pk.sums_own,
            ours,
            send,
        )?;
        let through_device =
            d.gather_mem(c, pk.sidx.mem(), &bytes(&counts, 4), pk.ridx.mem(), what)?
                && d.gather_mem(c, pk.sval.mem(), &bytes(&counts, t), pk.rval.mem(), what)?;
        debug_assert_eq!(
            through_device, device,
            "the device engine serves every gather or none"
        );
        if !through_device {
            // Through the hosts: the part read back, gathered and uploaded.
            let mine = counts[me];
            let pidx = all_gather(c, &pk.sidx.download_head(d, mine, what)?)?.0;
            let pval = all_gather(c, &pk.sval.download_head(d, mine, what)?)?.0;
            pk.ridx = Buf::upload(d, &pidx, what)?;
            pk.rval = Buf::upload(d, &pval, what)?;
        }
        // Rank q's part is its packed positions a.., all of M's starts[q] + a.., held in the
        // round after the earlier ranks' parts.
        let mut at = 0u64;
        for (q, &count) in counts.iter().enumerate() {
            let lo = starts[q] + part(q).0;
            let hi = lo + count as u64;
            if hi > lo {
                let win = Window::of(&offs_all, lo, hi).at(at);
                let round_in = (&pk.ridx, &pk.rval);
                launch_pack(
                    d,
                    (true, &win),
                    (n, k),
                    (&*all_len, None),
                    &pk.sums_all,
                    all,
                    round_in,
                )?;
            }
            at += count as u64;
        }
    }
    let others = (all_entries - mine) as usize;
    Ok((device, (others * (4 + t) + (n - own) * 4) as u64))
}

#[cfg(test)]
mod tests {
    use super::{Window, PACK_WG};

    #[test]
    fn a_window_launches_the_blocks_that_hold_its_entries() {
        // Four blocks holding 0..10, 10..10 (empty), 10..25 and 25..40.
        let offs = [0u64, 10, 10, 25, 40];
        let blocks = |lo, hi| Window::of(&offs, lo, hi).blocks;
        assert_eq!(blocks(0, 40), 0..4);
        assert_eq!(blocks(0, 10), 0..1);
        assert_eq!(blocks(9, 11), 0..3);
        assert_eq!(blocks(10, 25), 2..3);
        assert_eq!(blocks(24, 26), 2..4);
        assert_eq!(blocks(39, 40), 3..4);
        assert!(blocks(40, 41).is_empty());
        assert_eq!(Window::all(2 * PACK_WG + 1).blocks, 0..3);
        // By brute force: block b is launched exactly when it holds an entry of the window.
        for lo in 0..41 {
            for hi in lo + 1..42 {
                let w = blocks(lo, hi);
                for b in 0..4 {
                    let holds = (offs[b]..offs[b + 1]).any(|x| (lo..hi).contains(&x));
                    assert!(
                        !holds || w.contains(&b),
                        "{lo}..{hi}: block {b} missing from {w:?}"
                    );
                }
            }
        }
    }
}
