//! The backend conformance suite (feature `conformance`): one module per algorithm, each a
//! list of named checks that every backend crate instantiates as `#[test]`s (through
//! [`conformance_tests!`](crate::conformance_tests)) and that `cargo xtask validate` runs to
//! print a backend × check table.
//!
//! Every check is a plain function `fn(&B) -> Result<(), String>`. Checks compute their
//! expectations independently of the code under test (in f64, from the raw input), start
//! outputs from garbage, and poison padding, so that a kernel that skips work cannot pass.
//!
//! Random inputs come from proptest: `PROPTEST_CASES` sets the count, `TRIDENT_SEED` the
//! seed (printed with every failure, so a GPU failure can be replayed; `cargo xtask test` pins
//! it to a committed constant, otherwise it comes from the clock), and failing cases are
//! persisted to the committed file [`REGRESSIONS`] (`crates/core/proptest-regressions/
//! conformance.txt`) and replayed first on every run (`PROPTEST_DISABLE_FAILURE_PERSISTENCE`
//! turns that off, as `cargo xtask mutants` does).
//!
//! GPU backends that find no device are skipped, unless `REQUIRE_GPU=1` is set, in which case
//! a missing device fails the test (see [`crate::testing`]). The environment variables are
//! read in [`crate::testing::env`]: test configuration, not library behaviour.

use proptest::strategy::Strategy;
use proptest::test_runner::{
    Config, FileFailurePersistence, RngAlgorithm, TestCaseError, TestRng, TestRunner,
};

use crate::backend::Backend;

pub mod device;
pub mod matmul;
pub mod mcl;
pub mod spmv;
pub mod svd;
pub mod triangles;

pub use crate::testing::require_gpu;

/// A backend that implements every algorithm trait the suite checks: what `cargo xtask
/// validate` runs [`all_checks`] on. Each algorithm adds its traits here.
pub trait Conformant:
    crate::Spmv<f32>
    + crate::Spmv<f64>
    + crate::TriangleCount
    + crate::MatMul<f32>
    + crate::MatMul<f64>
    + crate::MarkovCluster<f32>
    + crate::MarkovCluster<f64>
    + crate::Svd<f32>
    + crate::Svd<f64>
    + crate::Qr<f32>
    + crate::Qr<f64>
{
}

impl<B> Conformant for B where
    B: crate::Spmv<f32>
        + crate::Spmv<f64>
        + crate::TriangleCount
        + crate::MatMul<f32>
        + crate::MatMul<f64>
        + crate::MarkovCluster<f32>
        + crate::MarkovCluster<f64>
        + crate::Svd<f32>
        + crate::Svd<f64>
        + crate::Qr<f32>
        + crate::Qr<f64>
{
}

/// Every algorithm's checks, in table order (one module per algorithm).
pub fn all_checks<B: Conformant>() -> Vec<Check<B>> {
    let mut checks = spmv::checks::<B>();
    checks.extend(triangles::checks::<B>());
    checks.extend(matmul::checks::<B>());
    checks.extend(mcl::checks::<B>());
    checks.extend(svd::checks::<B>());
    checks
}

/// One named conformance check.
pub struct Check<B> {
    /// Stable name, also the `#[test]` name.
    pub name: &'static str,
    /// Runs the check; `Err` says what disagreed.
    pub run: fn(&B) -> Result<(), String>,
}

/// Turns a backend constructor's result into `Some(backend)`, `None` (skip: no device), or a
/// panic (no device under `REQUIRE_GPU=1`, or any other start-up failure).
pub fn acquire<B: Backend>(made: crate::Result<B>) -> Option<B> {
    crate::testing::backend_or_skip(made)
}

/// Runs the check called `name` from `checks` on `b`, panicking with its message on failure.
pub fn run_named<B>(b: &B, checks: &[Check<B>], name: &str) {
    let check = checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no conformance check named {name}"));
    if let Err(msg) = (check.run)(b) {
        panic!("{name}: {msg}");
    }
}

/// The committed file of failing cases that [`run_proptest`] replays first and adds to
/// (absolute, from where the crate was built; where it is missing, as in the bundle on a GPU
/// machine, nothing is replayed and proptest warns that it cannot save).
pub const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/proptest-regressions/conformance.txt"
);

/// Runs `test` on `cases` random values of `strategy` (`PROPTEST_CASES` overrides the count),
/// seeded from `TRIDENT_SEED` or at random; a failure's message holds the seed and the
/// shrunk input, and the seed is persisted for replay.
pub fn run_proptest<S: Strategy>(
    cases: u32,
    strategy: &S,
    test: impl Fn(S::Value) -> Result<(), String>,
) -> Result<(), String>
where
    S::Value: std::fmt::Debug,
{
    let cases = crate::testing::env::proptest_cases(cases);
    let seed: u64 = match crate::testing::env::seed()? {
        Some(seed) => seed,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64 ^ u64::from(std::process::id()))
            .unwrap_or(0x5EED),
    };
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&(seed.rotate_left(i as u32 * 16) ^ i as u64).to_le_bytes());
    }
    let defaults = Config::default();
    // `PROPTEST_DISABLE_FAILURE_PERSISTENCE` (read by `Config::default`) leaves none.
    let persistence = defaults
        .failure_persistence
        .is_some()
        .then(|| Box::new(FileFailurePersistence::Direct(REGRESSIONS)) as Box<_>);
    let config = Config {
        cases,
        failure_persistence: persistence,
        ..defaults
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes));
    runner
        .run(strategy, |v| test(v).map_err(TestCaseError::fail))
        .map_err(|e| format!("{e} (replay with TRIDENT_SEED={seed})"))
}

/// Instantiates one algorithm's conformance checks as `#[test]`s for backend type `$ty`,
/// built by the expression `$make` (of type `trident_core::Result<$ty>`) once per test
/// binary: `conformance_tests!(Cpu, Ok(Cpu::new()), spmv::checks; spmv_random_f32, …)`.
/// A final test asserts that the listed names are exactly the module's checks, in order.
#[macro_export]
macro_rules! conformance_tests {
    ($ty:ty, $make:expr, $module:ident :: $list:ident; $($name:ident),+ $(,)?) => {
        mod $module {
            #[allow(unused_imports)]
            use super::*;
            fn __conformance_backend() -> ::std::option::Option<&'static $ty> {
                static BACKEND: ::std::sync::OnceLock<::std::option::Option<$ty>> =
                    ::std::sync::OnceLock::new();
                BACKEND
                    .get_or_init(|| $crate::conformance::acquire::<$ty>($make))
                    .as_ref()
            }
            $(
                #[test]
                fn $name() {
                    if let ::std::option::Option::Some(b) = __conformance_backend() {
                        $crate::conformance::run_named(
                            b,
                            &$crate::conformance::$module::$list::<$ty>(),
                            stringify!($name),
                        );
                    }
                }
            )+
            #[test]
            fn suite_is_complete() {
                let listed: ::std::vec::Vec<&str> = $crate::conformance::$module::$list::<$ty>()
                    .iter()
                    .map(|c| c.name)
                    .collect();
                assert_eq!(listed, [$(stringify!($name)),+]);
            }
        }
    };
}
