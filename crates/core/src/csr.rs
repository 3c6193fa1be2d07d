//! Compressed sparse row matrices with sorted, duplicate-free column indices.

use crate::alloc;
use crate::coo::Coo;
use crate::dense::Dense;
use crate::error::{Error, Result};
use crate::scalar::{Index, Scalar};

/// A CSR matrix.
///
/// Invariants (checked by [`Csr::new`]): `indptr.len() == rows + 1`, `indptr[0] == 0`,
/// `indptr` non-decreasing, `indptr[rows] == indices.len() == values.len()`, and within each
/// row the column indices are strictly increasing and below `cols`.
#[derive(Debug, Clone, PartialEq)]
pub struct Csr<T, I = u32> {
    rows: usize,
    cols: usize,
    indptr: Vec<usize>,
    indices: Vec<I>,
    values: Vec<T>,
}

impl<T: Scalar> Coo<T> {
    /// Converts to CSR with sorted columns, summing duplicates.
    pub fn to_csr<I: Index>(&self) -> Result<Csr<T, I>> {
        Csr::from_coo(self)
    }
}

impl<T: Scalar, I: Index> Csr<T, I> {
    /// Builds from raw arrays, checking every invariant.
    pub fn new(
        rows: usize,
        cols: usize,
        indptr: Vec<usize>,
        indices: Vec<I>,
        values: Vec<T>,
    ) -> Result<Self> {
        if indptr.len() != rows + 1 {
            return Err(Error::invalid(
                "CSR",
                format!(
                    "indptr has {} entries, need rows + 1 = {}",
                    indptr.len(),
                    rows + 1
                ),
            ));
        }
        if indptr[0] != 0 {
            return Err(Error::invalid("CSR", "indptr[0] must be 0"));
        }
        if indices.len() != values.len() || indptr[rows] != indices.len() {
            return Err(Error::invalid(
                "CSR",
                format!(
                    "indptr[rows] = {}, {} indices, {} values",
                    indptr[rows],
                    indices.len(),
                    values.len()
                ),
            ));
        }
        for i in 0..rows {
            let (s, e) = (indptr[i], indptr[i + 1]);
            if s > e {
                return Err(Error::invalid(
                    "CSR",
                    format!("indptr decreases at row {i}"),
                ));
            }
            let row = &indices[s..e];
            for (k, c) in row.iter().enumerate() {
                if c.to_usize() >= cols {
                    return Err(Error::invalid(
                        "CSR",
                        format!("row {i}: column {c} out of range (cols = {cols})"),
                    ));
                }
                if k > 0 && row[k - 1] >= *c {
                    return Err(Error::invalid(
                        "CSR",
                        format!("row {i}: columns not strictly increasing at {c}"),
                    ));
                }
            }
        }
        Ok(Self {
            rows,
            cols,
            indptr,
            indices,
            values,
        })
    }

    /// Builds from parts the caller guarantees to satisfy the invariants (checked in debug builds).
    pub(crate) fn from_parts_unchecked(
        rows: usize,
        cols: usize,
        indptr: Vec<usize>,
        indices: Vec<I>,
        values: Vec<T>,
    ) -> Self {
        debug_assert!(
            Self::new(rows, cols, indptr.clone(), indices.clone(), values.clone()).is_ok()
        );
        Self {
            rows,
            cols,
            indptr,
            indices,
            values,
        }
    }

    /// Converts a COO matrix: sorts by (row, column) and sums duplicates.
    pub fn from_coo(coo: &Coo<T>) -> Result<Self> {
        let (rows, cols) = coo.shape();
        if cols > 0 {
            I::try_from_usize(cols - 1)?;
        }
        // Counting sort by row, then sort each row by column. One array of row pointers
        // serves the whole conversion (a matrix of many empty rows costs one, not three):
        // `ptr[r + 2]` counts row r's entries; after the prefix sum `ptr[r + 1]` is row r's
        // start, advanced while placing, so that it ends as row r's end; the merge of
        // duplicates then writes the output's row ends over it, in place.
        let ptr_len = rows
            .checked_add(2)
            .ok_or_else(|| Error::invalid("CSR", format!("{rows} rows are too many")))?;
        let mut ptr = alloc::try_vec(ptr_len, 0usize, || {
            format!("the row pointers of a {rows}-row matrix")
        })?;
        for &r in coo.row_indices() {
            ptr[r + 2] += 1;
        }
        for i in 2..ptr_len {
            ptr[i] += ptr[i - 1];
        }
        let nnz = coo.nnz();
        let mut tmp: Vec<(usize, T)> =
            alloc::try_vec(nnz, (0, T::zero()), || format!("sorting {nnz} entries"))?;
        for (r, c, v) in coo.iter() {
            tmp[ptr[r + 1]] = (c, v);
            ptr[r + 1] += 1;
        }
        let mut indices: Vec<I> =
            alloc::try_with_capacity(nnz, || format!("the column indices of {nnz} entries"))?;
        let mut values: Vec<T> =
            alloc::try_with_capacity(nnz, || format!("the values of {nnz} entries"))?;
        let mut row_start = 0usize;
        for i in 0..rows {
            let row_end = ptr[i + 1];
            let row = &mut tmp[row_start..row_end];
            row_start = row_end;
            row.sort_unstable_by_key(|e| e.0);
            let start = indices.len();
            for &(c, v) in row.iter() {
                if indices.len() > start && I::to_usize(indices[indices.len() - 1]) == c {
                    let last = values.len() - 1;
                    values[last] += v;
                    if !values[last].is_finite() && v.is_finite() {
                        return Err(Error::invalid(
                            "CSR",
                            format!(
                                "duplicate entries at ({}, {}) sum to a value that is not a \
                                 finite {}",
                                i + 1,
                                c + 1,
                                T::NAME
                            ),
                        ));
                    }
                } else {
                    indices.push(I::try_from_usize(c)?);
                    values.push(v);
                }
            }
            ptr[i + 1] = indices.len();
        }
        drop(tmp);
        ptr.truncate(rows + 1);
        let indptr = ptr;
        Ok(Self::from_parts_unchecked(
            rows, cols, indptr, indices, values,
        ))
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
    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// Row pointers (`rows + 1` entries).
    pub fn indptr(&self) -> &[usize] {
        &self.indptr
    }
    /// Column indices, row after row.
    pub fn indices(&self) -> &[I] {
        &self.indices
    }
    /// Values, row after row.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Mutable values (the sparsity pattern stays fixed).
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }
    /// Column indices and values of row `i`.
    pub fn row(&self, i: usize) -> (&[I], &[T]) {
        let (s, e) = (self.indptr[i], self.indptr[i + 1]);
        (&self.indices[s..e], &self.values[s..e])
    }
    /// Length of the longest row.
    pub fn max_row_len(&self) -> usize {
        self.indptr
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0)
    }

    /// Converts the index type, failing if an index does not fit.
    pub fn with_index<J: Index>(&self) -> Result<Csr<T, J>> {
        if self.cols > 0 {
            J::try_from_usize(self.cols - 1)?;
        }
        Ok(Csr {
            rows: self.rows,
            cols: self.cols,
            indptr: self.indptr.clone(),
            indices: self
                .indices
                .iter()
                .map(|c| J::try_from_usize(c.to_usize()))
                .collect::<Result<_>>()?,
            values: self.values.clone(),
        })
    }

    /// Converts to COO.
    pub fn to_coo(&self) -> Coo<T> {
        let mut coo = Coo::with_capacity(self.rows, self.cols, self.nnz());
        for i in 0..self.rows {
            let (cols, vals) = self.row(i);
            for (c, v) in cols.iter().zip(vals) {
                coo.push(i, c.to_usize(), *v).expect("CSR invariants hold");
            }
        }
        coo
    }

    /// Densifies.
    pub fn to_dense(&self) -> Dense<T> {
        let mut d = Dense::zeros(self.rows, self.cols);
        for i in 0..self.rows {
            let (cols, vals) = self.row(i);
            for (c, v) in cols.iter().zip(vals) {
                d.set(i, c.to_usize(), *v);
            }
        }
        d
    }

    /// The transpose, as CSR.
    pub fn transpose(&self) -> Self {
        let mut counts = vec![0usize; self.cols + 1];
        for c in &self.indices {
            counts[c.to_usize() + 1] += 1;
        }
        for j in 0..self.cols {
            counts[j + 1] += counts[j];
        }
        let mut next = counts.clone();
        let mut indices = vec![I::default(); self.nnz()];
        let mut values = vec![T::zero(); self.nnz()];
        for i in 0..self.rows {
            let (cols, vals) = self.row(i);
            for (c, v) in cols.iter().zip(vals) {
                let p = &mut next[c.to_usize()];
                indices[*p] = I::try_from_usize(i).expect("row index fits: rows checked");
                values[*p] = *v;
                *p += 1;
            }
        }
        Self::from_parts_unchecked(self.cols, self.rows, counts, indices, values)
    }

    /// Copies into a `sprs` CSR matrix (usize indices).
    pub fn to_sprs(&self) -> sprs::CsMat<T> {
        sprs::CsMat::new(
            (self.rows, self.cols),
            self.indptr.clone(),
            self.indices.iter().map(|c| c.to_usize()).collect(),
            self.values.clone(),
        )
    }

    /// Copies from any `sprs` matrix (CSR or CSC), checking the index type.
    pub fn from_sprs(m: &sprs::CsMat<T>) -> Result<Self> {
        let csr = if m.is_csr() { m.clone() } else { m.to_csr() };
        let (rows, cols) = csr.shape();
        let indptr = csr.indptr().to_proper().into_owned();
        let indices = csr
            .indices()
            .iter()
            .map(|&c| I::try_from_usize(c))
            .collect::<Result<Vec<I>>>()?;
        Self::new(rows, cols, indptr, indices, csr.data().to_vec())
    }
}
