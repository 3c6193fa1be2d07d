//! ELLPACK-R SpMV on any [`Device`]: the kernel `spmv_ellr` (`kernels/cuda/spmv.cu`,
//! `kernels/opencl/spmv.cl`), one work-item per row, in one or more slot passes (see
//! [`crate::spmv::plan_slot_passes`]).

// Kernel launches are `unsafe`: each says why in its `// SAFETY:` note.
#![allow(unsafe_code)]

use crate::device::{Buf, Device, Geometry, KernelHandle, VectorMem};
use crate::ellpack::EllpackR;
use crate::error::Result;
use crate::gpu::{KernelList, Precision};
use crate::scalar::Scalar;
use crate::spmv::EllpackPlan;
use crate::spmv::{check_shapes, Spmv, SpmvOptions};

/// The kernels of the `spmv` kernel file, as both backends' kernel tables list them.
pub const KERNELS: KernelList = KernelList::new(&[SPMV], &[]);
/// The SpMV kernel's root (`spmv_ellr_f32`, `spmv_ellr_f64`).
const SPMV: &str = "spmv_ellr";

/// Work-items per group at most (the CUDA kernel is compiled with `__launch_bounds__(256)`).
const WG: usize = 256;

/// An ELLPACK-R matrix in device memory (see [`Spmv`]): column-major values and `u32`
/// column indices (`width * rows` each, padding included) and `u32` row lengths.
pub struct DeviceEllpack<D: Device, T: Scalar> {
    values: Buf<D, T>,
    col_idx: Buf<D, u32>,
    rl: Buf<D, u32>,
    /// Dimensions and slot passes, one kernel launch each.
    plan: EllpackPlan,
}

impl<D: Device, T: Scalar> DeviceEllpack<D, T> {
    /// Dimensions and slot passes (one kernel launch each), planned at upload from the
    /// matrix and the device's cache size or [`SpmvOptions::passes`].
    pub fn plan(&self) -> &EllpackPlan {
        &self.plan
    }
}

impl<D: Device, T: Scalar> std::fmt::Debug for DeviceEllpack<D, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.plan.debug_as::<T>(f, "DeviceEllpack")
    }
}

impl<T: Scalar, D: VectorMem<T>> Spmv<T> for D {
    type Ellpack = DeviceEllpack<D, T>;

    fn upload_ellpack_with(&self, a: &EllpackR<T>, opts: &SpmvOptions) -> Result<Self::Ellpack> {
        self.check_precision(Precision::of::<T>())?;
        let plan = EllpackPlan::new(a, self.query().cache_bytes, opts)?;
        Ok(DeviceEllpack {
            values: Buf::upload(self, a.values(), "uploading ELLPACK-R values")?,
            col_idx: Buf::upload(self, a.col_indices(), "uploading ELLPACK-R columns")?,
            rl: Buf::upload(self, a.row_lengths(), "uploading ELLPACK-R row lengths")?,
            plan,
        })
    }

    fn ellpack_shape(&self, a: &Self::Ellpack) -> (usize, usize) {
        a.plan.shape()
    }

    fn spmv(&self, a: &Self::Ellpack, x: &Self::Vector, y: &mut Self::Vector) -> Result<()> {
        let kernel = self.kernel::<T>("spmv", SPMV)?;
        // Shapes, and the invariants of EllpackR, re-checked because the kernel trusts them.
        let lens = (a.values.len(), a.col_idx.len(), a.rl.len());
        a.plan.check_spmv(lens, self.len(x), self.len(y))?;
        if a.plan.rows == 0 {
            return Ok(());
        }
        let rows = a.plan.rows;
        let wg = kernel.group_limit().min(WG);
        // A group per `wg` rows; where the kernel strides over the grid, at most the plan's
        // max_groups (the loop covers the rest).
        let mut groups = (rows as usize).div_ceil(wg);
        if D::GRID_STRIDE {
            if let Some(g) = a.plan.max_groups {
                groups = groups.min(g.max(1));
            }
        }
        let y = &*y;
        for (k_begin, k_end, accumulate) in a.plan.launches() {
            // The kernel's parameters (kernels/cuda/spmv.cu, kernels/opencl/spmv.cl):
            // (uint rows, uint k_begin, uint k_end, uint accumulate, const T *values,
            //  const uint *col_idx, const uint *rl, const T *x, T *y)
            let mut l = self.launch(&kernel);
            l.arg(rows).arg(k_begin).arg(k_end).arg(accumulate);
            l.arg(&a.values).arg(&a.col_idx).arg(&a.rl);
            l.vector::<T>(x).vector::<T>(y);
            // SAFETY: four u32s and five buffers, the kernel's (uint, uint, uint, uint,
            // const T*, const uint*, const uint*, const T*, T*); every buffer is this
            // device's (checked as the arguments are added). The matrix buffers hold
            // rows * width values and columns and `rows` row lengths (check_spmv);
            // EllpackR guarantees rl[i] <= width and columns < cols == len(x); len(y) ==
            // rows. Work-item i < rows (or, where the kernel strides over the grid, every
            // i < rows it visits) reads rl[i], the slots k * rows + i for
            // k_begin <= k < min(rl[i], k_end) (valid passes: check_spmv) and x at their
            // columns, and reads and writes only y[i]; items i >= rows do nothing. `y` is
            // borrowed mutably, so it is not `x`. Passes run in queue order, the first
            // (accumulate = 0) overwriting y.
            unsafe { l.launch(Geometry::linear(groups, wg)) }?;
        }
        Ok(())
    }

    fn spmv_host(&self, a: &EllpackR<T>, x: &[T]) -> Result<Vec<T>> {
        check_shapes(a.shape(), x.len(), a.rows())?;
        let da = self.upload_ellpack(a)?;
        let dx = self.upload(x)?;
        let mut dy = self.zeros(a.rows())?;
        self.spmv(&da, &dx, &mut dy)?;
        self.download(&dy)
    }
}
