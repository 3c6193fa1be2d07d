//! The graph a host's first rank read, passed to the host's other ranks through one
//! shared-memory window ([`share_on_host`]), or only the part of it each of them needs,
//! built from the window in place ([`share_on_host_or_part`]).

use super::Comm;
use crate::error::{Error, Result};
use crate::graph::Graph;

/// The read of the host's first rank (its error, if it failed), `None` on the host's other
/// ranks; a read offered by a rank that is not the host's first, or none by the first, is an
/// error of `what`.
pub(super) fn first_rank_read<T>(
    c: &dyn Comm,
    read: Option<Result<T>>,
    what: &'static str,
) -> Result<Option<T>> {
    match (c.host_ranks().0 == 0, read) {
        (true, Some(r)) => r.map(Some),
        (false, None) => Ok(None),
        _ => Err(Error::invalid(
            what,
            "the host's first rank, and only it, reads the graph",
        )),
    }
}

/// A graph read once on each host: `read`, the graph that the first rank of this host read
/// (`Some` there, `None` on the host's other ranks, [`Comm::host_ranks`]), is passed to
/// every rank of the host through [`Comm::host_share`] (one shared-memory window per host
/// over MPI), and every rank returns its own copy, the same graph node for node (labels,
/// weights, the build's counts and notes included). A first rank whose read failed returns
/// its error without entering the collective (the caller ends the job; the host's other
/// ranks wait for it until then), so every rank must call this with the first rank's read
/// already done. Collective over all ranks. With the graph, whether it was shared: on a host
/// without room for the shared window (`/dev/shm` too small) it was not, and the host's other
/// ranks get `None` (they read the file themselves).
pub fn share_on_host(c: &dyn Comm, read: Option<Result<Graph>>) -> Result<(Option<Graph>, bool)> {
    let (x, shared) = share::<()>(c, read, None)?;
    Ok((
        x.map(|x| match x {
            GraphOrPart::Graph(g) => *g,
            GraphOrPart::Part(()) => unreachable!("no part asked for"),
        }),
        shared,
    ))
}

/// What a later rank of a host builds from the shared adjacency ([`share_on_host_or_part`]).
pub type PartOf<'f, R> = dyn FnMut(crate::graph::Adjacency<'_>) -> Result<Option<R>> + 'f;

/// What [`share_on_host_or_part`] gives a rank.
pub enum GraphOrPart<R> {
    /// The graph: the host's first rank's own, or the shared one copied out.
    Graph(Box<Graph>),
    /// What the caller built from the shared adjacency, read in place.
    Part(R),
}

/// [`share_on_host`], for ranks that need only a part of what can be built from the graph's
/// adjacency (R-MCL's columns of `M_G` and of the starting `M`): each of the host's other
/// ranks hands the shared bytes' adjacency, read in place, to `part`, and keeps what it
/// returns instead of a copy of the graph. Where `part` returns `None` (work that needs the
/// whole graph), or the bytes cannot be read in place, the rank copies the graph out as
/// [`share_on_host`] does. The host's first rank keeps its graph. Collective over all ranks,
/// as [`share_on_host`].
pub fn share_on_host_or_part<R>(
    c: &dyn Comm,
    read: Option<Result<Graph>>,
    part: &mut PartOf<'_, R>,
) -> Result<(Option<GraphOrPart<R>>, bool)> {
    share(c, read, Some(part))
}

/// [`share_on_host_or_part`], and without `part` [`share_on_host`] (every later rank copies
/// the graph out).
fn share<R>(
    c: &dyn Comm,
    read: Option<Result<Graph>>,
    mut part: Option<&mut PartOf<'_, R>>,
) -> Result<(Option<GraphOrPart<R>>, bool)> {
    let mine = first_rank_read(c, read, "share_on_host")?;
    let len = mine.as_ref().map_or(0, Graph::bytes_len);
    let mut got = None;
    let shared = c.host_share(
        len,
        &mut |out| {
            if let Some(g) = &mine {
                g.write_bytes(out);
            }
        },
        &mut |bytes| {
            if mine.is_none() {
                let built = match &mut part {
                    Some(part) => match crate::graph::bytes::adjacency_in(bytes)? {
                        Some(a) => part(a)?,
                        None => None,
                    },
                    None => None,
                };
                got = Some(match built {
                    Some(r) => GraphOrPart::Part(r),
                    None => GraphOrPart::Graph(Box::new(Graph::from_bytes(bytes)?)),
                });
            }
            Ok(())
        },
    )?;
    match (mine, got) {
        (Some(g), _) => Ok((Some(GraphOrPart::Graph(Box::new(g))), shared)),
        (None, Some(x)) => Ok((Some(x), shared)),
        (None, None) if !shared => Ok((None, false)),
        (None, None) => Err(Error::invalid(
            "share_on_host",
            "no graph came from the host's first rank",
        )),
    }
}
