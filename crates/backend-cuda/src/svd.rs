//! SVD and Givens QR on CUDA: the device steps of [`trident_core::svd::driver`] with the
//! kernels of `kernels/cuda/svd.cu` (the twin of `kernels/opencl/svd.cl`, whose header
//! documents the shared argument lists). The host only loops over sweeps and rounds (one
//! launch per round, one 8-byte read per sweep) and over Givens steps.

use trident_core::svd::driver::{
    check_gather, check_top, copy_rows_len, flat_qr_steps, mat_mul_schedule, JacobiParams,
    JacobiPlan, JacobiStats, SvdKernels,
};
use trident_core::svd::{negligible_gram, noise_level, QrOrder, TreePlan, MERGE_PANEL};
use trident_core::{
    DenseView, Error, Qr, QrFactors, QrOptions, Result, Svd, SvdOptions, SvdResult,
};

use crate::kernels::Module;
use crate::launch::{Kernel, LaunchArgs, LaunchConfig};
use crate::memory::{CudaScalar, DevBuf};
use crate::Cuda;

/// Threads per block of every SVD kernel (`WG` in svd.cu).
const WG: u32 = 256;
/// Threads per block of the tree QR kernels (`QWG` in svd.cu).
const QWG: u32 = 1024;
/// Threads per block of `svd_pair_rotate` (`RWG` in svd.cu).
const RWG: u32 = 512;
/// Largest block size compiled into svd.cu (`BMAX`).
pub const BMAX: usize = 16;
/// Columns of a block pair's Gram matrix as compiled (`P = 2 BMAX`).
const P: usize = 2 * BMAX;

/// A column-major matrix in CUDA device memory.
pub struct CudaMat<T: CudaScalar> {
    rows: usize,
    cols: usize,
    buf: DevBuf<T>,
}

/// The rotations of a Givens QR on the device: `(c, s)` of element `(i, j)` at
/// `2 (j · rows + i)`, in the flat order or the tree order of `tree`.
pub struct CudaRotations<T: CudaScalar> {
    rows: usize,
    jcols: usize,
    tree: Option<TreePlan>,
    buf: DevBuf<T>,
}

fn u32_of(x: usize, what: &str) -> Result<u32> {
    u32::try_from(x).map_err(|_| Error::Unsupported(format!("{what} = {x} on CUDA (> 2^32)")))
}

impl Cuda {
    /// Launches `args` as `grid` blocks of [`WG`] threads.
    ///
    /// # Safety
    ///
    /// `args` must match the kernel's parameter list (svd.cu), and the device buffers among
    /// them must cover every index the kernel derives from the other arguments under `grid`
    /// blocks, until the kernel has finished.
    unsafe fn svd_launch(args: &mut LaunchArgs<'_, '_>, grid: usize) -> Result<()> {
        // SAFETY: forwarded from the caller.
        unsafe { Self::svd_launch_wg(args, grid, WG) }
    }

    /// Launches `args` as `grid` blocks of `wg` threads.
    ///
    /// # Safety
    ///
    /// As [`LaunchArgs::launch`].
    unsafe fn svd_launch_wg(args: &mut LaunchArgs<'_, '_>, grid: usize, wg: u32) -> Result<()> {
        if grid == 0 {
            return Ok(());
        }
        let cfg = LaunchConfig::grid_1d(u32_of(grid, "grid size")?, wg);
        // SAFETY: forwarded from the caller.
        unsafe { args.launch(cfg) }
    }

    /// One stage of the tree QR (svd.cu's qr_tree_* kernels, [`TreePlan`]): `kernels.0`, the
    /// panel, in `groups.0` blocks of QWG threads, then `kernels.1`, the update, in `groups.1`
    /// blocks of WG (none when 0), both with the arguments `(u64 rows, uint cols, uint h,
    /// stage…, T *a, T *cs)`.
    ///
    /// # Safety
    ///
    /// Both kernels take exactly these arguments, and `groups` are the stage's counts from
    /// [`TreePlan`], for which the kernels touch only `a`'s (`rows × cols`) and `cs`'s
    /// (`2 rows cols`) elements of the stage's rows and columns.
    unsafe fn tree_stage<T: CudaScalar>(
        kernels: (Kernel<'_>, Kernel<'_>),
        (rows, cols, h): (usize, u32, u32),
        stage: &[u32],
        a: &DevBuf<T>,
        cs: &DevBuf<T>,
        groups: (usize, usize),
    ) -> Result<()> {
        for (kernel, n, wg) in [(kernels.0, groups.0, QWG), (kernels.1, groups.1, WG)] {
            let mut args = kernel.builder();
            args.arg(rows as u64).arg(cols).arg(h);
            for &x in stage {
                args.arg(x);
            }
            args.arg(a).arg(cs);
            // SAFETY: forwarded from the caller.
            unsafe { Self::svd_launch_wg(&mut args, n, wg)? };
        }
        Ok(())
    }

    fn cmat<T: CudaScalar>(
        &self,
        rows: usize,
        cols: usize,
        init: Option<&[T]>,
    ) -> Result<CudaMat<T>> {
        self.shared.make_current()?;
        let buf = match init {
            Some(h) => DevBuf::from_host(&self.shared, h, "an SVD matrix")?,
            None => DevBuf::zeroed(&self.shared, rows * cols, "an SVD matrix")?,
        };
        Ok(CudaMat { rows, cols, buf })
    }
}

impl Cuda {
    /// `svd_copy_rows`: the top `nrows` rows of `src` into the top rows of `dst` (same
    /// columns), zero below the diagonal when `upper`.
    fn copy_rows<T: CudaScalar>(
        &self,
        src: &CudaMat<T>,
        dst: &CudaMat<T>,
        nrows: usize,
        upper: bool,
    ) -> Result<()> {
        let n = copy_rows_len((src.rows, src.cols), (dst.rows, dst.cols), nrows)?;
        if n == 0 {
            return Ok(());
        }
        self.shared.make_current()?;
        let kernel = self.kernel::<T>(Module::Svd, "svd_copy_rows")?;
        let mut args = kernel.builder();
        args.arg(src.rows as u64)
            .arg(dst.rows as u64)
            .arg(nrows as u64)
            .arg(u32_of(src.cols, "columns")?)
            .arg(u32::from(upper))
            .arg(&src.buf)
            .arg(&dst.buf);
        // SAFETY: (u64 src_rows, u64 dst_rows, u64 nrows, uint cols, uint upper, const T *src,
        // T *dst) as svd_copy_rows takes; thread e < nrows cols (the grid covers it, the rest
        // return) reads src[j src_rows + i] and writes dst[j dst_rows + i] with i < nrows <=
        // both row counts and j < cols: inside both buffers (checked above).
        unsafe { Self::svd_launch(&mut args, n.div_ceil(WG as usize)) }
    }
}

/// Output tile edge of `svd_from_rows` / `svd_gather_cols` (`LT` in svd.cu).
const LT: usize = 32;

/// Blocks of the layout kernels for an `r × c` output: one per `LT × LT` tile.
fn layout_grid(r: usize, c: usize) -> usize {
    r.div_ceil(LT) * c.div_ceil(LT)
}

/// Adds a `T` argument (`float` or `double`).
fn real<T: CudaScalar>(args: &mut LaunchArgs<'_, '_>, v: T) {
    if T::NAME == "f32" {
        args.arg(trident_core::Scalar::to_f64(v) as f32);
    } else {
        args.arg(trident_core::Scalar::to_f64(v));
    }
}

impl<T: CudaScalar> Svd<T> for Cuda {
    fn svd(&self, a: DenseView<'_, T>, opts: &SvdOptions) -> Result<SvdResult<T>> {
        trident_core::svd::svd_with(self, a, opts)
    }
}

impl<T: CudaScalar> Qr<T> for Cuda {
    fn qr(&self, a: DenseView<'_, T>, opts: &QrOptions) -> Result<QrFactors<T>> {
        trident_core::svd::qr_with(self, a, opts)
    }
}

impl<T: CudaScalar> SvdKernels<T> for Cuda {
    type Mat = CudaMat<T>;
    type Rotations = CudaRotations<T>;

    fn mat_shape(&self, a: &CudaMat<T>) -> (usize, usize) {
        (a.rows, a.cols)
    }

    fn mat_upload(&self, rows: usize, cols: usize, cm: &[T]) -> Result<CudaMat<T>> {
        self.cmat(rows, cols, Some(cm))
    }

    fn mat_download(&self, a: &CudaMat<T>) -> Result<Vec<T>> {
        self.shared.make_current()?;
        self.shared.synchronize()?;
        let mut out = vec![T::zero(); a.rows * a.cols];
        a.buf.copy_to_host(&mut out)?;
        Ok(out)
    }

    fn mat_top(&self, a: &CudaMat<T>, rows: usize, upper: bool) -> Result<CudaMat<T>> {
        check_top(a.rows, rows)?;
        let out = self.cmat::<T>(rows, a.cols, None)?;
        self.copy_rows(a, &out, rows, upper)?;
        Ok(out)
    }

    fn mat_pad(&self, a: &CudaMat<T>, rows: usize) -> Result<CudaMat<T>> {
        check_top(rows, a.rows)?;
        let out = self.cmat::<T>(rows, a.cols, None)?;
        self.copy_rows(a, &out, a.rows, false)?;
        Ok(out)
    }

    fn mat_mul(&self, a: &CudaMat<T>, b: &CudaMat<T>) -> Result<CudaMat<T>> {
        let (opts, s, lens) = mat_mul_schedule::<T>(self, (a.rows, a.cols), (b.rows, b.cols))?;
        let c = self.cmat::<T>(a.rows, b.cols, None)?;
        let w = DevBuf::<T>::uninit(&self.shared, s.workspace, "the matmul workspace")?;
        let ptrs = [b.buf.ptr(), a.buf.ptr(), c.buf.ptr(), w.ptr()].map(|p| p.as_raw());
        self.run_schedule::<T>(&s, ptrs, lens, &opts)?;
        Ok(c)
    }

    fn mat_identity(&self, rows: usize, cols: usize) -> Result<CudaMat<T>> {
        let mut host = vec![T::zero(); rows * cols];
        for j in 0..rows.min(cols) {
            host[j * rows + j] = T::one();
        }
        self.cmat(rows, cols, Some(&host))
    }

    fn givens_qr(&self, a: &mut CudaMat<T>, order: QrOrder) -> Result<CudaRotations<T>> {
        if order == QrOrder::Householder {
            return Err(Error::Unsupported(
                "the Householder QR order on CUDA (CPU only; GPUs run Givens: flat or tree)"
                    .to_string(),
            ));
        }
        let (rows, cols) = (a.rows, a.cols);
        let jcols = rows.saturating_sub(1).min(cols);
        self.shared.make_current()?;
        let cs = DevBuf::<T>::zeroed(&self.shared, 2 * rows * cols, "Givens rotations")?;
        let cols32 = u32_of(cols, "columns")?;
        if let QrOrder::Tree { panel_rows } = order {
            let plan = TreePlan::new(rows, cols, panel_rows);
            let h32 = u32_of(plan.h, "panel rows")?;
            let dims = (rows, cols32, h32);
            if rows > 0 && cols > 0 {
                let leaf = (
                    self.kernel::<T>(Module::Svd, "qr_tree_leaf_panel")?,
                    self.kernel::<T>(Module::Svd, "qr_tree_leaf_update")?,
                );
                for j0 in (0..cols).step_by(MERGE_PANEL) {
                    let groups = (plan.leaf_groups(j0, false), plan.leaf_groups(j0, true));
                    let stage = [u32_of(j0, "column")?];
                    // SAFETY: qr_tree_leaf_panel and _update take (u64 rows, uint cols, uint h,
                    // uint j0, T *a, T *cs); with TreePlan::leaf_groups, block p of the panel
                    // (t of the update: leaf t / spans, the rest idle) touches rows
                    // p h .. min(p h + h, rows) of columns j0 .. j0 + 32 (right of them for
                    // the update; < cols) of a (rows cols values) and cs[2 (j rows + g) ..= +1]
                    // for those rows g and columns j (cs has 2 rows cols).
                    unsafe { Self::tree_stage(leaf, dims, &stage, &a.buf, &cs, groups)? };
                }
            }
            let merge = (
                self.kernel::<T>(Module::Svd, "qr_tree_merge_panel")?,
                self.kernel::<T>(Module::Svd, "qr_tree_merge_update")?,
            );
            let levels32 = u32_of(plan.levels, "merge levels")?;
            for wave in 0..plan.merge_waves() {
                let groups = (plan.wave_groups(wave, false), plan.wave_groups(wave, true));
                let stage = [levels32, u32_of(wave, "merge wave")?];
                // SAFETY: qr_tree_merge_panel and _update take (u64 rows, uint cols, uint h,
                // uint levels, uint wave, T *a, T *cs); with TreePlan::wave_groups, block t
                // takes a merge of one of the wave's panels j0 at its level l (and, for the
                // update, columns right of the panel below cols; blocks past them idle),
                // touching rows a + j, b + i < rows (b + i < rows by kb) of columns
                // j0 .. j0 + 32 (< cols), and cs at those (row, column) pairs.
                unsafe { Self::tree_stage(merge, dims, &stage, &a.buf, &cs, groups)? };
            }
            return Ok(CudaRotations {
                rows,
                jcols,
                tree: Some(plan),
                buf: cs,
            });
        }
        let steps = flat_qr_steps(rows, jcols);
        let jspan = cols.div_ceil(WG as usize) * WG as usize;
        for step in 0..steps {
            let kernel = self.kernel::<T>(Module::Svd, "qr_rotations")?;
            let mut args = kernel.builder();
            args.arg(rows as u64);
            args.arg(cols32);
            args.arg(u32_of(step, "step")?);
            args.arg(&a.buf);
            args.arg(&cs);
            // SAFETY: (u64, u32, u32, const T*, T*) / (u64, u32, u32, T*, const T*) as
            // qr_rotations / qr_apply take; thread j (resp. (j, k)) touches
            // a[k rows + i - 1 ..= i] and cs[2 (j rows + i) ..= +1] only for j, k < cols,
            // j < i < rows: inside a (rows cols) and cs (2 rows cols).
            unsafe { Self::svd_launch(&mut args, cols.div_ceil(WG as usize))? };
            let kernel = self.kernel::<T>(Module::Svd, "qr_apply")?;
            let mut args = kernel.builder();
            args.arg(rows as u64).arg(cols32).arg(u32_of(step, "step")?);
            args.arg(&a.buf).arg(&cs);
            // SAFETY: as above, for qr_apply.
            unsafe { Self::svd_launch(&mut args, jspan / WG as usize * cols)? };
        }
        Ok(CudaRotations {
            rows,
            jcols,
            tree: None,
            buf: cs,
        })
    }

    fn givens_apply_q(&self, rot: &CudaRotations<T>, q: &mut CudaMat<T>) -> Result<()> {
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
            self.shared.make_current()?;
            let qcols = u32_of(q.cols, "columns")?;
            let (cols, h) = (u32_of(plan.cols, "columns")?, u32_of(plan.h, "panel rows")?);
            let merge_q = self.kernel::<T>(Module::Svd, "qr_tree_merge_q")?;
            let groups = q.cols.div_ceil(WG as usize / MERGE_PANEL);
            for level in (0..plan.levels).rev() {
                let merges = plan.merges(level);
                for j0 in (0..plan.cols).step_by(MERGE_PANEL).rev() {
                    let mut args = merge_q.builder();
                    args.arg(rows as u64)
                        .arg(qcols)
                        .arg(cols)
                        .arg(h)
                        .arg(level as u32);
                    args.arg(u32_of(j0, "column")?);
                    args.arg(&q.buf).arg(&rot.buf);
                    // SAFETY: (u64 rows, uint qcols, uint cols, uint h, uint level, uint j0,
                    // T *q, const T *cs) as qr_tree_merge_q takes; block t takes merge
                    // t / spans < merges(level) and columns below qcols (the rest idle), so it
                    // touches rows a + j, b + i < rows of q (rows qcols values) and reads cs
                    // (2 rows cols) at (row < rows, column < cols).
                    unsafe { Self::svd_launch(&mut args, merges * groups)? };
                }
            }
            let elem = std::mem::size_of::<T>();
            // The leaves: slabs of q in shared memory when one column fits, else in place.
            let local = plan.leaf_q_span(q.cols, elem);
            let (name, span) = match local {
                Some(span) => ("qr_tree_leaf_q_local", span),
                None => ("qr_tree_leaf_q", TreePlan::q_span(q.cols, plan.panels)),
            };
            let kernel = self.kernel::<T>(Module::Svd, name)?;
            let mut args = kernel.builder();
            args.arg(rows as u64).arg(qcols).arg(cols).arg(h);
            args.arg(u32_of(span, "columns")?);
            args.arg(&q.buf).arg(&rot.buf);
            let blocks = plan.panels * q.cols.div_ceil(span);
            // SAFETY: (u64 rows, uint qcols, uint cols, uint h, uint kspan, T *q, const T *cs)
            // as both leaf kernels take; block p spans + c (p < panels) touches its panel's
            // rows of q's columns c kspan .. min(qcols, ..+ kspan) and reads cs at (those
            // rows, column < cols). qr_tree_leaf_q_local gets the h kspan values of dynamic
            // shared memory it uses (leaf_q_span: within 32 KiB).
            unsafe {
                match local {
                    Some(span) => {
                        let smem = u32_of(plan.leaf_q_local_len(span) * elem, "shared memory")?;
                        let grid = u32_of(blocks, "grid size")?;
                        args.launch(LaunchConfig::grid_1d(grid, WG).with_shared_mem(smem))?
                    }
                    None => Self::svd_launch_wg(&mut args, blocks, QWG)?,
                }
            };
            return Ok(());
        }
        let steps = flat_qr_steps(rows, rot.jcols);
        let jspan = rot.jcols.div_ceil(WG as usize) * WG as usize;
        for step in (0..steps).rev() {
            let kernel = self.kernel::<T>(Module::Svd, "qr_apply_q")?;
            let mut args = kernel.builder();
            args.arg(rows as u64);
            args.arg(u32_of(q.cols, "columns")?);
            args.arg(u32_of(rot.jcols, "columns")?);
            args.arg(u32_of(step, "step")?);
            args.arg(&q.buf);
            args.arg(&rot.buf);
            // SAFETY: (u64, u32, u32, u32, T*, const T*) as qr_apply_q takes; thread (j, k)
            // touches q[k rows + i - 1 ..= i] and cs[2 (j rows + i) ..= +1] only for
            // j < jcols, k < qcols, j < i < rows: inside q (rows qcols) and cs (2 rows cols).
            unsafe { Self::svd_launch(&mut args, jspan / WG as usize * q.cols)? };
        }
        Ok(())
    }

    fn jacobi(
        &self,
        w: &mut CudaMat<T>,
        v: Option<&mut CudaMat<T>>,
        p: &JacobiParams,
    ) -> Result<JacobiStats> {
        let (rows, cols) = (w.rows, w.cols);
        let JacobiPlan { b, nb, chunks } = JacobiPlan::new(rows, cols, p, BMAX, "CUDA")?;
        let pairs = nb / 2;
        self.shared.make_current()?;
        // Split rounds (chunks > 1): Gram partials and the pairs' rotations (P² + 1 values:
        // Q and the "rotated" flag) on the device.
        let (gpart, qbuf) = if chunks > 1 {
            (
                Some(DevBuf::<T>::zeroed(
                    &self.shared,
                    pairs * chunks * P * P,
                    "Gram partials",
                )?),
                Some(DevBuf::<T>::zeroed(
                    &self.shared,
                    pairs * (P * P + 1),
                    "pair rotations",
                )?),
            )
        } else {
            (None, None)
        };
        let chunks32 = u32_of(chunks, "row chunks")?;
        let (vbuf, vrows) = match v {
            Some(v) => (&v.buf, v.rows),
            None => (&w.buf, 0),
        };
        let mut stats = JacobiStats {
            sweeps: 0,
            off: 0.0,
            converged: false,
        };
        self.shared.make_current()?;
        // The largest squared column norm seen (bits of an f32), kept across sweeps: the
        // rotation kernels' noise level (trident_core::svd::NOISE_INNER_SWEEPS).
        let gmax = DevBuf::<u32>::zeroed(&self.shared, 1, "the largest column norm")?;
        while stats.sweeps < p.max_sweeps {
            stats.sweeps += 1;
            let flags = DevBuf::<u32>::zeroed(&self.shared, 2, "the convergence flag")?;
            for round in 0..nb - 1 {
                if let (Some(gpart), Some(qbuf)) = (&gpart, &qbuf) {
                    let round32 = round as u32;
                    let nb32 = u32_of(nb, "blocks")?;
                    let cols32 = u32_of(cols, "columns")?;
                    let kernel = self.kernel::<T>(Module::Svd, "svd_pair_gram")?;
                    let mut args = kernel.builder();
                    args.arg(rows as u64).arg(cols32).arg(b as u32).arg(nb32);
                    args.arg(round32).arg(chunks32).arg(&w.buf).arg(gpart);
                    // SAFETY: (u64 rows, uint cols, uint b, uint nb, uint round, uint chunks,
                    // const T *w, T *gpart) as svd_pair_gram takes; block k chunks + c reads
                    // pair k's columns (< cols) in rows < rows of w and writes its P² values
                    // of gpart (pairs chunks P² values).
                    unsafe { Self::svd_launch(&mut args, pairs * chunks)? };
                    let kernel = self.kernel::<T>(Module::Svd, "svd_pair_rotate")?;
                    let mut args = kernel.builder();
                    args.arg(b as u32).arg(chunks32);
                    real(&mut args, T::from_f64(p.tol));
                    real(&mut args, negligible_gram::<T>());
                    real(&mut args, noise_level::<T>());
                    args.arg(gpart).arg(qbuf).arg(&flags).arg(&gmax);
                    // SAFETY: (uint b, uint chunks, T tol, T tiny, T noise_rel, const T *gpart,
                    // T *qbuf, uint *off_bits, uint *gmax_bits) as svd_pair_rotate takes; block
                    // k reads gpart[(k chunks + c) P² ..][.. P²] for c < chunks and writes
                    // qbuf[k (P² + 1) ..][..= P²] (pairs (P² + 1) values); flags has 2
                    // entries, gmax 1; blocks of RWG threads, as its launch bounds say.
                    unsafe { Self::svd_launch_wg(&mut args, pairs, RWG)? };
                    let kernel = self.kernel::<T>(Module::Svd, "svd_pair_apply")?;
                    let mut args = kernel.builder();
                    args.arg(rows as u64).arg(vrows as u64).arg(cols32);
                    args.arg(b as u32).arg(nb32).arg(round32).arg(chunks32);
                    args.arg(qbuf).arg(&w.buf).arg(vbuf);
                    let sides = if vrows > 0 { 2 } else { 1 };
                    // SAFETY: (u64 rows, u64 vrows, uint cols, uint b, uint nb, uint round,
                    // uint chunks, const T *qbuf, T *w, T *v) as svd_pair_apply takes; block
                    // k chunks + c (and pairs chunks more when vrows > 0, for v) reads
                    // qbuf[k (P² + 1) ..][..= P²] and rewrites pair k's columns (< cols) in
                    // its chunk of the rows of w (rows x cols) or v (vrows x cols).
                    unsafe { Self::svd_launch(&mut args, sides * pairs * chunks)? };
                    continue;
                }
                let kernel = self.kernel::<T>(Module::Svd, "svd_jacobi_round")?;
                let mut args = kernel.builder();
                args.arg(rows as u64);
                args.arg(u32_of(cols, "columns")?);
                args.arg(b as u32);
                args.arg(u32_of(nb, "blocks")?);
                args.arg(round as u32);
                real(&mut args, T::from_f64(p.tol));
                real(&mut args, negligible_gram::<T>());
                real(&mut args, noise_level::<T>());
                args.arg(&w.buf);
                args.arg(vbuf);
                args.arg(vrows as u64);
                args.arg(&flags);
                args.arg(&gmax);
                // SAFETY: the argument list of svd_jacobi_round (u64, u32, u32, u32, u32, T, T,
                // T, T*, T*, u64, uint*, uint*). Block k touches the columns (< cols) of block
                // pair k in rows < rows of w and < vrows of v (v holds cols columns of vrows,
                // or vrows = 0 and it is not touched); flags has two entries, gmax one.
                unsafe { Self::svd_launch(&mut args, nb / 2)? };
            }
            self.shared.synchronize()?;
            let mut f = [0u32; 2];
            flags.copy_to_host(&mut f)?;
            stats.off = f64::from(f32::from_bits(f[0]));
            if f[1] == 0 {
                stats.converged = true;
                break;
            }
        }
        Ok(stats)
    }

    fn column_norms(&self, w: &CudaMat<T>) -> Result<Vec<T>> {
        let out = self.cmat::<T>(w.cols, 1, None)?;
        let kernel = self.kernel::<T>(Module::Svd, "svd_column_norms")?;
        let mut args = kernel.builder();
        args.arg(w.rows as u64);
        args.arg(u32_of(w.cols, "columns")?);
        args.arg(&w.buf);
        args.arg(&out.buf);
        // SAFETY: (u64, u32, const T*, T*) as svd_column_norms takes; block j < cols reads
        // column j (rows values) of w and writes norms[j].
        unsafe { Self::svd_launch(&mut args, w.cols)? };
        self.mat_download(&out)
    }

    fn mat_from_rows(
        &self,
        a: DenseView<'_, T>,
        transpose: bool,
        scale: f64,
    ) -> Result<CudaMat<T>> {
        let (m, n) = a.shape();
        if a.stride() != n || m == 0 || n == 0 {
            // Not one contiguous block (or empty): the host changes the layout.
            let cm = trident_core::svd::driver::to_col_major(a, transpose, scale)?;
            let (rows, cols) = if transpose { (n, m) } else { (m, n) };
            return self.cmat(rows, cols, Some(&cm));
        }
        let src = self.cmat::<T>(m, n, Some(&a.data()[..m * n]))?;
        let (rows, cols) = if transpose { (n, m) } else { (m, n) };
        let out = self.cmat::<T>(rows, cols, None)?;
        let kernel = self.kernel::<T>(Module::Svd, "svd_from_rows")?;
        let mut args = kernel.builder();
        args.arg(m as u64).arg(n as u64).arg(u32::from(transpose));
        real(&mut args, T::from_f64(scale));
        args.arg(&src.buf).arg(&out.buf);
        // SAFETY: (u64 m, u64 n, uint transpose, T scale, const T *src, T *dst) as
        // svd_from_rows takes; src and dst hold m n values, and every block of the grid (one
        // per 32 x 32 tile of the rows x cols output) reads and writes only indices i < rows,
        // j < cols of them.
        unsafe { Self::svd_launch(&mut args, layout_grid(rows, cols))? };
        Ok(out)
    }

    fn gather_columns(
        &self,
        a: &CudaMat<T>,
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
        self.shared.make_current()?;
        let idx: Vec<u32> = order
            .iter()
            .map(|&j| u32_of(j, "column index"))
            .collect::<Result<_>>()?;
        let order_buf = DevBuf::from_host(&self.shared, &idx, "the SVD's column order")?;
        let sc: Vec<T> = scale[..ncols].iter().map(|&x| T::from_f64(x)).collect();
        let scale_buf = DevBuf::from_host(&self.shared, &sc, "the SVD's column scales")?;
        let out = DevBuf::<T>::uninit(&self.shared, host.len(), "gathered SVD vectors")?;
        let kernel = self.kernel::<T>(Module::Svd, "svd_gather_cols")?;
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
        // SAFETY: (u64 rows, u64 ncols, uint as_rows, const uint *order, const T *scale,
        // const T *src, T *dst) as svd_gather_cols takes; order and scale hold ncols values,
        // each order[l] < a.cols (checked), so src reads stay below a.rows a.cols; dst holds
        // rows ncols values and every block writes only inside its tile of the r x c output.
        unsafe { Self::svd_launch(&mut args, layout_grid(r, c))? };
        self.shared.synchronize()?;
        out.copy_to_host(&mut host)?;
        Ok(host)
    }

    fn memory_bytes(&self) -> Option<u64> {
        Some(self.total_memory() as u64)
    }
}
