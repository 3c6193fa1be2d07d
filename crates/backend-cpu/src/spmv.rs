//! ELLPACK-R SpMV on the CPU: rows in parallel chunks, each row summed in column order.

use rayon::prelude::*;
use trident_core::spmv::check_shapes as check_spmv_shapes;
use trident_core::{DeviceVectors, EllpackR, Error, Result, Scalar, Spmv, SpmvOptions};

use crate::Cpu;

/// Rows per rayon task: large enough to amortise scheduling, small enough to balance load.
const ROWS_PER_TASK: usize = 4096;

impl<T: Scalar> DeviceVectors<T> for Cpu {
    type Vector = Vec<T>;

    fn upload(&self, host: &[T]) -> Result<Vec<T>> {
        Ok(host.to_vec())
    }

    fn zeros(&self, len: usize) -> Result<Vec<T>> {
        let oom = |why: String| {
            Error::out_of_memory("cpu", format!("{len} values of {}: {why}", T::NAME))
        };
        // With overcommit the kernel grants any reservation and kills the process on first
        // touch, so a request beyond physical memory is refused here, as a GPU driver would.
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        if let Some(total) = crate::memory::physical_memory() {
            if bytes as u64 > total {
                return Err(oom(format!(
                    "more than the machine's {total} bytes of memory"
                )));
            }
        }
        let mut v = Vec::new();
        v.try_reserve_exact(len).map_err(|e| oom(e.to_string()))?;
        v.resize(len, T::zero());
        Ok(v)
    }

    fn len(&self, v: &Vec<T>) -> usize {
        v.len()
    }

    fn download_into(&self, v: &Vec<T>, host: &mut [T]) -> Result<()> {
        if v.len() != host.len() {
            return Err(Error::shape(format!(
                "download of {} values into {}",
                v.len(),
                host.len()
            )));
        }
        host.copy_from_slice(v);
        Ok(())
    }
}

impl<T: Scalar> Spmv<T> for Cpu {
    type Ellpack = EllpackR<T>;

    fn upload_ellpack_with(&self, a: &EllpackR<T>, _opts: &SpmvOptions) -> Result<EllpackR<T>> {
        Ok(a.clone())
    }

    fn ellpack_shape(&self, a: &EllpackR<T>) -> (usize, usize) {
        a.shape()
    }

    fn spmv(&self, a: &EllpackR<T>, x: &Vec<T>, y: &mut Vec<T>) -> Result<()> {
        check_spmv_shapes(a.shape(), x.len(), y.len())?;
        spmv_slices(a, x, y);
        Ok(())
    }

    fn spmv_host(&self, a: &EllpackR<T>, x: &[T]) -> Result<Vec<T>> {
        let mut y = vec![T::zero(); a.rows()];
        check_spmv_shapes(a.shape(), x.len(), y.len())?;
        spmv_slices(a, x, &mut y);
        Ok(y)
    }
}

/// `y = A x` on slices whose lengths the caller has checked.
fn spmv_slices<T: Scalar>(a: &EllpackR<T>, x: &[T], y: &mut [T]) {
    let rows = a.rows();
    let vals = a.values();
    let cols = a.col_indices();
    let rl = a.row_lengths();
    y.par_iter_mut()
        .with_min_len(ROWS_PER_TASK)
        .enumerate()
        .for_each(|(i, yi)| {
            let mut acc = T::zero();
            for k in 0..rl[i] as usize {
                let p = k * rows + i;
                acc += vals[p] * x[cols[p] as usize];
            }
            *yi = acc;
        });
}
