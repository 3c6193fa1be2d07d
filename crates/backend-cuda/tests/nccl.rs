//! NCCL's device-to-device exchange (`Device::exchange_mem` on CUDA) between thread-ranks
//! that each drive their own GPU, against the bytes every rank sent; and the triangles of a
//! replicated distributed count whose rows travel through it.
//!
//! Needs two CUDA devices and `libnccl.so.2` (or `TRIDENT_NCCL_LIBRARY`): skipped otherwise,
//! and failed instead under `REQUIRE_NCCL=1` (the multi-GPU runs of `benches/dist`).

use trident_core::device::Device;
use trident_core::dist::{threads, Comm};
use trident_cuda::Cuda;

/// One test at a time: communicators of concurrent tests on the same GPUs may deadlock.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Two or more devices, or `None` (skipped, or failed under `REQUIRE_NCCL=1`).
fn devices() -> Option<usize> {
    if let Some(lib) = trident_core::testing::env::gpu_library(trident_cuda::LIBRARY_ENV) {
        trident_cuda::set_driver_library(&lib).ok()?;
    }
    if let Some(lib) = std::env::var_os(trident_cuda::nccl::ENV_LIBRARY).filter(|v| !v.is_empty()) {
        trident_cuda::nccl::set_library(std::path::Path::new(&lib));
    }
    let required = std::env::var("REQUIRE_NCCL").is_ok_and(|v| v == "1");
    let count = trident_cuda::device_names().map(|d| d.len()).unwrap_or(0);
    let nccl = trident_cuda::nccl::version();
    if count >= 2 && nccl.is_ok() {
        eprintln!("nccl: {count} devices, NCCL {}", nccl.unwrap_or_default());
        return Some(count);
    }
    let why = format!("{count} CUDA devices, NCCL: {nccl:?}");
    assert!(!required, "REQUIRE_NCCL=1 but {why}");
    eprintln!("skipped: needs two CUDA devices and NCCL ({why})");
    None
}

/// Every rank sends rank `r` a part whose bytes name sender, receiver and position, of a
/// length that differs per pair (zero for some); each checks what it received.
#[test]
fn exchange_between_two_and_more_gpus() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(count) = devices() else { return };
    for p in 2..=count.min(4) {
        let results = threads::run(p, |c| {
            let d = Cuda::with_device(c.rank())?;
            let me = c.rank();
            let len = |from: usize, to: usize| ((from * 7 + to * 13) % 5) * 1000 + 3 * from;
            let byte = |from: usize, to: usize, i: usize| (from * 31 + to * 17 + i) as u8;
            let mut send = Vec::new();
            let mut parts = Vec::new();
            for to in 0..p {
                let start = send.len();
                send.extend((0..len(me, to)).map(|i| byte(me, to, i)));
                parts.push(start..send.len());
            }
            let recv: Vec<usize> = (0..p).map(|from| len(from, me)).collect();
            let mem = d
                .exchange_mem(c, &send, &parts, &recv, "test exchange")?
                .ok_or_else(|| {
                    trident_core::Error::backend("test", "NCCL refused distinct GPUs")
                })?;
            let total: usize = recv.iter().sum();
            let mut got = vec![0u8; total];
            d.read_mem(&mem, &mut got, "test")?;
            let want: Vec<u8> = (0..p)
                .flat_map(|from| (0..len(from, me)).map(move |i| byte(from, me, i)))
                .collect();
            Ok(got == want)
        });
        for (rank, r) in results.into_iter().enumerate() {
            assert!(
                r.unwrap_or_else(|e| panic!("{p} ranks, rank {rank}: {e}")),
                "{p} ranks, rank {rank}: bytes differ"
            );
        }
    }
}

/// `Device::all_to_all_mem` between device buffers: every rank sends rank `r` a range of its
/// buffer (not from its start, some of them empty) whose bytes name sender, receiver and
/// position; each receives into a buffer poisoned past the parts, and checks both.
#[test]
fn all_to_all_between_device_buffers() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(count) = devices() else { return };
    for p in 2..=count.min(4) {
        let results = threads::run(p, |c| {
            let d = Cuda::with_device(c.rank())?;
            let me = c.rank();
            let len = |from: usize, to: usize| ((from * 5 + to * 11) % 4) * 777 + 2 * from;
            let byte = |from: usize, to: usize, i: usize| (from * 29 + to * 7 + i * 3) as u8;
            // A gap of 5 bytes before each part, so that a range read from the wrong place
            // shows.
            let mut send = Vec::new();
            let mut parts = Vec::new();
            for to in 0..p {
                send.extend([0xEEu8; 5]);
                let start = send.len();
                send.extend((0..len(me, to)).map(|i| byte(me, to, i)));
                parts.push(start..send.len());
            }
            let recv: Vec<usize> = (0..p).map(|from| len(from, me)).collect();
            let total: usize = recv.iter().sum();
            let src = d.upload_mem(&send, "test send")?;
            let dst = d.upload_mem(&vec![0xABu8; total + 64], "test recv")?;
            if !d.all_to_all_mem(c, (&src, &parts), (&dst, &recv), "test all-to-all")? {
                return Err(trident_core::Error::backend(
                    "test",
                    "NCCL refused distinct GPUs",
                ));
            }
            let mut got = vec![0u8; total + 64];
            d.read_mem(&dst, &mut got, "test")?;
            let mut want: Vec<u8> = (0..p)
                .flat_map(|from| (0..len(from, me)).map(move |i| byte(from, me, i)))
                .collect();
            want.extend([0xABu8; 64]);
            Ok(got == want)
        });
        for (rank, r) in results.into_iter().enumerate() {
            assert!(
                r.unwrap_or_else(|e| panic!("{p} ranks, rank {rank}: {e}")),
                "{p} ranks, rank {rank}: bytes differ"
            );
        }
    }
}

/// `Device::sum_mem_u64`: every rank's words (some near 2^64, so that the sums wrap) summed
/// in place over the ranks; the words past `words` stay as they were (poisoned).
#[test]
fn sum_between_two_and_more_gpus() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(count) = devices() else { return };
    let words = 100_003usize;
    let word = |r: usize, i: usize| {
        let x = (r as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64) << 7;
        if i.is_multiple_of(97) {
            u64::MAX - x % 1000
        } else {
            x % 1_000_003
        }
    };
    for p in 2..=count.min(4) {
        let results = threads::run(p, |c| {
            let d = Cuda::with_device(c.rank())?;
            let me = c.rank();
            let mut host: Vec<u8> = (0..words).flat_map(|i| word(me, i).to_le_bytes()).collect();
            host.extend([0xCDu8; 24]);
            let mem = d.upload_mem(&host, "test sum")?;
            if !d.sum_mem_u64(c, &mem, words, "test sum")? {
                return Err(trident_core::Error::backend(
                    "test",
                    "NCCL refused distinct GPUs",
                ));
            }
            let mut got = vec![0u8; host.len()];
            d.read_mem(&mem, &mut got, "test")?;
            let mut want: Vec<u8> = (0..words)
                .flat_map(|i| {
                    (0..p)
                        .fold(0u64, |a, r| a.wrapping_add(word(r, i)))
                        .to_le_bytes()
                })
                .collect();
            want.extend([0xCDu8; 24]);
            Ok(got == want)
        });
        for (rank, r) in results.into_iter().enumerate() {
            assert!(
                r.unwrap_or_else(|e| panic!("{p} ranks, rank {rank}: {e}")),
                "{p} ranks, rank {rank}: sums differ"
            );
        }
    }
}

/// Two thread-ranks on one GPU: NCCL is refused on both (it cannot serve a shared GPU), and
/// nothing hangs.
#[test]
fn a_shared_gpu_is_refused() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(_) = devices() else { return };
    let d = Cuda::with_device(0).expect("device 0");
    let results = threads::run(2, |c| {
        let parts = vec![0..4, 0..4];
        d.exchange_mem(c, &[1, 2, 3, 4], &parts, &[4, 4], "test")
            .map(|m| m.is_none())
    });
    for (rank, r) in results.into_iter().enumerate() {
        let refused = r.unwrap_or_else(|e| panic!("rank {rank}: {e}"));
        assert!(refused, "NCCL served two ranks on one GPU");
    }
}

/// A distributed count over two and more GPUs in both layouts: the rows (every later rank's,
/// or just those a rank's edges point to) go device to device (NCCL) and the counts equal
/// one process's.
#[test]
fn replicated_triangles_through_nccl() {
    use trident_core::dist::graph::{orient, DistGraph};
    use trident_core::dist::triangles::{count, Layout};
    use trident_core::triangles::{TriangleCount, TriangleOptions};
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(count_devices) = devices() else {
        return;
    };
    let n = 3000usize;
    let mut next = trident_core::testing::xorshift(0x9e37_79b9_7f4a_7c15u64);
    let edges: Vec<(u32, u32)> = (0..40_000)
        .map(|_| {
            let u = (next() % n as u64) as u32;
            // Locality, so that there are triangles.
            let v = ((u as u64 + 1 + next() % 40) % n as u64) as u32;
            (u, v)
        })
        .collect();
    let g = trident_core::graph::Graph::from_edges(
        n,
        edges.iter().map(|&(u, v)| (u as usize, v as usize)),
    )
    .expect("graph");
    let one = Cuda::with_device(0)
        .expect("device 0")
        .count_triangles(
            &g,
            &TriangleOptions {
                per_node: true,
                ..Default::default()
            },
        )
        .expect("one process");
    for p in 2..=count_devices.min(4) {
        for layout in [Layout::Replicate, Layout::Partition] {
            let results = threads::run(p, |c| {
                let d = Cuda::with_device(c.rank())?;
                let mine: Vec<(u32, u32)> =
                    edges.iter().copied().skip(c.rank()).step_by(p).collect();
                let dg = DistGraph::from_edges(c, n, &mine)?;
                let o = orient(c, &dg)?;
                let opts = TriangleOptions {
                    per_node: true,
                    ..Default::default()
                };
                count(c, &d, &o, layout, &opts)
            });
            for (rank, r) in results.into_iter().enumerate() {
                let r = r.unwrap_or_else(|e| panic!("{p} ranks, {layout}, rank {rank}: {e}"));
                assert_eq!(r.layout, layout, "{p} ranks, rank {rank}");
                assert!(
                    r.device_exchange,
                    "{p} ranks, {layout}: the rows went through the hosts"
                );
                assert_eq!(r.counts, one, "{p} ranks, {layout}, rank {rank}");
            }
        }
    }
}

/// `Device::gather_mem` between two and more GPUs: uneven parts (one empty), each rank's
/// bytes at its offset of every rank's buffer, the bytes after the parts untouched.
#[test]
fn gather_between_two_and_more_gpus() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(count) = devices() else { return };
    for p in 2..=count.min(4) {
        let results = threads::run(p, |c| {
            let d = Cuda::with_device(c.rank())?;
            let me = c.rank();
            let counts: Vec<usize> = (0..p)
                .map(|r| if r == 1 { 0 } else { 4099 * (r + 1) })
                .collect();
            let byte = |from: usize, i: usize| (from * 37 + i * 11) as u8;
            let send: Vec<u8> = (0..counts[me] + 5).map(|i| byte(me, i)).collect();
            let total: usize = counts.iter().sum();
            let send = d.upload_mem(&send, "test")?;
            let recv = d.upload_mem(&vec![0xAB; total + 7], "test")?;
            if !d.gather_mem(c, &send, &counts, &recv, "test gather")? {
                return Err(trident_core::Error::backend(
                    "test",
                    "NCCL refused distinct GPUs",
                ));
            }
            let mut got = vec![0u8; total + 7];
            d.read_mem(&recv, &mut got, "test")?;
            let mut want: Vec<u8> = (0..p)
                .flat_map(|from| (0..counts[from]).map(move |i| byte(from, i)))
                .collect();
            want.extend([0xAB; 7]);
            Ok(got == want)
        });
        for (rank, r) in results.into_iter().enumerate() {
            assert!(
                r.unwrap_or_else(|e| panic!("{p} ranks, rank {rank}: {e}")),
                "{p} ranks, rank {rank}: bytes differ"
            );
        }
    }
}

/// R-MCL over two and more GPUs (each thread-rank on its own), in both layouts: `M` is
/// gathered (replicated) or its columns fetched (partitioned) device to device (NCCL), and
/// the run is one process's bit for bit, in both variants.
#[test]
fn rmcl_through_nccl() {
    use trident_core::dist::mcl;
    use trident_core::dist::Layout;
    use trident_core::mcl::{MarkovCluster, MclOptions};
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(count) = devices() else { return };
    let planted = trident_core::generate::planted(&trident_core::generate::PlantedOptions {
        nodes: 5000,
        communities: 100,
        degree: 12.0,
        mixing: 0.2,
        seed: 5,
    })
    .expect("planted");
    let g = planted.edges.to_graph().expect("graph");
    let runs = [MclOptions::default(), MclOptions::mlrmcl()]
        .into_iter()
        .flat_map(|o| {
            [Layout::Auto, Layout::Partition].map(|layout| MclOptions {
                layout,
                ..o.clone()
            })
        });
    for o in runs {
        let d0 = Cuda::with_device(0).expect("device 0");
        let one = MarkovCluster::<f32>::cluster(&d0, &g, &o).expect("one process");
        for p in 2..=count.min(4) {
            let results = threads::run(p, |c| {
                let d = Cuda::with_device(c.rank())?;
                // Connected up front, as the CLI does during its read: the run reuses it.
                if !trident_core::Backend::connect(&d, c)? {
                    return Err(trident_core::Error::backend("test", "NCCL did not connect"));
                }
                mcl::cluster::<f32, _>(c, &d, &g, &o, &mut |_| {})
            });
            for (rank, r) in results.into_iter().enumerate() {
                let r = r.unwrap_or_else(|e| panic!("{p} ranks, rank {rank}: {e}"));
                let what = format!("{:?} ({}), {p} GPUs, rank {rank}", o.variant, o.layout);
                assert!(r.timings.gather_device, "{what}: M went through the hosts");
                assert_eq!(
                    r.timings.partitioned,
                    o.layout == Layout::Partition,
                    "{what}"
                );
                assert_eq!(r.clusters, one.clusters, "{what}: partition");
                assert_eq!(
                    (r.iterations, r.stop, r.chaos.to_bits(), r.change.to_bits()),
                    (
                        one.iterations,
                        one.stop,
                        one.chaos.to_bits(),
                        one.change.to_bits()
                    ),
                    "{what}"
                );
            }
        }
    }
}

/// `Backend::connect` makes the communicator in the background: a backend dropped before
/// it is used waits for it (no hang, no thread left behind), and one that is used takes it
/// in its first gather, whose bytes are right.
#[test]
fn a_background_connection_is_waited_for() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(count) = devices() else { return };
    let p = count.min(4);
    let results = threads::run(p, |c| {
        let d = Cuda::with_device(c.rank())?;
        if !trident_core::Backend::connect(&d, c)? {
            return Err(trident_core::Error::backend("test", "NCCL did not connect"));
        }
        drop(d);
        let d = Cuda::with_device(c.rank())?;
        if !trident_core::Backend::connect(&d, c)? {
            return Err(trident_core::Error::backend("test", "NCCL did not connect"));
        }
        let me = c.rank();
        let send = d.upload_mem(&[me as u8 + 1; 3], "test")?;
        let recv = d.upload_mem(&vec![0u8; 3 * p], "test")?;
        if !d.gather_mem(c, &send, &vec![3; p], &recv, "test gather")? {
            return Err(trident_core::Error::backend("test", "NCCL refused"));
        }
        let mut got = vec![0u8; 3 * p];
        d.read_mem(&recv, &mut got, "test")?;
        Ok(got == (0..p).flat_map(|r| [r as u8 + 1; 3]).collect::<Vec<u8>>())
    });
    for (rank, r) in results.into_iter().enumerate() {
        assert!(
            r.unwrap_or_else(|e| panic!("{p} ranks, rank {rank}: {e}")),
            "{p} ranks, rank {rank}: bytes differ"
        );
    }
}
