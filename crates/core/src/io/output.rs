//! Output paths, checked before any work: never an input, and writable.

use std::path::Path;

use crate::error::{Error, Result};

/// Checks, before any computation, that `output` can be written and is none of `inputs`.
///
/// Refuses an output that is the same file as an input (by device and inode where the
/// platform has them, else by canonical path), a directory, or a path in a folder that does
/// not exist or cannot be written. An output that does not exist yet is created and removed
/// again to prove it can be written.
pub fn check_output(output: &Path, inputs: &[&Path]) -> Result<()> {
    let err = |msg: String| Error::Io {
        path: output.to_path_buf(),
        source: std::io::Error::other(msg),
    };
    if output.as_os_str() == "-" {
        return Err(err(
            "writing to standard output is not supported here".into()
        ));
    }
    if let Ok(meta) = std::fs::metadata(output) {
        if meta.is_dir() {
            return Err(err("is a directory".into()));
        }
        for input in inputs {
            if same_file(output, input) {
                return Err(err(format!(
                    "is the input file {}; refusing to overwrite an input",
                    input.display()
                )));
            }
        }
        // Exists: open for writing without truncating, to prove permission.
        std::fs::OpenOptions::new()
            .write(true)
            .open(output)
            .map_err(|source| Error::Io {
                path: output.to_path_buf(),
                source,
            })?;
        return Ok(());
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(output)
        .map_err(|source| Error::Io {
            path: output.to_path_buf(),
            source,
        })?;
    let _ = std::fs::remove_file(output);
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
