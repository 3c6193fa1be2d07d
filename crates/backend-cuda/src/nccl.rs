//! NCCL: the device-to-device exchange of ranks that each drive their own GPU
//! ([`Device::exchange_mem`](trident_core::device::Device::exchange_mem) for CUDA).
//!
//! `libnccl.so.2` is loaded on first use, as the CUDA driver is, so the binary starts where
//! NCCL is absent ([`set_library`] names another file). The communicator is bootstrapped
//! through the ranks' [`Comm`] (rank 0's unique id gathered by every rank), so nothing
//! assumes one host, and kept for the backend's life. NCCL runs only where every rank loaded
//! it and no two ranks share a GPU (NCCL refuses that), and only for two ranks or more;
//! otherwise every rank gets `None` and the caller moves the data through the host.

// FFI: every call says why it is sound in its `// SAFETY:` note.
#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::{Arc, Mutex, OnceLock};

use cust::stream::{Stream, StreamFlags};

use libloading::Library;
use trident_core::dist::{all_gather, Comm, Op};
use trident_core::{Error, Result};

use crate::driver;
use crate::memory::DevBuf;
use crate::{Cuda, Shared};

/// `ncclUniqueId`: 128 opaque bytes.
#[repr(C)]
#[derive(Clone, Copy)]
struct UniqueId {
    internal: [c_char; 128],
}

type RawComm = *mut c_void;
type NcclResult = c_int;
/// `ncclInt8`: exchanges are counted in bytes.
const NCCL_INT8: c_int = 0;
/// `ncclUint64`: the sums of [`Cuda::nccl_sum_u64`].
const NCCL_UINT64: c_int = 5;
/// `ncclSum`.
const NCCL_SUM: c_int = 0;

/// The NCCL entry points used here.
struct Api {
    get_unique_id: unsafe extern "C" fn(*mut UniqueId) -> NcclResult,
    comm_init_rank: unsafe extern "C" fn(*mut RawComm, c_int, UniqueId, c_int) -> NcclResult,
    comm_destroy: unsafe extern "C" fn(RawComm) -> NcclResult,
    send: unsafe extern "C" fn(
        *const c_void,
        usize,
        c_int,
        c_int,
        RawComm,
        *mut c_void,
    ) -> NcclResult,
    recv:
        unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, RawComm, *mut c_void) -> NcclResult,
    all_reduce: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        c_int,
        c_int,
        RawComm,
        *mut c_void,
    ) -> NcclResult,
    group_start: unsafe extern "C" fn() -> NcclResult,
    group_end: unsafe extern "C" fn() -> NcclResult,
    error_string: unsafe extern "C" fn(NcclResult) -> *const c_char,
    get_version: unsafe extern "C" fn(*mut c_int) -> NcclResult,
    // Declared last: the entry points above stay valid while it is loaded (for good: the
    // `OnceLock` never drops it).
    _lib: Library,
}

/// The environment variable through which the CLI names the NCCL library to load
/// ([`set_library`]); the library itself reads no environment.
pub const ENV_LIBRARY: &str = "TRIDENT_NCCL_LIBRARY";

/// The library [`set_library`] named (default `libnccl.so.2`, found by the dynamic loader).
static LIBRARY: Mutex<Option<std::path::PathBuf>> = Mutex::new(None);
/// The loaded library, or why it could not be loaded.
static API: OnceLock<std::result::Result<Api, String>> = OnceLock::new();

/// Names the NCCL library to load instead of `libnccl.so.2` (an empty path keeps the
/// default). `false` once NCCL has been loaded (or looked for): the choice comes too late.
pub fn set_library(path: &std::path::Path) -> bool {
    if API.get().is_some() {
        return false;
    }
    if path.as_os_str().is_empty() {
        return true;
    }
    *LIBRARY.lock().unwrap_or_else(|e| e.into_inner()) = Some(path.to_path_buf());
    true
}

fn api() -> std::result::Result<&'static Api, &'static str> {
    API.get_or_init(|| {
        let name = LIBRARY
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_else(|| "libnccl.so.2".into());
        // SAFETY: loading NCCL runs its initialisers, which have no preconditions; each symbol
        // is taken with the signature of `nccl.h` (NCCL 2.7 and later).
        unsafe {
            let lib = Library::new(&name).map_err(|e| format!("{}: {e}", name.display()))?;
            let sym = |s: &str| format!("{}: {s}", name.display());
            macro_rules! get {
                ($s:literal) => {
                    *lib.get($s.as_bytes())
                        .map_err(|e| format!("{}: {e}", sym($s)))?
                };
            }
            Ok(Api {
                get_unique_id: get!("ncclGetUniqueId"),
                comm_init_rank: get!("ncclCommInitRank"),
                comm_destroy: get!("ncclCommDestroy"),
                send: get!("ncclSend"),
                recv: get!("ncclRecv"),
                all_reduce: get!("ncclAllReduce"),
                group_start: get!("ncclGroupStart"),
                group_end: get!("ncclGroupEnd"),
                error_string: get!("ncclGetErrorString"),
                get_version: get!("ncclGetVersion"),
                _lib: lib,
            })
        }
    })
    .as_ref()
    .map_err(|e| e.as_str())
}

/// NCCL's version as `major.minor.patch`, or why it is not there.
pub fn version() -> std::result::Result<String, String> {
    let a = api().map_err(str::to_string)?;
    let mut v: c_int = 0;
    // SAFETY: `v` is a valid out-pointer for the call.
    check(a, unsafe { (a.get_version)(&mut v) }, "ncclGetVersion").map_err(|e| e.to_string())?;
    // NCCL_VERSION(X, Y, Z) = X * 10000 + Y * 100 + Z since 2.9.
    Ok(format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100))
}

fn check(a: &Api, rc: NcclResult, what: &str) -> Result<()> {
    if rc == 0 {
        return Ok(());
    }
    // SAFETY: NCCL returns a static NUL-terminated string for any result code.
    let msg = unsafe { CStr::from_ptr((a.error_string)(rc)) }.to_string_lossy();
    Err(Error::backend(
        driver::BACKEND,
        format!("NCCL {what}: {msg} (code {rc})"),
    ))
}

/// A communicator of the ranks of a [`Comm`] (by size and rank), destroyed on drop.
pub(crate) struct Communicator {
    raw: RawComm,
    key: (usize, usize),
}

// SAFETY: an NCCL communicator may be used from any thread, one call at a time: the backend
// keeps it behind a mutex.
unsafe impl Send for Communicator {}

impl Drop for Communicator {
    fn drop(&mut self) {
        if let Ok(a) = api() {
            // SAFETY: `raw` came from ncclCommInitRank and is destroyed once.
            unsafe { (a.comm_destroy)(self.raw) };
        }
    }
}

/// The backend's NCCL communicator: made on first use for the ranks of a [`Comm`], or
/// started by [`Cuda::nccl_connect`] on a thread of its own and taken on first use.
#[derive(Default)]
pub(crate) struct State {
    made: Option<Communicator>,
    /// A communicator being made in the background, for the ranks (size, rank) of the key.
    pending: Option<Pending>,
}

/// A communicator being made on a thread of its own, for the ranks `(size, rank)`.
type Pending = (
    (usize, usize),
    std::thread::JoinHandle<Result<Communicator>>,
);

impl Drop for State {
    fn drop(&mut self) {
        // A communicator still being made is waited for (and then destroyed), so that no
        // thread of NCCL's outlives the backend's context.
        if let Some((_, h)) = self.pending.take() {
            let _ = h.join();
        }
    }
}

impl Cuda {
    /// Whether NCCL can serve the ranks of `c`: every rank loaded it and no two share a GPU
    /// (two collectives; every rank must call this at the same point and gets the same
    /// answer). Thread-ranks that share one backend share its GPU, so they never reach the
    /// communicator, which is made under a lock.
    fn nccl_usable(&self, c: &dyn Comm) -> Result<bool> {
        let mut ok = [u64::from(api().is_ok())];
        c.all_reduce_u64(&mut ok, Op::Min)?;
        let (uuids, _) = all_gather(c, &self.uuid()?)?;
        let mut sorted: Vec<[u64; 2]> = uuids.chunks(2).map(|u| [u[0], u[1]]).collect();
        sorted.sort_unstable();
        Ok(ok[0] == 1 && sorted.windows(2).all(|w| w[0] != w[1]))
    }

    /// The communicator of `c`'s ranks (for NCCL-usable ranks): the one
    /// [`Cuda::nccl_connect`] started (waited for here), else made now; made again for
    /// another rank count or rank.
    fn nccl<'a>(&self, c: &dyn Comm, state: &'a mut State) -> Result<&'a Communicator> {
        let key = (c.size(), c.rank());
        if let Some((k, h)) = state.pending.take() {
            let made = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            if k == key {
                state.made = Some(made?);
            }
        }
        if state.made.as_ref().is_none_or(|k| k.key != key) {
            state.made = None;
            let id = unique_id(c)?;
            state.made = Some(make(&self.shared, id, key, false)?);
        }
        Ok(state.made.as_ref().expect("made above"))
    }

    /// The device's UUID as two words.
    fn uuid(&self) -> Result<[u64; 2]> {
        let dev = cust::device::Device::get_device(self.shared.ordinal as u32)
            .map_err(|e| driver::error(e, "cuDeviceGet"))?;
        let mut u = cust::sys::CUuuid { bytes: [0; 16] };
        // SAFETY: `u` is a valid out-pointer and `dev` a device handle of the driver.
        let rc = unsafe { cust::sys::cuDeviceGetUuid(&mut u, dev.as_raw()) };
        if rc != cust::sys::cudaError_enum::CUDA_SUCCESS {
            return Err(driver::error_from_code(rc as i32, "cuDeviceGetUuid"));
        }
        let b: [u8; 16] = u.bytes.map(|x| x as u8);
        Ok([
            u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
            u64::from_le_bytes(b[8..].try_into().expect("8 bytes")),
        ])
    }

    /// [`Backend::connect`](trident_core::Backend::connect), where NCCL can serve `c`'s
    /// ranks (two ranks or more on distinct GPUs): the ranks agree on it and on rank 0's
    /// unique id here (through `c`), and the communicator and its connections are made on a
    /// thread of their own, so that the job reads, prepares and uploads meanwhile; the first
    /// exchange or gather waits for it.
    pub(crate) fn nccl_connect(&self, c: &dyn Comm) -> Result<bool> {
        if c.size() < 2 || !self.nccl_usable(c)? {
            return Ok(false);
        }
        let id = unique_id(c)?;
        let key = (c.size(), c.rank());
        let shared = Arc::clone(&self.shared);
        let handle = std::thread::Builder::new()
            .name("nccl-connect".into())
            .spawn(move || make(&shared, id, key, true))
            .map_err(|e| Error::backend(driver::BACKEND, format!("NCCL's thread: {e}")))?;
        let mut state = self.nccl.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, h)) = state.pending.replace((key, handle)) {
            let _ = h.join();
        }
        Ok(true)
    }

    /// [`Device::exchange_mem`](trident_core::device::Device::exchange_mem) through NCCL:
    /// this rank's `send` uploaded once, each destination's range sent from it, each
    /// source's bytes received in rank order into one buffer, in one NCCL group.
    pub(crate) fn nccl_exchange(
        &self,
        c: &dyn Comm,
        send: &[u8],
        parts: &[std::ops::Range<usize>],
        recv: &[usize],
        what: &str,
    ) -> Result<Option<DevBuf<u8>>> {
        // One rank has nothing to exchange device to device: its rows are uploaded.
        self.with_nccl(c, |a, comm| {
            let src = self.buf_from_host(send, what)?;
            let total: usize = recv.iter().sum();
            let dst = DevBuf::<u8>::uninit(&self.shared, total, what)?;
            let me = c.rank();
            for part in parts.iter().take(recv.len()) {
                assert!(part.end <= send.len(), "{what}: send range out of bounds");
            }
            assert_eq!(parts[me].len(), recv[me], "{what}: own part");
            // SAFETY: every range lies within `src` (asserted above: `send`'s length) or `dst`
            // (`total` bytes), which outlive the group: the stream is synchronised before
            // they drop.
            unsafe {
                group(
                    a,
                    comm,
                    self.shared.raw_stream(),
                    (src.ptr().as_raw(), &|r| parts[r].clone()),
                    (dst.ptr().as_raw(), recv),
                    what,
                )?;
            }
            self.shared.synchronize()?;
            drop(src);
            Ok(dst)
        })
    }

    /// [`Device::gather_mem`](trident_core::device::Device::gather_mem) through NCCL: this
    /// rank's first `counts[me]` bytes of `send` sent to every other rank, every other rank's
    /// received at its offset of `recv`, in one NCCL group, and its own part copied on the
    /// device; all on the backend's stream, ordered before later work (not waited for).
    pub(crate) fn nccl_gather(
        &self,
        c: &dyn Comm,
        send: &DevBuf<u8>,
        counts: &[usize],
        recv: &DevBuf<u8>,
        what: &str,
    ) -> Result<bool> {
        let done = self.with_nccl(c, |a, comm| {
            let me = c.rank();
            let total: usize = counts.iter().sum();
            if counts.len() != c.size() || counts[me] > send.len() || total > recv.len() {
                return Err(Error::backend(
                    driver::BACKEND,
                    format!(
                        "{what}: gather of {total} bytes into {} ({} to send)",
                        recv.len(),
                        send.len()
                    ),
                ));
            }
            let mine = counts[me];
            // SAFETY: the ranges lie within `send` (counts[me] bytes) and `recv` (total
            // bytes), checked above; both buffers belong to this device and outlive the
            // stream's work (the caller's persistent buffers, dropped only after the stream
            // is synchronised).
            unsafe {
                group(
                    a,
                    comm,
                    self.shared.raw_stream(),
                    (send.ptr().as_raw(), &|_| 0..mine),
                    (recv.ptr().as_raw(), counts),
                    what,
                )
            }
        })?;
        Ok(done.is_some())
    }

    /// [`Device::all_to_all_mem`](trident_core::device::Device::all_to_all_mem) through
    /// NCCL: each rank `r`'s range of `send` sent to it, each rank's bytes received in rank
    /// order into `into`, in one NCCL group, this rank's own part copied on the device; all on
    /// the backend's stream, ordered before later work (not waited for).
    pub(crate) fn nccl_all_to_all(
        &self,
        c: &dyn Comm,
        (send, parts): (&DevBuf<u8>, &[std::ops::Range<usize>]),
        (into, recv): (&DevBuf<u8>, &[usize]),
        what: &str,
    ) -> Result<bool> {
        let done = self.with_nccl(c, |a, comm| {
            let me = c.rank();
            let total: usize = recv.iter().sum();
            let bad = parts.len() != c.size()
                || recv.len() != c.size()
                || parts.iter().any(|p| p.start > p.end || p.end > send.len())
                || parts[me].len() != recv[me]
                || total > into.len();
            if bad {
                return Err(Error::backend(
                    driver::BACKEND,
                    format!(
                        "{what}: exchange of {parts:?} out of {} bytes, {recv:?} into {} (a bug)",
                        send.len(),
                        into.len()
                    ),
                ));
            }
            // SAFETY: every range lies within `send` and the received total within `into`,
            // checked above, and this rank's own part holds `recv[me]` bytes; both buffers
            // belong to this device and outlive the stream's work (the caller's buffers,
            // dropped only after the stream is synchronised: the next read-back).
            unsafe {
                group(
                    a,
                    comm,
                    self.shared.raw_stream(),
                    (send.ptr().as_raw(), &|r| parts[r].clone()),
                    (into.ptr().as_raw(), recv),
                    what,
                )
            }
        })?;
        Ok(done.is_some())
    }

    /// [`Device::sum_mem_u64`](trident_core::device::Device::sum_mem_u64) through NCCL: one
    /// in-place all-reduce (sum) of the first `words` 64-bit words of `mem`, on the backend's
    /// stream, ordered before later work (not waited for).
    pub(crate) fn nccl_sum_u64(
        &self,
        c: &dyn Comm,
        mem: &DevBuf<u8>,
        words: usize,
        what: &str,
    ) -> Result<bool> {
        let done = self.with_nccl(c, |a, comm| {
            if words.checked_mul(8).is_none_or(|b| b > mem.len()) {
                return Err(Error::backend(
                    driver::BACKEND,
                    format!(
                        "{what}: sum of {words} words in {} bytes (a bug)",
                        mem.len()
                    ),
                ));
            }
            if words == 0 {
                return Ok(());
            }
            let p = mem.ptr().as_raw() as *mut c_void;
            let stream = self.shared.raw_stream() as *mut c_void;
            // SAFETY: `words` 8-byte words lie within `mem` (checked above), which belongs to
            // this device and outlives the stream's work (the caller's buffer, dropped only
            // after the stream is synchronised); NCCL allows the send and receive buffers to
            // be the same (in place).
            let rc =
                unsafe { (a.all_reduce)(p, p, words, NCCL_UINT64, NCCL_SUM, comm.raw, stream) };
            check(a, rc, "ncclAllReduce")
        })?;
        Ok(done.is_some())
    }

    /// `f` with NCCL's entry points and the communicator of `c`'s ranks, the device's
    /// context current; `None` where NCCL does not serve these ranks ([`Cuda::nccl_usable`]).
    /// Every rank must call it at the same point.
    fn with_nccl<R>(
        &self,
        c: &dyn Comm,
        f: impl FnOnce(&Api, &Communicator) -> Result<R>,
    ) -> Result<Option<R>> {
        if c.size() < 2 || !self.nccl_usable(c)? {
            return Ok(None);
        }
        let mut state = self.nccl.lock().unwrap_or_else(|e| e.into_inner());
        let comm = self.nccl(c, &mut state)?;
        let a = api().map_err(|e| Error::backend(driver::BACKEND, e))?;
        self.shared.make_current()?;
        f(a, comm).map(Some)
    }
}

/// One NCCL group of point-to-point transfers on the stream `raw` (not waited for):
/// to every other rank `r` the bytes `part(r)` of the device memory at `send`, from
/// every rank `r` its `recv[r]` bytes, received in rank order from `dst` on; this rank's
/// own part (`part(me)`, `recv[me]` bytes) copied on the device. The exchanges
/// ([`Cuda::nccl_exchange`]), the gathers ([`Cuda::nccl_gather`]) and the connections'
/// first bytes ([`make`]) are all this.
///
/// # Safety
/// Every `part(r)` must lie within the allocation at `send`, `recv`'s total within the
/// one at `dst`, `part(me)` must hold `recv[me]` bytes, both allocations must outlive the
/// stream's work, and `raw` must be a stream of the current context.
unsafe fn group(
    a: &Api,
    comm: &Communicator,
    raw: cust::sys::CUstream,
    (sp, part): (u64, &dyn Fn(usize) -> std::ops::Range<usize>),
    (dp, recv): (u64, &[usize]),
    what: &str,
) -> Result<()> {
    let stream = raw as *mut c_void;
    let me = comm.key.1;
    check(a, (a.group_start)(), "ncclGroupStart")?;
    let mut at = 0usize;
    let mut queued = Ok(());
    for (r, &len) in recv.iter().enumerate() {
        let p = part(r);
        queued = if r == me {
            if len == 0 {
                Ok(())
            } else {
                let rc =
                    cust::sys::cuMemcpyDtoDAsync_v2(dp + at as u64, sp + p.start as u64, len, raw);
                if rc == cust::sys::cudaError_enum::CUDA_SUCCESS {
                    Ok(())
                } else {
                    Err(driver::error_from_code(rc as i32, format!("{what}: copy")))
                }
            }
        } else {
            let sent = if p.is_empty() {
                Ok(())
            } else {
                let ptr = (sp + p.start as u64) as *const c_void;
                check(
                    a,
                    (a.send)(ptr, p.len(), NCCL_INT8, r as c_int, comm.raw, stream),
                    "ncclSend",
                )
            };
            sent.and_then(|()| {
                if len == 0 {
                    return Ok(());
                }
                let ptr = (dp + at as u64) as *mut c_void;
                check(
                    a,
                    (a.recv)(ptr, len, NCCL_INT8, r as c_int, comm.raw, stream),
                    "ncclRecv",
                )
            })
        };
        if queued.is_err() {
            break;
        }
        at += len;
    }
    // The group is closed whether or not every call was queued.
    let ended = check(a, (a.group_end)(), "ncclGroupEnd");
    queued.and(ended)
}

/// Rank 0's unique id, gathered by every rank of `c`.
fn unique_id(c: &dyn Comm) -> Result<UniqueId> {
    let a = api().map_err(|e| Error::backend(driver::BACKEND, e))?;
    let mut id = UniqueId { internal: [0; 128] };
    if c.rank() == 0 {
        // SAFETY: `id` is a valid out-pointer.
        check(a, unsafe { (a.get_unique_id)(&mut id) }, "ncclGetUniqueId")?;
    }
    let words: Vec<u64> = id
        .internal
        .chunks(8)
        .map(|b| u64::from_le_bytes(std::array::from_fn(|i| b[i] as u8)))
        .collect();
    let (all, _) = all_gather(c, &words)?;
    for (i, b) in id.internal.iter_mut().enumerate() {
        *b = all[i / 8].to_le_bytes()[i % 8] as c_char;
    }
    Ok(id)
}

/// The communicator of the ranks `(size, rank)` that share `id`, made on the device of
/// `shared` (which every rank of it calls at about the same time); with `connect`, also its
/// connections: NCCL connects each pair of ranks on their first transfer, so one byte goes
/// from every rank to every other, on a stream of its own (the backend's stream stays free
/// for the work that runs meanwhile).
fn make(
    shared: &Arc<Shared>,
    id: UniqueId,
    key: (usize, usize),
    connect: bool,
) -> Result<Communicator> {
    let a = api().map_err(|e| Error::backend(driver::BACKEND, e))?;
    shared.make_current()?;
    let mut raw: RawComm = std::ptr::null_mut();
    let (n, r) = (key.0 as c_int, key.1 as c_int);
    // SAFETY: `raw` is a valid out-pointer; every rank passes the same id and size and its
    // own rank, with its device's context current.
    let rc = unsafe { (a.comm_init_rank)(&mut raw, n, id, r) };
    check(a, rc, "ncclCommInitRank")?;
    let comm = Communicator { raw, key };
    if connect {
        let what = "NCCL connection";
        let stream = Stream::new(StreamFlags::NON_BLOCKING, None)
            .map_err(|e| driver::error(e, "creating NCCL's connection stream"))?;
        let send = DevBuf::<u8>::zeroed(shared, 1, what)?;
        let recv = DevBuf::<u8>::zeroed(shared, key.0, what)?;
        // SAFETY: one byte is sent from `send` (1 byte) and `size` received into `recv`
        // (`size` bytes); both outlive the group: the stream is synchronised before they
        // drop.
        unsafe {
            group(
                a,
                &comm,
                stream.as_inner(),
                (send.ptr().as_raw(), &|_| 0..1),
                (recv.ptr().as_raw(), &vec![1; key.0]),
                what,
            )?;
        }
        stream
            .synchronize()
            .map_err(|e| driver::error(e, "waiting for NCCL's connections"))?;
    }
    Ok(comm)
}
