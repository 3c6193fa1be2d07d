//! The SVD and Givens QR on any [`Device`], written once: the device steps of
//! [`SvdKernels`] with the kernels of `kernels/opencl/svd.cl` (one source for both dialects,
//! compiled as CUDA by `kernels/cuda/svd.cu`; its header documents the argument lists), and [`Svd`] / [`Qr`] through the shared
//! drivers ([`svd_with`], [`qr_with`]). The host only loops over sweeps and rounds (one
//! launch per round, one 8-byte read per sweep) and over Givens steps; everything per block
//! pair runs on the device.
//!
//! What differs per backend comes from the device: how the kernels over a 2-D index space
//! take their grid ([`Device::FLAT_GRID`]: CUDA's split a 1-D grid themselves, OpenCL's
//! take a 2-D NDRange), the work-group size a kernel allows ([`KernelHandle::group_limit`]:
//! OpenCL's may be below the kernels' [`WG`]), the tree QR leaves' slab of local memory
//! ([`crate::device::Arg::Local`]: CUDA's dynamic shared memory, OpenCL's `__local`
//! parameter) and the matrix product's base kernels ([`run_schedule`], the base kernels the backend picks: CUDA's FP64 tensor-core GEMM where the device has it).

// Kernel launches are `unsafe`: each says why in its `// SAFETY:` note.
#![allow(unsafe_code)]

use super::driver::{qr_with, svd_with};
use super::host::to_col_major;
use super::jacobi::{flat_qr_steps, negligible_gram, JacobiParams, JacobiPlan, JacobiStats};
use super::kernels::{check_gather, check_top, copy_rows_len, mat_mul_schedule, SvdKernels};
use super::tree::{TreePlan, MERGE_PANEL};
use super::{noise_level, Qr, QrFactors, QrOptions, QrOrder, Svd, SvdOptions, SvdResult};
use crate::dense::DenseView;
use crate::device::{Buf, Device, Geometry, KernelHandle, Launch, VectorMem};
use crate::error::{Error, Result};
use crate::gpu::KernelList;
use crate::matmul::device::{run_schedule, MatmulDevice};
use crate::scalar::Scalar;

/// The kernels of the `svd` kernel file, as both backends' kernel tables list them.
pub const KERNELS: KernelList = KernelList::new(
    &[
        "svd_jacobi_round",
        "svd_pair_gram",
        "svd_pair_rotate",
        "svd_pair_apply",
        "svd_column_norms",
        "svd_copy_rows",
        "svd_from_rows",
        "svd_gather_cols",
        "qr_rotations",
        "qr_apply",
        "qr_apply_q",
        "qr_tree_leaf_panel",
        "qr_tree_leaf_update",
        "qr_tree_merge_panel",
        "qr_tree_merge_update",
        "qr_tree_merge_q",
        "qr_tree_leaf_q",
        "qr_tree_leaf_q_local",
    ],
    &[],
);

/// Work-items per group of every SVD kernel but those below (`WG` in the kernel files).
pub const WG: usize = 256;
/// Work-items per group of the tree QR's panel kernels and `qr_tree_leaf_q` (`QWG`).
pub const QWG: usize = 1024;
/// Work-items per group of `svd_pair_rotate` (`RWG`).
pub const RWG: usize = 512;
/// Largest block size compiled into the kernel files (`BMAX`).
pub const BMAX: usize = 16;
/// Columns of a block pair's Gram matrix as compiled (`P = 2 BMAX`).
const P: usize = 2 * BMAX;
/// Output tile edge of `svd_from_rows` / `svd_gather_cols` (`LT`).
const LT: usize = 32;

/// A column-major matrix in device memory (see [`SvdKernels`]).
pub struct DeviceMat<D: Device, T: Scalar> {
    rows: usize,
    cols: usize,
    buf: Buf<D, T>,
}

/// The rotations of a Givens QR on the device: `(c, s)` of element `(i, j)` at
/// `2 (j · rows + i)`, in the flat order or the tree order of `tree`.
pub struct DeviceRotations<D: Device, T: Scalar> {
    rows: usize,
    jcols: usize,
    tree: Option<TreePlan>,
    buf: Buf<D, T>,
}

fn u32_of<D: Device>(d: &D, x: usize, what: &str) -> Result<u32> {
    u32::try_from(x)
        .map_err(|_| Error::Unsupported(format!("{what} = {x} on {} (> 2^32)", d.name())))
}

/// Kernel `root` of the svd file for `T`, checked to run in work-groups of [`WG`] (but the
/// tree QR kernels, compiled for [`QWG`], and `svd_pair_rotate`, for [`RWG`]: a device that
/// cannot run those fails the launch).
fn svd_kernel<'a, T: Scalar, D: Device>(d: &'a D, root: &str) -> Result<D::Kernel<'a>> {
    let k = d.kernel::<T>("svd", root)?;
    if root.starts_with("qr_tree") || root == "svd_pair_rotate" {
        return Ok(k);
    }
    if k.group_limit() < WG {
        return Err(Error::Unsupported(format!(
            "{} needs work-groups of {WG}; the device allows {}",
            k.name(),
            k.group_limit()
        )));
    }
    Ok(k)
}

/// Enqueues `l` as `groups` work-groups of `wg` (nothing when `groups` is 0).
///
/// # Safety
///
/// As [`Launch::launch`]: the arguments match the kernel and the buffers suffice for
/// `groups` work-groups of `wg`.
unsafe fn launch_groups<D: Device>(
    l: &mut Launch<'_, '_, D>,
    groups: usize,
    wg: usize,
) -> Result<()> {
    // SAFETY: forwarded from the caller.
    unsafe { launch_geometry(l, Geometry::linear(groups, wg)) }
}

/// Enqueues `l` under `g` (nothing when it has no work-groups).
///
/// # Safety
///
/// As [`Launch::launch`].
unsafe fn launch_geometry<D: Device>(l: &mut Launch<'_, '_, D>, g: Geometry) -> Result<()> {
    if g.groups.contains(&0) {
        return Ok(());
    }
    // SAFETY: forwarded from the caller.
    unsafe { l.launch(g) }
}

/// The launch of the flat Givens kernels over `(j, k)`, `j < items` (of a span of `span`
/// the kernel assumes), `k < ks`, in work-groups of [`WG`]: where the dialect takes a 1-D
/// grid ([`Device::FLAT_GRID`]), `ceil(span / WG) · ks` groups, the kernel splitting the
/// flat index into `(g mod jspan, g / jspan)` with `jspan = span` rounded up to `WG`; else
/// a 2-D NDRange of `ceil(items / WG) × ks` groups.
fn pair_grid<D: Device>(span: usize, items: usize, ks: usize) -> Geometry {
    if D::FLAT_GRID {
        Geometry::linear(span.div_ceil(WG) * ks, WG)
    } else {
        Geometry {
            groups: [items.div_ceil(WG), ks, 1],
            group_size: [WG, 1, 1],
        }
    }
}

/// Work-groups of the layout kernels for an `r × c` output: one per `LT × LT` tile.
fn layout_grid(r: usize, c: usize) -> usize {
    r.div_ceil(LT) * c.div_ceil(LT)
}

/// A `rows × cols` device matrix: `init` (column-major) or zeros.
fn mat<D: Device, T: Scalar>(
    d: &D,
    rows: usize,
    cols: usize,
    init: Option<&[T]>,
) -> Result<DeviceMat<D, T>> {
    let buf = match init {
        Some(h) => Buf::upload(d, h, "uploading an SVD matrix")?,
        None => Buf::zeroed(d, rows * cols, "allocating an SVD matrix")?,
    };
    Ok(DeviceMat { rows, cols, buf })
}

/// One stage of the tree QR (the `qr_tree_*` kernels, [`TreePlan`]): `kernels.0`, the
/// panel, in `groups.0` work-groups of [`QWG`], then `kernels.1`, the update, in `groups.1`
/// work-groups of [`WG`] (none when 0), both with the arguments `(u64 rows, uint cols,
/// uint h, stage…, T *a, T *cs)`.
///
/// # Safety
///
/// Both kernels take exactly these arguments, and `groups` are the stage's counts from
/// [`TreePlan`], for which the kernels touch only `a`'s (`rows × cols`) and `cs`'s
/// (`2 rows cols`) elements of the stage's rows and columns.
unsafe fn tree_stage<'k, D: Device, T: Scalar>(
    d: &'k D,
    kernels: (&D::Kernel<'k>, &D::Kernel<'k>),
    (rows, cols, h): (usize, u32, u32),
    stage: &[u32],
    (a, cs): (&'k Buf<D, T>, &'k Buf<D, T>),
    groups: (usize, usize),
) -> Result<()> {
    for (kernel, n, wg) in [(kernels.0, groups.0, QWG), (kernels.1, groups.1, WG)] {
        let mut l = d.launch(kernel);
        l.arg(rows as u64).arg(cols).arg(h);
        for &x in stage {
            l.arg(x);
        }
        l.arg(a).arg(cs);
        // SAFETY: forwarded from the caller.
        unsafe { launch_groups(&mut l, n, wg)? };
    }
    Ok(())
}

/// `svd_copy_rows`: the top `nrows` rows of `src` into the top rows of `dst` (same
/// columns), zero below the diagonal when `upper`.
fn copy_rows<D: Device, T: Scalar>(
    d: &D,
    src: &DeviceMat<D, T>,
    dst: &DeviceMat<D, T>,
    nrows: usize,
    upper: bool,
) -> Result<()> {
    let n = copy_rows_len((src.rows, src.cols), (dst.rows, dst.cols), nrows)?;
    if n == 0 {
        return Ok(());
    }
    let k = svd_kernel::<T, D>(d, "svd_copy_rows")?;
    let mut l = d.launch(&k);
    l.arg(src.rows as u64)
        .arg(dst.rows as u64)
        .arg(nrows as u64)
        .arg(u32_of(d, src.cols, "columns")?)
        .arg(u32::from(upper))
        .arg(&src.buf)
        .arg(&dst.buf);
    // SAFETY: (u64 src_rows, u64 dst_rows, u64 nrows, uint cols, uint upper, const T *src,
    // T *dst) as svd_copy_rows takes; work-item e < nrows cols (the groups cover it, the rest
    // return) reads src[j src_rows + i] and writes dst[j dst_rows + i] with i < nrows <= both
    // row counts and j < cols: inside both buffers (checked above).
    unsafe { launch_groups(&mut l, n.div_ceil(WG), WG) }
}

impl<T: Scalar, D: MatmulDevice + VectorMem<T>> Svd<T> for D {
    fn svd(&self, a: DenseView<'_, T>, opts: &SvdOptions) -> Result<SvdResult<T>> {
        // The kernels build (precision, work-group size) before any work.
        svd_kernel::<T, D>(self, "svd_jacobi_round")?;
        svd_with(self, a, opts)
    }
}

impl<T: Scalar, D: MatmulDevice + VectorMem<T>> Qr<T> for D {
    fn qr(&self, a: DenseView<'_, T>, opts: &QrOptions) -> Result<QrFactors<T>> {
        svd_kernel::<T, D>(self, "qr_apply")?;
        qr_with(self, a, opts)
    }
}

impl<T: Scalar, D: MatmulDevice + VectorMem<T>> SvdKernels<T> for D {
    type Mat = DeviceMat<D, T>;
    type Rotations = DeviceRotations<D, T>;

    fn mat_shape(&self, a: &DeviceMat<D, T>) -> (usize, usize) {
        (a.rows, a.cols)
    }

    fn mat_upload(&self, rows: usize, cols: usize, cm: &[T]) -> Result<DeviceMat<D, T>> {
        mat(self, rows, cols, Some(cm))
    }

    fn mat_download(&self, a: &DeviceMat<D, T>) -> Result<Vec<T>> {
        a.buf.download(self, "downloading an SVD matrix")
    }

    fn mat_top(&self, a: &DeviceMat<D, T>, rows: usize, upper: bool) -> Result<DeviceMat<D, T>> {
        check_top(a.rows, rows)?;
        let out = mat::<D, T>(self, rows, a.cols, None)?;
        copy_rows(self, a, &out, rows, upper)?;
        Ok(out)
    }

    fn mat_pad(&self, a: &DeviceMat<D, T>, rows: usize) -> Result<DeviceMat<D, T>> {
        check_top(rows, a.rows)?;
        let out = mat::<D, T>(self, rows, a.cols, None)?;
        copy_rows(self, a, &out, a.rows, false)?;
        Ok(out)
    }

    fn mat_mul(&self, a: &DeviceMat<D, T>, b: &DeviceMat<D, T>) -> Result<DeviceMat<D, T>> {
        let (opts, s, lens) = mat_mul_schedule::<T>(self, (a.rows, a.cols), (b.rows, b.cols))?;
        let c = mat::<D, T>(self, a.rows, b.cols, None)?;
        let w = Buf::<D, T>::uninit(self, s.workspace, "allocating the matmul workspace")?;
        let ops = [
            self.mem_ref(b.buf.mem())?,
            self.mem_ref(a.buf.mem())?,
            self.mem_ref(c.buf.mem())?,
            self.mem_ref(w.mem())?,
        ];
        run_schedule::<T, D>(self, &s, ops, lens, &opts)?;
        Ok(c)
    }

    fn mat_identity(&self, rows: usize, cols: usize) -> Result<DeviceMat<D, T>> {
        let mut host = vec![T::zero(); rows * cols];
        for j in 0..rows.min(cols) {
            host[j * rows + j] = T::one();
        }
        mat(self, rows, cols, Some(&host))
    }

    fn givens_qr(&self, a: &mut DeviceMat<D, T>, order: QrOrder) -> Result<DeviceRotations<D, T>> {
        if order == QrOrder::Householder {
            return Err(Error::Unsupported(format!(
                "the Householder QR order on {} (CPU only; GPUs run Givens: flat or tree)",
                self.name()
            )));
        }
        let (rows, cols) = (a.rows, a.cols);
        let jcols = rows.saturating_sub(1).min(cols);
        let cs = Buf::<D, T>::zeroed(self, 2 * rows * cols, "allocating Givens rotations")?;
        let cols32 = u32_of(self, cols, "columns")?;
        let a = &a.buf;
        if let QrOrder::Tree { panel_rows } = order {
            let plan = TreePlan::new(rows, cols, panel_rows);
            let h32 = u32_of(self, plan.h, "panel rows")?;
            let dims = (rows, cols32, h32);
            // The kernel handles borrow `cs` until they are dropped: in this block.
            if rows > 0 && cols > 0 {
                let panel = svd_kernel::<T, D>(self, "qr_tree_leaf_panel")?;
                let update = svd_kernel::<T, D>(self, "qr_tree_leaf_update")?;
                for j0 in (0..cols).step_by(MERGE_PANEL) {
                    let groups = (plan.leaf_groups(j0, false), plan.leaf_groups(j0, true));
                    let stage = [u32_of(self, j0, "column")?];
                    // SAFETY: qr_tree_leaf_panel and _update take (u64 rows, uint cols,
                    // uint h, uint j0, T *a, T *cs); with TreePlan::leaf_groups, group p of
                    // the panel (t of the update: leaf t / spans, the rest idle) touches rows
                    // p h .. min(p h + h, rows) of columns j0 .. j0 + 32 (right of them for
                    // the update; < cols) of a (rows cols values) and cs[2 (j rows + g) ..= +1]
                    // for those rows g and columns j (cs has 2 rows cols).
                    unsafe { tree_stage(self, (&panel, &update), dims, &stage, (a, &cs), groups)? };
                }
            }
            let levels32 = u32_of(self, plan.levels, "merge levels")?;
            {
                let panel = svd_kernel::<T, D>(self, "qr_tree_merge_panel")?;
                let update = svd_kernel::<T, D>(self, "qr_tree_merge_update")?;
                for wave in 0..plan.merge_waves() {
                    let groups = (plan.wave_groups(wave, false), plan.wave_groups(wave, true));
                    let stage = [levels32, u32_of(self, wave, "merge wave")?];
                    // SAFETY: qr_tree_merge_panel and _update take (u64 rows, uint cols, uint h,
                    // uint levels, uint wave, T *a, T *cs); with TreePlan::wave_groups, group t
                    // takes a merge of one of the wave's panels j0 at its level l (and, for the
                    // update, columns right of the panel below cols; groups past them idle),
                    // touching rows a + j, b + i < rows (b + i < rows by kb) of columns
                    // j0 .. j0 + 32 (< cols), and cs at those (row, column) pairs.
                    unsafe { tree_stage(self, (&panel, &update), dims, &stage, (a, &cs), groups)? };
                }
            }
            return Ok(DeviceRotations {
                rows,
                jcols,
                tree: Some(plan),
                buf: cs,
            });
        }
        {
            let rot_k = svd_kernel::<T, D>(self, "qr_rotations")?;
            let apply_k = svd_kernel::<T, D>(self, "qr_apply")?;
            for step in 0..flat_qr_steps(rows, jcols) {
                let step32 = u32_of(self, step, "step")?;
                // SAFETY (both launches): (u64 rows, uint cols, uint step, T *a, T *cs) as
                // qr_rotations and qr_apply take. Work-item j (resp. (j, k)) touches
                // a[k rows + i - 1 ..= i] and cs[2 (j rows + i) ..= +1] only for j, k < cols,
                // j < i < rows: inside a (rows cols values) and cs (2 rows cols). The 1-D grid of
                // a FLAT_GRID dialect spans cols rounded up to WG, as the kernels split it.
                let mut l = self.launch(&rot_k);
                l.arg(rows as u64).arg(cols32).arg(step32).arg(a).arg(&cs);
                // SAFETY: see above (qr_rotations).
                unsafe { launch_geometry(&mut l, pair_grid::<D>(cols, jcols, 1))? };
                let mut l = self.launch(&apply_k);
                l.arg(rows as u64).arg(cols32).arg(step32).arg(a).arg(&cs);
                // SAFETY: see above (qr_apply).
                unsafe { launch_geometry(&mut l, pair_grid::<D>(cols, jcols, cols))? };
            }
        }
        Ok(DeviceRotations {
            rows,
            jcols,
            tree: None,
            buf: cs,
        })
    }

    fn givens_apply_q(&self, rot: &DeviceRotations<D, T>, q: &mut DeviceMat<D, T>) -> Result<()> {
        let apply_q = svd_kernel::<T, D>(self, "qr_apply_q")?;
        let rows = rot.rows;
        if q.rows != rows {
            return Err(Error::shape(format!(
                "Q of {rows} rows applied to {} rows",
                q.rows
            )));
        }
        if q.cols == 0 || rows == 0 {
            return Ok(());
        }
        let qcols = u32_of(self, q.cols, "columns")?;
        if let Some(plan) = &rot.tree {
            let (cols, h) = (
                u32_of(self, plan.cols, "columns")?,
                u32_of(self, plan.h, "panel rows")?,
            );
            let merge_q = svd_kernel::<T, D>(self, "qr_tree_merge_q")?;
            let groups = q.cols.div_ceil(WG / MERGE_PANEL);
            for level in (0..plan.levels).rev() {
                let merges = plan.merges(level);
                for j0 in (0..plan.cols).step_by(MERGE_PANEL).rev() {
                    let mut l = self.launch(&merge_q);
                    l.arg(rows as u64)
                        .arg(qcols)
                        .arg(cols)
                        .arg(h)
                        .arg(level as u32)
                        .arg(u32_of(self, j0, "column")?)
                        .arg(&q.buf)
                        .arg(&rot.buf);
                    // SAFETY: (u64 rows, uint qcols, uint cols, uint h, uint level, uint j0,
                    // T *q, const T *cs) as qr_tree_merge_q takes; group t takes merge
                    // t / spans < merges(level) and columns below qcols (the rest idle), so
                    // it touches rows a + j, b + i < rows of q (rows qcols values) and reads
                    // cs (2 rows cols) at (row < rows, column < cols).
                    unsafe { launch_groups(&mut l, merges * groups, WG)? };
                }
            }
            // The leaves: slabs of q in local (shared) memory when one column fits, else in
            // place.
            let local = plan.leaf_q_span(q.cols, std::mem::size_of::<T>());
            let (name, span, wg) = match local {
                Some(span) => ("qr_tree_leaf_q_local", span, WG),
                None => ("qr_tree_leaf_q", TreePlan::q_span(q.cols, plan.panels), QWG),
            };
            let k = svd_kernel::<T, D>(self, name)?;
            let mut l = self.launch(&k);
            l.arg(rows as u64)
                .arg(qcols)
                .arg(cols)
                .arg(h)
                .arg(u32_of(self, span, "columns")?)
                .arg(&q.buf)
                .arg(&rot.buf);
            if let Some(span) = local {
                l.local(plan.leaf_q_local_len(span) * std::mem::size_of::<T>());
            }
            let groups = plan.panels * q.cols.div_ceil(span);
            // SAFETY: (u64 rows, uint qcols, uint cols, uint h, uint kspan, T *q, const T *cs)
            // as both leaf kernels take, and for qr_tree_leaf_q_local its slab of h kspan
            // values of local memory (OpenCL: a last `__local T *` parameter; CUDA: dynamic
            // shared memory) (leaf_q_span: within 32 KiB); group p spans + c (p < panels)
            // touches its panel's rows of q's columns c kspan .. min(qcols, ..+ kspan) and
            // reads cs at (those rows, column < cols).
            return unsafe { launch_groups(&mut l, groups, wg) };
        }
        let jcols32 = u32_of(self, rot.jcols, "columns")?;
        for step in (0..flat_qr_steps(rows, rot.jcols)).rev() {
            let mut l = self.launch(&apply_q);
            l.arg(rows as u64)
                .arg(qcols)
                .arg(jcols32)
                .arg(u32_of(self, step, "step")?)
                .arg(&q.buf)
                .arg(&rot.buf);
            // SAFETY: (u64 rows, uint qcols, uint jcols, uint step, T *q, const T *cs) as
            // qr_apply_q takes; item (j, k) touches q[k rows + i - 1 ..= i] and
            // cs[2 (j rows + i) ..= +1] only for j < jcols, k < qcols, j < i < rows: inside q
            // (rows qcols) and cs (2 rows cols, cols >= jcols). The 1-D grid of a FLAT_GRID
            // dialect spans jcols rounded up to WG, as the kernel splits it.
            unsafe { launch_geometry(&mut l, pair_grid::<D>(rot.jcols, rot.jcols, q.cols))? };
        }
        Ok(())
    }

    fn jacobi(
        &self,
        w: &mut DeviceMat<D, T>,
        v: Option<&mut DeviceMat<D, T>>,
        p: &JacobiParams,
    ) -> Result<JacobiStats> {
        svd_kernel::<T, D>(self, "svd_jacobi_round")?;
        let (rows, cols) = (w.rows, w.cols);
        let JacobiPlan { b, nb, chunks } = JacobiPlan::new(rows, cols, p, BMAX, self.name())?;
        let pairs = nb / 2;
        // Split rounds (chunks > 1): Gram partials and the pairs' rotations (P² + 1 values:
        // Q and the "rotated" flag) on the device.
        let split = if chunks > 1 {
            Some((
                Buf::<D, T>::zeroed(self, pairs * chunks * P * P, "allocating Gram partials")?,
                Buf::<D, T>::zeroed(self, pairs * (P * P + 1), "allocating pair rotations")?,
            ))
        } else {
            None
        };
        let (cols32, nb32) = (u32_of(self, cols, "columns")?, u32_of(self, nb, "blocks")?);
        let chunks32 = u32_of(self, chunks, "row chunks")?;
        // The largest squared column norm seen (bits of an f32), kept across sweeps: the
        // rotation kernels' noise level (trident_core::svd::NOISE_INNER_SWEEPS).
        let gmax = Buf::<D, u32>::zeroed(self, 1, "allocating the largest column norm")?;
        let w = &w.buf;
        let (v, vrows) = match v {
            Some(v) => (&v.buf, v.rows),
            None => (w, 0),
        };
        let (tol, tiny, noise) = (
            p.tol,
            negligible_gram::<T>().to_f64(),
            noise_level::<T>().to_f64(),
        );
        let mut stats = JacobiStats {
            sweeps: 0,
            off: 0.0,
            converged: false,
        };
        while stats.sweeps < p.max_sweeps {
            stats.sweeps += 1;
            let flags = Buf::<D, u32>::zeroed(self, 2, "allocating the convergence flag")?;
            for round in 0..nb - 1 {
                let round32 = round as u32;
                if let Some((gpart, qbuf)) = &split {
                    let k = svd_kernel::<T, D>(self, "svd_pair_gram")?;
                    let mut l = self.launch(&k);
                    l.arg(rows as u64).arg(cols32).arg(b as u32).arg(nb32);
                    l.arg(round32).arg(chunks32).arg(w).arg(gpart);
                    // SAFETY: (u64 rows, uint cols, uint b, uint nb, uint round, uint chunks,
                    // const T *w, T *gpart) as svd_pair_gram takes; group k chunks + c reads
                    // pair k's columns (< cols) in rows < rows of w and writes its P² values
                    // of gpart (pairs chunks P² values).
                    unsafe { launch_groups(&mut l, pairs * chunks, WG)? };
                    let k = svd_kernel::<T, D>(self, "svd_pair_rotate")?;
                    let mut l = self.launch(&k);
                    l.arg(b as u32).arg(chunks32);
                    l.real::<T>(tol).real::<T>(tiny).real::<T>(noise);
                    l.arg(gpart).arg(qbuf).arg(&flags).arg(&gmax);
                    // SAFETY: (uint b, uint chunks, T tol, T tiny, T noise_rel, const T *gpart,
                    // T *qbuf, uint *off_bits, uint *gmax_bits) as svd_pair_rotate takes;
                    // group k reads gpart[(k chunks + c) P² ..][.. P²] for c < chunks and
                    // writes qbuf[k (P² + 1) ..][..= P²] (pairs (P² + 1) values); flags has 2
                    // entries, gmax 1; groups of RWG, as compiled (launch bounds,
                    // reqd_work_group_size).
                    unsafe { launch_groups(&mut l, pairs, RWG)? };
                    let k = svd_kernel::<T, D>(self, "svd_pair_apply")?;
                    let mut l = self.launch(&k);
                    l.arg(rows as u64).arg(vrows as u64).arg(cols32);
                    l.arg(b as u32).arg(nb32).arg(round32).arg(chunks32);
                    l.arg(qbuf).arg(w).arg(v);
                    let sides = if vrows > 0 { 2 } else { 1 };
                    // SAFETY: (u64 rows, u64 vrows, uint cols, uint b, uint nb, uint round,
                    // uint chunks, const T *qbuf, T *w, T *v) as svd_pair_apply takes; group
                    // k chunks + c (and pairs chunks more when vrows > 0, for v) reads
                    // qbuf[k (P² + 1) ..][..= P²] and rewrites pair k's columns (< cols) in
                    // its chunk of the rows of w (rows x cols) or v (vrows x cols).
                    unsafe { launch_groups(&mut l, sides * pairs * chunks, WG)? };
                    continue;
                }
                let k = svd_kernel::<T, D>(self, "svd_jacobi_round")?;
                let mut l = self.launch(&k);
                l.arg(rows as u64)
                    .arg(cols32)
                    .arg(b as u32)
                    .arg(nb32)
                    .arg(round32);
                l.real::<T>(tol).real::<T>(tiny).real::<T>(noise);
                l.arg(w).arg(v).arg(vrows as u64).arg(&flags).arg(&gmax);
                // SAFETY: the parameters of svd_jacobi_round (u64 rows, uint cols, uint b,
                // uint nb, uint round, T tol, T tiny, T noise_rel, T *w, T *v, u64 vrows,
                // uint *off_bits, uint *gmax_bits). Group k reads and writes the columns
                // (< cols) of block pair k in rows < rows of w and < vrows of v (v has cols
                // columns of vrows, or vrows = 0 and it is not touched); flags has 2 entries,
                // gmax 1.
                unsafe { launch_groups(&mut l, pairs, WG)? };
            }
            let mut f = [0u32; 2];
            flags.download_into(self, &mut f, "reading the convergence flag")?;
            stats.off = f64::from(f32::from_bits(f[0]));
            if f[1] == 0 {
                stats.converged = true;
                break;
            }
        }
        Ok(stats)
    }

    fn column_norms(&self, w: &DeviceMat<D, T>) -> Result<Vec<T>> {
        let out = mat::<D, T>(self, w.cols, 1, None)?;
        let k = svd_kernel::<T, D>(self, "svd_column_norms")?;
        let mut l = self.launch(&k);
        l.arg(w.rows as u64)
            .arg(u32_of(self, w.cols, "columns")?)
            .arg(&w.buf)
            .arg(&out.buf);
        // SAFETY: (u64 rows, uint cols, const T *w, T *norms) as svd_column_norms takes; group
        // j < cols reads column j (rows values) of w and writes norms[j].
        unsafe { launch_groups(&mut l, w.cols, WG)? };
        drop(l);
        drop(k);
        self.mat_download(&out)
    }

    fn mat_from_rows(
        &self,
        a: DenseView<'_, T>,
        transpose: bool,
        scale: f64,
    ) -> Result<DeviceMat<D, T>> {
        let (m, n) = a.shape();
        let (rows, cols) = if transpose { (n, m) } else { (m, n) };
        if a.stride() != n || m == 0 || n == 0 {
            // Not one contiguous block (or empty): the host changes the layout.
            return mat(self, rows, cols, Some(&to_col_major(a, transpose, scale)?));
        }
        let src = mat::<D, T>(self, m, n, Some(&a.data()[..m * n]))?;
        let out = mat::<D, T>(self, rows, cols, None)?;
        let k = svd_kernel::<T, D>(self, "svd_from_rows")?;
        let mut l = self.launch(&k);
        l.arg(m as u64).arg(n as u64).arg(u32::from(transpose));
        l.real::<T>(T::from_f64(scale).to_f64());
        l.arg(&src.buf).arg(&out.buf);
        // SAFETY: (u64 m, u64 n, uint transpose, T scale, const T *src, T *dst) as
        // svd_from_rows takes; src and dst hold m n values, and every group (one per 32 x 32
        // tile of the rows x cols output) reads and writes only indices i < rows, j < cols of
        // them.
        unsafe { launch_groups(&mut l, layout_grid(rows, cols), WG)? };
        drop(l);
        drop(k);
        Ok(out)
    }

    fn gather_columns(
        &self,
        a: &DeviceMat<D, T>,
        order: &[usize],
        scale: &[f64],
        as_rows: bool,
    ) -> Result<Vec<T>> {
        check_gather(a.cols, order, scale)?;
        let ncols = order.len();
        let mut host = vec![T::zero(); a.rows * ncols];
        if host.is_empty() {
            return Ok(host);
        }
        let idx: Vec<u32> = order
            .iter()
            .map(|&j| u32_of(self, j, "column index"))
            .collect::<Result<_>>()?;
        let order_buf = Buf::upload(self, &idx, "uploading the SVD's column order")?;
        let sc: Vec<T> = scale[..ncols].iter().map(|&x| T::from_f64(x)).collect();
        let scale_buf = Buf::upload(self, &sc, "uploading the SVD's column scales")?;
        let out = Buf::<D, T>::uninit(self, host.len(), "allocating gathered SVD vectors")?;
        let k = svd_kernel::<T, D>(self, "svd_gather_cols")?;
        let mut l = self.launch(&k);
        l.arg(a.rows as u64)
            .arg(ncols as u64)
            .arg(u32::from(as_rows))
            .arg(&order_buf)
            .arg(&scale_buf)
            .arg(&a.buf)
            .arg(&out);
        let (r, c) = if as_rows {
            (a.rows, ncols)
        } else {
            (ncols, a.rows)
        };
        // SAFETY: (u64 rows, u64 ncols, uint as_rows, const uint *order, const T *scale,
        // const T *src, T *dst) as svd_gather_cols takes; order and scale hold ncols values,
        // each order[l] < a.cols (checked), so src reads stay below a.rows a.cols; dst holds
        // rows ncols values and every group writes only inside its tile of the r x c output.
        unsafe { launch_groups(&mut l, layout_grid(r, c), WG)? };
        drop(l);
        drop(k);
        out.download_into(self, &mut host, "downloading gathered SVD vectors")?;
        Ok(host)
    }

    fn memory_bytes(&self) -> Option<u64> {
        Some(self.query().total_memory)
    }
}
