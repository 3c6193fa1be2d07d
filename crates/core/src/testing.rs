//! What every test in the workspace uses to decide between running, skipping and failing:
//! one place for `REQUIRE_GPU` and `REQUIRE_DATA`, and for finding the shared data folder.
//!
//! A test never returns early on its own judgement: it calls [`skip`], which prints why and
//! returns, or panics when the environment says the thing skipped must be there
//! (`REQUIRE_GPU=1` on the GPU machine, `REQUIRE_DATA=1` in CI where `../shared` exists).

use std::path::PathBuf;

use crate::error::Error;

/// What a skipped test needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// A GPU device (CUDA, or an OpenCL GPU): required under `REQUIRE_GPU=1`.
    Gpu,
    /// The shared data folder: required under `REQUIRE_DATA=1`.
    Data,
}

/// True when `REQUIRE_GPU=1`: a missing device, or any start-up failure, fails the test.
pub fn require_gpu() -> bool {
    std::env::var("REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// True when `REQUIRE_DATA=1`: a missing data folder fails the test.
pub fn require_data() -> bool {
    std::env::var("REQUIRE_DATA").is_ok_and(|v| v == "1")
}

/// Skips (prints `skipping: {why}` to stderr) unless `needs` is required by the environment,
/// in which case it panics with `why`. Call it, then return.
#[track_caller]
pub fn skip(needs: Needs, why: impl std::fmt::Display) {
    let required = match needs {
        Needs::Gpu => require_gpu(),
        Needs::Data => require_data(),
    };
    if required {
        let var = match needs {
            Needs::Gpu => "REQUIRE_GPU",
            Needs::Data => "REQUIRE_DATA",
        };
        panic!("{var}=1, but: {why}");
    }
    eprintln!("skipping: {why}");
}

/// The backend made by `made`, or `None` after [`skip`]ping when it has no device. Any other
/// start-up failure (a kernel that does not build, say) panics whatever the environment.
#[track_caller]
pub fn backend_or_skip<B>(made: crate::Result<B>) -> Option<B> {
    match made {
        Ok(b) => Some(b),
        Err(e) if e.is_no_device() => {
            skip(Needs::Gpu, &e);
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

/// The shared data folder: `$TRIDENT_DATA`, else the first `shared/data` holding
/// `graphs.tsv` found walking up from the current directory or `CARGO_MANIFEST_DIR` (read at
/// run time, so bundles moved to another machine find the data beside them).
pub fn data_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("TRIDENT_DATA") {
        let d = PathBuf::from(d);
        return d.join("graphs.tsv").is_file().then_some(d);
    }
    let mut starts = Vec::new();
    if let Ok(c) = std::env::current_dir() {
        starts.push(c);
    }
    if let Ok(m) = std::env::var("CARGO_MANIFEST_DIR") {
        starts.push(PathBuf::from(m));
    }
    starts
        .iter()
        .flat_map(|s| s.ancestors())
        .flat_map(|a| [a.join("shared").join("data"), a.join("data")])
        .find(|d| d.join("graphs.tsv").is_file())
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
