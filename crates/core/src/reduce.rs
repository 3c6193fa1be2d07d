//! Reductions over device vectors, written once for every GPU backend: the one home of the
//! small scans that several algorithms' host code asks of a device. Their kernels are
//! `kernels/opencl/reduce.cl`, shared with CUDA (`kernels/cuda/reduce.cu` compiles the same
//! file through the dialect header).

#![allow(unsafe_code)]

use crate::device::{Buf, Geometry, KernelHandle, VectorMem};
use crate::gpu::KernelList;
use crate::{DeviceVectors, Result, Scalar};

/// The kernels of `kernels/*/reduce.*`.
pub const KERNELS: KernelList = KernelList::new(&[ANY_NONFINITE], &[]);
/// `any_nonfinite_f32` / `any_nonfinite_f64`: sets a flag if a value is NaN or ±∞.
const ANY_NONFINITE: &str = "any_nonfinite";
/// The kernel's largest work-group (its `REDUCE_WG`).
const WG: usize = 256;
/// Work-groups of one scan at most: enough to keep a large GPU's memory busy; every item
/// strides over the rest.
const MAX_GROUPS: usize = 1024;

/// Whether the first `len` values of the device vector `v` are all finite (no NaN, no ±∞):
/// one pass over them on the device, and a 4-byte download (which waits for the queued work).
pub fn all_finite<T: Scalar, D: VectorMem<T>>(d: &D, v: &D::Vector, len: usize) -> Result<bool> {
    if len == 0 {
        return Ok(true);
    }
    let have = DeviceVectors::<T>::len(d, v);
    if len > have {
        return Err(crate::Error::Shape(format!(
            "all_finite of {len} values of a vector of {have}"
        )));
    }
    // The flag outlives the kernel handle that borrows it.
    let flag = Buf::<D, u32>::zeroed(d, 1, "the non-finite flag")?;
    let kernel = d.kernel::<T>("reduce", ANY_NONFINITE)?;
    let wg = kernel.group_limit().min(WG);
    let groups = len.div_ceil(wg).min(MAX_GROUPS);
    // The kernel's parameters (kernels/opencl/reduce.cl): (ulong n, const T *v, uint *flag).
    let mut l = d.launch(&kernel);
    l.arg(len as u64).vector::<T>(v).arg(&flag);
    // SAFETY: a u64 and two buffers, the kernel's (ulong, const T*, uint*), both this
    // device's (checked as they are added). Every item reads v[i] for i < n = len <= the
    // vector's length only (checked above), striding by the global size, and touches
    // flag[0] only, an atomic or into the one-element buffer.
    unsafe { l.launch(Geometry::linear(groups, wg)) }?;
    Ok(flag.download(d, "the non-finite flag")?[0] == 0)
}
