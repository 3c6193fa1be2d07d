//! The host executor of a [`Schedule`]: the CPU backend's `matmul` and the tests run a
//! schedule with [`execute_host`] over a base-kernel callback.

use rayon::prelude::*;

use super::{Block, Fused, Operand, Schedule, Step};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// A read-only strided block handed to a base-kernel callback of [`execute_host`].
#[derive(Debug, Clone, Copy)]
pub struct HostBlock<'a, T> {
    /// The values from element (0, 0) on (element (i, j) at `i * ld + j`).
    pub data: &'a [T],
    /// Leading dimension.
    pub ld: usize,
}

/// The output block handed to a base-kernel callback of [`execute_host`].
#[derive(Debug)]
pub struct HostBlockMut<'a, T> {
    /// The values from element (0, 0) on, exactly `(m - 1) * ld + n` of them.
    pub data: &'a mut [T],
    /// Leading dimension.
    pub ld: usize,
}

/// The arguments of one base-kernel product `c = alpha a b + beta c` (`beta == 0`: `c` is
/// not read).
#[derive(Debug)]
pub struct GemmCall<'a, T> {
    /// Rows of `a` and `c`.
    pub m: usize,
    /// Columns of `b` and `c`.
    pub n: usize,
    /// Inner dimension.
    pub k: usize,
    /// Product scale.
    pub alpha: T,
    /// Output scale.
    pub beta: T,
    /// `m x k`.
    pub a: HostBlock<'a, T>,
    /// `k x n`.
    pub b: HostBlock<'a, T>,
    /// `m x n`.
    pub c: HostBlockMut<'a, T>,
}

/// Runs `schedule` on host memory: `a` (`m x k`, leading dimension as planned), `b`, the
/// output `c` and a workspace `w` of at least [`Schedule::workspace`] elements, with `gemm`
/// as the base kernel. Fails with [`Error::Shape`] when a step reaches outside its operand or
/// (a planner bug) an output overlaps an input.
pub fn execute_host<T: Scalar>(
    schedule: &Schedule,
    a: &[T],
    b: &[T],
    c: &mut [T],
    w: &mut [T],
    mut gemm: impl FnMut(GemmCall<'_, T>),
) -> Result<()> {
    let extent = |blk: Block, m: usize, n: usize| -> usize {
        if m == 0 || n == 0 {
            0
        } else {
            (m - 1) * blk.ld + n
        }
    };
    for step in &schedule.steps {
        match *step {
            Step::Gemm {
                m,
                n,
                k,
                alpha,
                beta,
                a: ba,
                b: bb,
                c: bc,
            } => {
                if m == 0 || n == 0 {
                    continue;
                }
                let (ea, eb, ec) = (extent(ba, m, k), extent(bb, k, n), extent(bc, m, n));
                let (out_buf, before, after, other) = split_out(c, w, bc, ec)?;
                let pick = |blk: Block, len: usize| -> Result<&[T]> {
                    let src: &[T] = match blk.op {
                        Operand::A => a,
                        Operand::B => b,
                        op if op == bc.op => {
                            return disjoint_read(before, after, bc.offset, ec, blk.offset, len)
                        }
                        Operand::C | Operand::W => other,
                    };
                    src.get(blk.offset..blk.offset + len)
                        .ok_or_else(|| Error::shape("schedule step outside its operand"))
                };
                let da = pick(ba, ea)?;
                let db = pick(bb, eb)?;
                gemm(GemmCall {
                    m,
                    n,
                    k,
                    alpha: T::from_f64(alpha),
                    beta: T::from_f64(beta),
                    a: HostBlock {
                        data: da,
                        ld: ba.ld,
                    },
                    b: HostBlock {
                        data: db,
                        ld: bb.ld,
                    },
                    c: HostBlockMut {
                        data: out_buf,
                        ld: bc.ld,
                    },
                });
            }
            Step::Add {
                m,
                n,
                alpha,
                x,
                beta,
                y,
                dst,
            } => {
                let (alpha, beta) = (T::from_f64(alpha), T::from_f64(beta));
                if add_rows_parallel(a, b, c, w, (m, n), alpha, x, beta, y, dst)? {
                    continue;
                }
                for i in 0..m {
                    add_row(
                        a,
                        b,
                        c,
                        w,
                        n,
                        alpha,
                        x.at(i, 0),
                        beta,
                        y.at(i, 0),
                        dst.at(i, 0),
                    )?;
                }
            }
            Step::Fused(f) => execute_fused_host(&f, a, b, c, w, &mut gemm)?,
        }
    }
    Ok(())
}

/// A [`Step::Fused`] on the host: the two factor sums materialised (in `T`, as a device
/// kernel forms them while loading tiles), their product by the base kernel into a
/// temporary, then added into the outputs. The CPU gains nothing from fused steps (it
/// allocates per step); they run here so that the host executes every schedule.
fn execute_fused_host<T: Scalar>(
    f: &Fused,
    a: &[T],
    b: &[T],
    c: &mut [T],
    w: &mut [T],
    gemm: &mut impl FnMut(GemmCall<'_, T>),
) -> Result<()> {
    let (m, n, k) = (f.m, f.n, f.k);
    if m == 0 || n == 0 {
        return Ok(());
    }
    // Row `i` (`cols` values) of block `blk`.
    fn row<T>(blk: Block, i: usize, cols: usize, ops: [&[T]; 4]) -> Result<&[T]> {
        let src = match blk.op {
            Operand::A => ops[0],
            Operand::B => ops[1],
            Operand::C => ops[2],
            Operand::W => ops[3],
        };
        let start = blk.offset + i * blk.ld;
        src.get(start..start + cols)
            .ok_or_else(|| Error::shape("schedule step outside its operand"))
    }
    // `t[0] + s t[1]`, `rows x cols`, packed; row by row (vectorisable inner loops).
    let sum = |t: [Block; 2], s: f64, rows: usize, cols: usize, c: &[T], w: &[T]| {
        let ops = [a, b, c, w];
        let s = T::from_f64(s);
        let mut v = Vec::with_capacity(rows * cols);
        for i in 0..rows {
            let x = row(t[0], i, cols, ops)?;
            if s == T::zero() {
                v.extend_from_slice(x);
            } else {
                let y = row(t[1], i, cols, ops)?;
                v.extend(x.iter().zip(y).map(|(&x, &y)| x + s * y));
            }
        }
        Ok::<_, Error>(v)
    };
    let fa = sum(f.a, f.sa, m, k, c, w)?;
    let fb = sum(f.b, f.sb, k, n, c, w)?;
    let mut p = vec![T::zero(); m * n];
    gemm(GemmCall {
        m,
        n,
        k,
        alpha: T::from_f64(1.0),
        beta: T::zero(),
        a: HostBlock { data: &fa, ld: k },
        b: HostBlock { data: &fb, ld: n },
        c: HostBlockMut {
            data: &mut p,
            ld: n,
        },
    });
    for o in 0..2 {
        if o == 1 && f.gamma[1] == 0.0 {
            break;
        }
        let blk = f.c[o];
        let (g, be) = (T::from_f64(f.gamma[o]), T::from_f64(f.beta[o]));
        let buf = match blk.op {
            Operand::C => &mut *c,
            Operand::W => &mut *w,
            _ => return Err(Error::shape("schedule writes an input")),
        };
        for i in 0..m {
            let row = buf
                .get_mut(blk.offset + i * blk.ld..blk.offset + i * blk.ld + n)
                .ok_or_else(|| Error::shape("schedule step outside its operand"))?;
            for (d, &v) in row.iter_mut().zip(&p[i * n..(i + 1) * n]) {
                *d = if be == T::zero() {
                    g * v
                } else {
                    g * v + be * *d
                };
            }
        }
    }
    Ok(())
}

/// The output region `[offset, offset + len)` of `blk`'s operand (C or W), the parts of that
/// operand before and after it, and the other one of C and W.
#[allow(clippy::type_complexity)]
fn split_out<'s, T>(
    c: &'s mut [T],
    w: &'s mut [T],
    blk: Block,
    len: usize,
) -> Result<(&'s mut [T], &'s [T], &'s [T], &'s [T])> {
    let (buf, other) = match blk.op {
        Operand::C => (c, &*w),
        Operand::W => (w, &*c),
        _ => return Err(Error::shape("schedule writes an input")),
    };
    if blk.offset + len > buf.len() {
        return Err(Error::shape("schedule step outside its operand"));
    }
    let (before, rest) = buf.split_at_mut(blk.offset);
    let (out, after) = rest.split_at_mut(len);
    Ok((out, before, after, other))
}

/// `[offset, offset + len)` of an operand split around the output `[out, out + out_len)`.
fn disjoint_read<'s, T>(
    before: &'s [T],
    after: &'s [T],
    out: usize,
    out_len: usize,
    offset: usize,
    len: usize,
) -> Result<&'s [T]> {
    if offset + len <= out {
        Ok(&before[offset..offset + len])
    } else if offset >= out + out_len {
        let o = offset - out - out_len;
        after
            .get(o..o + len)
            .ok_or_else(|| Error::shape("schedule step outside its operand"))
    } else {
        Err(Error::shape("schedule input overlaps its output"))
    }
}

/// One row of an [`Step::Add`]: `dst[..n] = alpha x[..n] + beta y[..n]`.
#[allow(clippy::too_many_arguments)]
fn add_row<T: Scalar>(
    a: &[T],
    b: &[T],
    c: &mut [T],
    w: &mut [T],
    n: usize,
    alpha: T,
    x: Block,
    beta: T,
    y: Block,
    dst: Block,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let (out, before, after, other) = split_out(c, w, dst, n)?;
    let read = |blk: Block| -> Result<Option<&[T]>> {
        if blk.op == dst.op && blk.offset == dst.offset {
            return Ok(None); // the output itself
        }
        match blk.op {
            Operand::A => a.get(blk.offset..blk.offset + n),
            Operand::B => b.get(blk.offset..blk.offset + n),
            op if op == dst.op => {
                return disjoint_read(before, after, dst.offset, n, blk.offset, n).map(Some)
            }
            Operand::C | Operand::W => other.get(blk.offset..blk.offset + n),
        }
        .map(Some)
        .ok_or_else(|| Error::shape("schedule step outside its operand"))
    };
    let xs = read(x)?;
    let ys = if beta == T::zero() { None } else { read(y)? };
    combine(out, xs, ys, alpha, beta);
    Ok(())
}

/// `out = alpha x + beta y` elementwise, `None` standing for `out` itself; `y` is not read
/// when `beta` is zero.
fn combine<T: Scalar>(out: &mut [T], xs: Option<&[T]>, ys: Option<&[T]>, alpha: T, beta: T) {
    if beta == T::zero() {
        match xs {
            Some(xs) => out.iter_mut().zip(xs).for_each(|(d, &x)| *d = alpha * x),
            None => out.iter_mut().for_each(|d| *d *= alpha),
        }
        return;
    }
    match (xs, ys) {
        (Some(xs), Some(ys)) => out
            .iter_mut()
            .zip(xs.iter().zip(ys))
            .for_each(|(d, (&x, &y))| *d = alpha * x + beta * y),
        (None, Some(ys)) => out
            .iter_mut()
            .zip(ys)
            .for_each(|(d, &y)| *d = alpha * *d + beta * y),
        (Some(xs), None) => out
            .iter_mut()
            .zip(xs)
            .for_each(|(d, &x)| *d = alpha * x + beta * *d),
        (None, None) => out.iter_mut().for_each(|d| *d = (alpha + beta) * *d),
    }
}

/// Elements of an [`Step::Add`] from which [`add_rows_parallel`] splits the rows over
/// threads (below, the serial row loop is cheaper).
const PARALLEL_ADD_MIN: usize = 1 << 16;

/// A whole [`Step::Add`] with its rows spread over rayon's threads, when every operand's
/// rows lie apart from the output's (or are the output itself); returns `false` (nothing
/// done) otherwise, or when the step is small, and [`execute_host`] runs the rows in turn.
/// Each row gets exactly the arithmetic of [`add_row`], so the result does not depend on
/// the path.
#[allow(clippy::too_many_arguments)]
fn add_rows_parallel<T: Scalar>(
    a: &[T],
    b: &[T],
    c: &mut [T],
    w: &mut [T],
    (m, n): (usize, usize),
    alpha: T,
    x: Block,
    beta: T,
    y: Block,
    dst: Block,
) -> Result<bool> {
    if m < 2 || n == 0 || m * n < PARALLEL_ADD_MIN || dst.ld < n {
        return Ok(false);
    }
    let extent = |blk: Block| (m - 1) * blk.ld + n;
    let (out, before, after, other) = split_out(c, w, dst, extent(dst))?;
    // Some(None): the output itself; None: not splittable, take the row loop.
    let region = |blk: Block| -> Option<Option<&[T]>> {
        if blk.op == dst.op && blk.offset == dst.offset && blk.ld == dst.ld {
            return Some(None);
        }
        let len = extent(blk);
        let src = match blk.op {
            Operand::A => a.get(blk.offset..blk.offset + len),
            Operand::B => b.get(blk.offset..blk.offset + len),
            op if op == dst.op => {
                disjoint_read(before, after, dst.offset, extent(dst), blk.offset, len).ok()
            }
            Operand::C | Operand::W => other.get(blk.offset..blk.offset + len),
        }?;
        Some(Some(src))
    };
    let Some(xs) = region(x) else {
        return Ok(false);
    };
    let ys = if beta == T::zero() {
        None
    } else {
        match region(y) {
            Some(ys) => ys,
            None => return Ok(false),
        }
    };
    out.par_chunks_mut(dst.ld)
        .enumerate()
        .for_each(|(i, chunk)| {
            let (xr, yr) = (row(xs, x.ld, i, n), row(ys, y.ld, i, n));
            combine(&mut chunk[..n], xr, yr, alpha, beta);
        });
    Ok(true)
}

/// Row `i` (`n` values) of a region with leading dimension `ld`.
fn row<T>(s: Option<&[T]>, ld: usize, i: usize, n: usize) -> Option<&[T]> {
    s.map(|s| &s[i * ld..i * ld + n])
}

/// A naive base kernel for [`execute_host`] (tests and the fallback): each output entry
/// summed in `T` in `k` order.
pub fn naive_gemm<T: Scalar>(g: GemmCall<'_, T>) {
    for i in 0..g.m {
        for j in 0..g.n {
            let mut s = T::zero();
            for p in 0..g.k {
                s += g.a.data[i * g.a.ld + p] * g.b.data[p * g.b.ld + j];
            }
            let d = &mut g.c.data[i * g.c.ld + j];
            *d = if g.beta == T::zero() {
                g.alpha * s
            } else {
                g.alpha * s + g.beta * *d
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parallel add of a large step gives exactly the row loop's values (separate
    /// operands, the output in place, the output's own buffer), and declines quadrants that
    /// share rows with the output.
    #[test]
    fn parallel_adds_equal_the_row_loop() {
        let (m, n, ld) = (300usize, 290usize, 600usize);
        let fill = |len: usize, seed: u64| -> Vec<f64> {
            (0..len)
                .map(|i| ((i as u64 * 2654435761 + seed) % 1000) as f64 / 7.0 - 60.0)
                .collect()
        };
        let a = fill(m * ld, 1);
        let b = fill(m * ld, 2);
        let blk = |op, offset| Block { op, offset, ld };
        let cases = [
            // C11 = 2 A11 - 3 W[second half]
            (
                blk(Operand::A, 0),
                blk(Operand::W, m * ld),
                blk(Operand::C, 0),
                3.0,
            ),
            // C22 = 2 C22 + 0.5 B12: in place
            (
                blk(Operand::C, m * ld + 300),
                blk(Operand::B, 300),
                blk(Operand::C, m * ld + 300),
                0.5,
            ),
            // W[first half] = 2 W[second half] - A: same buffer, disjoint extents
            (
                blk(Operand::W, m * ld),
                blk(Operand::A, 0),
                blk(Operand::W, 0),
                -1.0,
            ),
            // beta = 0: y is not read
            (
                blk(Operand::B, 0),
                blk(Operand::W, 7),
                blk(Operand::C, 300),
                0.0,
            ),
        ];
        for (k, &(x, y, dst, beta)) in cases.iter().enumerate() {
            let (mut c1, mut w1) = (fill(2 * m * ld, 3), fill(2 * m * ld, 4));
            let (mut c2, mut w2) = (c1.clone(), w1.clone());
            let done =
                add_rows_parallel(&a, &b, &mut c1, &mut w1, (m, n), 2.0, x, beta, y, dst).unwrap();
            assert!(done, "case {k}: the parallel path declined");
            for i in 0..m {
                add_row(
                    &a,
                    &b,
                    &mut c2,
                    &mut w2,
                    n,
                    2.0,
                    x.at(i, 0),
                    beta,
                    y.at(i, 0),
                    dst.at(i, 0),
                )
                .unwrap();
            }
            assert!(
                c1 == c2 && w1 == w2,
                "case {k}: parallel and row loop differ"
            );
        }
        // C12 = C11 + C12's neighbour rows: the extents interleave, the row loop must run.
        let (mut c, mut w) = (fill(2 * m * ld, 3), fill(2 * m * ld, 4));
        let done = add_rows_parallel(
            &a,
            &b,
            &mut c,
            &mut w,
            (m, n),
            1.0,
            blk(Operand::C, 0),
            1.0,
            blk(Operand::A, 0),
            blk(Operand::C, 300),
        )
        .unwrap();
        assert!(!done);
    }
}
