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
                mpi: Some(mpi),
            });
        }
        Ok(Job {
            comm: Box::new(Solo),
            distributed: false,
            #[cfg(feature = "mpi")]
            mpi: None,
        })
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
    /// ends every rank (MPI_Abort), so that none waits for it.
    pub fn fail(&self, e: &Error) {
        if self.comm.size() > 1 {
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
