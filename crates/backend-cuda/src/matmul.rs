//! Dense `C = A B` on CUDA: the schedule of [`trident_core::matmul::plan`] run as launches of
//! `kernels/cuda/matmul.cu` (`gemm_<T>`, the tiled base kernel, and `matadd_<T>`, the
//! schedule's additions), every block passed as (pointer, offset, leading dimension), on the
//! backend's stream, through core's one executor ([`run_steps`]). One workspace allocation
//! per call. Fused (ABC Strassen) steps run on `gemm_fused_<T>`.
//!
//! Base kernels ([`MatMulOptions::base_kernel`]): f64 products run by default on the FP64
//! tensor cores (`gemm_dmma_f64`, `gemm_dmma_fused_f64`: DMMA m8n8k4) on compute capability
//! 9.0 and newer, the devices that load the `compute_90` PTX; `BaseKernel::Simt` forces the
//! SIMT kernels (`gemm_f64`). f32 has no tensor-core kernel (no TF32: the SGEMM
//! yardstick).
//!
//! Host transfers ([`HostMemory`]): `Pageable` copies from and to the caller's memory (the
//! driver stages through its own pinned buffers). `Pinned` and `Mapped` go through one
//! page-locked, device-mapped allocation that the backend keeps (its staging pool,
//! `cuMemHostAlloc(PORTABLE | DEVICEMAP)`, allocated on first use, reallocated only when a
//! call needs more, freed with the backend), because allocating page-locked memory costs far
//! more than the copies themselves. `Pinned` copies `A` and `B` into the pool in 4 MiB
//! chunks, queueing each chunk's asynchronous DMA to the device as soon as it is written (the
//! CPU's copy of one chunk overlaps the DMA of the previous one, and `B`'s copy overlaps `A`'s
//! DMA), runs the product, and brings `C` back the same way (chunked DMA into the pool, each
//! chunk copied out once its event has fired). `Mapped` copies `A` and `B` into the pool and
//! lets the kernels read them, and write `C`, over the bus (zero-copy: no device copy at all,
//! at PCIe/NVLink-C2C speed per access); it can win only when the bus traffic is small next to
//! the copies it saves: small products, or operands each read about once (the tiled kernel
//! reads `A` `n / 128` times and `B` `m / 128` times). A call that finds the pool in use by
//! another thread stages through an allocation of its own.

use trident_core::gpu::{to_u32, Precision};
use trident_core::matmul::{
    check_fits, check_lengths, check_shapes, device_bytes, plan, run_steps, use_tensor_cores,
    DevAdd, DevFused, DevGemm, Schedule, ScheduleKernels,
};
use trident_core::{Dense, DenseView, Error, HostMemory, MatMul, MatMulOptions, Result};

use crate::driver;
use crate::kernels::Module;
use crate::launch::{Kernel, LaunchArgs, LaunchConfig};
use crate::memory::{CudaScalar, CudaVector, DevBuf};
use crate::staging::{as_bytes, as_bytes_mut, download, staging_layout, upload};
use crate::Cuda;

/// Threads per block of `gemm_<T>` (its `__launch_bounds__`).
const GEMM_THREADS: u32 = 256;
/// Rows and columns of C per block of `gemm_<T>`.
const TILE: usize = 128;
/// Threads per block of `matadd_<T>`, and at most this many blocks (one per row; rows
/// grid-strided beyond).
const ADD_THREADS: u32 = 256;
const ADD_MAX_BLOCKS: usize = 1 << 16;

/// The default Strassen cutoff on GPUs: leaves of at least 4096 (one level from n = 8192, two
/// from 16384). A first guess from Huang, Yu & van de Geijn (2018), where one level pays
/// from about n = 8000 on a V100; to be replaced by the crossover `cargo xtask bench matmul`
/// measures on the H100.
pub const GPU_CUTOFF: usize = 4096;

/// Appends the next argument, a `T` of precision `p`, with value `v`.
fn real_arg(args: &mut LaunchArgs<'_, '_>, p: Precision, v: f64) {
    match p {
        Precision::F32 => args.arg(v as f32),
        Precision::F64 => args.arg(v),
    };
}

/// The device steps of a schedule on CUDA ([`ScheduleKernels`]): launches of `gemm_<T>` and
/// `gemm_fused_<T>` (or `gemm_dmma_f64` and `gemm_dmma_fused_f64`, the FP64 tensor-core
/// kernels with the same arguments and launch) and `matadd_<T>` on the backend's stream;
/// operands are device addresses.
struct CudaSteps<'a> {
    gemm: Kernel<'a>,
    fused: Kernel<'a>,
    add: Kernel<'a>,
    p: Precision,
}

impl ScheduleKernels for CudaSteps<'_> {
    type Operand = u64;

    fn gemm(&self, g: &DevGemm<u64>) -> Result<()> {
        let blocks = to_u32(g.n.div_ceil(TILE) * g.m.div_ceil(TILE))?;
        // The kernel's parameters (kernels/cuda/matmul.cu, as in kernels/opencl/matmul.cl):
        // (unsigned m, n, k, T alpha, beta, const T *a, u64 a_off, unsigned lda,
        //  const T *b, u64 b_off, unsigned ldb, T *c, u64 c_off, unsigned ldc)
        let mut args = self.gemm.builder();
        args.arg(to_u32(g.m)?).arg(to_u32(g.n)?).arg(to_u32(g.k)?);
        real_arg(&mut args, self.p, g.alpha);
        real_arg(&mut args, self.p, g.beta);
        let (a, b, c) = (g.a, g.b, g.c);
        args.arg(a.buf).arg(a.offset as u64).arg(to_u32(a.ld)?);
        args.arg(b.buf).arg(b.offset as u64).arg(to_u32(b.ld)?);
        args.arg(c.buf).arg(c.offset as u64).arg(to_u32(c.ld)?);
        // SAFETY: the arguments match the kernel's parameters in number, order and type
        // (device addresses as 64-bit values; gemm_dmma_f64 has gemm_f64's). `run_steps`
        // verified that every block lies inside its operand's allocation; the kernel reads a
        // at rows < m, columns < k, b at rows < k, columns < n, and reads (beta != 0) and
        // writes c at rows < m, columns < n, with 64-bit offsets. The output never overlaps
        // an input (schedule invariant, tested in core). One block per 128 x 128 tile, 256
        // threads (the launch bounds of both kernels). The allocations outlive the kernels:
        // callers synchronize before freeing mapped host memory, and cuMemFree waits for
        // device memory to be idle.
        unsafe { args.launch(LaunchConfig::grid_1d(blocks, GEMM_THREADS)) }
    }

    fn gemm_fused(&self, f: &DevFused<u64>) -> Result<()> {
        let blocks = to_u32(f.n.div_ceil(TILE) * f.m.div_ceil(TILE))?;
        let p = self.p;
        // (unsigned m, n, k, const T *a, u64 a0_off, u64 a1_off, T sa, unsigned lda,
        //  const T *b, u64 b0_off, u64 b1_off, T sb, unsigned ldb, T *c, u64 c0_off, T g0,
        //  T beta0, u64 c1_off, T g1, T beta1, unsigned ldc)
        let mut args = self.fused.builder();
        args.arg(to_u32(f.m)?).arg(to_u32(f.n)?).arg(to_u32(f.k)?);
        let [a0, a1] = f.a;
        args.arg(a0.buf).arg(a0.offset as u64).arg(a1.offset as u64);
        real_arg(&mut args, p, f.sa);
        args.arg(to_u32(a0.ld)?);
        let [b0, b1] = f.b;
        args.arg(b0.buf).arg(b0.offset as u64).arg(b1.offset as u64);
        real_arg(&mut args, p, f.sb);
        args.arg(to_u32(b0.ld)?);
        let [c0, c1] = f.c;
        args.arg(c0.buf).arg(c0.offset as u64);
        real_arg(&mut args, p, f.gamma[0]);
        real_arg(&mut args, p, f.beta[0]);
        args.arg(c1.offset as u64);
        real_arg(&mut args, p, f.gamma[1]);
        real_arg(&mut args, p, f.beta[1]);
        args.arg(to_u32(c0.ld)?);
        // SAFETY: the arguments match gemm_fused_<T>'s (and gemm_dmma_fused_f64's)
        // parameters in number, order and type. `run_steps` verified that every term and
        // output block lies inside its operand's allocation and that the two terms of each
        // factor, and the two outputs, share one operand (passed once) and one leading
        // dimension. The kernel reads the terms at rows < m, columns < k (A) or rows < k,
        // columns < n (B), the second only when its scale is nonzero, and reads (beta != 0)
        // and writes the outputs at rows < m, columns < n; the outputs are disjoint from each
        // other and from the factors (schedule invariant, tested in core), so each element
        // is written by one thread. Launch as gemm: one 256-thread block per 128 x 128 tile.
        unsafe { args.launch(LaunchConfig::grid_1d(blocks, GEMM_THREADS)) }
    }

    fn add(&self, s: &DevAdd<u64>) -> Result<()> {
        // One block per row (a block-stride loop over its columns), rows grid-strided.
        let blocks = s.m.min(ADD_MAX_BLOCKS) as u32;
        // (unsigned m, n, T alpha, const T *x, u64 x_off, unsigned ldx, T beta,
        //  const T *y, u64 y_off, unsigned ldy, T *d, u64 d_off, unsigned ldd)
        let mut args = self.add.builder();
        args.arg(to_u32(s.m)?).arg(to_u32(s.n)?);
        real_arg(&mut args, self.p, s.alpha);
        let (x, y, d) = (s.x, s.y, s.dst);
        args.arg(x.buf).arg(x.offset as u64).arg(to_u32(x.ld)?);
        real_arg(&mut args, self.p, s.beta);
        args.arg(y.buf).arg(y.offset as u64).arg(to_u32(y.ld)?);
        args.arg(d.buf).arg(d.offset as u64).arg(to_u32(d.ld)?);
        // SAFETY: the arguments match the kernel's parameters in order and type. Every block
        // lies inside its allocation (`run_steps` checked); the kernel touches elements
        // i < m, j < n of each (y only when beta != 0); dst is x itself (same thread reads
        // then writes each element) or disjoint from both inputs (schedule invariant). Its
        // row and column loops cover every element whatever the grid.
        unsafe { args.launch(LaunchConfig::grid_1d(blocks, ADD_THREADS)) }
    }
}

impl Cuda {
    /// Whether `T` has the tensor-core base kernel here: f64 on compute capability 9.0 and
    /// newer (the devices that load the `compute_90` PTX, where `gemm_dmma_f64` is built
    /// with DMMA; the portable `compute_75` PTX has only a trapping stub of it).
    fn dmma_available<T: CudaScalar>(&self) -> bool {
        Precision::of::<T>() == Precision::F64 && self.compute_capability.0 >= 9
    }

    /// Runs `s` with operands at device addresses `ptrs` = `[A, B, C, W]` holding `lens`
    /// values (checked against every step first), on the stream, with the base kernel
    /// `opts.base_kernel` resolves to.
    fn run_schedule<T: CudaScalar>(
        &self,
        s: &Schedule,
        ptrs: [u64; 4],
        lens: [usize; 4],
        opts: &MatMulOptions,
    ) -> Result<()> {
        let tensor = use_tensor_cores::<T>(
            opts.base_kernel,
            self.dmma_available::<T>(),
            driver::BACKEND,
        )?;
        let (gemm, fused) = if tensor {
            (
                self.kernel_plain(Module::Matmul, "gemm_dmma_f64")?,
                self.kernel_plain(Module::Matmul, "gemm_dmma_fused_f64")?,
            )
        } else {
            (
                self.kernel::<T>(Module::Matmul, "gemm")?,
                self.kernel::<T>(Module::Matmul, "gemm_fused")?,
            )
        };
        let steps = CudaSteps {
            gemm,
            fused,
            add: self.kernel::<T>(Module::Matmul, "matadd")?,
            p: Precision::of::<T>(),
        };
        run_steps(&steps, s, ptrs, lens)
    }
}

/// `v` packed row-major (borrowed when it already is).
fn packed<'a, T: CudaScalar>(v: &DenseView<'a, T>) -> std::borrow::Cow<'a, [T]> {
    if v.rows() == 0 || v.cols() == 0 {
        std::borrow::Cow::Borrowed(&[])
    } else if v.is_contiguous() {
        std::borrow::Cow::Borrowed(&v.data()[..v.rows() * v.cols()])
    } else {
        std::borrow::Cow::Owned(v.to_owned().into_vec())
    }
}

impl Cuda {
    /// The [`HostMemory::Pinned`] and [`HostMemory::Mapped`] transfers of `matmul`: `ha`
    /// (`m x k`) and `hb` (`k x n`) through the staging pool, `s` run, `C` into `out`.
    #[allow(clippy::too_many_arguments)]
    fn matmul_staged<T: CudaScalar>(
        &self,
        s: &Schedule,
        (m, n, k): (usize, usize, usize),
        ha: &[T],
        hb: &[T],
        out: &mut [T],
        w: &DevBuf<T>,
        opts: &MatMulOptions,
    ) -> Result<()> {
        let sh = &self.shared;
        let sz = std::mem::size_of::<T>();
        let (offs, total) = staging_layout([m * k * sz, k * n * sz, m * n * sz])?;
        let lens = [m * k, k * n, m * n, s.workspace];
        let stream = sh.raw_stream();
        self.with_staging(total, |st| {
            let stage = |i: usize| st.host.wrapping_add(offs[i]);
            if opts.host_memory == HostMemory::Mapped {
                // SAFETY: the three regions lie inside the allocation (`staging_layout`,
                // `with_staging` sized it) and are disjoint; no queued work uses the pool
                // (every user synchronizes before releasing it).
                unsafe {
                    std::ptr::copy_nonoverlapping(ha.as_ptr(), stage(0).cast::<T>(), ha.len());
                    std::ptr::copy_nonoverlapping(hb.as_ptr(), stage(1).cast::<T>(), hb.len());
                }
                let ptrs = [0, 1, 2].map(|i| st.device + offs[i] as u64);
                let run = self.run_schedule::<T>(
                    s,
                    [ptrs[0], ptrs[1], ptrs[2], w.ptr().as_raw()],
                    lens,
                    opts,
                );
                // Wait before the mapped memory can be read or reused, whatever happened.
                let synced = sh.synchronize();
                run?;
                synced?;
                // SAFETY: C's region holds m n values, written by the finished kernels.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        stage(2).cast::<T>(),
                        out.as_mut_ptr(),
                        out.len(),
                    );
                }
                return Ok(());
            }
            let da = DevBuf::<T>::uninit(sh, m * k, "A")?;
            let db = DevBuf::<T>::uninit(sh, k * n, "B")?;
            let dc = DevBuf::<T>::uninit(sh, m * n, "C")?;
            let run = (|| -> Result<()> {
                // SAFETY: each staging region holds its matrix's bytes and is used by no
                // other queued work; the device buffers hold as many bytes; everything stays
                // alive until the synchronize below.
                unsafe {
                    upload(
                        stream,
                        da.ptr().as_raw(),
                        as_bytes(ha),
                        stage(0),
                        "copying A to the device",
                    )?;
                    upload(
                        stream,
                        db.ptr().as_raw(),
                        as_bytes(hb),
                        stage(1),
                        "copying B to the device",
                    )?;
                }
                let ptrs = [da.ptr(), db.ptr(), dc.ptr(), w.ptr()].map(|p| p.as_raw());
                self.run_schedule::<T>(s, ptrs, lens, opts)?;
                // SAFETY: C's staging region holds m n values and is used by nothing else;
                // `dc` holds C, written by the work queued before.
                unsafe { download(stream, dc.ptr().as_raw(), as_bytes_mut(out), stage(2)) }
            })();
            // The pool and the device buffers must be idle before they are reused or freed.
            let synced = sh.synchronize();
            run?;
            synced
        })
    }
}

impl<T: CudaScalar> MatMul<T> for Cuda {
    fn default_cutoff(&self) -> usize {
        GPU_CUTOFF
    }

    fn has_tensor_core_kernel(&self) -> bool {
        self.dmma_available::<T>()
    }

    fn gemm(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a: &CudaVector<T>,
        b: &CudaVector<T>,
        c: &mut CudaVector<T>,
        opts: &MatMulOptions,
    ) -> Result<()> {
        check_lengths(m, n, k, a.len(), b.len(), c.len())?;
        for v in [a.buf.shared(), b.buf.shared(), c.buf.shared()] {
            self.check_same_device(v)?;
        }
        let s = MatMul::<T>::plan(self, m, n, k, opts);
        self.shared.make_current()?;
        let w = DevBuf::<T>::uninit(&self.shared, s.workspace, "the Strassen workspace")?;
        let ptrs = [a.buf.ptr(), b.buf.ptr(), c.buf.ptr(), w.ptr()].map(|p| p.as_raw());
        self.run_schedule::<T>(&s, ptrs, [a.len(), b.len(), c.len(), s.workspace], opts)
    }

    fn matmul(
        &self,
        a: DenseView<'_, T>,
        b: DenseView<'_, T>,
        opts: &MatMulOptions,
    ) -> Result<Dense<T>> {
        let (m, n, k) = check_shapes(a.shape(), b.shape())?;
        let s = plan(m, n, k, opts, GPU_CUTOFF);
        let need = device_bytes::<T>(m, n, k, &s).unwrap_or(u128::MAX);
        let what = format!(
            "a {m} x {k} · {k} x {n} {} product ({})",
            T::NAME,
            s.algorithm.name()
        );
        check_fits(driver::BACKEND, need, self.total_memory as u64, &what)?;
        let (ha, hb) = (packed(&a), packed(&b));
        let mut out = vec![T::zero(); m * n];
        let lens = [m * k, k * n, m * n, s.workspace];
        self.shared.make_current()?;
        let sh = &self.shared;
        let w = DevBuf::<T>::uninit(sh, s.workspace, "the Strassen workspace")?;
        match opts.host_memory {
            HostMemory::Pageable => {
                let da = DevBuf::from_host(sh, &ha, "A")?;
                let db = DevBuf::from_host(sh, &hb, "B")?;
                let dc = DevBuf::<T>::uninit(sh, m * n, "C")?;
                let ptrs = [da.ptr(), db.ptr(), dc.ptr(), w.ptr()].map(|p| p.as_raw());
                self.run_schedule::<T>(&s, ptrs, lens, opts)?;
                sh.synchronize()?;
                dc.copy_to_host(&mut out)?;
            }
            HostMemory::Pinned | HostMemory::Mapped => {
                self.matmul_staged::<T>(&s, (m, n, k), &ha, &hb, &mut out, &w, opts)?;
            }
        }
        Dense::from_vec(m, n, out).map_err(|e: Error| e)
    }
}
