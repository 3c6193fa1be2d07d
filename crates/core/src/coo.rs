//! Coordinate (triplet) sparse matrices: the format readers produce. The conversion to CSR,
//! [`Coo::to_csr`], lives with [`Csr`](crate::csr::Csr) (`csr` builds on `coo`, not the
//! reverse).

use crate::dense::Dense;
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// A sparse matrix as unordered `(row, col, value)` triplets; duplicates are allowed and
/// are summed when converting to CSR.
#[derive(Debug, Clone, PartialEq)]
pub struct Coo<T> {
    rows: usize,
    cols: usize,
    row_idx: Vec<usize>,
    col_idx: Vec<usize>,
    values: Vec<T>,
}

impl<T: Scalar> Coo<T> {
    /// An empty `rows x cols` matrix.
    pub fn new(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            row_idx: Vec::new(),
            col_idx: Vec::new(),
            values: Vec::new(),
        }
    }

    /// An empty matrix with room for `nnz` entries.
    pub fn with_capacity(rows: usize, cols: usize, nnz: usize) -> Self {
        Self {
            rows,
            cols,
            row_idx: Vec::with_capacity(nnz),
            col_idx: Vec::with_capacity(nnz),
            values: Vec::with_capacity(nnz),
        }
    }

    /// Builds from triplet arrays, checking lengths and ranges.
    pub fn from_triplets(
        rows: usize,
        cols: usize,
        row_idx: Vec<usize>,
        col_idx: Vec<usize>,
        values: Vec<T>,
    ) -> Result<Self> {
        if row_idx.len() != col_idx.len() || row_idx.len() != values.len() {
            return Err(Error::invalid(
                "COO",
                format!(
                    "triplet arrays differ in length ({}, {}, {})",
                    row_idx.len(),
                    col_idx.len(),
                    values.len()
                ),
            ));
        }
        for (k, (&r, &c)) in row_idx.iter().zip(&col_idx).enumerate() {
            if r >= rows || c >= cols {
                return Err(Error::invalid(
                    "COO",
                    format!("entry {k} at ({r}, {c}) outside {rows} x {cols}"),
                ));
            }
        }
        Ok(Self {
            rows,
            cols,
            row_idx,
            col_idx,
            values,
        })
    }

    /// Appends an entry; fails when it lies outside the shape.
    pub fn push(&mut self, row: usize, col: usize, value: T) -> Result<()> {
        if row >= self.rows || col >= self.cols {
            return Err(Error::invalid(
                "COO",
                format!("entry ({row}, {col}) outside {} x {}", self.rows, self.cols),
            ));
        }
        self.row_idx.push(row);
        self.col_idx.push(col);
        self.values.push(value);
        Ok(())
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
    /// Number of stored triplets (duplicates counted).
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// Row indices.
    pub fn row_indices(&self) -> &[usize] {
        &self.row_idx
    }
    /// Column indices.
    pub fn col_indices(&self) -> &[usize] {
        &self.col_idx
    }
    /// Values.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Iterates `(row, col, value)`.
    pub fn iter(&self) -> impl Iterator<Item = (usize, usize, T)> + '_ {
        self.row_idx
            .iter()
            .zip(&self.col_idx)
            .zip(&self.values)
            .map(|((&r, &c), &v)| (r, c, v))
    }
    /// The transpose (swaps the index arrays).
    pub fn transpose(&self) -> Self {
        Self {
            rows: self.cols,
            cols: self.rows,
            row_idx: self.col_idx.clone(),
            col_idx: self.row_idx.clone(),
            values: self.values.clone(),
        }
    }

    /// Densifies (duplicates summed).
    pub fn to_dense(&self) -> Dense<T> {
        let mut d = Dense::zeros(self.rows, self.cols);
        for (r, c, v) in self.iter() {
            let cur = d.get(r, c);
            d.set(r, c, cur + v);
        }
        d
    }

    /// All non-zeros of a dense matrix.
    pub fn from_dense(d: &Dense<T>) -> Self {
        let mut coo = Self::new(d.rows(), d.cols());
        // No columns, no entries (and no pass over a declared row count with no data).
        let rows = if d.cols() == 0 { 0 } else { d.rows() };
        for i in 0..rows {
            for (j, &v) in d.row(i).iter().enumerate() {
                if v != T::zero() {
                    coo.row_idx.push(i);
                    coo.col_idx.push(j);
                    coo.values.push(v);
                }
            }
        }
        coo
    }

    /// Copies into a `sprs` triplet matrix.
    pub fn to_sprs(&self) -> sprs::TriMat<T> {
        sprs::TriMat::from_triplets(
            (self.rows, self.cols),
            self.row_idx.clone(),
            self.col_idx.clone(),
            self.values.clone(),
        )
    }
}
