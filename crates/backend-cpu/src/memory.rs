//! How much memory the CPU "device" has.

use std::sync::OnceLock;

/// Physical memory in bytes (`MemTotal` of `/proc/meminfo`), read once; `None` where the
/// system does not say.
pub(crate) fn physical_memory() -> Option<u64> {
    static TOTAL: OnceLock<Option<u64>> = OnceLock::new();
    *TOTAL.get_or_init(|| {
        let info = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn physical_memory_is_plausible_on_linux() {
        if cfg!(target_os = "linux") {
            let total = super::physical_memory().expect("MemTotal in /proc/meminfo");
            assert!(total > 1 << 26, "{total} bytes");
        }
    }
}
