//! Row-major dense matrices and borrowed views of them.

use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// A dense row-major matrix: element (i, j) is `data[i * cols + j]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Dense<T> {
    rows: usize,
    cols: usize,
    data: Vec<T>,
}

/// A borrowed, possibly strided, row-major view: element (i, j) is `data[i * stride + j]`.
///
/// Views let block algorithms (Strassen quadrants, Jacobi column blocks) work on parts of a
/// matrix without copying.
#[derive(Debug, Clone, Copy)]
pub struct DenseView<'a, T> {
    rows: usize,
    cols: usize,
    stride: usize,
    data: &'a [T],
}

impl<T: Scalar> Dense<T> {
    /// Wraps row-major `data`; fails unless `data.len() == rows * cols`.
    pub fn from_vec(rows: usize, cols: usize, data: Vec<T>) -> Result<Self> {
        let need = rows
            .checked_mul(cols)
            .ok_or_else(|| Error::shape(format!("{rows} x {cols} overflows usize")))?;
        if data.len() != need {
            return Err(Error::shape(format!(
                "{rows} x {cols} matrix needs {need} values, got {}",
                data.len()
            )));
        }
        Ok(Self { rows, cols, data })
    }

    /// The all-zero matrix. Panics if `rows * cols` overflows `usize` (as `Vec` does on
    /// capacity overflow); use [`Dense::from_vec`] for sizes that come from input.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        let len = rows
            .checked_mul(cols)
            .expect("Dense::zeros: rows * cols overflows usize");
        Self {
            rows,
            cols,
            data: vec![T::zero(); len],
        }
    }

    /// The identity matrix of order `n`.
    pub fn identity(n: usize) -> Self {
        Self::from_fn(n, n, |i, j| if i == j { T::one() } else { T::zero() })
    }

    /// Element (i, j) is `f(i, j)`.
    pub fn from_fn(rows: usize, cols: usize, mut f: impl FnMut(usize, usize) -> T) -> Self {
        let len = rows
            .checked_mul(cols)
            .expect("Dense::from_fn: rows * cols overflows usize");
        let mut data = Vec::with_capacity(len);
        for i in 0..rows {
            for j in 0..cols {
                data.push(f(i, j));
            }
        }
        Self { rows, cols, data }
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
    /// Row-major values.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }
    /// Mutable row-major values.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }
    /// The row-major values, consuming the matrix.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }
    /// Element (i, j); panics when out of range, like slice indexing.
    pub fn get(&self, i: usize, j: usize) -> T {
        assert!(i < self.rows && j < self.cols, "({i}, {j}) out of range");
        self.data[i * self.cols + j]
    }
    /// Sets element (i, j).
    pub fn set(&mut self, i: usize, j: usize, v: T) {
        assert!(i < self.rows && j < self.cols, "({i}, {j}) out of range");
        self.data[i * self.cols + j] = v;
    }
    /// Row `i` as a slice.
    pub fn row(&self, i: usize) -> &[T] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }
    /// A view of the whole matrix.
    pub fn view(&self) -> DenseView<'_, T> {
        DenseView {
            rows: self.rows,
            cols: self.cols,
            stride: self.cols,
            data: &self.data,
        }
    }
    /// The transpose, as a new matrix.
    pub fn transpose(&self) -> Self {
        Self::from_fn(self.cols, self.rows, |i, j| self.get(j, i))
    }
    /// Largest absolute elementwise difference; `None` when shapes differ.
    pub fn max_abs_diff(&self, other: &Self) -> Option<T> {
        if self.shape() != other.shape() {
            return None;
        }
        Some(
            self.data
                .iter()
                .zip(&other.data)
                .fold(T::zero(), |m, (a, b)| m.max((*a - *b).abs())),
        )
    }

    /// Copies into an `ndarray` array (same row-major layout, one memcpy).
    pub fn to_ndarray(&self) -> ndarray::Array2<T> {
        ndarray::Array2::from_shape_vec((self.rows, self.cols), self.data.clone())
            .expect("shape checked on construction")
    }
    /// Copies from any `ndarray` 2-D view (any strides).
    pub fn from_ndarray(a: ndarray::ArrayView2<'_, T>) -> Self {
        let (rows, cols) = a.dim();
        Self {
            rows,
            cols,
            data: a.iter().copied().collect(),
        }
    }
    /// Copies into a column-major `nalgebra` matrix.
    pub fn to_nalgebra(&self) -> nalgebra::DMatrix<T> {
        nalgebra::DMatrix::from_row_slice(self.rows, self.cols, &self.data)
    }
    /// Copies from a `nalgebra` matrix.
    pub fn from_nalgebra(m: &nalgebra::DMatrix<T>) -> Self {
        Self::from_fn(m.nrows(), m.ncols(), |i, j| m[(i, j)])
    }
}

impl<'a, T: Scalar> DenseView<'a, T> {
    /// A view of `data` as a `rows x cols` matrix whose rows start `stride` apart.
    pub fn new(rows: usize, cols: usize, stride: usize, data: &'a [T]) -> Result<Self> {
        if cols > stride && rows > 1 {
            return Err(Error::shape(format!("stride {stride} < cols {cols}")));
        }
        let need = if rows == 0 || cols == 0 {
            0
        } else {
            (rows - 1)
                .checked_mul(stride)
                .and_then(|v| v.checked_add(cols))
                .ok_or_else(|| Error::shape("view size overflows usize"))?
        };
        if data.len() < need {
            return Err(Error::shape(format!(
                "view {rows} x {cols} (stride {stride}) needs {need} values, got {}",
                data.len()
            )));
        }
        Ok(Self {
            rows,
            cols,
            stride,
            data,
        })
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
    /// Distance between row starts.
    pub fn stride(&self) -> usize {
        self.stride
    }
    /// The values from element (0, 0) on: element (i, j) is `data()[i * stride + j]`. Holds
    /// at least `(rows - 1) * stride + cols` values when the view is not empty.
    pub fn data(&self) -> &'a [T] {
        self.data
    }
    /// True when rows are packed (`stride == cols`), so the view is one contiguous slice.
    pub fn is_contiguous(&self) -> bool {
        self.stride == self.cols || self.rows <= 1
    }
    /// Element (i, j).
    pub fn get(&self, i: usize, j: usize) -> T {
        assert!(i < self.rows && j < self.cols, "({i}, {j}) out of range");
        self.data[i * self.stride + j]
    }
    /// Row `i`.
    pub fn row(&self, i: usize) -> &'a [T] {
        &self.data[i * self.stride..i * self.stride + self.cols]
    }
    /// The `rows x cols` block whose top-left corner is (r0, c0).
    pub fn block(&self, r0: usize, c0: usize, rows: usize, cols: usize) -> Result<Self> {
        if r0 + rows > self.rows || c0 + cols > self.cols {
            return Err(Error::shape(format!(
                "block ({r0}, {c0}) + {rows} x {cols} outside {} x {}",
                self.rows, self.cols
            )));
        }
        let start = if rows == 0 || cols == 0 {
            0
        } else {
            r0 * self.stride + c0
        };
        Ok(Self {
            rows,
            cols,
            stride: self.stride,
            data: &self.data[start.min(self.data.len())..],
        })
    }
    /// Copies the view into an owned matrix.
    pub fn to_owned(&self) -> Dense<T> {
        let mut data = Vec::with_capacity(self.rows * self.cols);
        for i in 0..self.rows {
            data.extend_from_slice(self.row(i));
        }
        Dense {
            rows: self.rows,
            cols: self.cols,
            data,
        }
    }
}

impl<'a, T: Scalar> From<&'a Dense<T>> for DenseView<'a, T> {
    fn from(d: &'a Dense<T>) -> Self {
        d.view()
    }
}
