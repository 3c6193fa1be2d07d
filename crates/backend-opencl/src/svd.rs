//! SVD and Givens QR on OpenCL: the device steps of [`trident_core::svd::driver`] with the
//! kernels of `kernels/opencl/svd.cl` (argument lists documented there, shared with
//! `kernels/cuda/svd.cu`). The host only loops over sweeps and rounds (one launch per round,
//! one 8-byte read per sweep) and over Givens steps; everything per block pair runs on the
//! device.

use ocl::Buffer;
use trident_core::svd::driver::{
    check_gather, check_top, copy_rows_len, flat_qr_steps, mat_mul_schedule, to_col_major,
    JacobiParams, JacobiPlan, JacobiStats, SvdKernels,
};
use trident_core::svd::{negligible_gram, noise_level, QrOrder, TreePlan, MERGE_PANEL};
use trident_core::{
    DenseView, DeviceVectors, Error, Qr, QrFactors, QrOptions, Result, Svd, SvdOptions, SvdResult,
};

use crate::error::ClResultExt;
use crate::kernels::Module;
use crate::memory::ClScalar;
use crate::program::{CachedKernel, ClLaunch, LaunchDims};
use crate::OpenCl;

/// Work-group size of every SVD kernel (`WG` in svd.cl).
const WG: usize = 256;
/// Work-group size of the tree QR kernels (`QWG` in svd.cl).
const QWG: usize = 1024;
/// Work-group size of `svd_pair_rotate` (`RWG` in svd.cl).
const RWG: usize = 512;
/// Largest block size compiled into svd.cl (`BMAX`).
pub const BMAX: usize = 16;
/// Columns of a block pair's Gram matrix as compiled (`P = 2 BMAX`).
const P: usize = 2 * BMAX;

/// A column-major matrix in OpenCL device memory.
pub struct ClMat<T: ClScalar> {
    rows: usize,
    cols: usize,
    buf: Buffer<T>,
}

/// The rotations of a Givens QR on the device: `(c, s)` of element `(i, j)` at
/// `2 (j · rows + i)`, in the flat order or the tree order of `tree`.
pub struct ClRotations<T: ClScalar> {
    rows: usize,
    jcols: usize,
    tree: Option<TreePlan>,
    buf: Buffer<T>,
}

impl OpenCl {
    /// One stage of the tree QR (svd.cl's qr_tree_* kernels, [`TreePlan`]): `kernels.0`, the
    /// panel, in `groups.0` work-groups of QWG, then `kernels.1`, the update, in `groups.1`
    /// work-groups of WG (none when 0), both with the arguments `(ulong rows, uint cols,
    /// uint h, stage…, REAL *a, REAL *cs)`.
    ///
    /// # Safety
    ///
    /// Both kernels take exactly these arguments, and `groups` are the stage's counts from
    /// [`TreePlan`], for which the kernels touch only `a`'s (`rows × cols`) and `cs`'s
    /// (`2 rows cols`) elements of the stage's rows and columns.
    unsafe fn tree_stage<T: ClScalar>(
        &self,
        kernels: (&CachedKernel, &CachedKernel),
        (rows, cols, h): (usize, u32, u32),
        stage: &[u32],
        a: &Buffer<T>,
        cs: &Buffer<T>,
        groups: (usize, usize),
    ) -> Result<()> {
        for (kernel, n, wg) in [(kernels.0, groups.0, QWG), (kernels.1, groups.1, WG)] {
            if n == 0 {
                continue;
            }
            let mut args = kernel.builder();
            args.arg(rows as u64).arg(cols).arg(h);
            for &x in stage {
                args.arg(x);
            }
            args.arg(a).arg(cs);
            // SAFETY: forwarded from the caller.
            unsafe { args.launch(&self.queue, LaunchDims::new([n * wg], Some([wg]))) }?;
        }
        Ok(())
    }

    /// Kernel `root` of svd.cl for `T`, checked to run in work-groups of [`WG`] (but the tree
    /// QR kernels, compiled for [`QWG`], and `svd_pair_rotate`, for [`RWG`]).
    fn svd_kernel<T: ClScalar>(&self, root: &str) -> Result<&CachedKernel> {
        let k = self.kernel::<T>(Module::Svd, root)?;
        if root.starts_with("qr_tree") || root == "svd_pair_rotate" {
            // Compiled for QWG (RWG) work-items (reqd_work_group_size), above the preferred size
            // that `local` is clamped to; a device that cannot run them fails the launch.
            return Ok(k);
        }
        if k.local != WG {
            return Err(Error::Unsupported(format!(
                "{} needs work-groups of {WG}; the device allows {}",
                k.name(),
                k.local
            )));
        }
        Ok(k)
    }

    fn mat<T: ClScalar>(&self, rows: usize, cols: usize, init: Option<&[T]>) -> Result<ClMat<T>> {
        let buf = self.alloc(rows * cols, init, "allocating an SVD matrix")?;
        Ok(ClMat { rows, cols, buf })
    }
}

impl OpenCl {
    /// `svd_copy_rows`: the top `nrows` rows of `src` into the top rows of `dst` (same
    /// columns), zero below the diagonal when `upper`.
    fn copy_rows<T: ClScalar>(
        &self,
        src: &ClMat<T>,
        dst: &ClMat<T>,
        nrows: usize,
        upper: bool,
    ) -> Result<()> {
        let n = copy_rows_len((src.rows, src.cols), (dst.rows, dst.cols), nrows)?;
        if n == 0 {
            return Ok(());
        }
        let mut args = self.svd_kernel::<T>("svd_copy_rows")?.builder();
        args.arg(src.rows as u64)
            .arg(dst.rows as u64)
            .arg(nrows as u64)
            .arg(u32_of(src.cols, "columns")?)
            .arg(u32::from(upper))
            .arg(&src.buf)
            .arg(&dst.buf);
        // SAFETY: (ulong src_rows, ulong dst_rows, ulong nrows, uint cols, uint upper,
        // const REAL *src, REAL *dst) as svd_copy_rows takes; work-item e < nrows cols (the
        // rest return) reads src[j src_rows + i] and writes dst[j dst_rows + i] with i < nrows
        // <= both row counts and j < cols: inside both buffers (checked above).
        unsafe { args.launch(&self.queue, LaunchDims::new([round_up(n, WG)], Some([WG]))) }
    }
}

/// Adds a `REAL` argument (`float` or `double`, as `T`).
fn real<T: ClScalar>(args: &mut ClLaunch<'_, '_>, v: T) {
    if T::NAME == "f32" {
        args.arg(trident_core::Scalar::to_f64(v) as f32);
    } else {
        args.arg(trident_core::Scalar::to_f64(v));
    }
}

impl<T: ClScalar> Svd<T> for OpenCl {
    fn svd(&self, a: DenseView<'_, T>, opts: &SvdOptions) -> Result<SvdResult<T>> {
        self.svd_kernel::<T>("svd_jacobi_round")?;
        trident_core::svd::svd_with(self, a, opts)
    }
}

impl<T: ClScalar> Qr<T> for OpenCl {
    fn qr(&self, a: DenseView<'_, T>, opts: &QrOptions) -> Result<QrFactors<T>> {
        self.svd_kernel::<T>("qr_apply")?;
        trident_core::svd::qr_with(self, a, opts)
    }
}

/// Output tile edge of `svd_from_rows` / `svd_gather_cols` (`LT` in svd.cl).
const LT: usize = 32;

/// Work-items of the layout kernels for an `r × c` output: one group per `LT × LT` tile.
fn layout_items(r: usize, c: usize) -> usize {
    r.div_ceil(LT) * c.div_ceil(LT) * WG
}

fn round_up(x: usize, to: usize) -> usize {
    x.div_ceil(to) * to
}

fn u32_of(x: usize, what: &str) -> Result<u32> {
    u32::try_from(x).map_err(|_| Error::Unsupported(format!("{what} = {x} on OpenCL (> 2^32)")))
}

impl<T: ClScalar> SvdKernels<T> for OpenCl {
    type Mat = ClMat<T>;
    type Rotations = ClRotations<T>;

    fn mat_shape(&self, a: &ClMat<T>) -> (usize, usize) {
        (a.rows, a.cols)
    }

    fn mat_upload(&self, rows: usize, cols: usize, cm: &[T]) -> Result<ClMat<T>> {
        self.mat(rows, cols, Some(cm))
    }

    fn mat_download(&self, a: &ClMat<T>) -> Result<Vec<T>> {
        let mut out = vec![T::zero(); a.rows * a.cols];
        if !out.is_empty() {
            // A blocking read on the in-order queue: it waits for all earlier work.
            a.buf
                .read(&mut out)
                .queue(&self.queue)
                .enq()
                .or_cl(|| "downloading an SVD matrix")?;
        }
        Ok(out)
    }

    fn mat_top(&self, a: &ClMat<T>, rows: usize, upper: bool) -> Result<ClMat<T>> {
        check_top(a.rows, rows)?;
        let out = self.mat::<T>(rows, a.cols, None)?;
        self.copy_rows(a, &out, rows, upper)?;
        Ok(out)
    }

    fn mat_pad(&self, a: &ClMat<T>, rows: usize) -> Result<ClMat<T>> {
        check_top(rows, a.rows)?;
        let out = ClMat {
            rows,
            cols: a.cols,
            buf: DeviceVectors::<T>::zeros(self, rows * a.cols)?.buf,
        };
        self.copy_rows(a, &out, a.rows, false)?;
        Ok(out)
    }

    fn mat_mul(&self, a: &ClMat<T>, b: &ClMat<T>) -> Result<ClMat<T>> {
        let (opts, s, lens) = mat_mul_schedule::<T>(self, (a.rows, a.cols), (b.rows, b.cols))?;
        let c = self.mat::<T>(a.rows, b.cols, None)?;
        let w = self.alloc::<T>(s.workspace, None, "allocating the matmul workspace")?;
        self.run_schedule(&s, [&b.buf, &a.buf, &c.buf, &w], lens, &opts)?;
        Ok(c)
    }

    fn mat_identity(&self, rows: usize, cols: usize) -> Result<ClMat<T>> {
        let mut host = vec![T::zero(); rows * cols];
        for j in 0..rows.min(cols) {
            host[j * rows + j] = T::one();
        }
        self.mat(rows, cols, Some(&host))
    }

    fn givens_qr(&self, a: &mut ClMat<T>, order: QrOrder) -> Result<ClRotations<T>> {
        if order == QrOrder::Householder {
            return Err(Error::Unsupported(
                "the Householder QR order on OpenCL (CPU only; GPUs run Givens: flat or tree)"
                    .to_string(),
            ));
        }
        let (rows, cols) = (a.rows, a.cols);
        let jcols = rows.saturating_sub(1).min(cols);
        let cs = self.alloc::<T>(2 * rows * cols, None, "allocating Givens rotations")?;
        let cols32 = u32_of(cols, "columns")?;
        if let QrOrder::Tree { panel_rows } = order {
            let plan = TreePlan::new(rows, cols, panel_rows);
            let h32 = u32_of(plan.h, "panel rows")?;
            let dims = (rows, cols32, h32);
            if rows > 0 && cols > 0 {
                let leaf = (
                    self.svd_kernel::<T>("qr_tree_leaf_panel")?,
                    self.svd_kernel::<T>("qr_tree_leaf_update")?,
                );
                for j0 in (0..cols).step_by(MERGE_PANEL) {
                    let groups = (plan.leaf_groups(j0, false), plan.leaf_groups(j0, true));
                    let stage = [u32_of(j0, "column")?];
                    // SAFETY: qr_tree_leaf_panel and _update take (ulong rows, uint cols,
                    // uint h, uint j0, REAL *a, REAL *cs); with TreePlan::leaf_groups, group p
                    // of the panel (t of the update: leaf t / spans, the rest idle) touches
                    // rows p h .. min(p h + h, rows) of columns j0 .. j0 + 32 (right of them
                    // for the update; < cols) of a (rows cols values) and
                    // cs[2 (j rows + g) ..= +1] for those rows g and columns j (cs has
                    // 2 rows cols).
                    unsafe { self.tree_stage(leaf, dims, &stage, &a.buf, &cs, groups)? };
                }
            }
            let merge = (
                self.svd_kernel::<T>("qr_tree_merge_panel")?,
                self.svd_kernel::<T>("qr_tree_merge_update")?,
            );
            let levels32 = u32_of(plan.levels, "merge levels")?;
            for wave in 0..plan.merge_waves() {
                let groups = (plan.wave_groups(wave, false), plan.wave_groups(wave, true));
                let stage = [levels32, u32_of(wave, "merge wave")?];
                // SAFETY: qr_tree_merge_panel and _update take (ulong rows, uint cols,
                // uint h, uint levels, uint wave, REAL *a, REAL *cs); with
                // TreePlan::wave_groups, group t takes a merge of one of the wave's panels j0
                // at its level l (and, for the update, columns right of the panel below cols;
                // groups past them idle), touching rows a + j, b + i < rows (b + i < rows by
                // kb) of columns j0 .. j0 + 32 (< cols), and cs at those (row, column) pairs.
                unsafe { self.tree_stage(merge, dims, &stage, &a.buf, &cs, groups)? };
            }
            return Ok(ClRotations {
                rows,
                jcols,
                tree: Some(plan),
                buf: cs,
            });
        }
        let rot_k = self.svd_kernel::<T>("qr_rotations")?;
        let apply_k = self.svd_kernel::<T>("qr_apply")?;
        let steps = flat_qr_steps(rows, jcols);
        for step in 0..steps {
            let step32 = u32_of(step, "step")?;
            // SAFETY (both launches): (ulong rows, uint cols, uint step, REAL *a, REAL *cs) as
            // qr_rotations and qr_apply take. Work-item j (resp. (j, k)) touches
            // a[k rows + i - 1 ..= i] and cs[2 (j rows + i) ..= +1] only for j, k < cols,
            // j < i < rows: inside a (rows cols values) and cs (2 rows cols).
            let mut args = rot_k.builder();
            args.arg(rows as u64)
                .arg(cols32)
                .arg(step32)
                .arg(&a.buf)
                .arg(&cs);
            // SAFETY: see above (qr_rotations).
            unsafe { args.launch(&self.queue, LaunchDims::linear(jcols, WG)) }?;
            let mut args = apply_k.builder();
            args.arg(rows as u64)
                .arg(cols32)
                .arg(step32)
                .arg(&a.buf)
                .arg(&cs);
            // SAFETY: see above (qr_apply).
            unsafe {
                args.launch(
                    &self.queue,
                    LaunchDims::new([round_up(jcols, WG), cols], Some([WG, 1])),
                )
            }?;
        }
        Ok(ClRotations {
            rows,
            jcols,
            tree: None,
            buf: cs,
        })
    }

    fn givens_apply_q(&self, rot: &ClRotations<T>, q: &mut ClMat<T>) -> Result<()> {
        let kernel = self.svd_kernel::<T>("qr_apply_q")?;
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
        if let Some(plan) = &rot.tree {
            let qcols = u32_of(q.cols, "columns")?;
            let (cols, h) = (u32_of(plan.cols, "columns")?, u32_of(plan.h, "panel rows")?);
            let merge_q = self.svd_kernel::<T>("qr_tree_merge_q")?;
            let groups = q.cols.div_ceil(WG / MERGE_PANEL);
            for level in (0..plan.levels).rev() {
                let merges = plan.merges(level);
                for j0 in (0..plan.cols).step_by(MERGE_PANEL).rev() {
                    let mut args = merge_q.builder();
                    args.arg(rows as u64)
                        .arg(qcols)
                        .arg(cols)
                        .arg(h)
                        .arg(level as u32)
                        .arg(u32_of(j0, "column")?)
                        .arg(&q.buf)
                        .arg(&rot.buf);
                    let dims = LaunchDims::new([merges * groups * WG], Some([WG]));
                    // SAFETY: (ulong rows, uint qcols, uint cols, uint h, uint level, uint j0,
                    // REAL *q, const REAL *cs) as qr_tree_merge_q takes; group t takes merge
                    // t / spans < merges(level) and columns below qcols (the rest idle), so it
                    // touches rows a + j, b + i < rows of q (rows qcols values) and reads cs
                    // (2 rows cols) at (row < rows, column < cols).
                    unsafe { args.launch(&self.queue, dims) }?;
                }
            }
            // The leaves: slabs of q in local memory when one column fits, else in place.
            let local = plan.leaf_q_span(q.cols, std::mem::size_of::<T>());
            let (name, span, wg) = match local {
                Some(span) => ("qr_tree_leaf_q_local", span, WG),
                None => ("qr_tree_leaf_q", TreePlan::q_span(q.cols, plan.panels), QWG),
            };
            let mut args = self.svd_kernel::<T>(name)?.builder();
            args.arg(rows as u64)
                .arg(qcols)
                .arg(cols)
                .arg(h)
                .arg(u32_of(span, "columns")?)
                .arg(&q.buf)
                .arg(&rot.buf);
            if let Some(span) = local {
                args.local::<T>(plan.leaf_q_local_len(span));
            }
            let groups = plan.panels * q.cols.div_ceil(span);
            // SAFETY: (ulong rows, uint qcols, uint cols, uint h, uint kspan, REAL *q,
            // REAL *cs) as both leaf kernels take, and for qr_tree_leaf_q_local its
            // (__local REAL *slab) of h kspan values (leaf_q_span: within 32 KiB); group
            // p spans + c (p < panels) touches its panel's rows of q's columns
            // c kspan .. min(qcols, ..+ kspan) and reads cs at (those rows, column < cols).
            unsafe { args.launch(&self.queue, LaunchDims::new([groups * wg], Some([wg]))) }?;
            return Ok(());
        }
        let steps = flat_qr_steps(rows, rot.jcols);
        for step in (0..steps).rev() {
            let mut args = kernel.builder();
            args.arg(rows as u64)
                .arg(u32_of(q.cols, "columns")?)
                .arg(u32_of(rot.jcols, "columns")?)
                .arg(u32_of(step, "step")?)
                .arg(&q.buf)
                .arg(&rot.buf);
            // SAFETY: (ulong rows, uint qcols, uint jcols, uint step, REAL *q, REAL *cs) as
            // qr_apply_q takes; item (j, k) touches q[k rows + i - 1 ..= i] and
            // cs[2 (j rows + i) ..= +1] only for j < jcols, k < qcols, j < i < rows: inside q
            // (rows qcols) and cs (2 rows cols, cols >= jcols).
            unsafe {
                args.launch(
                    &self.queue,
                    LaunchDims::new([round_up(rot.jcols, WG), q.cols], Some([WG, 1])),
                )
            }?;
        }
        Ok(())
    }

    fn jacobi(
        &self,
        w: &mut ClMat<T>,
        v: Option<&mut ClMat<T>>,
        p: &JacobiParams,
    ) -> Result<JacobiStats> {
        let kernel = self.svd_kernel::<T>("svd_jacobi_round")?;
        let (rows, cols) = (w.rows, w.cols);
        let JacobiPlan { b, nb, chunks } = JacobiPlan::new(rows, cols, p, BMAX, "OpenCL")?;
        let pairs = nb / 2;
        // Split rounds (chunks > 1): Gram partials and the pairs' rotations (P² + 1 values:
        // Q and the "rotated" flag) on the device.
        let (gpart, qbuf) = if chunks > 1 {
            (
                Some(self.alloc::<T>(pairs * chunks * P * P, None, "allocating Gram partials")?),
                Some(self.alloc::<T>(pairs * (P * P + 1), None, "allocating pair rotations")?),
            )
        } else {
            (None, None)
        };
        let chunks32 = u32_of(chunks, "row chunks")?;
        let flags = self.alloc::<u32>(2, Some(&[0, 0]), "allocating the convergence flag")?;
        // The largest squared column norm seen (bits of an f32), kept across sweeps: the
        // rotation kernels' noise level (trident_core::svd::NOISE_INNER_SWEEPS).
        let gmax = self.alloc::<u32>(1, Some(&[0]), "allocating the largest column norm")?;
        let (vbuf, vrows) = match v {
            Some(v) => (&v.buf, v.rows),
            None => (&w.buf, 0),
        };
        let mut stats = JacobiStats {
            sweeps: 0,
            off: 0.0,
            converged: false,
        };
        let cols32 = u32_of(cols, "columns")?;
        let nb32 = u32_of(nb, "blocks")?;
        while stats.sweeps < p.max_sweeps {
            stats.sweeps += 1;
            flags
                .write(&[0u32, 0][..])
                .queue(&self.queue)
                .enq()
                .or_cl(|| "resetting the convergence flag")?;
            for round in 0..nb - 1 {
                if let (Some(gpart), Some(qbuf)) = (&gpart, &qbuf) {
                    let round32 = round as u32;
                    let mut args = self.svd_kernel::<T>("svd_pair_gram")?.builder();
                    args.arg(rows as u64)
                        .arg(cols32)
                        .arg(b as u32)
                        .arg(nb32)
                        .arg(round32)
                        .arg(chunks32)
                        .arg(&w.buf)
                        .arg(gpart);
                    // SAFETY: (ulong rows, uint cols, uint b, uint nb, uint round, uint chunks,
                    // REAL *w, REAL *gpart) as svd_pair_gram takes; group k chunks + c reads
                    // pair k's columns (< cols) in rows < rows of w and writes its P² values
                    // of gpart (pairs chunks P² values).
                    unsafe {
                        args.launch(
                            &self.queue,
                            LaunchDims::new([pairs * chunks * WG], Some([WG])),
                        )
                    }?;
                    let mut args = self.svd_kernel::<T>("svd_pair_rotate")?.builder();
                    args.arg(b as u32).arg(chunks32);
                    real(&mut args, T::from_f64(p.tol));
                    real(&mut args, negligible_gram::<T>());
                    real(&mut args, noise_level::<T>());
                    args.arg(gpart).arg(qbuf).arg(&flags).arg(&gmax);
                    // SAFETY: (uint b, uint chunks, REAL tol, REAL tiny, REAL noise_rel,
                    // REAL *gpart, REAL *qbuf, uint *off_bits, uint *gmax_bits) as
                    // svd_pair_rotate takes; group k reads gpart[(k chunks + c) P² ..][.. P²]
                    // for c < chunks and writes qbuf[k (P² + 1) ..][..= P²] (pairs (P² + 1)
                    // values); flags has 2 entries, gmax 1.
                    // Work-groups of RWG, as compiled.
                    unsafe {
                        args.launch(&self.queue, LaunchDims::new([pairs * RWG], Some([RWG])))
                    }?;
                    let mut args = self.svd_kernel::<T>("svd_pair_apply")?.builder();
                    args.arg(rows as u64)
                        .arg(vrows as u64)
                        .arg(cols32)
                        .arg(b as u32)
                        .arg(nb32)
                        .arg(round32)
                        .arg(chunks32)
                        .arg(qbuf)
                        .arg(&w.buf)
                        .arg(vbuf);
                    let sides = if vrows > 0 { 2 } else { 1 };
                    // SAFETY: (ulong rows, ulong vrows, uint cols, uint b, uint nb, uint round,
                    // uint chunks, REAL *qbuf, REAL *w, REAL *v) as svd_pair_apply takes;
                    // group k chunks + c (and pairs chunks more when vrows > 0, for v) reads
                    // qbuf[k (P² + 1) ..][..= P²] and rewrites pair k's columns (< cols) in
                    // its chunk of the rows of w (rows x cols) or v (vrows x cols).
                    unsafe {
                        args.launch(
                            &self.queue,
                            LaunchDims::new([sides * pairs * chunks * WG], Some([WG])),
                        )
                    }?;
                    continue;
                }
                let mut args = kernel.builder();
                args.arg(rows as u64)
                    .arg(cols32)
                    .arg(b as u32)
                    .arg(nb32)
                    .arg(round as u32);
                real(&mut args, T::from_f64(p.tol));
                real(&mut args, negligible_gram::<T>());
                real(&mut args, noise_level::<T>());
                args.arg(&w.buf)
                    .arg(vbuf)
                    .arg(vrows as u64)
                    .arg(&flags)
                    .arg(&gmax);
                // SAFETY: the parameters of svd_jacobi_round (ulong, uint, uint, uint, uint,
                // REAL, REAL, REAL, REAL *w, REAL *v, ulong vrows, uint *off_bits,
                // uint *gmax_bits). Work-group k reads and writes the columns (< cols) of
                // block pair k in rows < rows of w and < vrows of v (v has cols columns of
                // vrows, or vrows = 0 and it is not touched); flags has 2 entries, gmax 1.
                unsafe { args.launch(&self.queue, LaunchDims::new([nb / 2 * WG], Some([WG]))) }?;
            }
            let mut f = [0u32; 2];
            flags
                .read(&mut f[..])
                .queue(&self.queue)
                .enq()
                .or_cl(|| "reading the convergence flag")?;
            stats.off = f64::from(f32::from_bits(f[0]));
            if f[1] == 0 {
                stats.converged = true;
                break;
            }
        }
        Ok(stats)
    }

    fn column_norms(&self, w: &ClMat<T>) -> Result<Vec<T>> {
        let kernel = self.svd_kernel::<T>("svd_column_norms")?;
        let out = self.mat::<T>(w.cols, 1, None)?;
        if w.cols > 0 {
            let mut args = kernel.builder();
            args.arg(w.rows as u64)
                .arg(u32_of(w.cols, "columns")?)
                .arg(&w.buf)
                .arg(&out.buf);
            // SAFETY: (ulong rows, uint cols, REAL *w, REAL *norms) as svd_column_norms takes;
            // work-group j < cols reads column j (rows values) and writes norms[j].
            unsafe { args.launch(&self.queue, LaunchDims::new([w.cols * WG], Some([WG]))) }?;
        }
        self.mat_download(&out)
    }

    fn mat_from_rows(&self, a: DenseView<'_, T>, transpose: bool, scale: f64) -> Result<ClMat<T>> {
        let (m, n) = a.shape();
        let (rows, cols) = if transpose { (n, m) } else { (m, n) };
        if a.stride() != n || m == 0 || n == 0 {
            // Not one contiguous block (or empty): the host changes the layout.
            return self.mat(rows, cols, Some(&to_col_major(a, transpose, scale)?));
        }
        let kernel = self.svd_kernel::<T>("svd_from_rows")?;
        let src = self.mat::<T>(m, n, Some(&a.data()[..m * n]))?;
        let out = self.mat::<T>(rows, cols, None)?;
        let mut args = kernel.builder();
        args.arg(m as u64).arg(n as u64).arg(u32::from(transpose));
        real(&mut args, T::from_f64(scale));
        args.arg(&src.buf).arg(&out.buf);
        let dims = LaunchDims::new([layout_items(rows, cols)], Some([WG]));
        // SAFETY: (ulong m, ulong n, uint transpose, REAL scale, const REAL *src, REAL *dst)
        // as svd_from_rows takes; src and dst hold m n values, and every group (one per
        // 32 x 32 tile of the rows x cols output) reads and writes only indices i < rows,
        // j < cols of them.
        unsafe { args.launch(&self.queue, dims) }?;
        Ok(out)
    }

    fn gather_columns(
        &self,
        a: &ClMat<T>,
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
        let kernel = self.svd_kernel::<T>("svd_gather_cols")?;
        let idx: Vec<u32> = order
            .iter()
            .map(|&j| u32_of(j, "column index"))
            .collect::<Result<_>>()?;
        let order_buf = self.alloc(ncols, Some(&idx), "uploading the SVD's column order")?;
        let sc: Vec<T> = scale[..ncols].iter().map(|&x| T::from_f64(x)).collect();
        let scale_buf = self.alloc(ncols, Some(&sc), "uploading the SVD's column scales")?;
        let out = self.alloc::<T>(host.len(), None, "allocating gathered SVD vectors")?;
        let mut args = kernel.builder();
        args.arg(a.rows as u64)
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
        let dims = LaunchDims::new([layout_items(r, c)], Some([WG]));
        // SAFETY: (ulong rows, ulong ncols, uint as_rows, const uint *order, const REAL
        // *scale, const REAL *src, REAL *dst) as svd_gather_cols takes; order and scale hold
        // ncols values, each order[l] < a.cols (checked), so src reads stay below
        // a.rows a.cols; dst holds rows ncols values and every group writes only inside
        // its tile of the r x c output.
        unsafe { args.launch(&self.queue, dims) }?;
        // A blocking read on the in-order queue: it waits for the gather.
        out.read(&mut host)
            .queue(&self.queue)
            .enq()
            .or_cl(|| "downloading gathered SVD vectors")?;
        Ok(host)
    }

    fn memory_bytes(&self) -> Option<u64> {
        Some(self.info.global_mem_bytes)
    }
}
