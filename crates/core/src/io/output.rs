//! Output files: checked before any work, written whole or not at all.
//!
//! A command declares all its inputs and outputs up front and calls [`check_outputs`] before
//! it reads or computes anything: every output must be writable, must not be a directory,
//! must not be any input (compared by device and inode, so a symbolic or hard link to an
//! input is caught), and no two outputs may be the same file. The outputs are then written
//! through [`OutputFile`]: into a temporary file in the destination's directory, renamed
//! over the destination only by [`OutputFile::commit`], so that a failure (a full disk, an
//! error in a later phase, a second output that cannot be written) never leaves a
//! half-written file or a clobbered old one. [`commit_all`] renames a command's outputs
//! together, after all of them have been written.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// Checks, before any computation, that `output` can be written and is none of `inputs`:
/// [`check_outputs`] for one output.
pub fn check_output(output: &Path, inputs: &[&Path]) -> Result<()> {
    check_outputs(&[output], inputs)
}

/// Checks, before any computation, every output of a command against its inputs.
///
/// Refuses an output that is `-`, a directory, the same file as an input (by device and
/// inode where the platform has them, else by canonical path; an input `-` is standard input,
/// compared as the file it reads), the same file as another output, an existing file that
/// cannot be opened for writing, or a path in a folder that does not exist or cannot be
/// written (proved by creating and removing a temporary file there). Nothing is created or
/// changed at the outputs' paths.
pub fn check_outputs(outputs: &[&Path], inputs: &[&Path]) -> Result<()> {
    let mut resolved: Vec<PathBuf> = Vec::with_capacity(outputs.len());
    for (i, &output) in outputs.iter().enumerate() {
        let err = |msg: String| out_err(output, msg);
        if output.as_os_str() == "-" {
            return Err(err(
                "writing to standard output is not supported here".into()
            ));
        }
        let meta = std::fs::metadata(output).ok();
        if meta.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(err("is a directory".into()));
        }
        if let Some(m) = meta.as_ref().filter(|m| !m.is_file()) {
            // A device or a FIFO (/dev/null, /dev/stdout, a named pipe): written in place,
            // where writing destroys no file. A device must open (a FIFO is not opened here:
            // its reader would see the end of the stream).
            if !is_fifo(m) {
                OpenOptions::new()
                    .write(true)
                    .open(output)
                    .map_err(|source| io_err(output, source))?;
            }
            resolved.push(output.to_path_buf());
            continue;
        }
        for input in inputs {
            if same_file(output, input) {
                return Err(err(format!(
                    "is the input file {}; refusing to overwrite an input",
                    input.display()
                )));
            }
        }
        let dest = destination(output)?;
        for (j, other) in outputs[..i].iter().enumerate() {
            if resolved[j] == dest || same_file(output, other) {
                return Err(err(format!(
                    "is also the output {}; two outputs cannot be the same file",
                    other.display()
                )));
            }
        }
        if meta.is_some() {
            // Exists: open for writing without truncating, to prove permission.
            OpenOptions::new()
                .write(true)
                .open(output)
                .map_err(|source| io_err(output, source))?;
        }
        // The temporary file it will be written through can be made beside it.
        let (tmp, f) = temporary(&dest).map_err(|source| io_err(output, source))?;
        drop(f);
        let _ = std::fs::remove_file(tmp);
        resolved.push(dest);
    }
    Ok(())
}

fn out_err(output: &Path, msg: String) -> Error {
    io_err(output, std::io::Error::other(msg))
}

fn io_err(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn is_fifo(m: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        m.file_type().is_fifo()
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        false
    }
}

/// The file an output path names once symbolic links are followed: the canonical path of an
/// existing file, else the canonical folder joined with the file name; a device or a FIFO
/// (e.g. `/dev/stdout`, whose link may lead to a pipe) as given.
fn destination(output: &Path) -> Result<PathBuf> {
    if std::fs::metadata(output).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Ok(output.to_path_buf());
    }
    if let Ok(p) = output.canonicalize() {
        return Ok(p);
    }
    if std::fs::symlink_metadata(output).is_ok() {
        return Err(out_err(
            output,
            "is a symbolic link to nothing (a dangling link)".into(),
        ));
    }
    let name = output
        .file_name()
        .ok_or_else(|| out_err(output, "names no file".into()))?;
    let parent = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = parent.canonicalize().map_err(|e| {
        out_err(
            output,
            format!("cannot be written: folder {}: {e}", parent.display()),
        )
    })?;
    Ok(dir.join(name))
}

/// A fresh temporary file beside `dest` (same folder, so that a rename replaces `dest`).
fn temporary(dest: &Path) -> std::io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = dest.parent().unwrap_or(Path::new("."));
    let name = dest
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Whether two paths name the same file (following symbolic links).
fn same_file(a: &Path, b: &Path) -> bool {
    let stdin = Path::new("/dev/stdin");
    let b = if b.as_os_str() == "-" && cfg!(unix) {
        stdin
    } else {
        b
    };
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

/// An output being written: a temporary file beside the destination, renamed over it by
/// [`commit`](Self::commit), removed if dropped uncommitted. A destination that is a device
/// or a FIFO (e.g. `/dev/null`) is written in place. A symbolic link is followed: its target
/// is replaced, with the target's permissions kept.
pub struct OutputFile {
    /// The path as given (for messages).
    path: PathBuf,
    /// Where the file goes once committed.
    dest: PathBuf,
    /// The temporary file, until committed (None: written in place).
    tmp: Option<PathBuf>,
    w: BufWriter<File>,
}

impl OutputFile {
    /// Starts writing `path`. Errors name `path`.
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let dest = destination(path)?;
        let meta = std::fs::metadata(&dest).ok();
        if meta.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(out_err(path, "is a directory".into()));
        }
        if meta.as_ref().is_some_and(|m| !m.is_file()) {
            let f = OpenOptions::new()
                .write(true)
                .open(&dest)
                .map_err(|source| io_err(path, source))?;
            return Ok(Self {
                path: path.to_path_buf(),
                dest,
                tmp: None,
                w: BufWriter::with_capacity(1 << 20, f),
            });
        }
        let (tmp, f) = temporary(&dest).map_err(|source| io_err(path, source))?;
        let out = Self {
            path: path.to_path_buf(),
            dest,
            tmp: Some(tmp),
            w: BufWriter::with_capacity(1 << 20, f),
        };
        if let Some(m) = meta {
            // Replacing a file keeps its permissions.
            if let Some(tmp) = &out.tmp {
                std::fs::set_permissions(tmp, m.permissions())
                    .map_err(|source| io_err(path, source))?;
            }
        }
        Ok(out)
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes everything out and puts the file in place (renames the temporary file over
    /// the destination).
    pub fn commit(mut self) -> Result<()> {
        self.finish()?;
        self.rename()
    }

    /// Flushes the buffer and the file's data to the disk (an error here is the write's).
    fn finish(&mut self) -> Result<()> {
        self.w
            .flush()
            .map_err(|source| io_err(&self.path, source))?;
        if self.tmp.is_some() {
            self.w
                .get_ref()
                .sync_all()
                .map_err(|source| io_err(&self.path, source))?;
        }
        Ok(())
    }

    fn rename(&mut self) -> Result<()> {
        if let Some(tmp) = &self.tmp {
            std::fs::rename(tmp, &self.dest).map_err(|source| io_err(&self.path, source))?;
        }
        self.tmp = None;
        Ok(())
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.w.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.w.write_all(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Commits several outputs together: all are flushed to the disk first (any failure leaves
/// every destination untouched), then renamed into place.
pub fn commit_all(files: Vec<OutputFile>) -> Result<()> {
    let mut files = files;
    for f in &mut files {
        f.finish()?;
    }
    for f in &mut files {
        f.rename()?;
    }
    Ok(())
}

/// Writes one file whole or not at all: `write` fills an [`OutputFile`] at `path`, committed
/// only if it succeeds. I/O errors name `path`.
pub fn write_file(
    path: &Path,
    write: impl FnOnce(&mut OutputFile) -> std::io::Result<()>,
) -> Result<()> {
    let mut f = OutputFile::create(path)?;
    write(&mut f).map_err(|source| io_err(path, source))?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("trident-output-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn outputs_are_checked_against_inputs_and_each_other() {
        let d = dir("check");
        let input = d.join("in.txt");
        std::fs::write(&input, "x").unwrap();
        let e = check_outputs(&[&input], &[&input]).unwrap_err().to_string();
        assert!(e.contains("refusing to overwrite an input"), "{e}");
        // Through a hard link and a symbolic link, and through another spelling.
        let hard = d.join("hard.txt");
        let _ = std::fs::remove_file(&hard);
        std::fs::hard_link(&input, &hard).unwrap();
        assert!(check_outputs(&[&hard], &[&input]).is_err());
        #[cfg(unix)]
        {
            let soft = d.join("soft.txt");
            let _ = std::fs::remove_file(&soft);
            std::os::unix::fs::symlink(&input, &soft).unwrap();
            assert!(check_outputs(&[&soft], &[&input]).is_err());
        }
        let dotted = d.join(".").join("in.txt");
        assert!(check_outputs(&[&dotted], &[&input]).is_err());
        // Two outputs, the same new file.
        let new = d.join("new.txt");
        let new2 = d.join(".").join("new.txt");
        let e = check_outputs(&[&new, &new2], &[&input])
            .unwrap_err()
            .to_string();
        assert!(e.contains("two outputs"), "{e}");
        assert!(!new.exists());
        // A missing folder, a folder.
        let missing = d.join("missing").join("x.txt");
        assert!(check_outputs(&[&new, &missing], &[&input]).is_err());
        assert!(check_outputs(&[&d], &[&input]).is_err());
        check_outputs(&[&new], &[&input]).unwrap();
        assert!(!new.exists(), "a check creates nothing");
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn an_uncommitted_output_leaves_the_old_file() {
        let d = dir("commit");
        let p = d.join("out.txt");
        std::fs::write(&p, "old").unwrap();
        {
            let mut f = OutputFile::create(&p).unwrap();
            f.write_all(b"new").unwrap();
            // dropped: not committed
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        let mut f = OutputFile::create(&p).unwrap();
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        let left: Vec<_> = std::fs::read_dir(&d).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
        std::fs::remove_dir_all(&d).ok();
    }
}
