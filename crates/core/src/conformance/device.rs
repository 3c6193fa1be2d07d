//! Checks of the device layer itself ([`crate::device::Device`]), which every GPU backend's
//! test file runs: the copies between host and device.

use crate::device::ring::{SLOT, SLOTS, STAGED_MIN};
use crate::device::Device;

/// Large copies, which stage through the backend's page-locked ring
/// ([`crate::device::ring`]): sizes on both sides of the staging threshold and of a slot, odd
/// sizes, and one that wraps the ring more than once, uploaded and read back whole, by a head
/// that ends inside a slot, and into a poisoned buffer: byte for byte, from a pattern in which
/// a chunk placed at another offset, or missed, shows. A read of more than the buffer holds is
/// an error.
pub fn large_copies<D: Device>(d: &D) -> Result<(), String> {
    // A byte of position i, from a hash of it, never the poison (0).
    let pattern = |i: usize| -> u8 {
        let h = (i as u64 ^ (i as u64 >> 24).wrapping_mul(0x9E37_79B9))
            .wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((h >> 56) as u8) | 1
    };
    let sizes = [
        STAGED_MIN - 1,
        STAGED_MIN,
        SLOT - 1,
        SLOT,
        SLOT + 1,
        3 * SLOT + 7,
        (2 * SLOTS + 1) * SLOT + 12_345,
    ];
    for n in sizes {
        let host: Vec<u8> = (0..n).map(pattern).collect();
        let what = format!("{n} bytes");
        let mem = d.upload_mem(&host, &what).map_err(|e| e.to_string())?;
        for head in [n, n - 1, n / 2 + 3, STAGED_MIN.min(n)] {
            let mut back = vec![0u8; head];
            d.read_mem(&mem, &mut back, &what)
                .map_err(|e| e.to_string())?;
            if let Some(i) = (0..head).find(|&i| back[i] != host[i]) {
                return Err(format!(
                    "{n} bytes read back by their first {head}: byte {i} is {}, not {} (offset {} \
                     in a slot)",
                    back[i],
                    host[i],
                    i % SLOT
                ));
            }
        }
        let mut over = vec![0u8; n + 1];
        if d.read_mem(&mem, &mut over, &what).is_ok() {
            return Err(format!("{n} bytes: a read of {} was not refused", n + 1));
        }
    }
    Ok(())
}

/// Buffers past 4 GiB (offsets that do not fit 32 bits), where the device holds three: one
/// uploaded from a pattern and one zeroed, each read back whole, byte for byte; or, where the
/// backend's largest allocation is smaller (NVIDIA's OpenCL, which faults past 4 GiB), both
/// refused up front as out of memory, the device still working after. `Ok(false)` (skipped)
/// where the device holds less.
pub fn past_4_gib<D: Device>(d: &D) -> Result<bool, String> {
    let n = (4usize << 30) + 4099;
    let q = d.query();
    if q.total_memory < 3 * n as u64 {
        return Ok(false);
    }
    let pattern = |i: usize| ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57) as u8 | 1;
    let host: Vec<u8> = (0..n).map(pattern).collect();
    let what = "a buffer past 4 GiB";
    if q.max_alloc < n as u64 {
        let refused = |r: crate::Result<D::Mem>, how: &str| match r {
            Err(crate::Error::OutOfMemory { .. }) => Ok(()),
            Err(e) => Err(format!(
                "{how} {n} bytes past the largest allocation ({}): {e}, not out of memory",
                q.max_alloc
            )),
            Ok(_) => Err(format!(
                "{how} {n} bytes past the largest allocation ({}) was accepted",
                q.max_alloc
            )),
        };
        refused(d.upload_mem(&host, what), "uploading")?;
        refused(d.zeroed_mem(n, what), "zeroing")?;
        let small = d
            .upload_mem(&host[..4099], what)
            .map_err(|e| e.to_string())?;
        let mut back = vec![0u8; 4099];
        d.read_mem(&small, &mut back, what)
            .map_err(|e| e.to_string())?;
        return if back[..] == host[..4099] {
            Ok(true)
        } else {
            Err("after the refusals, a small round trip differs".into())
        };
    }
    let mem = d.upload_mem(&host, what).map_err(|e| e.to_string())?;
    let mut back = vec![0u8; n];
    d.read_mem(&mem, &mut back, what)
        .map_err(|e| e.to_string())?;
    if let Some(i) = (0..n).find(|&i| back[i] != host[i]) {
        return Err(format!(
            "{n} bytes uploaded: byte {i} came back as {}, not {}",
            back[i], host[i]
        ));
    }
    drop(mem);
    let zero = d.zeroed_mem(n, what).map_err(|e| e.to_string())?;
    d.read_mem(&zero, &mut back, what)
        .map_err(|e| e.to_string())?;
    if let Some(i) = back.iter().position(|&b| b != 0) {
        return Err(format!("{n} bytes zeroed: byte {i} is {}", back[i]));
    }
    Ok(true)
}
