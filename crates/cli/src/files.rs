//! Every command's files, declared up front: the one mechanism by which commands write.
//!
//! A command lists all its inputs and outputs in [`Files::declare`] before it reads,
//! computes or opens a backend. Every output is checked then (writable, not a directory, not
//! an input — by device and inode, so through symbolic and hard links too — and no two
//! outputs the same file: [`trident_core::io::check_outputs`]). The results are written with
//! [`Files::write`] into temporary files beside their destinations, and [`Files::commit`]
//! puts them all in place at the end, after every one has been written: a failure at any
//! point leaves no half-written file and no clobbered old one.

use std::path::{Path, PathBuf};

use trident_core::io::{self, OutputFile};
use trident_core::{Error, Result};

/// A command's declared outputs and the ones written so far.
pub struct Files {
    outputs: Vec<PathBuf>,
    pending: Vec<OutputFile>,
}

impl Files {
    /// Declares a command's inputs and outputs (absent options as `None`) and checks every
    /// output before any work.
    pub fn declare(inputs: &[Option<&Path>], outputs: &[Option<&Path>]) -> Result<Files> {
        let inputs: Vec<&Path> = inputs.iter().flatten().copied().collect();
        let outputs: Vec<&Path> = outputs.iter().flatten().copied().collect();
        io::check_outputs(&outputs, &inputs)?;
        Ok(Files {
            outputs: outputs.iter().map(|p| p.to_path_buf()).collect(),
            pending: Vec::new(),
        })
    }

    /// Writes the declared output `path` with `write` (into a temporary file: nothing is in
    /// place until [`commit`](Self::commit)). I/O errors name `path`.
    pub fn write(
        &mut self,
        path: &Path,
        write: impl FnOnce(&mut OutputFile) -> std::io::Result<()>,
    ) -> Result<()> {
        if !self.outputs.iter().any(|p| p == path) {
            return Err(Error::invalid(
                "output",
                format!("{} was not declared as an output", path.display()),
            ));
        }
        let mut f = OutputFile::create(path)?;
        write(&mut f).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        self.pending.push(f);
        Ok(())
    }

    /// Puts every written output in place (all flushed to the disk first, then renamed).
    pub fn commit(self) -> Result<()> {
        io::commit_all(self.pending)
    }
}
