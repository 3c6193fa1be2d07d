//! Ranks as threads of one process ([`run`]): a [`Comm`] for tests of the distributed
//! algorithms at any number of ranks without an MPI launcher. A rank that returns an error
//! fails every other rank's next collective, as an MPI abort ends a job.

use std::sync::{Condvar, Mutex};

use super::{Comm, Op};
use crate::error::{Error, Result};

/// What the ranks of one [`run`] share.
struct Shared {
    size: usize,
    state: Mutex<State>,
    turn: Condvar,
}

struct State {
    /// `slots[from * size + to]`: bytes from rank `from` for rank `to`.
    slots: Vec<Option<Vec<u8>>>,
    /// Ranks arrived at the current barrier, and its generation.
    arrived: usize,
    generation: u64,
    /// A rank failed: every collective fails from now on.
    failed: Option<usize>,
}

/// One rank of a [`run`].
pub struct ThreadComm<'a> {
    rank: usize,
    shared: &'a Shared,
}

/// Runs `f` on `size` ranks, each a thread with its [`ThreadComm`], and returns their
/// results in rank order.
pub fn run<R: Send>(
    size: usize,
    f: impl Fn(&ThreadComm<'_>) -> Result<R> + Sync,
) -> Vec<Result<R>> {
    let shared = Shared {
        size,
        state: Mutex::new(State {
            slots: vec![None; size * size],
            arrived: 0,
            generation: 0,
            failed: None,
        }),
        turn: Condvar::new(),
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..size)
            .map(|rank| {
                let (shared, f) = (&shared, &f);
                s.spawn(move || {
                    let c = ThreadComm { rank, shared };
                    let r = f(&c);
                    if r.is_err() {
                        let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
                        st.failed.get_or_insert(rank);
                        shared.turn.notify_all();
                    }
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::backend("threads", "a rank panicked")))
            })
            .collect()
    })
}

impl ThreadComm<'_> {
    fn failed(rank: usize) -> Error {
        Error::other_rank(rank, "a collective of thread-ranks")
    }

    /// Waits until every rank has arrived (or one has failed).
    fn barrier(&self) -> Result<()> {
        let sh = self.shared;
        let mut st = sh.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = st.failed {
            return Err(Self::failed(r));
        }
        let generation = st.generation;
        st.arrived += 1;
        if st.arrived == sh.size {
            st.arrived = 0;
            st.generation += 1;
            sh.turn.notify_all();
            return Ok(());
        }
        while st.generation == generation {
            if let Some(r) = st.failed {
                return Err(Self::failed(r));
            }
            st = sh.turn.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        Ok(())
    }

    /// `out[to]` sent to every rank `to`; returns what each rank sent here.
    fn exchange(&self, out: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        let p = self.shared.size;
        {
            let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            for (to, b) in out.into_iter().enumerate() {
                st.slots[self.rank * p + to] = Some(b);
            }
        }
        self.barrier()?;
        let got = {
            let mut st = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
            (0..p)
                .map(|from| st.slots[from * p + self.rank].take().unwrap_or_default())
                .collect()
        };
        self.barrier()?;
        Ok(got)
    }

    fn all_reduce<
        T: bytemuck::Pod + Ord + std::ops::BitOr<Output = T> + num_traits::WrappingAdd,
    >(
        &self,
        v: &mut [T],
        op: Op,
    ) -> Result<()> {
        let mine: &[u8] = bytemuck::cast_slice(v);
        let got = self.exchange(vec![mine.to_vec(); self.shared.size])?;
        let all: Vec<Vec<T>> = got
            .iter()
            .map(|b| {
                let mut v = vec![T::zeroed(); b.len() / std::mem::size_of::<T>()];
                bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(b);
                v
            })
            .collect();
        for (i, x) in v.iter_mut().enumerate() {
            *x = all[1..].iter().fold(all[0][i], |a, r| op.apply(a, r[i]));
        }
        Ok(())
    }
}

impl Comm for ThreadComm<'_> {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.shared.size
    }
    fn local_rank(&self) -> usize {
        self.rank
    }
    fn engine(&self) -> String {
        "threads".into()
    }
    fn host(&self) -> String {
        "localhost".into()
    }
    fn all_reduce_u64(&self, v: &mut [u64], op: Op) -> Result<()> {
        self.all_reduce(v, op)
    }
    fn all_reduce_u32(&self, v: &mut [u32], op: Op) -> Result<()> {
        self.all_reduce(v, op)
    }
    fn all_to_all_counts(&self, counts: &[u64]) -> Result<Vec<u64>> {
        let out = counts.iter().map(|k| k.to_le_bytes().to_vec()).collect();
        let got = self.exchange(out)?;
        Ok(got
            .iter()
            .map(|b| u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8])))
            .collect())
    }
    fn all_to_all_into(
        &self,
        send: &[u8],
        send_counts: &[usize],
        recv: &mut [u8],
        _: &[usize],
    ) -> Result<()> {
        let mut out = Vec::with_capacity(send_counts.len());
        let mut at = 0;
        for &k in send_counts {
            out.push(send[at..at + k].to_vec());
            at += k;
        }
        recv.copy_from_slice(&self.exchange(out)?.concat());
        Ok(())
    }
    fn all_gather_into(&self, mine: &[u8], recv: &mut [u8], _: &[usize]) -> Result<()> {
        let got = self.exchange(vec![mine.to_vec(); self.shared.size])?;
        recv.copy_from_slice(&got.concat());
        Ok(())
    }
}
