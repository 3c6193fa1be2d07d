//! The partitioned layout's fetch of `M` before a regularised iteration, on the device: each
//! rank packs the columns that every rank asked for (its own included, for itself) with one
//! selection (`mcl_pack` with `sel`), the packed parts go to their ranks in one personalised
//! exchange (device to device where the backend can: NCCL; else through the hosts), and each
//! rank unpacks what arrives into its held columns' slots (`mcl_unpack` with `sel`). Only the
//! columns' lengths cross the hosts. Which columns go where is fixed by `M_G` (a rank reads
//! its columns' neighbours), so it is agreed once, in [`Fetch::new`].
//!
//! The `M·M` expansion reads the rows of a rank's columns instead, which change every
//! iteration: the rows held elsewhere are marked on the device ([`rows_elsewhere`]), read
//! back as a bitmap, agreed with their owners and fetched the same way ([`Fetch::reroute`]);
//! the rank's columns, packed, become the right operand with their rows as held slots
//! ([`slot_rows`]).

// Kernel launches are `unsafe`: each says why in its `// SAFETY:` note.
#![allow(unsafe_code)]

use super::pack::{launch_offsets, launch_pack, Entries, Window};
use super::{GpuPlan, PACK_WG};
use crate::comm::{all_to_all, Comm};
use crate::device::{Buf, Device, KernelHandle};
use crate::error::{Error, Result};
use crate::mcl::ranks::Packed;
use crate::mcl::FetchTimes;
use crate::scalar::Scalar;
use rayon::prelude::*;
use std::time::Instant;

/// Which columns go where in a fetch ([`Routes::new`]).
struct Routes<D: Device> {
    /// The local columns this rank sends, destination by destination (to itself: all of
    /// them, in order), and how many go to each rank.
    send_cols: Vec<u32>,
    send_counts: Vec<usize>,
    /// The held slot of each column received, source by source (from itself: its columns,
    /// slots `0..own`; from another rank: its columns among those wanted, slots `own + i`),
    /// and how many come from each rank.
    recv_slots: Vec<u32>,
    recv_counts: Vec<usize>,
    send_sel: Buf<D, u32>,
    recv_sel: Buf<D, u32>,
    send_sums: Buf<D, u64>,
    recv_sums: Buf<D, u64>,
}

impl<D: Device> Routes<D> {
    /// The routes of a fetch of the columns `want` (sorted, none of them this rank's),
    /// agreed with the other ranks of `c` (every rank calls it at the same point): each
    /// rank's wanted columns asked of their owners.
    fn new(d: &D, c: &dyn Comm, plan: &GpuPlan, want: &[u32]) -> Result<Self> {
        let what = "R-MCL: routing the fetch of M's columns";
        let (p, me, c0, own) = (c.size(), c.rank(), plan.col0, plan.own);
        let owner = |id: u32| (plan.splits.partition_point(|&s| s <= id as usize) - 1).min(p - 1);
        // The wanted columns are sorted and every rank owns a range of columns, so they come
        // grouped by owner, in rank order.
        let mut want_counts = vec![0usize; p];
        for &g in want {
            want_counts[owner(g)] += 1;
        }
        if want_counts[me] != 0 {
            return Err(mismatch(
                d.name(),
                what,
                "a column of this rank's own wanted".into(),
            ));
        }
        let (asked, asked_counts) = all_to_all(c, want, &want_counts)?;
        if let Some(bad) = asked
            .iter()
            .find(|&&id| !(c0..c0 + own).contains(&(id as usize)))
        {
            return Err(mismatch(
                d.name(),
                what,
                format!("column {bad} asked of the rank holding {c0}..{}", c0 + own),
            ));
        }
        let (mut send_cols, mut recv_slots) = (Vec::new(), Vec::new());
        let (mut send_counts, mut recv_counts) = (vec![0; p], vec![0; p]);
        let (mut at_asked, mut at_want) = (0, 0);
        for r in 0..p {
            if r == me {
                send_cols.extend(0..own as u32);
                recv_slots.extend(0..own as u32);
                send_counts[r] = own;
                recv_counts[r] = own;
                continue;
            }
            let a = &asked[at_asked..at_asked + asked_counts[r]];
            send_cols.extend(a.iter().map(|&id| id - c0 as u32));
            send_counts[r] = a.len();
            at_asked += a.len();
            let g = want_counts[r];
            recv_slots.extend((own + at_want..own + at_want + g).map(|s| s as u32));
            recv_counts[r] = g;
            at_want += g;
        }
        let blocks = |x: usize| x.div_ceil(PACK_WG) + 1;
        Ok(Self {
            send_sel: Buf::upload(d, &nonempty(&send_cols), what)?,
            recv_sel: Buf::upload(d, &nonempty(&recv_slots), what)?,
            send_sums: Buf::zeroed(d, blocks(send_cols.len()), what)?,
            recv_sums: Buf::zeroed(d, blocks(recv_slots.len()), what)?,
            send_cols,
            send_counts,
            recv_slots,
            recv_counts,
        })
    }
}

/// The routes and buffers of the partitioned fetch ([`Fetch::run`]).
pub struct Fetch<D: Device, T: Scalar> {
    routes: Routes<D>,
    total: Buf<D, u64>,
    sidx: Buf<D, u32>,
    sval: Buf<D, T>,
    ridx: Buf<D, u32>,
    rval: Buf<D, T>,
    /// This rank's columns' lengths, as the last [`Fetch::run`] read them back.
    pub own_len: Vec<u32>,
}

/// `what`'s error for an exchange that does not add up (a bug, or ranks out of step).
fn mismatch(backend: &'static str, what: &str, detail: String) -> Error {
    Error::backend(backend, format!("{what}: {detail}"))
}

impl<D: Device, T: Scalar> Fetch<D, T> {
    /// A fetch of the columns `want` (sorted, none of them this rank's) into the held slots
    /// `plan.own..`, agreed with the other ranks of `c` (every rank calls it at the same
    /// point).
    pub fn new(d: &D, c: &dyn Comm, plan: &GpuPlan, want: &[u32]) -> Result<Self> {
        let what = "R-MCL: the fetch's buffers";
        let routes = Routes::new(d, c, plan, want)?;
        // The packed buffers start at the plan's mean column (`GpuPlan::mean`) and grow.
        let start = |cols: usize| (cols * plan.mean).max(1);
        let (ns, nr) = (routes.send_cols.len(), routes.recv_slots.len());
        Ok(Self {
            total: Buf::zeroed(d, 1, what)?,
            sidx: Buf::uninit(d, start(ns), what)?,
            sval: Buf::uninit(d, start(ns), what)?,
            ridx: Buf::uninit(d, start(nr), what)?,
            rval: Buf::uninit(d, start(nr), what)?,
            routes,
            own_len: Vec::new(),
        })
    }

    /// The same buffers for a fetch of other columns `want` (see [`Fetch::new`]).
    pub fn reroute(&mut self, d: &D, c: &dyn Comm, plan: &GpuPlan, want: &[u32]) -> Result<()> {
        // The old selections go first.
        let what = "R-MCL: the fetch's buffers";
        self.routes.send_sel = Buf::zeroed(d, 1, what)?;
        self.routes.recv_sel = Buf::zeroed(d, 1, what)?;
        self.routes = Routes::new(d, c, plan, want)?;
        Ok(())
    }

    /// The fetch before an iteration: this rank's new columns `new` (`plan.own` of them,
    /// width `K`, lengths `new_len`) sent where they were asked for, and the held columns
    /// `held` (this rank's, then those wanted) filled with what arrives, their lengths
    /// `held_len` replaced. Returns whether the entries went device to device, and the bytes
    /// received from other ranks.
    pub fn run(
        &mut self,
        d: &D,
        c: &dyn Comm,
        plan: &GpuPlan,
        (new, new_len): (Entries<'_, D, T>, &Buf<D, u32>),
        (held, held_len): (Entries<'_, D, T>, &mut Buf<D, u32>),
        times: &mut FetchTimes,
    ) -> Result<(bool, u64)> {
        let what = "R-MCL: the columns fetched from other ranks";
        let t0 = Instant::now();
        let (p, me, own, k) = (c.size(), c.rank(), plan.own, plan.k);
        let t = std::mem::size_of::<T>();
        // The lengths cross the hosts: every rank learns how many entries each column brings.
        self.own_len = new_len.download_head(d, own, what)?;
        let own_len = &self.own_len;
        let sent_len: Vec<u32> = self
            .routes
            .send_cols
            .par_iter()
            .map(|&j| own_len[j as usize])
            .collect();
        let (got_len, got) = all_to_all(c, &sent_len, &self.routes.send_counts)?;
        if got != self.routes.recv_counts {
            return Err(mismatch(
                d.name(),
                what,
                format!(
                    "{got:?} columns came, {:?} were asked for",
                    self.routes.recv_counts
                ),
            ));
        }
        // Each rank's columns land in consecutive held slots (`Routes::new`), so the lengths
        // are placed a rank's part at a time.
        let mut lens = vec![0u32; self.routes.recv_slots.len()];
        let mut at = 0;
        for &n in &self.routes.recv_counts {
            if n > 0 {
                let s = self.routes.recv_slots[at] as usize;
                debug_assert_eq!(self.routes.recv_slots[at + n - 1] as usize, s + n - 1);
                lens[s..s + n].copy_from_slice(&got_len[at..at + n]);
            }
            at += n;
        }
        *held_len = Buf::upload(d, &nonempty(&lens), what)?;
        // Entries to and from each rank.
        let per_rank = |len: &[u32], counts: &[usize]| -> Vec<usize> {
            let mut at = 0;
            counts
                .iter()
                .map(|&n| {
                    let e = len[at..at + n].par_iter().map(|&l| l as usize).sum();
                    at += n;
                    e
                })
                .collect()
        };
        let (sends, recvs) = (
            per_rank(&sent_len, &self.routes.send_counts),
            per_rank(&got_len, &self.routes.recv_counts),
        );
        let (ns, nr): (usize, usize) = (sends.iter().sum(), recvs.iter().sum());
        let t1 = Instant::now();
        times.lengths += (t1 - t0).as_secs_f64();
        if self.sidx.len() < ns {
            self.sidx = Buf::uninit(d, ns, what)?;
            self.sval = Buf::uninit(d, ns, what)?;
        }
        if self.ridx.len() < nr {
            // The old buffers go first (the exchange's last use of them was waited for: the
            // lengths' read-back above synchronised the queue).
            self.ridx = Buf::uninit(d, 1, what)?;
            self.rval = Buf::uninit(d, 1, what)?;
            self.ridx = Buf::uninit(d, nr, what)?;
            self.rval = Buf::uninit(d, nr, what)?;
        }
        let n_send = self.routes.send_cols.len();
        let send_sel = (new_len, Some(&self.routes.send_sel));
        launch_offsets::<T, D>(d, n_send, send_sel, &self.routes.send_sums, &self.total)?;
        launch_pack(
            d,
            (false, &Window::all(n_send)),
            (n_send, k),
            send_sel,
            &self.routes.send_sums,
            new,
            (&self.sidx, &self.sval),
        )?;
        let ranges = |w: usize| -> Vec<std::ops::Range<usize>> {
            let mut at = 0;
            sends
                .iter()
                .map(|&e| {
                    at += e;
                    (at - e) * w..at * w
                })
                .collect()
        };
        let bytes = |w: usize| -> Vec<usize> { recvs.iter().map(|&e| e * w).collect() };
        let device = d.all_to_all_mem(
            c,
            (self.sidx.mem(), &ranges(4)),
            (self.ridx.mem(), &bytes(4)),
            what,
        )? && d.all_to_all_mem(
            c,
            (self.sval.mem(), &ranges(t)),
            (self.rval.mem(), &bytes(t)),
            what,
        )?;
        if !device {
            // Through the hosts: the packed parts read back, exchanged and uploaded.
            let (ridx, got) = all_to_all(c, &self.sidx.download_head(d, ns, what)?, &sends)?;
            let (rval, _) = all_to_all(c, &self.sval.download_head(d, ns, what)?, &sends)?;
            if got != recvs {
                return Err(mismatch(
                    d.name(),
                    what,
                    format!("{got:?} entries came, the lengths count {recvs:?}"),
                ));
            }
            self.ridx = Buf::upload(d, &nonempty(&ridx), what)?;
            self.rval = Buf::upload(d, &nonempty(&rval), what)?;
        }
        let n_recv = self.routes.recv_slots.len();
        let recv_sel = (&*held_len, Some(&self.routes.recv_sel));
        launch_offsets::<T, D>(d, n_recv, recv_sel, &self.routes.recv_sums, &self.total)?;
        launch_pack(
            d,
            (true, &Window::all(n_recv)),
            (n_recv, k),
            recv_sel,
            &self.routes.recv_sums,
            held,
            (&self.ridx, &self.rval),
        )?;
        debug_assert_eq!(p, recvs.len());
        times.entries += t1.elapsed().as_secs_f64();
        let others = (nr - recvs[me]) * (4 + t) + (n_recv - own) * 4;
        Ok((device, others as u64))
    }
}

/// `v`, or one zero when it is empty (no zero-byte device buffers).
fn nonempty<P: Copy + Default>(v: &[P]) -> Vec<P> {
    if v.is_empty() {
        vec![P::default()]
    } else {
        v.to_vec()
    }
}

/// This rank's new columns (`plan.own` of them, width `K`, lengths `len`), packed on the
/// device and read back: what the host paths send (the `M·M` fetch, the final gather).
pub fn own_on_host<D: Device, T: Scalar>(
    d: &D,
    plan: &GpuPlan,
    (new, len): (Entries<'_, D, T>, &Buf<D, u32>),
) -> Result<Packed<T>> {
    let (own, k) = (plan.own, plan.k);
    let what = "reading this rank's R-MCL columns";
    let sums = Buf::<D, u64>::zeroed(d, own.div_ceil(PACK_WG) + 1, what)?;
    let total = Buf::<D, u64>::zeroed(d, 1, what)?;
    launch_offsets::<T, D>(d, own, (len, None), &sums, &total)?;
    let entries = total.download(d, what)?[0] as usize;
    let (pidx, pval) = (
        Buf::<D, u32>::uninit(d, entries.max(1), what)?,
        Buf::<D, T>::uninit(d, entries.max(1), what)?,
    );
    launch_pack(
        d,
        (false, &Window::all(own)),
        (own, k),
        (len, None),
        &sums,
        new,
        (&pidx, &pval),
    )?;
    Packed::new(
        len.download_head(d, own, what)?,
        pidx.download_head(d, entries, what)?,
        pval.download_head(d, entries, what)?,
    )
}

/// The selections' part of [`MarkovCluster::pack_round_trip`](crate::mcl::MarkovCluster):
/// the columns `sel` of `m` (uploaded; every third column left out, the rest in reverse)
/// packed with a selection into a poisoned buffer one entry longer, then unpacked with
/// another selection into the columns `3..` of fresh poisoned slots, in reverse again.
/// Every packed entry, every unpacked column and every slot left alone is checked against
/// `m` on the host.
pub(super) fn select_round_trip<D: Device, T: Scalar>(
    d: &D,
    m: &crate::mcl::Columns<T>,
) -> Result<()> {
    let (n, k) = (m.n, m.k);
    let a = "R-MCL selection round trip";
    let (idx, val, len) = (
        &Buf::upload(d, &m.idx, a)?,
        &Buf::upload(d, &m.val, a)?,
        &Buf::upload(d, &m.len, a)?,
    );
    let fail = |what: String| Error::backend(d.name(), format!("{a}: {what}"));
    let sel: Vec<u32> = (0..n as u32).rev().filter(|j| j % 3 != 1).collect();
    let ns = sel.len();
    if ns == 0 {
        return Ok(());
    }
    let (want_idx, want_val): (Vec<u32>, Vec<T>) = sel
        .iter()
        .flat_map(|&j| {
            let (i, v) = m.column(j as usize);
            i.iter().copied().zip(v.iter().copied())
        })
        .unzip();
    let entries = want_idx.len();
    let sums = Buf::<D, u64>::zeroed(d, ns.div_ceil(PACK_WG) + 1, a)?;
    let total = Buf::<D, u64>::zeroed(d, 1, a)?;
    let sel_buf = Buf::upload(d, &sel, a)?;
    launch_offsets::<T, D>(d, ns, (len, Some(&sel_buf)), &sums, &total)?;
    let counted = total.download(d, a)?[0];
    if counted != entries as u64 {
        return Err(fail(format!(
            "{counted} entries counted, {entries} selected"
        )));
    }
    let (poison_idx, poison_val) = (u32::MAX - 3, T::from_f64(-5.0));
    let (pidx, pval) = (
        Buf::upload(d, &vec![poison_idx; entries + 1], a)?,
        Buf::upload(d, &vec![poison_val; entries + 1], a)?,
    );
    let from = (len, Some(&sel_buf));
    let w = Window::all(ns);
    launch_pack(
        d,
        (false, &w),
        (ns, k),
        from,
        &sums,
        (idx, val),
        (&pidx, &pval),
    )?;
    let (gi, gv) = (pidx.download(d, a)?, pval.download(d, a)?);
    let bits = |v: &[T]| {
        v.iter()
            .map(|&x| Scalar::to_f64(x).to_bits())
            .collect::<Vec<_>>()
    };
    if gi[..entries] != want_idx[..] || bits(&gv[..entries]) != bits(&want_val) {
        let at = (0..entries)
            .find(|&e| gi[e] != want_idx[e] || gv[e].to_f64() != want_val[e].to_f64())
            .unwrap_or(entries);
        return Err(fail(format!(
            "packed entry {at} of the selection is ({:?}, {:?}), want ({:?}, {:?})",
            gi.get(at),
            gv.get(at).map(|&x| Scalar::to_f64(x)),
            want_idx.get(at),
            want_val.get(at).map(|&x| Scalar::to_f64(x))
        )));
    }
    if gi[entries] != poison_idx || gv[entries].to_f64() != poison_val.to_f64() {
        return Err(fail("packing the selection wrote past its entries".into()));
    }
    // Unpacked into the columns 3.. of n2, the i-th selected column into column 3 + ns - 1 - i.
    let n2 = ns + 3;
    let to: Vec<u32> = (0..ns).map(|i| (3 + ns - 1 - i) as u32).collect();
    let mut to_len = vec![0u32; n2];
    for (i, &c) in to.iter().enumerate() {
        to_len[c as usize] = m.len[sel[i] as usize];
    }
    let (to_buf, to_len_buf) = (Buf::upload(d, &to, a)?, Buf::upload(d, &to_len, a)?);
    let (oidx, oval) = (
        Buf::upload(d, &vec![poison_idx; n2 * k], a)?,
        Buf::upload(d, &vec![poison_val; n2 * k], a)?,
    );
    let into = (&to_len_buf, Some(&to_buf));
    launch_offsets::<T, D>(d, ns, into, &sums, &total)?;
    launch_pack(
        d,
        (true, &w),
        (ns, k),
        into,
        &sums,
        (&oidx, &oval),
        (&pidx, &pval),
    )?;
    let (oi, ov) = (oidx.download(d, a)?, oval.download(d, a)?);
    for c in 0..n2 {
        let l = to_len[c] as usize;
        let (ci, cv) = (&oi[c * k..(c + 1) * k], &ov[c * k..(c + 1) * k]);
        let want = (c >= 3).then(|| m.column(sel[3 + ns - 1 - c] as usize));
        let (wi, wv) = want.unwrap_or((&[], &[]));
        let kept = ci[l..].iter().all(|&x| x == poison_idx)
            && cv[l..]
                .iter()
                .all(|&x| Scalar::to_f64(x) == poison_val.to_f64());
        if ci[..l] != wi[..] || bits(&cv[..l]) != bits(wv) || !kept {
            return Err(fail(format!(
                "column {c} unpacked from the selection is ({:?}, {:?}), want ({wi:?}, \
                 {:?}) then poison",
                ci,
                cv.iter().map(|&x| Scalar::to_f64(x)).collect::<Vec<_>>(),
                wv.iter().map(|&x| Scalar::to_f64(x)).collect::<Vec<_>>()
            )));
        }
    }
    Ok(())
}

/// A rank's columns of `M`: `own` of them from column `c0`, of width `k`, rows `< n`.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    pub n: usize,
    pub c0: usize,
    pub own: usize,
    pub k: usize,
}

impl Span {
    /// `plan`'s rank's columns.
    pub fn of(plan: &GpuPlan) -> Self {
        Self {
            n: plan.n,
            c0: plan.col0,
            own: plan.own,
            k: plan.k,
        }
    }
}

/// Columns in compressed form on a device (as `M_G`'s `rptr`, `rrow`, `rval`): the right
/// operand of a partitioned `M·M` iteration ([`slot_rows`]).
pub struct Csc<D: Device, T: Scalar> {
    pub(super) ptr: Buf<D, u64>,
    pub(super) row: Buf<D, u32>,
    pub(super) val: Buf<D, T>,
}

/// The rows of this rank's columns that other ranks hold ([`rows_elsewhere`]).
pub struct Marked<D: Device> {
    /// One bit per node, on the device.
    bits: Buf<D, u32>,
    /// The marked rows, sorted.
    pub rows: Vec<u32>,
    /// For each 32-bit word of `bits`, the marked rows before it.
    base: Vec<u32>,
}

/// The rows of an `M·M` iteration: the rows of this rank's new columns (`new`, lengths
/// `len`) that other ranks hold, marked on the device in a bitmap of all `span.n` nodes
/// (`mcl_mark_rows`) and read back.
pub fn rows_elsewhere<D: Device, T: Scalar>(
    d: &D,
    span: Span,
    (new, len): (Entries<'_, D, T>, &Buf<D, u32>),
) -> Result<Marked<D>> {
    let what = "R-MCL: the rows M·M reads from other ranks";
    let (own, k, c0) = (span.own as u64, span.k, span.c0 as u64);
    let words = span.n.div_ceil(32).max(1);
    let bits = Buf::<D, u32>::zeroed(d, words, what)?;
    let slots = own * k as u64;
    if slots > 0 {
        let kern = d.kernel::<T>("mcl", "mcl_mark_rows")?;
        let mut args = d.launch(&kern);
        args.arg(own)
            .arg(k as u32)
            .arg(new.0)
            .arg(len)
            .arg(c0)
            .arg(c0 + own)
            .arg(&bits);
        let wg = kern.group_limit().min(super::LINEAR_WG);
        // SAFETY: (u64 own, u32 K, const u32 *idx, const u32 *len, u64 c0, u64 c1, u32 *bits),
        // as in the kernel file: items x < own*K read len[x / K] (own entries) and idx[x]
        // (own*K slots); a row r < n (rows of M are node numbers) sets bit r of bits (n / 32
        // words rounded up).
        unsafe {
            args.launch(crate::device::Geometry::linear(
                slots.div_ceil(wg as u64) as usize,
                wg,
            ))
        }?;
    }
    let host = bits.download(d, what)?;
    let mut base = Vec::with_capacity(host.len());
    let mut before = 0u32;
    for w in &host {
        base.push(before);
        before += w.count_ones();
    }
    let rows: Vec<u32> = host
        .par_iter()
        .enumerate()
        .flat_map_iter(|(w, &b)| {
            (0..32u32)
                .filter(move |i| b >> i & 1 == 1)
                .map(move |i| w as u32 * 32 + i)
        })
        .collect();
    Ok(Marked { bits, rows, base })
}

/// The right operand of an `M·M` iteration: this rank's new columns (`new`, lengths `len`,
/// `own_len` on the host) packed on the device, their rows turned into held slots
/// (`mcl_slot_rows`, from the bitmap and word counts of [`rows_elsewhere`]).
pub fn slot_rows<D: Device, T: Scalar>(
    d: &D,
    span: Span,
    (new, len, own_len): (Entries<'_, D, T>, &Buf<D, u32>, &[u32]),
    marked: &Marked<D>,
) -> Result<Csc<D, T>> {
    let (bits, base) = (&marked.bits, &marked.base[..]);
    let what = "R-MCL: the right operand of M·M";
    let (own, k, c0) = (span.own, span.k, span.c0 as u64);
    let mut ptr = Vec::with_capacity(own + 1);
    let mut at = 0u64;
    ptr.push(0);
    for &l in own_len {
        at += u64::from(l);
        ptr.push(at);
    }
    let entries = at as usize;
    let sums = Buf::<D, u64>::zeroed(d, own.div_ceil(PACK_WG) + 1, what)?;
    let total = Buf::<D, u64>::zeroed(d, 1, what)?;
    let (row, val) = (
        Buf::<D, u32>::uninit(d, entries.max(1), what)?,
        Buf::<D, T>::uninit(d, entries.max(1), what)?,
    );
    launch_offsets::<T, D>(d, own, (len, None), &sums, &total)?;
    launch_pack(
        d,
        (false, &Window::all(own)),
        (own, k),
        (len, None),
        &sums,
        new,
        (&row, &val),
    )?;
    if entries > 0 {
        let base = Buf::upload(d, base, what)?;
        let kern = d.kernel::<T>("mcl", "mcl_slot_rows")?;
        let mut args = d.launch(&kern);
        args.arg(entries as u64)
            .arg(c0)
            .arg(c0 + own as u64)
            .arg(own as u64)
            .arg(bits)
            .arg(&base)
            .arg(&row);
        let wg = kern.group_limit().min(super::LINEAR_WG);
        // SAFETY: (u64 entries, u64 c0, u64 c1, u64 own, const u32 *bits, const u32 *base,
        // u32 *rows), as in the kernel file: items e < entries read and write rows[e]
        // (entries of them, packed above); a row r < n reads bits[r / 32] and base[r / 32]
        // (n / 32 words rounded up each, from rows_elsewhere).
        unsafe { args.launch(crate::device::Geometry::linear(entries.div_ceil(wg), wg)) }?;
    }
    Ok(Csc {
        ptr: Buf::upload(d, &ptr, what)?,
        row,
        val,
    })
}

/// The `M·M` rows' part of [`MarkovCluster::pack_round_trip`](crate::mcl::MarkovCluster):
/// `m` taken as a rank's columns from `c0 = n / 3` among `n + 40` nodes (its rows reach past
/// its columns on both sides), the rows held elsewhere marked on the device
/// ([`rows_elsewhere`]) and its columns made the right operand ([`slot_rows`]), both against
/// what the host finds from `m` alone.
pub(super) fn rows_round_trip<D: Device, T: Scalar>(
    d: &D,
    m: &crate::mcl::Columns<T>,
) -> Result<()> {
    let a = "R-MCL rows round trip";
    let fail = |what: String| Error::backend(d.name(), format!("{a}: {what}"));
    let top = m.idx.iter().copied().max().unwrap_or(0) as usize;
    let span = Span {
        n: top.max(m.n) + 41,
        c0: m.n / 3,
        own: m.n,
        k: m.k,
    };
    let (idx, val, len) = (
        Buf::upload(d, &m.idx, a)?,
        Buf::upload(d, &m.val, a)?,
        Buf::upload(d, &m.len, a)?,
    );
    let marked = rows_elsewhere(d, span, ((&idx, &val), &len))?;
    let mine = span.c0..span.c0 + span.own;
    let mut want: Vec<u32> = (0..m.n)
        .flat_map(|j| m.column(j).0.iter().copied())
        .filter(|&r| !mine.contains(&(r as usize)))
        .collect();
    want.sort_unstable();
    want.dedup();
    if marked.rows != want {
        return Err(fail(format!(
            "{} rows marked, {} held elsewhere (first marked {:?}, first wanted {:?})",
            marked.rows.len(),
            want.len(),
            marked.rows.first(),
            want.first()
        )));
    }
    let csc = slot_rows(d, span, ((&idx, &val), &len, &m.len[..]), &marked)?;
    let ptr = csc.ptr.download(d, a)?;
    let entries = m.entries() as usize;
    let row = csc.row.download_head(d, entries, a)?;
    let got_val = csc.val.download_head(d, entries, a)?;
    let mut at = 0usize;
    for (j, &start) in ptr.iter().take(m.n).enumerate() {
        if start != at as u64 {
            return Err(fail(format!("column {j} starts at {start}, want {at}")));
        }
        let (ri, rv) = m.column(j);
        for (q, (&r, &v)) in ri.iter().zip(rv).enumerate() {
            let slot = if mine.contains(&(r as usize)) {
                r - span.c0 as u32
            } else {
                (span.own + want.partition_point(|&w| w < r)) as u32
            };
            let x = at + q;
            if row[x] != slot || got_val[x].to_f64().to_bits() != v.to_f64().to_bits() {
                return Err(fail(format!(
                    "column {j} entry {q} (row {r}) became slot {} value {}, want {slot} {}",
                    row[x],
                    got_val[x].to_f64(),
                    v.to_f64()
                )));
            }
        }
        at += ri.len();
    }
    Ok(())
}
