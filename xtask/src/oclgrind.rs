//! Oclgrind, the OpenCL simulator with a data-race detector: races that PoCL (which runs a
//! work-group's items in lock step between barriers) cannot show. Used by `xtask test` (the
//! race step) and `xtask mutants` (a mutant that survives PoCL is run again under it).
//!
//! Oclgrind is used as an ICD (its `liboclgrind-rt-icd.so` in a private vendors folder,
//! `OCL_ICD_VENDORS`), and the tests pick its platform by name (`TRIDENT_OPENCL_PLATFORM`).
//! It runs one kernel at a time (so `--test-threads=1`) and writes what it finds to a log.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{Context, Result};

/// Where Debian and a source install put the ICD library.
const ICD_LIBS: [&str; 4] = [
    "/usr/lib/oclgrind/liboclgrind-rt-icd.so",
    "/usr/lib/x86_64-linux-gnu/liboclgrind-rt-icd.so",
    "/usr/local/lib/liboclgrind-rt-icd.so",
    "/usr/lib/liboclgrind-rt-icd.so",
];

/// A vendors folder (under the target directory) that registers only Oclgrind, or `None`
/// when Oclgrind is not installed.
pub fn vendors() -> Result<Option<PathBuf>> {
    let Some(lib) = ICD_LIBS.iter().map(Path::new).find(|p| p.is_file()) else {
        return Ok(None);
    };
    let dir = crate::util::target_dir().join("oclgrind-icd");
    std::fs::create_dir_all(&dir).context(format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("oclgrind.icd"), format!("{}\n", lib.display()))
        .context("writing oclgrind.icd")?;
    Ok(Some(dir))
}

/// Makes `cmd` (a conformance test binary) run on Oclgrind with race detection, logging to
/// `log`: one test at a time, one random case per property.
pub fn configure(cmd: &mut Command, vendors: &Path, log: &Path) {
    let _ = std::fs::remove_file(log);
    cmd.arg("--test-threads=1")
        .env("OCL_ICD_VENDORS", vendors)
        .env("TRIDENT_OPENCL_PLATFORM", "Oclgrind")
        .env("OCLGRIND_DATA_RACES", "1")
        // 64 KiB of local memory (Oclgrind's default 32 KiB is less than R-MCL's local
        // column pass asks of the devices it runs on).
        .env("OCLGRIND_LOCAL_MEM_SIZE", "65536")
        .env("OCLGRIND_LOG", log)
        .env("PROPTEST_CASES", "1")
        // A failure here (a race's wrong result) is not a case for the committed file.
        .env("PROPTEST_DISABLE_FAILURE_PERSISTENCE", "1");
}

/// The reports in an Oclgrind log (the first line of each: "Read-write data race at ...",
/// "Invalid read of size 4 at ...", ...).
pub fn reports(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with(char::is_whitespace))
        .map(str::to_string)
        .collect()
}
