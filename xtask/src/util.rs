//! What every subcommand shares: the error type, the workspace and target locations, and
//! small process and file helpers.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why a subcommand stopped.
#[derive(Debug)]
pub enum Error {
    /// The command line is wrong: print the message and the usage, exit 2.
    Usage(String),
    /// The task ran and failed (a build, a check, a missing tool): exit 1.
    Failed(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) | Error::Failed(m) => f.write_str(m),
        }
    }
}

/// Result of a subcommand.
pub type Result<T = ()> = std::result::Result<T, Error>;

/// A [`Error::Failed`] with this message.
pub fn fail(msg: impl Into<String>) -> Error {
    Error::Failed(msg.into())
}

/// A [`Error::Usage`] with this message.
pub fn usage(msg: impl Into<String>) -> Error {
    Error::Usage(msg.into())
}

/// Adds what was being done to an error's message.
pub trait Context<T> {
    /// `Err(e)` becomes `Failed("{what}: {e}")`.
    fn context(self, what: impl fmt::Display) -> Result<T>;
}

impl<T, E: fmt::Display> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl fmt::Display) -> Result<T> {
        self.map_err(|e| fail(format!("{what}: {e}")))
    }
}

/// The workspace root: the parent of this package's manifest directory when it still exists
/// (the usual `cargo xtask` case), else the nearest ancestor of the current directory with a
/// `Cargo.toml` that declares `[workspace]`, else the current directory.
pub fn workspace_root() -> PathBuf {
    let built = Path::new(env!("CARGO_MANIFEST_DIR"));
    if let Some(root) = built.parent() {
        if root.join("Cargo.toml").is_file() {
            return root.to_path_buf();
        }
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    cwd.ancestors()
        .find(|d| {
            std::fs::read_to_string(d.join("Cargo.toml")).is_ok_and(|t| t.contains("[workspace]"))
        })
        .map(Path::to_path_buf)
        .unwrap_or(cwd)
}

/// The cargo that runs us (`$CARGO`), else `cargo` from `PATH`.
pub fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root());
    cmd
}

/// `cargo run` of this xtask with the `backends` feature (the build that links every backend),
/// ready for the subcommand and its arguments.
#[cfg_attr(feature = "backends", allow(dead_code))]
pub fn xtask_with_backends() -> Command {
    let mut cmd = cargo();
    cmd.args([
        "run",
        "--quiet",
        "--release",
        "-p",
        "xtask",
        "--features",
        "backends",
        "--",
    ]);
    cmd
}

/// The workspace's target directory as cargo sees it (`CARGO_TARGET_DIR`, config files), from
/// `cargo metadata`; falls back to `CARGO_TARGET_DIR` or `<root>/target` if cargo can't say.
pub fn target_dir() -> PathBuf {
    let from_cargo = cargo()
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok())
        .and_then(|v| v["target_directory"].as_str().map(PathBuf::from));
    from_cargo.unwrap_or_else(|| match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => workspace_root().join(d),
        None => workspace_root().join("target"),
    })
}

/// True for an existing regular file with an execute bit.
pub fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(feature = "backends")]
/// Files directly in `dir` whose name ends with `.{ext}`, sorted; empty if `dir` is missing.
pub fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}

/// `path` relative to the workspace root when it is inside it (for messages).
pub fn rel(path: &Path) -> String {
    let root = workspace_root();
    path.strip_prefix(&root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// `bytes` in B, KiB or MiB.
pub fn human_size(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b >= KIB * KIB {
        format!("{:.1} MiB", b / (KIB * KIB))
    } else if b >= KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{bytes} B")
    }
}

/// Parses `--flag VALUE` / `--flag=VALUE` out of `args`: returns the value of the current
/// argument (advancing `i` past a separate value), or `None` if `args[*i]` is not `flag`.
pub fn flag_value(args: &[String], i: &mut usize, flag: &str) -> Result<Option<String>> {
    let a = &args[*i];
    if let Some(v) = a.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
        return Ok(Some(v.to_string()));
    }
    if a != flag {
        return Ok(None);
    }
    *i += 1;
    args.get(*i)
        .cloned()
        .map(Some)
        .ok_or_else(|| usage(format!("{flag} needs a value")))
}
