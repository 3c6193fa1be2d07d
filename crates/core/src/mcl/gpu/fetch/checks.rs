//! The fetch's kernels checked on one device against the host, for
//! [`MarkovCluster::pack_round_trip`](crate::mcl::MarkovCluster) (so that the one-process
//! tests, and the sanitizers' list, launch every kernel of the partitioned fetch).

// Kernel launches are `unsafe`: each says why in its `// SAFETY:` note.
#![allow(unsafe_code)]

use super::{
    blocks, linear, list_rows, move_lens, offsets_at, rows_elsewhere, slot_rows, starts, Span,
};
use crate::device::{Buf, Device};
use crate::error::{Error, Result};
use crate::mcl::gpu::pack::{launch_offsets, launch_pack, Window};
use crate::mcl::gpu::PACK_WG;
use crate::scalar::Scalar;

/// The selections' part of [`MarkovCluster::pack_round_trip`](crate::mcl::MarkovCluster):
/// the columns `sel` of `m` (uploaded; every third column left out, the rest in reverse)
/// packed with a selection into a poisoned buffer one entry longer, then unpacked with
/// another selection into the columns `3..` of fresh poisoned slots, in reverse again.
/// Every packed entry, every unpacked column and every slot left alone is checked against
/// `m` on the host.
pub(in crate::mcl::gpu) fn select_round_trip<D: Device, T: Scalar>(
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
    bookkeeping_round_trip::<D, T>(d, m, &sel, &to, n2)
}

/// The fetch's bookkeeping kernels on a device against the host: the lengths of `m`'s
/// columns `sel` gathered (`mcl_move_lens`) into a poisoned buffer one longer, then scattered
/// through `to` into `n2` poisoned lengths; the packed offsets at every position of the
/// selection (`mcl_offsets_at`, from the second query slot on: the first stays poisoned);
/// and both selections of an `M·M` route (`mcl_route_sel`) around an own block in the
/// middle, into poisoned buffers one longer.
fn bookkeeping_round_trip<D: Device, T: Scalar>(
    d: &D,
    m: &crate::mcl::Columns<T>,
    sel: &[u32],
    to: &[u32],
    n2: usize,
) -> Result<()> {
    let a = "R-MCL fetch bookkeeping round trip";
    let fail = |what: String| Error::backend(d.name(), format!("{a}: {what}"));
    let (ns, poison) = (sel.len(), u32::MAX - 11);
    let len = Buf::upload(d, &m.len, a)?;
    let sel_buf = Buf::upload(d, sel, a)?;
    let got = Buf::upload(d, &vec![poison; ns + 1], a)?;
    move_lens::<D, T>(d, ns, &sel_buf, &len, &got, false)?;
    let mut want: Vec<u32> = sel.iter().map(|&j| m.len[j as usize]).collect();
    want.push(poison);
    if got.download(d, a)? != want {
        return Err(fail(
            "the lengths gathered through the selection differ".into(),
        ));
    }
    let to_buf = Buf::upload(d, to, a)?;
    let placed = Buf::upload(d, &vec![poison; n2], a)?;
    move_lens::<D, T>(d, ns, &to_buf, &got, &placed, true)?;
    let mut want_placed = vec![poison; n2];
    for (i, &c) in to.iter().enumerate() {
        want_placed[c as usize] = want[i];
    }
    if placed.download(d, a)? != want_placed {
        return Err(fail(
            "the lengths scattered through the selection differ".into(),
        ));
    }
    let sums = Buf::<D, u64>::zeroed(d, blocks(ns), a)?;
    let total = Buf::<D, u64>::zeroed(d, 1, a)?;
    launch_offsets::<T, D>(d, ns, (&len, Some(&sel_buf)), &sums, &total)?;
    let at: Vec<u64> = std::iter::once(u64::MAX).chain(0..=ns as u64).collect();
    let (at_buf, out) = (
        Buf::upload(d, &at, a)?,
        Buf::upload(d, &vec![u64::MAX - 3; ns + 2], a)?,
    );
    offsets_at::<D, T>(
        d,
        (ns + 1, &at_buf, 1),
        ns,
        (&len, Some(&sel_buf)),
        &sums,
        &out,
    )?;
    let want_at: Vec<u64> = std::iter::once(u64::MAX - 3)
        .chain(starts(
            &want[..ns].iter().map(|&l| l as usize).collect::<Vec<_>>(),
        ))
        .collect();
    let got_at = out.download(d, a)?;
    if got_at != want_at {
        let q = (0..want_at.len())
            .find(|&q| got_at[q] != want_at[q])
            .unwrap_or(0);
        return Err(fail(format!(
            "packed offset slot {q} is {}, want {}",
            got_at[q], want_at[q]
        )));
    }
    let (own, before, c0) = (ns / 4, ns / 3, 5u32);
    let src = Buf::upload(d, &sel.iter().map(|&j| j + c0).collect::<Vec<_>>(), a)?;
    let n = ns + own;
    for recv in [false, true] {
        let out = Buf::upload(d, &vec![poison; n + 1], a)?;
        let kern = d.kernel::<T>("mcl", "mcl_route_sel")?;
        let mut args = d.launch(&kern);
        args.arg(n as u64)
            .arg(before as u64)
            .arg(own as u64)
            .arg(c0)
            .arg(u32::from(recv))
            .arg(&src)
            .arg(&out);
        // SAFETY: (u64 n, u64 a, u64 own, u32 c0, u32 recv, const u32 *src, u32 *sel), as in
        // the kernel file: items i < n write out[i] (n + 1 entries) and read src[j] for
        // j < n - own = ns (src holds ns).
        unsafe { args.launch(linear(&kern, n)) }?;
        let mut want: Vec<u32> = (0..n)
            .map(|i| {
                if (before..before + own).contains(&i) {
                    return (i - before) as u32;
                }
                let j = if i < before { i } else { i - own };
                if recv {
                    (own + j) as u32
                } else {
                    sel[j]
                }
            })
            .collect();
        want.push(poison);
        if out.download(d, a)? != want {
            return Err(fail(format!(
                "the {} selection of a route differs",
                if recv { "receive" } else { "send" }
            )));
        }
    }
    Ok(())
}

/// The `M·M` rows' part of [`MarkovCluster::pack_round_trip`](crate::mcl::MarkovCluster):
/// `m` taken as a rank's columns from `c0 = n / 3` among `n + 40` nodes (its rows reach past
/// its columns on both sides), the rows held elsewhere marked on the device
/// ([`rows_elsewhere`]) and its columns made the right operand ([`slot_rows`]), both against
/// what the host finds from `m` alone.
pub(in crate::mcl::gpu) fn rows_round_trip<D: Device, T: Scalar>(
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
    // The marked rows, listed on the device into a poisoned buffer one longer, and counted
    // below every node on the host.
    let mut listed = Buf::upload(d, &vec![u32::MAX - 7; want.len() + 1], a)?;
    list_rows::<D, T>(d, &marked, &mut listed)?;
    let rows = listed.download(d, a)?;
    if marked.total != want.len()
        || rows[..want.len()] != want[..]
        || rows[want.len()] != u32::MAX - 7
    {
        return Err(fail(format!(
            "{} rows marked, {} held elsewhere (first listed {:?}, first wanted {:?})",
            marked.total,
            want.len(),
            rows.first(),
            want.first()
        )));
    }
    if let Some(x) =
        (0..=span.n + 40).find(|&x| marked.below(x) != want.partition_point(|&w| (w as usize) < x))
    {
        return Err(fail(format!("{} rows marked below {x}", marked.below(x))));
    }
    let csc = slot_rows(d, span, ((&idx, &val), &len), &marked, None)?;
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
