//! The one executor of a [`Schedule`] on a device: [`run_steps`] walks the steps and hands
//! each to a backend's [`ScheduleKernels`] (one base-kernel launch per [`Step::Gemm`], one
//! addition launch per [`Step::Add`]), with every block resolved to (device buffer, offset,
//! leading dimension). The CUDA and OpenCL backends implement the trait with their kernel
//! launches; the bounds check, the operand resolution and the skipping of empty steps live
//! here once (the model is `crate::svd::SvdKernels` and its driver).
//!
//! The CPU backend runs schedules with [`super::execute_host`] instead: it needs the host
//! borrow splitting (an output block and the input blocks of the same slice) that a
//! device-handle executor does not.

use super::{Block, Fused, Operand, Schedule, Step};
use crate::error::Result;

/// A strided block of a device operand: element (i, j) is `buf[offset + i * ld + j]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DevBlock<O> {
    /// The device buffer (a handle: a device address, a buffer reference, ...).
    pub buf: O,
    /// Offset of element (0, 0), in elements.
    pub offset: usize,
    /// Leading dimension, in elements.
    pub ld: usize,
}

/// One base-kernel product `c = alpha · a b + beta · c` (`a` `m x k`, `b` `k x n`; `c` is
/// not read when `beta == 0`). Never empty: `m, n >= 1` (`k` may be 0: then `c = beta c`,
/// which the base kernels compute with their zero-filled tiles).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DevGemm<O> {
    /// Rows of `a` and `c`.
    pub m: usize,
    /// Columns of `b` and `c`.
    pub n: usize,
    /// Inner dimension.
    pub k: usize,
    /// Scale of the product.
    pub alpha: f64,
    /// Scale of the old `c`.
    pub beta: f64,
    /// Left factor.
    pub a: DevBlock<O>,
    /// Right factor.
    pub b: DevBlock<O>,
    /// Output.
    pub c: DevBlock<O>,
}

/// One addition `dst = alpha · x + beta · y`, all `m x n` (`y` not read when `beta == 0`;
/// `dst` is `x` itself or disjoint from both). Never empty: `m, n >= 1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DevAdd<O> {
    /// Rows.
    pub m: usize,
    /// Columns.
    pub n: usize,
    /// Scale of `x`.
    pub alpha: f64,
    /// First input.
    pub x: DevBlock<O>,
    /// Scale of `y`.
    pub beta: f64,
    /// Second input.
    pub y: DevBlock<O>,
    /// Output.
    pub dst: DevBlock<O>,
}

/// One ABC-Strassen product ([`Step::Fused`]): `P = (a[0] + sa · a[1]) (b[0] + sb · b[1])`,
/// `c[0] = gamma[0] P + beta[0] c[0]` and, when `gamma[1] != 0`, `c[1] = gamma[1] P +
/// beta[1] c[1]`. The two terms of a factor are blocks of one buffer with one leading
/// dimension (`a[0].ld == a[1].ld`), likewise the two outputs; `sa == 0`: `a[1]` not read;
/// `beta[i] == 0`: `c[i]` not read. Never empty: `m, n >= 1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DevFused<O> {
    /// Rows of the left factor and the outputs.
    pub m: usize,
    /// Columns of the right factor and the outputs.
    pub n: usize,
    /// Inner dimension.
    pub k: usize,
    /// Terms of the left factor.
    pub a: [DevBlock<O>; 2],
    /// Scale of `a[1]`.
    pub sa: f64,
    /// Terms of the right factor.
    pub b: [DevBlock<O>; 2],
    /// Scale of `b[1]`.
    pub sb: f64,
    /// Outputs.
    pub c: [DevBlock<O>; 2],
    /// Scales of the product.
    pub gamma: [f64; 2],
    /// Scales of the old outputs.
    pub beta: [f64; 2],
}

/// The device steps a backend provides to run a [`Schedule`]: launches of its base kernel
/// and of its addition kernel on blocks that [`run_steps`] has checked lie inside their
/// buffers. Launches may be asynchronous (queued in order on one stream or queue).
pub trait ScheduleKernels {
    /// A device buffer handle (`Copy`: a device address, `&Buffer`, an index, ...).
    type Operand: Copy;

    /// Launches `g.c = g.alpha · g.a g.b + g.beta · g.c`.
    fn gemm(&self, g: &DevGemm<Self::Operand>) -> Result<()>;

    /// Launches `s.dst = s.alpha · s.x + s.beta · s.y`.
    fn add(&self, s: &DevAdd<Self::Operand>) -> Result<()>;

    /// Launches the fused (ABC-Strassen) base kernel on `f`.
    fn gemm_fused(&self, f: &DevFused<Self::Operand>) -> Result<()>;
}

/// Runs `schedule` on `kernels` with operands `ops = [A, B, C, W]` holding `lens` values:
/// first checks every block of every step against `lens` ([`Schedule::check_bounds`],
/// [`crate::Error::Invalid`] on failure, before any launch), then launches each non-empty
/// step in order. The kernels may therefore trust every block.
pub fn run_steps<K: ScheduleKernels + ?Sized>(
    kernels: &K,
    schedule: &Schedule,
    ops: [K::Operand; 4],
    lens: [usize; 4],
) -> Result<()> {
    schedule.check_bounds(lens)?;
    let dev = |blk: &Block| DevBlock {
        buf: match blk.op {
            Operand::A => ops[0],
            Operand::B => ops[1],
            Operand::C => ops[2],
            Operand::W => ops[3],
        },
        offset: blk.offset,
        ld: blk.ld,
    };
    for step in &schedule.steps {
        match step {
            Step::Gemm {
                m,
                n,
                k,
                alpha,
                beta,
                a,
                b,
                c,
            } => {
                if *m == 0 || *n == 0 {
                    continue;
                }
                kernels.gemm(&DevGemm {
                    m: *m,
                    n: *n,
                    k: *k,
                    alpha: *alpha,
                    beta: *beta,
                    a: dev(a),
                    b: dev(b),
                    c: dev(c),
                })?;
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
                if *m == 0 || *n == 0 {
                    continue;
                }
                kernels.add(&DevAdd {
                    m: *m,
                    n: *n,
                    alpha: *alpha,
                    x: dev(x),
                    beta: *beta,
                    y: dev(y),
                    dst: dev(dst),
                })?;
            }
            Step::Fused(Fused {
                m,
                n,
                k,
                a,
                sa,
                b,
                sb,
                c,
                gamma,
                beta,
            }) => {
                if *m == 0 || *n == 0 {
                    continue;
                }
                kernels.gemm_fused(&DevFused {
                    m: *m,
                    n: *n,
                    k: *k,
                    a: a.each_ref().map(dev),
                    sa: *sa,
                    b: b.each_ref().map(dev),
                    sb: *sb,
                    c: c.each_ref().map(dev),
                    gamma: *gamma,
                    beta: *beta,
                })?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::super::{plan, reference, Algorithm, MatMulOptions};
    use super::*;
    use crate::dense::DenseView;

    /// A "device" in host memory: four buffers, operands are their indices, and every launch
    /// is recorded. Reads go through `get` so an out-of-bounds block would panic the test.
    struct HostDevice {
        bufs: RefCell<[Vec<f64>; 4]>,
        launches: RefCell<Vec<&'static str>>,
    }

    impl ScheduleKernels for HostDevice {
        type Operand = usize;

        fn gemm(&self, g: &DevGemm<usize>) -> Result<()> {
            assert!(g.m > 0 && g.n > 0);
            self.launches.borrow_mut().push("gemm");
            let mut bufs = self.bufs.borrow_mut();
            let mut out = vec![0.0; g.m * g.n];
            for (i, row) in out.chunks_mut(g.n).enumerate() {
                for (j, o) in row.iter_mut().enumerate() {
                    let mut s = 0.0;
                    for p in 0..g.k {
                        s += bufs[g.a.buf][g.a.offset + i * g.a.ld + p]
                            * bufs[g.b.buf][g.b.offset + p * g.b.ld + j];
                    }
                    *o = s;
                }
            }
            let c = &mut bufs[g.c.buf];
            for i in 0..g.m {
                for j in 0..g.n {
                    let d = &mut c[g.c.offset + i * g.c.ld + j];
                    *d = g.alpha * out[i * g.n + j] + if g.beta == 0.0 { 0.0 } else { g.beta * *d };
                }
            }
            Ok(())
        }

        fn gemm_fused(&self, f: &DevFused<usize>) -> Result<()> {
            assert!(f.m > 0 && f.n > 0);
            assert!(f.a[0].buf == f.a[1].buf && f.a[0].ld == f.a[1].ld);
            assert!(f.c[0].buf == f.c[1].buf && f.c[0].ld == f.c[1].ld);
            self.launches.borrow_mut().push("fused");
            let mut bufs = self.bufs.borrow_mut();
            let get = |bufs: &[Vec<f64>; 4], t: &[DevBlock<usize>; 2], s: f64, i, j| {
                let x = bufs[t[0].buf][t[0].offset + i * t[0].ld + j];
                if s == 0.0 {
                    x
                } else {
                    x + s * bufs[t[1].buf][t[1].offset + i * t[1].ld + j]
                }
            };
            let mut p = vec![0.0; f.m * f.n];
            for i in 0..f.m {
                for j in 0..f.n {
                    for q in 0..f.k {
                        p[i * f.n + j] +=
                            get(&bufs, &f.a, f.sa, i, q) * get(&bufs, &f.b, f.sb, q, j);
                    }
                }
            }
            for o in 0..2 {
                if o == 1 && f.gamma[1] == 0.0 {
                    break;
                }
                let c = f.c[o];
                for i in 0..f.m {
                    for j in 0..f.n {
                        let d = &mut bufs[c.buf][c.offset + i * c.ld + j];
                        let old = if f.beta[o] == 0.0 {
                            0.0
                        } else {
                            f.beta[o] * *d
                        };
                        *d = f.gamma[o] * p[i * f.n + j] + old;
                    }
                }
            }
            Ok(())
        }

        fn add(&self, s: &DevAdd<usize>) -> Result<()> {
            assert!(s.m > 0 && s.n > 0);
            self.launches.borrow_mut().push("add");
            let mut bufs = self.bufs.borrow_mut();
            for i in 0..s.m {
                for j in 0..s.n {
                    let x = bufs[s.x.buf][s.x.offset + i * s.x.ld + j];
                    let y = if s.beta == 0.0 {
                        0.0
                    } else {
                        bufs[s.y.buf][s.y.offset + i * s.y.ld + j]
                    };
                    bufs[s.dst.buf][s.dst.offset + i * s.dst.ld + j] = s.alpha * x + s.beta * y;
                }
            }
            Ok(())
        }
    }

    fn run(m: usize, n: usize, k: usize, opts: &MatMulOptions) -> Vec<&'static str> {
        let a: Vec<f64> = (0..m * k)
            .map(|i| ((i * 7 + 3) % 11) as f64 - 5.0)
            .collect();
        let b: Vec<f64> = (0..k * n)
            .map(|i| ((i * 5 + 1) % 13) as f64 - 6.0)
            .collect();
        let s = plan(m, n, k, opts, 1);
        let dev = HostDevice {
            bufs: RefCell::new([
                a.clone(),
                b.clone(),
                vec![f64::NAN; m * n],
                vec![f64::NAN; s.workspace],
            ]),
            launches: RefCell::new(Vec::new()),
        };
        run_steps(&dev, &s, [0, 1, 2, 3], [m * k, k * n, m * n, s.workspace]).unwrap();
        let r = reference(
            DenseView::new(m, k, k, &a).unwrap(),
            DenseView::new(k, n, n, &b).unwrap(),
        )
        .unwrap();
        assert_eq!(dev.bufs.borrow()[2], r, "{m}x{k}x{n} {opts:?}");
        let launches = dev.launches.borrow().clone();
        let gemms = launches.iter().filter(|l| **l != "add").count();
        assert!(gemms <= s.products());
        launches
    }

    #[test]
    fn executor_matches_reference() {
        for alg in [
            Algorithm::Tiled,
            Algorithm::Strassen,
            Algorithm::Winograd,
            Algorithm::Fused,
        ] {
            for levels in [Some(1), Some(2), Some(3), None] {
                for &(m, n, k) in &[(1, 1, 1), (8, 8, 8), (37, 29, 23), (16, 3, 40), (9, 9, 0)] {
                    run(m, n, k, &MatMulOptions::with(alg, levels));
                }
            }
        }
    }

    #[test]
    fn executor_launches_per_step_and_skips_empty() {
        // One level of Winograd on 8^3: 7 products, 12 addition steps (8 operand sums and 4
        // of the 7 sums into C; the other 3 are the products' beta = 1).
        let l = run(8, 8, 8, &MatMulOptions::with(Algorithm::Winograd, Some(1)));
        assert_eq!(l.iter().filter(|x| **x == "gemm").count(), 7);
        assert_eq!(l.iter().filter(|x| **x == "add").count(), 12);
        // One fused level: 7 fused products, nothing else. Two: Winograd above them (its 12
        // additions), 49 fused products.
        let l = run(8, 8, 8, &MatMulOptions::with(Algorithm::Fused, Some(1)));
        assert_eq!(l, vec!["fused"; 7]);
        let l = run(16, 16, 16, &MatMulOptions::with(Algorithm::Fused, Some(2)));
        assert_eq!(l.iter().filter(|x| **x == "fused").count(), 49);
        assert_eq!(l.iter().filter(|x| **x == "gemm").count(), 0);
        // Empty output: nothing launched.
        assert!(run(0, 5, 3, &MatMulOptions::default()).is_empty());
        assert!(run(5, 0, 3, &MatMulOptions::default()).is_empty());
    }

    #[test]
    fn executor_checks_bounds_before_launching() {
        let s = plan(
            8,
            8,
            8,
            &MatMulOptions::with(Algorithm::Winograd, Some(1)),
            1,
        );
        let dev = HostDevice {
            bufs: RefCell::new([vec![0.0; 64], vec![0.0; 64], vec![0.0; 64], vec![]]),
            launches: RefCell::new(Vec::new()),
        };
        // No workspace: refused before any launch.
        let err = run_steps(&dev, &s, [0, 1, 2, 3], [64, 64, 64, 0]);
        assert!(matches!(err, Err(crate::Error::Invalid { .. })), "{err:?}");
        assert!(dev.launches.borrow().is_empty());
    }
}
