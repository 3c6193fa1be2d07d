//! What every test in the workspace uses to decide between running, skipping and failing:
//! one place for `REQUIRE_GPU`, `REQUIRE_OPENCL` and `REQUIRE_DATA`, and for finding the
//! shared data folder and the kernel folder of `cargo xtask mutants`.
//!
//! A test never returns early on its own judgement: it calls [`skip`], which prints why and
//! returns, or panics when the environment says the thing skipped must be there:
//! `REQUIRE_GPU=1` on the GPU machine (a CUDA device and an OpenCL GPU), `REQUIRE_OPENCL=1`
//! in CI (any OpenCL device, PoCL included: `cargo xtask test` sets it), `REQUIRE_DATA=1` or
//! `CI` set (`CI=true`; `cargo xtask test` sets it) for the shared data. Every environment
//! variable the harness reads is read in [`mod@env`] (test configuration, never library
//! behaviour).

use std::path::PathBuf;

use crate::error::Error;

pub mod env;

pub use env::{data_dir, in_ci, kernel_dir, require_data, require_gpu, require_opencl};

/// What a skipped test needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// A GPU device (CUDA, or an OpenCL GPU): required under `REQUIRE_GPU=1`.
    Gpu,
    /// The shared data folder: required under `REQUIRE_DATA=1`, or in CI ([`in_ci`]) unless
    /// `REQUIRE_DATA=0`.
    Data,
    /// An OpenCL device of any type (PoCL counts): required under `REQUIRE_OPENCL=1` (and
    /// under `REQUIRE_GPU=1`, which wants an OpenCL GPU).
    OpenCl,
}

/// Skips (prints `skipping: {why}` to stderr) unless `needs` is required by the environment,
/// in which case it panics with `why`. Call it, then return.
#[track_caller]
pub fn skip(needs: Needs, why: impl std::fmt::Display) {
    let required = match needs {
        Needs::Gpu => require_gpu().then_some("REQUIRE_GPU=1"),
        Needs::Data if require_data() => Some(if in_ci() {
            "REQUIRE_DATA=1 or CI set"
        } else {
            "REQUIRE_DATA=1"
        }),
        Needs::Data => None,
        Needs::OpenCl if require_opencl() => Some("REQUIRE_OPENCL=1"),
        Needs::OpenCl => require_gpu().then_some("REQUIRE_GPU=1"),
    };
    if let Some(var) = required {
        panic!("{var}, but: {why}");
    }
    eprintln!("skipping: {why}");
}

/// The backend made by `made`, or `None` after [`skip`]ping when it has no device (for the
/// `opencl` backend [`Needs::OpenCl`], else [`Needs::Gpu`]). Any other start-up failure (a
/// kernel that does not build, say) panics whatever the environment.
#[track_caller]
pub fn backend_or_skip<B>(made: crate::Result<B>) -> Option<B> {
    match made {
        Ok(b) => Some(b),
        Err(e) if e.is_no_device() => {
            let needs = match &e {
                Error::NoDevice {
                    backend: "opencl", ..
                } => Needs::OpenCl,
                _ => Needs::Gpu,
            };
            skip(needs, &e);
            None
        }
        Err(e) => panic!("backend failed to start: {}", Report(&e)),
    }
}

/// An error with its chain of sources, one `: cause` per level.
pub struct Report<'a>(pub &'a Error);

impl std::fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A source whose text the message already shows (a parse error, an I/O error after
        // its path) is not repeated.
        let mut text = self.0.to_string();
        let mut source = std::error::Error::source(self.0);
        while let Some(s) = source {
            let t = s.to_string();
            if !text.contains(&t) {
                text.push_str(": ");
                text.push_str(&t);
            }
            source = s.source();
        }
        f.write_str(&text)
    }
}

/// [`data_dir`], or `None` after [`skip`]ping (a failure under `REQUIRE_DATA=1`).
#[track_caller]
pub fn data_dir_or_skip() -> Option<PathBuf> {
    let d = data_dir();
    if d.is_none() {
        skip(
            Needs::Data,
            "no shared/data folder found (set TRIDENT_DATA or run beside ../shared)",
        );
    }
    d
}

/// A reproducible xorshift64 stream from a nonzero `seed`: test inputs too large for
/// proptest to shrink usefully.
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// Values in [-0.5, 0.5) from [`xorshift`]`(seed)` (its top 53 bits).
pub fn unit_stream(seed: u64) -> impl FnMut() -> f64 {
    let mut next = xorshift(seed);
    move || (next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5
}
