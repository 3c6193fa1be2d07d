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
