//! The partitioned layout's fetch of `M` before an iteration, on the device: each rank packs
//! the columns that every rank asked for (its own included, for itself) with one selection
//! (`mcl_pack` with `sel`), the packed parts go to their ranks in one personalised exchange
//! (device to device where the backend can: NCCL; else through the hosts), and each rank
//! unpacks what arrives into its held columns' slots (`mcl_unpack` with `sel`). The columns'
//! lengths go the same way first (`mcl_move_lens`), and only each rank's part of the packed
//! arrays (`mcl_offsets_at`, `2·(ranks + 1)` numbers) is read back to size the exchange.
//!
//! In a regularised iteration the columns to fetch are `M_G`'s neighbours of a rank's
//! columns, fixed, so they are agreed once, on the hosts ([`Fetch::new`]). The `M·M`
//! expansion reads the rows of a rank's columns instead, which change every iteration: the
//! rows held elsewhere are marked on the device ([`rows_elsewhere`]), listed there
//! (`mcl_list_rows`), sent to their owners, and both selections are made on the device
//! (`mcl_route_sel`, [`Fetch::reroute`]): only the bitmap (`n / 8` bytes) and the number of
//! rows asked of each rank cross the hosts. The rank's columns, packed, become the right
//! operand with their rows as held slots ([`slot_rows`]).

// Kernel launches are `unsafe`: each says why in its `// SAFETY:` note.
#![allow(unsafe_code)]

pub(super) mod checks;

use super::pack::{launch_offsets, launch_pack, Entries, Window};
use super::{GpuPlan, LINEAR_WG, PACK_WG};
use crate::comm::{all_to_all, Comm};
use crate::device::{Buf, Device, DeviceElem, Geometry, KernelHandle};
use crate::error::{Error, Result};
use crate::mcl::ranks::Packed;
use crate::mcl::FetchTimes;
use crate::scalar::Scalar;
use std::time::Instant;

/// `buf` grown to at least `len` elements (not kept), the old allocation freed first.
fn grow<D: Device, P: DeviceElem>(
    d: &D,
    buf: &mut Buf<D, P>,
    len: usize,
    what: &str,
) -> Result<()> {
    if buf.len() < len.max(1) {
        *buf = Buf::uninit(d, 1, what)?;
        *buf = Buf::uninit(d, len.max(1), what)?;
    }
    Ok(())
}

/// The one-dimensional geometry of `items` work-items of `kern`.
fn linear<K: KernelHandle>(kern: &K, items: usize) -> Geometry {
    let wg = kern.group_limit().min(LINEAR_WG);
    Geometry::linear(items.div_ceil(wg), wg)
}

/// A personalised exchange of device buffers: the first `sends[r]` elements after those for
/// the ranks before `r` go to rank `r`, and each rank's `recvs[r]` elements land in `into`
/// in rank order (`into` holds their sum). Device to device where the backend can (returns
/// `true`), else through the hosts (`into` replaced by what arrived).
fn exchange<D: Device, P: DeviceElem>(
    d: &D,
    c: &dyn Comm,
    (send, sends): (&Buf<D, P>, &[usize]),
    (into, recvs): (&mut Buf<D, P>, &[usize]),
    what: &str,
) -> Result<bool> {
    let w = std::mem::size_of::<P>();
    let mut at = 0;
    let ranges: Vec<std::ops::Range<usize>> = sends
        .iter()
        .map(|&e| {
            at += e;
            (at - e) * w..at * w
        })
        .collect();
    let bytes: Vec<usize> = recvs.iter().map(|&e| e * w).collect();
    if d.all_to_all_mem(c, (send.mem(), &ranges), (into.mem(), &bytes), what)? {
        return Ok(true);
    }
    let (got, counts) = all_to_all(c, &send.download_head(d, at, what)?, sends)?;
    if counts != recvs {
        return Err(mismatch(
            d.name(),
            what,
            format!("{counts:?} came, {recvs:?} were expected"),
        ));
    }
    *into = Buf::upload(d, &nonempty(&got), what)?;
    Ok(false)
}

/// Which columns go where in a fetch: `send_counts[r]` columns to rank `r` (to itself: all
/// of its own) and `recv_counts[r]` from it, and on the device the selections of both (the
/// local columns sent, destination by destination; the held slot of each column received,
/// source by source: from itself its columns, slots `0..own`; from another rank its columns
/// among those wanted, slots `own + i`), their block offsets, and where each rank's part
/// starts (`bounds`: the send side's `ranks + 1` positions, then the receive side's).
struct Routes<D: Device> {
    send_counts: Vec<usize>,
    recv_counts: Vec<usize>,
    send_sel: Buf<D, u32>,
    recv_sel: Buf<D, u32>,
    send_sums: Buf<D, u64>,
    recv_sums: Buf<D, u64>,
    bounds: Buf<D, u64>,
}

/// The block offsets of `cols` selected columns.
fn blocks(cols: usize) -> usize {
    cols.div_ceil(PACK_WG) + 1
}

/// `0, c0, c0 + c1, …`: where each part of `counts` starts, and the end.
fn starts(counts: &[usize]) -> impl Iterator<Item = u64> + '_ {
    std::iter::once(0).chain(counts.iter().scan(0u64, |at, &k| {
        *at += k as u64;
        Some(*at)
    }))
}

impl<D: Device> Routes<D> {
    /// Empty routes (every rank sends nothing), to be filled by [`Routes::on_device`].
    fn empty(d: &D, p: usize, what: &str) -> Result<Self> {
        Ok(Self {
            send_counts: vec![0; p],
            recv_counts: vec![0; p],
            send_sel: Buf::zeroed(d, 1, what)?,
            recv_sel: Buf::zeroed(d, 1, what)?,
            send_sums: Buf::zeroed(d, 1, what)?,
            recv_sums: Buf::zeroed(d, 1, what)?,
            bounds: Buf::zeroed(d, 2 * (p + 1), what)?,
        })
    }

    fn n_send(&self) -> usize {
        self.send_counts.iter().sum()
    }

    fn n_recv(&self) -> usize {
        self.recv_counts.iter().sum()
    }

    /// The starts of every rank's part, both sides, uploaded; the block offsets sized.
    fn finish(&mut self, d: &D, what: &str) -> Result<()> {
        let b: Vec<u64> = starts(&self.send_counts)
            .chain(starts(&self.recv_counts))
            .collect();
        self.bounds = Buf::upload(d, &b, what)?;
        let (ns, nr) = (self.n_send(), self.n_recv());
        grow(d, &mut self.send_sums, blocks(ns), what)?;
        grow(d, &mut self.recv_sums, blocks(nr), what)?;
        Ok(())
    }

    /// The routes of a fetch of the columns `want` (sorted, none of them this rank's),
    /// agreed with the other ranks of `c` on the hosts (every rank calls it at the same
    /// point): each rank's wanted columns asked of their owners.
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
        let mut routes = Self {
            send_sel: Buf::upload(d, &nonempty(&send_cols), what)?,
            recv_sel: Buf::upload(d, &nonempty(&recv_slots), what)?,
            ..Self::empty(d, p, what)?
        };
        routes.send_counts = send_counts;
        routes.recv_counts = recv_counts;
        routes.finish(d, what)?;
        Ok(routes)
    }

    /// The routes of an `M·M` fetch, made on the device: the rows `marked` are listed into
    /// `lists.0` (`mcl_list_rows`), sent to their owners into `lists.1`, and both selections
    /// made from them (`mcl_route_sel`). Only the number of rows each rank asks of each
    /// crosses the hosts. Every rank calls it at the same point.
    fn on_device<T: Scalar>(
        &mut self,
        d: &D,
        c: &dyn Comm,
        plan: &GpuPlan,
        marked: &Marked<D>,
        (want, asked): (&mut Buf<D, u32>, &mut Buf<D, u32>),
    ) -> Result<()> {
        let what = "R-MCL: routing the M·M fetch";
        let (p, me, c0, own) = (c.size(), c.rank(), plan.col0, plan.own);
        let want_counts: Vec<usize> = (0..p)
            .map(|r| marked.below(plan.splits[r + 1]) - marked.below(plan.splits[r]))
            .collect();
        if want_counts[me] != 0 {
            return Err(mismatch(
                d.name(),
                what,
                "a row of this rank's own marked".into(),
            ));
        }
        let asked_counts: Vec<usize> = c
            .all_to_all_counts(&want_counts.iter().map(|&k| k as u64).collect::<Vec<_>>())?
            .into_iter()
            .map(|k| k as usize)
            .collect();
        let na: usize = asked_counts.iter().sum();
        list_rows::<D, T>(d, marked, want)?;
        grow(d, asked, na, what)?;
        exchange(d, c, (&*want, &want_counts), (asked, &asked_counts), what)?;
        self.send_counts = asked_counts;
        self.send_counts[me] = own;
        self.recv_counts = want_counts;
        self.recv_counts[me] = own;
        let (ns, nr) = (self.n_send(), self.n_recv());
        grow(d, &mut self.send_sel, ns, what)?;
        grow(d, &mut self.recv_sel, nr, what)?;
        {
            let kern = d.kernel::<T>("mcl", "mcl_route_sel")?;
            for (n, recv) in [(ns, false), (nr, true)] {
                let counts = if recv {
                    &self.recv_counts
                } else {
                    &self.send_counts
                };
                let a: usize = counts[..me].iter().sum();
                let sel = if recv { &self.recv_sel } else { &self.send_sel };
                let mut args = d.launch(&kern);
                args.arg(n as u64)
                    .arg(a as u64)
                    .arg(own as u64)
                    .arg(c0 as u32)
                    .arg(u32::from(recv))
                    .arg(&*asked)
                    .arg(sel);
                // SAFETY: (u64 n, u64 a, u64 own, u32 c0, u32 recv, const u32 *src, u32 *sel),
                // as in the kernel file: items i < n write sel[i] (sel grown to n above) and,
                // sending, read src[j] for j < n - own (asked holds the n - own rows asked).
                unsafe { args.launch(linear(&kern, n)) }?;
            }
        }
        self.finish(d, what)
    }
}

/// The lengths of `n` selected columns moved on the device (`mcl_move_lens`): gathered,
/// `to[i] = from[sel[i]]`, or scattered, `to[sel[i]] = from[i]`.
fn move_lens<D: Device, T: Scalar>(
    d: &D,
    n: usize,
    sel: &Buf<D, u32>,
    from: &Buf<D, u32>,
    to: &Buf<D, u32>,
    scatter: bool,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let kern = d.kernel::<T>("mcl", "mcl_move_lens")?;
    let mut args = d.launch(&kern);
    args.arg(n as u64)
        .arg(sel)
        .arg(from)
        .arg(to)
        .arg(u32::from(scatter));
    // SAFETY: (u64 n, const u32 *sel, const u32 *from, u32 *to, u32 scatter), as in the
    // kernel file: items i < n read sel[i] (every caller's selection holds n) and either
    // from[sel[i]] into to[i] or from[i] into to[sel[i]]; the callers size from and to to n
    // and their selections index the other buffer's columns.
    unsafe { args.launch(linear(&kern, n)) }
}

/// The packed offsets of the columns `at[q0..q0 + nq]` (each at most `n`) of the order of
/// `n` columns (lengths `len`, through `sel` if given) whose block offsets are `sums`
/// ([`launch_offsets`]), into `out[q0..q0 + nq]` (`mcl_offsets_at`).
fn offsets_at<D: Device, T: Scalar>(
    d: &D,
    (nq, at, q0): (usize, &Buf<D, u64>, usize),
    n: usize,
    (len, sel): (&Buf<D, u32>, Option<&Buf<D, u32>>),
    sums: &Buf<D, u64>,
    out: &Buf<D, u64>,
) -> Result<()> {
    let kern = d.kernel::<T>("mcl", "mcl_offsets_at")?;
    let mut args = d.launch(&kern);
    args.arg(nq as u64)
        .arg(at)
        .arg(q0 as u64)
        .arg(n as u64)
        .arg(len)
        .arg(u32::from(sel.is_some()))
        .arg(sel.unwrap_or(len))
        .arg(sums)
        .arg(out);
    // SAFETY: (u64 nq, const u64 *at, u64 q0, u64 n, const u32 *len, u32 has_sel,
    // const u32 *sel, const u64 *sums, u64 *out), as in the kernel file: items q < nq read
    // at[q0 + q] and write out[q0 + q] (every caller's at and out hold q0 + nq); each reads
    // sums[a / PACK_WG] for a = min(at, n) (the block offsets of n columns, n / PACK_WG + 1
    // of them) and len[j], or sel[j] and len[sel[j]], for j < a (the callers' len and sel
    // cover the n columns).
    unsafe { args.launch(linear(&kern, nq)) }
}

/// The routes and buffers of the partitioned fetch ([`Fetch::run`]).
pub struct Fetch<D: Device, T: Scalar> {
    routes: Routes<D>,
    total: Buf<D, u64>,
    /// The lengths sent and received, in the exchange's order.
    slen: Buf<D, u32>,
    rlen: Buf<D, u32>,
    /// Where each rank's part of the packed arrays starts: the send side, then the receive
    /// side (`mcl_offsets_at`).
    parts: Buf<D, u64>,
    sidx: Buf<D, u32>,
    sval: Buf<D, T>,
    ridx: Buf<D, u32>,
    rval: Buf<D, T>,
    /// `M·M`: the rows this rank asks for, and those asked of it.
    want: Buf<D, u32>,
    asked: Buf<D, u32>,
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
        let routes = Routes::new(d, c, plan, want)?;
        Self::with(d, c, plan, routes)
    }

    /// A fetch for `M·M` iterations, routed by [`Fetch::reroute`] before each.
    pub fn for_mm(d: &D, c: &dyn Comm, plan: &GpuPlan) -> Result<Self> {
        let routes = Routes::empty(d, c.size(), "R-MCL: the fetch's buffers")?;
        Self::with(d, c, plan, routes)
    }

    fn with(d: &D, c: &dyn Comm, plan: &GpuPlan, routes: Routes<D>) -> Result<Self> {
        let what = "R-MCL: the fetch's buffers";
        // The packed buffers start at the plan's mean column (`GpuPlan::mean`) and grow.
        let start = |cols: usize| (cols * plan.mean).max(1);
        let (ns, nr) = (routes.n_send(), routes.n_recv());
        Ok(Self {
            total: Buf::zeroed(d, 1, what)?,
            slen: Buf::uninit(d, ns.max(1), what)?,
            rlen: Buf::uninit(d, nr.max(1), what)?,
            parts: Buf::zeroed(d, 2 * (c.size() + 1), what)?,
            sidx: Buf::uninit(d, start(ns), what)?,
            sval: Buf::uninit(d, start(ns), what)?,
            ridx: Buf::uninit(d, start(nr), what)?,
            rval: Buf::uninit(d, start(nr), what)?,
            want: Buf::zeroed(d, 1, what)?,
            asked: Buf::zeroed(d, 1, what)?,
            routes,
        })
    }

    /// Routes an `M·M` fetch of the rows `marked` ([`rows_elsewhere`]) on the device,
    /// reusing the buffers (see [`Routes::on_device`]).
    pub fn reroute(
        &mut self,
        d: &D,
        c: &dyn Comm,
        plan: &GpuPlan,
        marked: &Marked<D>,
    ) -> Result<()> {
        self.routes
            .on_device::<T>(d, c, plan, marked, (&mut self.want, &mut self.asked))
    }

    /// The fetch before an iteration: this rank's new columns `new` (`plan.own` of them,
    /// width `K`, lengths `new_len`) sent where they were asked for, and the held columns
    /// `held` (this rank's, then those wanted) filled with what arrives, their lengths
    /// `held_len` replaced (grown to the held columns if need be). Returns whether the
    /// entries went device to device, and the bytes received from other ranks; the host's
    /// time is added to `times`.
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
        let r = &self.routes;
        let (n_send, n_recv) = (r.n_send(), r.n_recv());
        // The lengths, on the device: gathered through the send selection, exchanged, and
        // scattered into the held columns' lengths through the receive selection.
        grow(d, &mut self.slen, n_send, what)?;
        grow(d, &mut self.rlen, n_recv, what)?;
        grow(d, held_len, n_recv, what)?;
        move_lens::<D, T>(d, n_send, &r.send_sel, new_len, &self.slen, false)?;
        exchange(
            d,
            c,
            (&self.slen, &r.send_counts),
            (&mut self.rlen, &r.recv_counts),
            what,
        )?;
        move_lens::<D, T>(d, n_recv, &r.recv_sel, &self.rlen, held_len, true)?;
        // The packed offsets of both sides, and where each rank's part starts.
        launch_offsets::<T, D>(
            d,
            n_send,
            (new_len, Some(&r.send_sel)),
            &r.send_sums,
            &self.total,
        )?;
        launch_offsets::<T, D>(
            d,
            n_recv,
            (&*held_len, Some(&r.recv_sel)),
            &r.recv_sums,
            &self.total,
        )?;
        for (q0, n, len, sel, sums) in [
            (0, n_send, new_len, &r.send_sel, &r.send_sums),
            (p + 1, n_recv, &*held_len, &r.recv_sel, &r.recv_sums),
        ] {
            offsets_at::<D, T>(
                d,
                (p + 1, &r.bounds, q0),
                n,
                (len, Some(sel)),
                sums,
                &self.parts,
            )?;
        }
        let parts = self.parts.download(d, what)?;
        let diff =
            |s: &[u64]| -> Vec<usize> { s.windows(2).map(|w| (w[1] - w[0]) as usize).collect() };
        let (sends, recvs) = (diff(&parts[..=p]), diff(&parts[p + 1..]));
        let (ns, nr) = (parts[p] as usize, parts[2 * p + 1] as usize);
        let t1 = Instant::now();
        times.lengths += (t1 - t0).as_secs_f64();
        grow(d, &mut self.sidx, ns, what)?;
        grow(d, &mut self.sval, ns, what)?;
        grow(d, &mut self.ridx, nr, what)?;
        grow(d, &mut self.rval, nr, what)?;
        let send_sel = (new_len, Some(&r.send_sel));
        launch_pack(
            d,
            (false, &Window::all(n_send)),
            (n_send, k),
            send_sel,
            &r.send_sums,
            new,
            (&self.sidx, &self.sval),
        )?;
        let device = exchange(d, c, (&self.sidx, &sends), (&mut self.ridx, &recvs), what)?;
        exchange(d, c, (&self.sval, &sends), (&mut self.rval, &recvs), what)?;
        let recv_sel = (&*held_len, Some(&r.recv_sel));
        launch_pack(
            d,
            (true, &Window::all(n_recv)),
            (n_recv, k),
            recv_sel,
            &r.recv_sums,
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
fn nonempty<P: DeviceElem>(v: &[P]) -> Vec<P> {
    if v.is_empty() {
        vec![P::zeroed()]
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
    /// One bit per node, on the device and on the host.
    bits: Buf<D, u32>,
    host: Vec<u32>,
    /// For each 32-bit word of `bits`, the marked rows before it, on the device and on the
    /// host.
    base: Buf<D, u32>,
    base_host: Vec<u32>,
    /// The words, and the rows marked.
    words: usize,
    pub total: usize,
}

impl<D: Device> Marked<D> {
    /// How many marked rows are below `x` (at most the nodes).
    fn below(&self, x: usize) -> usize {
        let w = x / 32;
        match self.host.get(w) {
            None => self.total,
            Some(&b) => {
                self.base_host[w] as usize + (b & ((1u32 << (x % 32)) - 1)).count_ones() as usize
            }
        }
    }
}

/// The rows of an `M·M` iteration: the rows of this rank's new columns (`new`, lengths
/// `len`) that other ranks hold, marked on the device in a bitmap of all `span.n` nodes
/// (`mcl_mark_rows`), read back, and counted word by word (the counts uploaded).
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
        // SAFETY: (u64 own, u32 K, const u32 *idx, const u32 *len, u64 c0, u64 c1, u32 *bits),
        // as in the kernel file: items x < own*K read len[x / K] (own entries) and idx[x]
        // (own*K slots); a row r < n (rows of M are node numbers) sets bit r of bits (n / 32
        // words rounded up).
        unsafe { args.launch(linear(&kern, slots as usize)) }?;
    }
    let host = bits.download(d, what)?;
    let mut base_host = Vec::with_capacity(host.len());
    let mut before = 0u32;
    for w in &host {
        base_host.push(before);
        before += w.count_ones();
    }
    Ok(Marked {
        bits,
        base: Buf::upload(d, &base_host, what)?,
        host,
        base_host,
        words,
        total: before as usize,
    })
}

/// The rows `marked`, in increasing order, listed on the device into `into` (grown to them;
/// `mcl_list_rows`).
fn list_rows<D: Device, T: Scalar>(
    d: &D,
    marked: &Marked<D>,
    into: &mut Buf<D, u32>,
) -> Result<()> {
    grow(
        d,
        into,
        marked.total,
        "R-MCL: the rows M·M reads from other ranks",
    )?;
    if marked.total == 0 {
        return Ok(());
    }
    let kern = d.kernel::<T>("mcl", "mcl_list_rows")?;
    let mut args = d.launch(&kern);
    args.arg(marked.words as u64)
        .arg(&marked.bits)
        .arg(&marked.base)
        .arg(&*into);
    // SAFETY: (u64 words, const u32 *bits, const u32 *base, u32 *rows), as in the kernel
    // file: items w < words read bits[w] and base[w] (words entries each) and write
    // rows[base[w]..base[w] + popcount(bits[w])), below the marked rows' total (into holds
    // at least that many).
    unsafe { args.launch(linear(&kern, marked.words)) }
}

/// The right operand of an `M·M` iteration: this rank's new columns (`new`, lengths `len`)
/// packed on the device, their starts from the block offsets (`mcl_column_starts`), their
/// rows turned into held slots (`mcl_slot_rows`, from the bitmap and word counts of
/// [`rows_elsewhere`]). The buffers of `prev` (the last iteration's) are reused where they
/// are large enough.
pub fn slot_rows<D: Device, T: Scalar>(
    d: &D,
    span: Span,
    (new, len): (Entries<'_, D, T>, &Buf<D, u32>),
    marked: &Marked<D>,
    prev: Option<Csc<D, T>>,
) -> Result<Csc<D, T>> {
    let what = "R-MCL: the right operand of M·M";
    let (own, k, c0) = (span.own, span.k, span.c0 as u64);
    let mut csc = match prev {
        Some(c) => c,
        None => Csc {
            ptr: Buf::zeroed(d, 1, what)?,
            row: Buf::zeroed(d, 1, what)?,
            val: Buf::zeroed(d, 1, what)?,
        },
    };
    grow(d, &mut csc.ptr, own + 1, what)?;
    let sums = Buf::<D, u64>::zeroed(d, blocks(own), what)?;
    let total = Buf::<D, u64>::zeroed(d, 1, what)?;
    launch_offsets::<T, D>(d, own, (len, None), &sums, &total)?;
    if own > 0 {
        let kern = d.kernel::<T>("mcl", "mcl_column_starts")?;
        let mut args = d.launch(&kern);
        args.arg(own as u64).arg(len).arg(&sums).arg(&csc.ptr);
        // SAFETY: (u64 n, const u32 *len, const u64 *sums, u64 *ptr), as in the kernel file:
        // own.div_ceil(PACK_WG) groups of exactly PACK_WG items (the kernel's bound); items
        // j < own read len[j] (own entries) and sums[j / PACK_WG] (blocks(own) entries) and
        // write ptr[j] and, the last, ptr[own] (grown to own + 1).
        unsafe { args.launch(Geometry::linear(own.div_ceil(PACK_WG), PACK_WG)) }?;
    }
    let entries = total.download(d, what)?[0] as usize;
    grow(d, &mut csc.row, entries, what)?;
    grow(d, &mut csc.val, entries, what)?;
    launch_pack(
        d,
        (false, &Window::all(own)),
        (own, k),
        (len, None),
        &sums,
        new,
        (&csc.row, &csc.val),
    )?;
    if entries > 0 {
        let kern = d.kernel::<T>("mcl", "mcl_slot_rows")?;
        let mut args = d.launch(&kern);
        args.arg(entries as u64)
            .arg(c0)
            .arg(c0 + own as u64)
            .arg(own as u64)
            .arg(&marked.bits)
            .arg(&marked.base)
            .arg(&csc.row);
        // SAFETY: (u64 entries, u64 c0, u64 c1, u64 own, const u32 *bits, const u32 *base,
        // u32 *rows), as in the kernel file: items e < entries read and write rows[e]
        // (entries of them, packed above); a row r < n reads bits[r / 32] and base[r / 32]
        // (n / 32 words rounded up each, from rows_elsewhere).
        unsafe { args.launch(linear(&kern, entries)) }?;
    }
    Ok(csc)
}
