//! The processes of this run: one, or the ranks of an MPI job (`mpirun -np N trident …`,
//! with the `mpi` feature). Rank 0 alone prints and writes files; the other ranks' standard
//! output is silenced, and a rank that fails prints its error and ends the whole job.

use trident_core::dist::{Comm, Solo};
use trident_core::{Error, Result};

/// This run's processes.
pub struct Job {
    comm: Box<dyn Comm>,
    /// Started by an MPI launcher (the distributed paths run, even at one rank).
    distributed: bool,
    /// When the job started (before MPI's start).
    started: std::time::Instant,
    #[cfg(feature = "mpi")]
    mpi: Option<std::rc::Rc<trident_mpi::Mpi>>,
}

/// A [`Comm`] that forwards to a shared MPI (the [`Job`] keeps it for aborting).
#[cfg(feature = "mpi")]
struct Shared(std::rc::Rc<trident_mpi::Mpi>);

#[cfg(feature = "mpi")]
impl Comm for Shared {
    fn rank(&self) -> usize {
        self.0.rank()
    }
    fn size(&self) -> usize {
        self.0.size()
    }
    fn local_rank(&self) -> usize {
        self.0.local_rank()
    }
    fn engine(&self) -> String {
        self.0.engine()
    }
    fn host(&self) -> String {
        self.0.host()
    }
    fn all_reduce_u64(&self, v: &mut [u64], op: trident_core::dist::Op) -> Result<()> {
        self.0.all_reduce_u64(v, op)
    }
    fn all_reduce_u32(&self, v: &mut [u32], op: trident_core::dist::Op) -> Result<()> {
        self.0.all_reduce_u32(v, op)
    }
    fn all_to_all_counts(&self, counts: &[u64]) -> Result<Vec<u64>> {
        self.0.all_to_all_counts(counts)
    }
    fn all_to_all_into(
        &self,
        send: &[u8],
        send_counts: &[usize],
        recv: &mut [u8],
        recv_counts: &[usize],
    ) -> Result<()> {
        self.0.all_to_all_into(send, send_counts, recv, recv_counts)
    }
    fn all_gather_into(&self, mine: &[u8], recv: &mut [u8], counts: &[usize]) -> Result<()> {
        self.0.all_gather_into(mine, recv, counts)
    }
    fn host_ranks(&self) -> (usize, usize) {
        self.0.host_ranks()
    }
    fn host_share(
        &self,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
        read: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<bool> {
        self.0.host_share(len, fill, read)
    }
}

impl Job {
    /// MPI when started by an MPI launcher and built with the `mpi` feature, else one
    /// process.
    pub fn start() -> Result<Job> {
        let started = std::time::Instant::now();
        #[cfg(feature = "mpi")]
        if trident_mpi::launched() {
            let mpi = std::rc::Rc::new(trident_mpi::Mpi::init()?);
            if mpi.rank() != 0 {
                crate::out::silence();
            }
            crate::select::set_local_rank(mpi.local_rank());
            return Ok(Job {
                comm: Box::new(Shared(mpi.clone())),
                distributed: true,
                started,
                mpi: Some(mpi),
            });
        }
        Ok(Job {
            comm: Box::new(Solo),
            distributed: false,
            started,
            #[cfg(feature = "mpi")]
            mpi: None,
        })
    }

    /// Seconds since the job started (MPI's start included).
    pub fn seconds(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// The communicator.
    pub fn comm(&self) -> &dyn Comm {
        &*self.comm
    }

    /// Whether the distributed paths run (started by an MPI launcher).
    pub fn distributed(&self) -> bool {
        self.distributed
    }

    /// Rank 0, the one that prints and writes.
    pub fn is_root(&self) -> bool {
        self.comm.rank() == 0
    }

    /// Refuses a command that runs on one process only, under a launcher with more ranks.
    pub fn single(&self, command: &str) -> Result<()> {
        if self.comm.size() > 1 {
            return Err(Error::Unsupported(format!(
                "`trident {command}` runs on one process; start it without mpirun \
                 (`triangles` and `cluster` run on many)"
            )));
        }
        Ok(())
    }

    /// After an error on this rank: in a job of several ranks, says which rank failed and
    /// ends every rank (MPI_Abort), so that none waits for it. An error that only says
    /// another rank failed ([`Error::OtherRank`]) waits first, up to [`OTHER_RANK_GRACE`],
    /// for that rank to report its own error and end the job, so that the job's message is
    /// the cause and not this echo of it.
    pub fn fail(&self, e: &Error) {
        if self.comm.size() > 1 {
            if e.is_other_rank() {
                std::thread::sleep(OTHER_RANK_GRACE);
            }
            crate::out::error_note(format_args!(
                "error: rank {} of {} ({}): {}",
                self.comm.rank(),
                self.comm.size(),
                self.comm.host(),
                trident_core::testing::Report(e)
            ));
            #[cfg(feature = "mpi")]
            if let Some(m) = &self.mpi {
                m.abort(1);
            }
        }
    }
}

/// How long a rank stopped by another rank's failure waits for that rank to end the job
/// ([`Job::fail`]) before it ends the job itself.
pub const OTHER_RANK_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// `--read` choices of `cluster` and `triangles` under mpirun.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReadChoice {
    /// The first rank of each host reads the file and passes the graph to the host's other
    /// ranks through shared memory.
    Host,
    /// Every rank reads the whole file.
    Whole,
    /// Each rank parses its byte range of an integer-id edge list (or Matrix Market file),
    /// and the ranks build the graph together (other inputs are read whole).
    Ranges,
}

/// How the ranks read their input (for the summary), where not each the whole file.
#[derive(Debug, Clone, Copy)]
pub enum ReadHow {
    /// In byte ranges, by this many ranks (and gathered whole on every rank).
    Ranges(usize),
    /// In byte ranges, by this many ranks, each keeping only its part.
    RangesColumns(usize),
    /// As `RangesColumns`, as a host had no room for the shared graph (`--read host`).
    NoRoomColumns(usize),
    /// Once per host (by its first rank, with this many threads), shared with this many
    /// ranks on this one.
    Host(usize, usize),
    /// By every rank, as the host had no room for the shared graph.
    NoRoom,
}

impl std::fmt::Display for ReadHow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadHow::Ranges(p) => write!(f, "in byte ranges by {p} ranks"),
            ReadHow::RangesColumns(p) => write!(
                f,
                "in byte ranges by {p} ranks, each holding only its columns"
            ),
            ReadHow::NoRoomColumns(p) => write!(
                f,
                "in byte ranges by {p} ranks, each holding only its columns: a host's shared \
                 memory (/dev/shm) has no room for the network"
            ),
            ReadHow::Host(threads, p) => write!(
                f,
                "once per host: by its first rank ({threads} threads), shared with its {p} ranks"
            ),
            ReadHow::NoRoom => write!(
                f,
                "by every rank: the host's shared memory (/dev/shm) has no room for it"
            ),
        }
    }
}

impl Job {
    /// The `--read` choice in effect: `host` by default under an MPI launcher, `whole` for a
    /// rank alone on its host (it reads the file itself) and for one process.
    pub fn read_choice(&self, asked: Option<ReadChoice>) -> ReadChoice {
        match asked.filter(|_| self.distributed) {
            None if !self.distributed => ReadChoice::Whole,
            None | Some(ReadChoice::Host) if self.comm.host_ranks().1 == 1 => ReadChoice::Whole,
            None => ReadChoice::Host,
            Some(c) => c,
        }
    }

    /// The threads with which the first rank of a host reads for all of the host's ranks
    /// (which wait meanwhile): its pool's size times their number, up to the cores it may
    /// run on.
    pub fn host_read_threads(&self) -> usize {
        let mine = rayon::current_num_threads();
        let cores = std::thread::available_parallelism().map_or(mine, |c| c.get());
        (mine * self.comm.host_ranks().1).min(cores.max(mine))
    }
}

/// `f` run on a pool of `threads` threads (on the caller's pool if one cannot be made).
pub fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(f),
        Err(_) => f(),
    }
}
