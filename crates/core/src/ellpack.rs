//! ELLPACK-R: the GPU-friendly sparse layout used by R-MCL.
//!
//! Every row is padded to the same `width` (the longest row), and values and column indices are
//! stored column-major: entry `k` of row `i` lives at `k * rows + i`. Consecutive GPU threads
//! (one per row) therefore read consecutive addresses (coalesced loads). The row-length array
//! `rl` lets each thread stop after its own row instead of scanning the padding.

use crate::alloc;
use crate::csr::Csr;
use crate::error::{Error, Result};
use crate::scalar::{Index, Scalar};

/// An ELLPACK-R matrix.
///
/// Invariants (checked by [`EllpackR::new`]): `values.len() == col_idx.len() == width * rows`,
/// `rl.len() == rows`, `rl[i] <= width`, and the first `rl[i]` entries of row `i` have strictly
/// increasing columns below `cols`. Padding slots (entries `k >= rl[i]`) may hold anything:
/// no kernel reads them ([`EllpackR::from_csr`] writes value 0 and column 0).
#[derive(Debug, Clone, PartialEq)]
pub struct EllpackR<T, I = u32> {
    rows: usize,
    cols: usize,
    width: usize,
    values: Vec<T>,
    col_idx: Vec<I>,
    rl: Vec<I>,
}

impl<T: Scalar, I: Index> EllpackR<T, I> {
    /// Builds from raw column-major arrays, checking every invariant.
    pub fn new(
        rows: usize,
        cols: usize,
        width: usize,
        values: Vec<T>,
        col_idx: Vec<I>,
        rl: Vec<I>,
    ) -> Result<Self> {
        let slots = rows
            .checked_mul(width)
            .ok_or_else(|| Error::invalid("ELLPACK-R", "rows * width overflows usize"))?;
        if values.len() != slots || col_idx.len() != slots || rl.len() != rows {
            return Err(Error::invalid(
                "ELLPACK-R",
                format!(
                    "{rows} rows x width {width} needs {slots} slots and {rows} row lengths; got {} values, {} columns, {} row lengths",
                    values.len(),
                    col_idx.len(),
                    rl.len()
                ),
            ));
        }
        for i in 0..rows {
            let len = rl[i].to_usize();
            if len > width {
                return Err(Error::invalid(
                    "ELLPACK-R",
                    format!("row {i} has length {len} > width {width}"),
                ));
            }
            for k in 0..len {
                let c = col_idx[k * rows + i].to_usize();
                if c >= cols {
                    return Err(Error::invalid(
                        "ELLPACK-R",
                        format!("row {i}: column {c} out of range (cols = {cols})"),
                    ));
                }
                if k > 0 && col_idx[(k - 1) * rows + i].to_usize() >= c {
                    return Err(Error::invalid(
                        "ELLPACK-R",
                        format!("row {i}: columns not strictly increasing at {c}"),
                    ));
                }
            }
        }
        Ok(Self {
            rows,
            cols,
            width,
            values,
            col_idx,
            rl,
        })
    }

    /// Converts from CSR; fails with [`Error::IndexOverflow`] if a column or row length does
    /// not fit in `I`.
    pub fn from_csr<J: Index>(csr: &Csr<T, J>) -> Result<Self> {
        let (rows, cols) = csr.shape();
        if cols > 0 {
            I::try_from_usize(cols - 1)?;
        }
        let width = csr.max_row_len();
        let slots = rows
            .checked_mul(width)
            .ok_or_else(|| Error::invalid("ELLPACK-R", "rows * width overflows usize"))?;
        let what = || {
            format!(
                "ELLPACK-R storage of {rows} rows padded to the longest row ({width} entries; \
                 {} non-zeros in all, so {:.0}x padding: a CSR kernel suits this matrix better)",
                csr.nnz(),
                slots as f64 / csr.nnz().max(1) as f64
            )
        };
        let mut values = alloc::try_vec(slots, T::zero(), what)?;
        let mut col_idx = alloc::try_vec(slots, I::default(), what)?;
        let mut rl: Vec<I> =
            alloc::try_with_capacity(rows, || format!("the row lengths of {rows} rows"))?;
        for i in 0..rows {
            let (cs, vs) = csr.row(i);
            rl.push(I::try_from_usize(cs.len())?);
            for (k, (c, v)) in cs.iter().zip(vs).enumerate() {
                values[k * rows + i] = *v;
                col_idx[k * rows + i] = I::try_from_usize(c.to_usize())?;
            }
        }
        Ok(Self {
            rows,
            cols,
            width,
            values,
            col_idx,
            rl,
        })
    }

    /// Converts to CSR (index type `J`).
    pub fn to_csr<J: Index>(&self) -> Result<Csr<T, J>> {
        let nnz = self.nnz();
        let mut indptr = Vec::with_capacity(self.rows + 1);
        let mut indices = Vec::with_capacity(nnz);
        let mut values = Vec::with_capacity(nnz);
        indptr.push(0);
        for i in 0..self.rows {
            for k in 0..self.rl[i].to_usize() {
                indices.push(J::try_from_usize(
                    self.col_idx[k * self.rows + i].to_usize(),
                )?);
                values.push(self.values[k * self.rows + i]);
            }
            indptr.push(indices.len());
        }
        Csr::new(self.rows, self.cols, indptr, indices, values)
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }
    /// Padded row width (the longest row's length).
    pub fn width(&self) -> usize {
        self.width
    }
    /// Number of stored (non-padding) entries.
    pub fn nnz(&self) -> usize {
        self.rl.iter().map(|l| l.to_usize()).sum()
    }
    /// Column-major values, `width * rows` long, padding included.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Column-major column indices, `width * rows` long, padding included.
    pub fn col_indices(&self) -> &[I] {
        &self.col_idx
    }
    /// Row lengths.
    pub fn row_lengths(&self) -> &[I] {
        &self.rl
    }
    /// Column and value of entry `k` of row `i` (`k < rl[i]`).
    #[inline]
    pub fn entry(&self, i: usize, k: usize) -> (usize, T) {
        let p = k * self.rows + i;
        (self.col_idx[p].to_usize(), self.values[p])
    }
}
