//! Standard output through one checked writer.
//!
//! Every line a command prints goes through [`print`] (the [`outln!`](crate::outln) macro,
//! or `println!`, which this crate shadows with [`print_or_record`]), never std's `println!`,
//! which panics when the write fails. A closed pipe (`trident … | head -1`,
//! EPIPE) ends the printing quietly: later lines are dropped, the command finishes its work
//! (its output files are still written) and exits as it would have. Any other failure (a
//! full disk, `> /dev/full`) is an error naming standard output.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use trident_core::{Error, Result};

/// The name standard output has in errors.
pub const STDOUT_NAME: &str = "<stdout>";

/// Set once a write met a closed pipe: nothing more is written.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Drops everything printed on standard output from now on (the ranks of a job other than
/// rank 0, which alone prints).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn silence() {
    CLOSED.store(true, Ordering::Relaxed);
    QUIET.store(true, Ordering::Relaxed);
}

/// Set on the ranks of a job other than rank 0: [`note`] prints nothing (their errors go
/// through [`error_note`]).
static QUIET: AtomicBool = AtomicBool::new(false);

/// [`note`] whatever [`silence`] said: a rank's error.
///
/// The line goes out in one write: standard error is unbuffered, and under mpirun a line
/// written in pieces can be cut by the launcher's own messages (its abort notice).
pub fn error_note(args: std::fmt::Arguments<'_>) {
    let line = format!("{args}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Prints formatted text on standard output, checked.
pub fn print(args: std::fmt::Arguments<'_>) -> Result<()> {
    if CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut s = std::io::stdout().lock();
    checked(s.write_fmt(args))
}

/// Writes bytes on standard output, checked.
pub fn write_bytes(bytes: &[u8]) -> Result<()> {
    if CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut s = std::io::stdout().lock();
    checked(s.write_all(bytes))
}

/// [`print`] for `println!` (which cannot return an error): a failure is recorded, later
/// lines are dropped, and [`flush`] reports it at the end of the command.
#[allow(dead_code)] // used by the shadowed `println!`, where a command uses it
pub fn print_or_record(args: std::fmt::Arguments<'_>) {
    if let Err(e) = print(args) {
        let mut r = RECORDED.lock().unwrap_or_else(|p| p.into_inner());
        if r.is_none() {
            *r = Some(e);
        }
        CLOSED.store(true, Ordering::Relaxed);
    }
}

/// The first failure met by [`print_or_record`].
static RECORDED: std::sync::Mutex<Option<Error>> = std::sync::Mutex::new(None);

/// Flushes standard output, checked (at the end of every command); reports a failure that
/// [`print_or_record`] met.
pub fn flush() -> Result<()> {
    if let Some(e) = RECORDED.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(e);
    }
    if CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    checked(std::io::stdout().lock().flush())
}

/// A write's result: a closed pipe is not an error (it ends the printing), anything else is
/// an error naming standard output.
pub fn checked(r: std::io::Result<()>) -> Result<()> {
    match r {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        Err(source) => Err(Error::Io {
            path: STDOUT_NAME.into(),
            source,
        }),
    }
}

/// Writes a line on standard error; a failure to (a closed or full stderr) is ignored, never
/// a panic: there is nowhere left to report it.
pub fn note(args: std::fmt::Arguments<'_>) {
    if QUIET.load(Ordering::Relaxed) {
        return;
    }
    let mut e = std::io::stderr().lock();
    let _ = e.write_fmt(args);
    let _ = e.write_all(b"\n");
}

/// `println!` through [`print`]: evaluates to [`Result`]`<()>`.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::out::print(format_args!("\n"))
    };
    ($($t:tt)*) => {
        $crate::out::print(format_args!("{}\n", format_args!($($t)*)))
    };
}

/// `eprintln!` that never panics (see [`note`]).
#[macro_export]
macro_rules! errln {
    ($($t:tt)*) => {
        $crate::out::note(format_args!($($t)*))
    };
}
