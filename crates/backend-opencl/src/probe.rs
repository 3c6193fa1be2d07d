//! Platform and device discovery (once per process) and device selection.
//!
//! `ocl::Platform::list()` panics when no platform is installed, and ocl-core's
//! `get_platform_ids()` sleeps for about 10 s retrying when the ICD loader reports none. So the
//! platform count is first asked of the loader directly (no retry loop), the answer is cached
//! in a [`OnceLock`], and every later query ([`devices`], [`crate::OpenCl::new`]) reuses it.

use std::sync::OnceLock;

use ocl::core::{
    self, DeviceId, DeviceInfo as CoreDeviceInfo, DeviceInfoResult, DeviceType, PlatformId,
    PlatformInfo, PlatformInfoResult, Status,
};
use trident_core::{Error, Result};

use crate::BACKEND;

/// The environment variable through which the CLI, the benchmarks and the test harnesses
/// give [`Selector::platform`] (a case-insensitive substring of the platform name, e.g.
/// `NVIDIA`, `Portable`); the library itself reads no environment.
pub const ENV_PLATFORM: &str = "TRIDENT_OPENCL_PLATFORM";
/// The environment variable through which the CLI, the benchmarks and the test harnesses
/// give [`Selector::device`] (a substring of the device name, e.g. `H100`).
pub const ENV_DEVICE: &str = "TRIDENT_OPENCL_DEVICE";

/// The environment variable through which the CLI, the benchmarks and the test harnesses
/// name the ICD loader to load ([`set_icd_library`]).
pub const ENV_LIBRARY: &str = "TRIDENT_OPENCL_LIBRARY";

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
extern "C" {
    /// Of the lazy-binding `libOpenCL.a` (trident-lazy-link, built by this crate's build
    /// script): the library its first OpenCL call loads. 0; -1 when another one is loaded
    /// already; -2 without memory for the copy.
    fn trident_lazy_opencl_set_library(path: *const std::ffi::c_char) -> std::ffi::c_int;
}

/// Chooses the OpenCL ICD loader that the first OpenCL call opens instead of
/// `libOpenCL.so.1`: a path or a soname; a missing file stands for a machine without
/// OpenCL (no platform is found). For the `trident` command, the benchmarks and the test
/// harnesses, which read [`ENV_LIBRARY`].
///
/// Returns `Ok(true)` once the loader will be (or already is) this one, and `Ok(false)`
/// where the loader is linked when the program starts (every target but x86-64 Linux). An
/// error ([`Error::Backend`]) if OpenCL was already used with another loader.
pub fn set_icd_library(path: &std::path::Path) -> Result<bool> {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            let e = format!("ICD loader {}: a NUL byte in the path", path.display());
            return Err(Error::backend(BACKEND, e));
        };
        // SAFETY: a NUL-terminated string alive for the whole call, which copies it (under
        // the shim's mutex: callable from any thread, before or after OpenCL is loaded).
        let rc = unsafe { trident_lazy_opencl_set_library(c.as_ptr()) };
        if rc == 0 {
            return Ok(true);
        }
        let e = if rc == -1 {
            "is chosen too late: OpenCL was used already with another loader"
        } else {
            "could not be stored (out of memory)"
        };
        Err(Error::backend(
            BACKEND,
            format!("ICD loader {}: {e}", path.display()),
        ))
    }
    #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
    {
        let _ = path;
        Ok(false)
    }
}

/// What `trident info` shows about one OpenCL device.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceInfo {
    /// Platform name, e.g. `"NVIDIA CUDA"` or `"Portable Computing Language"`.
    pub platform: String,
    /// Device name, e.g. `"NVIDIA H100 80GB HBM3"`.
    pub name: String,
    /// Device type in words: `"GPU"`, `"CPU"`, `"accelerator"`, `"custom"` or `"other"`.
    pub device_type: &'static str,
    /// True if the device reports the GPU type.
    pub is_gpu: bool,
    /// True if the device supports double precision (`cl_khr_fp64` or a double FP config).
    pub fp64: bool,
    /// Global memory in bytes.
    pub global_mem_bytes: u64,
    /// Largest single allocation in bytes (`CL_DEVICE_MAX_MEM_ALLOC_SIZE`).
    pub max_alloc_bytes: u64,
    /// Global memory cache in bytes (`CL_DEVICE_GLOBAL_MEM_CACHE_SIZE`; 0 if not reported).
    /// NVIDIA reports the L2 size here, PoCL a CPU cache size. Sizes the SpMV slot passes.
    pub global_mem_cache_bytes: u64,
    /// Largest work-group (`CL_DEVICE_MAX_WORK_GROUP_SIZE`).
    pub max_work_group_size: usize,
    /// Compute units (`CL_DEVICE_MAX_COMPUTE_UNITS`; 0 if not reported).
    pub compute_units: u32,
    /// The device's place among its platform's devices (0 first), and how many the platform
    /// has: the description names the place where there are several (the ranks of a host
    /// each take one, [`Selector::nth`]).
    pub place: (usize, usize),
}

/// Largest buffer that works on NVIDIA's OpenCL: it reports a quarter of the device's memory
/// (35 GiB on an H200) but faults on buffers past 4 GiB (`CL_NV_INVALID_MEM_ACCESS` when
/// zeroing or writing one, `CL_OUT_OF_RESOURCES` for a 5 GB write, and the context broken for
/// everything after; driver 580, H100 and H200), so such a buffer is refused up front as out
/// of memory instead ([`OpenCl`](crate::OpenCl)'s allocations check it).
pub const NVIDIA_MAX_ALLOC: u64 = u32::MAX as u64;

/// The platform's own limit on one buffer below what its devices report, if it has one
/// ([`NVIDIA_MAX_ALLOC`]).
fn platform_alloc_limit(platform: &str) -> Option<u64> {
    platform.contains("NVIDIA").then_some(NVIDIA_MAX_ALLOC)
}

impl DeviceInfo {
    /// `"<platform>: <device> (<type>, N GiB)"`, with the device's place (`#i of n`) after
    /// its name where the platform has several.
    pub fn description(&self) -> String {
        let place = if self.place.1 > 1 {
            format!(" #{} of {}", self.place.0, self.place.1)
        } else {
            String::new()
        };
        format!(
            "{}: {}{place} ({}, {} GiB)",
            self.platform,
            self.name,
            self.device_type,
            self.global_mem_bytes >> 30
        )
    }
}

/// Which OpenCL device to use; see [`crate::OpenCl::select`].
///
/// Filters are case-insensitive substrings; `None` (or an empty string) matches everything.
/// Among the devices that pass, the GPUs if there are any (else all of them), the
/// [`Selector::nth`] wins (the first by default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    /// Substring of the platform name.
    pub platform: Option<String>,
    /// Substring of the device name.
    pub device: Option<String>,
    /// Accept GPUs only.
    pub gpu_only: bool,
    /// Which of the devices that pass, modulo their count: the ranks of a host pass their
    /// local rank, so that they share out its GPUs (as CUDA's ranks do).
    pub nth: usize,
}

impl Selector {
    /// The selector with these platform and device filters (blank ones match everything),
    /// any device type: what the CLI makes of [`ENV_PLATFORM`] and [`ENV_DEVICE`].
    pub fn from_filters(platform: Option<&str>, device: Option<&str>) -> Self {
        let filter = |v: Option<&str>| v.map(str::trim).filter(|v| !v.is_empty()).map(String::from);
        Self {
            platform: filter(platform),
            device: filter(device),
            gpu_only: false,
            nth: 0,
        }
    }

    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = non_empty(&self.platform) {
            parts.push(format!("platform ~ {p:?}"));
        }
        if let Some(d) = non_empty(&self.device) {
            parts.push(format!("device ~ {d:?}"));
        }
        if self.gpu_only {
            parts.push("GPU only".to_string());
        }
        if parts.is_empty() {
            "any device".to_string()
        } else {
            parts.join(", ")
        }
    }
}

fn non_empty(s: &Option<String>) -> Option<&str> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// True if there is no filter or `name` contains it.
fn passes(filter: Option<&str>, name: &str) -> bool {
    match filter {
        None => true,
        Some(f) => contains_ci(name, f),
    }
}

fn contains_ci(haystack: &str, needle: &str) -> bool {
    haystack.to_lowercase().contains(&needle.to_lowercase())
}

/// A device found by the probe, with the ids needed to open it.
pub(crate) struct Found {
    pub(crate) platform: PlatformId,
    pub(crate) device: DeviceId,
    pub(crate) info: DeviceInfo,
}

/// Everything the probe saw.
struct Probe {
    /// Names of all platforms, including those without usable devices.
    platforms: Vec<String>,
    devices: Vec<Found>,
    /// Problems met on the way (a platform whose device query failed, …).
    notes: Vec<String>,
}

/// `Err` when no platform could be listed at all.
static PROBE: OnceLock<std::result::Result<Probe, String>> = OnceLock::new();

fn probe() -> &'static std::result::Result<Probe, String> {
    PROBE.get_or_init(|| {
        std::panic::catch_unwind(probe_uncached)
            .unwrap_or_else(|_| Err("the OpenCL platform query panicked".to_string()))
    })
}

/// All OpenCL devices on all platforms, in platform order. Empty when there is no OpenCL
/// runtime. The first call probes the system; later calls return the cached answer at once.
pub fn devices() -> Vec<DeviceInfo> {
    match probe() {
        Ok(p) => p.devices.iter().map(|f| f.info.clone()).collect(),
        Err(_) => Vec::new(),
    }
}

/// Why [`devices`] is empty, if it is: [`Error::NoDevice`] saying whether no platform is
/// installed or the platforms have no devices. `Ok(n)`: `n` devices were found.
pub fn probe_status() -> Result<usize> {
    match probe() {
        Err(e) => Err(no_device(e.clone())),
        Ok(p) if p.devices.is_empty() => Err(no_device(if p.platforms.is_empty() {
            "no OpenCL platform is installed (no ICD found; OCL_ICD_VENDORS may point elsewhere)"
                .to_string()
        } else {
            format!(
                "the OpenCL platforms ({}) have no devices{}",
                p.platforms.join(", "),
                notes_suffix(&p.notes)
            )
        })),
        Ok(p) => Ok(p.devices.len()),
    }
}

fn notes_suffix(notes: &[String]) -> String {
    if notes.is_empty() {
        String::new()
    } else {
        format!(" ({})", notes.join("; "))
    }
}

fn no_device(message: String) -> Error {
    Error::no_device(BACKEND, message)
}

/// Picks the device `sel` asks for.
pub(crate) fn choose(sel: &Selector) -> Result<&'static Found> {
    if let Err(e) = probe_status() {
        return Err(match e {
            Error::NoDevice { message, .. } if *sel != Selector::default() => {
                no_device(format!("{message} (asked for {})", sel.describe()))
            }
            e => e,
        });
    }
    let p = probe().as_ref().map_err(|e| no_device(e.clone()))?;
    let plat = non_empty(&sel.platform);
    let dev = non_empty(&sel.device);
    let candidates: Vec<&Found> = p
        .devices
        .iter()
        .filter(|f| passes(plat, &f.info.platform))
        .filter(|f| passes(dev, &f.info.name))
        .filter(|f| !sel.gpu_only || f.info.is_gpu)
        .collect();
    let gpus: Vec<bool> = candidates.iter().map(|f| f.info.is_gpu).collect();
    pick(&gpus, sel.nth).map(|i| candidates[i]).ok_or_else(|| {
        no_device(format!(
            "no OpenCL device matches {}; available: {}",
            sel.describe(),
            available(p)
        ))
    })
}

/// Which of the candidates (`gpu[i]`: whether candidate `i` is a GPU) [`Selector::nth`]
/// takes: the `nth` GPU modulo their count, else the `nth` candidate modulo theirs.
fn pick(gpu: &[bool], nth: usize) -> Option<usize> {
    let gpus: Vec<usize> = (0..gpu.len()).filter(|&i| gpu[i]).collect();
    if gpus.is_empty() {
        (!gpu.is_empty()).then(|| nth % gpu.len())
    } else {
        Some(gpus[nth % gpus.len()])
    }
}

/// Every platform with its devices, for error messages.
fn available(p: &Probe) -> String {
    p.platforms
        .iter()
        .map(|plat| {
            let devs: Vec<String> = p
                .devices
                .iter()
                .filter(|f| &f.info.platform == plat)
                .map(|f| format!("{} [{}]", f.info.name, f.info.device_type))
                .collect();
            if devs.is_empty() {
                format!("platform {plat:?} (no devices)")
            } else {
                format!("platform {plat:?} ({})", devs.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn probe_uncached() -> std::result::Result<Probe, String> {
    let mut probe = Probe {
        platforms: Vec::new(),
        devices: Vec::new(),
        notes: Vec::new(),
    };
    if platform_count()? == 0 {
        return Ok(probe);
    }
    let ids = core::get_platform_ids().map_err(|e| format!("listing OpenCL platforms: {e}"))?;
    for (pi, platform) in ids.into_iter().enumerate() {
        let pname = match core::get_platform_info(platform, PlatformInfo::Name) {
            Ok(PlatformInfoResult::Name(n)) => clean(&n),
            _ => format!("platform #{pi}"),
        };
        probe.platforms.push(pname.clone());
        let ids = match core::get_device_ids(platform, Some(DeviceType::ALL), None) {
            Ok(ids) => ids,
            Err(e) if e.api_status() == Some(Status::CL_DEVICE_NOT_FOUND) => Vec::new(),
            Err(e) => {
                probe.notes.push(format!("{pname}: listing devices: {e}"));
                Vec::new()
            }
        };
        let count = ids.len();
        for (i, device) in ids.into_iter().enumerate() {
            probe.devices.push(Found {
                platform,
                device,
                info: DeviceInfo {
                    place: (i, count),
                    ..device_info(&pname, device)
                },
            });
        }
    }
    Ok(probe)
}

/// Number of platforms, asked of the ICD loader directly: unlike ocl-core's
/// `get_platform_ids`, this never sleeps when none is installed.
fn platform_count() -> std::result::Result<u32, String> {
    let mut n: ocl::ffi::cl_uint = 0;
    // SAFETY: a count-only query (num_entries 0, null platform list), which clGetPlatformIDs
    // permits; `n` is a live, writable cl_uint for the duration of the call.
    let status = unsafe { ocl::ffi::clGetPlatformIDs(0, std::ptr::null_mut(), &mut n) };
    match status {
        ocl::ffi::CL_SUCCESS => Ok(n),
        // The ICD loader's answer when no vendor ICD is installed.
        ocl::ffi::CL_PLATFORM_NOT_FOUND_KHR => Ok(0),
        s => Err(format!("clGetPlatformIDs failed with OpenCL status {s}")),
    }
}

fn clean(s: &str) -> String {
    s.trim_matches(|c: char| c == '\0' || c.is_whitespace())
        .to_string()
}

fn device_info(platform: &str, device: DeviceId) -> DeviceInfo {
    let q = |what| core::get_device_info(device, what).ok();
    let name = match q(CoreDeviceInfo::Name) {
        Some(DeviceInfoResult::Name(n)) => clean(&n),
        _ => "unknown device".to_string(),
    };
    let ty = match q(CoreDeviceInfo::Type) {
        Some(DeviceInfoResult::Type(t)) => t,
        _ => DeviceType::empty(),
    };
    let device_type = if ty.contains(DeviceType::GPU) {
        "GPU"
    } else if ty.contains(DeviceType::CPU) {
        "CPU"
    } else if ty.contains(DeviceType::ACCELERATOR) {
        "accelerator"
    } else if ty.contains(DeviceType::CUSTOM) {
        "custom"
    } else {
        "other"
    };
    let ext_fp64 = matches!(q(CoreDeviceInfo::Extensions),
        Some(DeviceInfoResult::Extensions(e)) if e.split_whitespace().any(|x| x == "cl_khr_fp64"));
    let config_fp64 = matches!(q(CoreDeviceInfo::DoubleFpConfig),
        Some(DeviceInfoResult::DoubleFpConfig(c)) if !c.is_empty());
    let global_mem_bytes = match q(CoreDeviceInfo::GlobalMemSize) {
        Some(DeviceInfoResult::GlobalMemSize(b)) => b,
        _ => 0,
    };
    let max_alloc_bytes = match q(CoreDeviceInfo::MaxMemAllocSize) {
        Some(DeviceInfoResult::MaxMemAllocSize(b)) => b,
        _ => global_mem_bytes / 4,
    };
    let max_alloc_bytes =
        platform_alloc_limit(platform).map_or(max_alloc_bytes, |l| max_alloc_bytes.min(l));
    let global_mem_cache_bytes = match q(CoreDeviceInfo::GlobalMemCacheSize) {
        Some(DeviceInfoResult::GlobalMemCacheSize(b)) => b,
        _ => 0,
    };
    let max_work_group_size = match q(CoreDeviceInfo::MaxWorkGroupSize) {
        Some(DeviceInfoResult::MaxWorkGroupSize(n)) => n.max(1),
        _ => 1,
    };
    let compute_units = match q(CoreDeviceInfo::MaxComputeUnits) {
        Some(DeviceInfoResult::MaxComputeUnits(n)) => n,
        _ => 0,
    };
    DeviceInfo {
        compute_units,
        platform: platform.to_string(),
        name,
        device_type,
        is_gpu: ty.contains(DeviceType::GPU),
        fp64: ext_fp64 || config_fp64,
        global_mem_bytes,
        max_alloc_bytes,
        global_mem_cache_bytes,
        max_work_group_size,
        place: (0, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_buffers_stop_below_4_gib() {
        assert_eq!(platform_alloc_limit("NVIDIA CUDA"), Some(u32::MAX as u64));
        assert_eq!(platform_alloc_limit("Portable Computing Language"), None);
        assert_eq!(
            platform_alloc_limit("AMD Accelerated Parallel Processing"),
            None
        );
    }

    #[test]
    fn selector_description() {
        assert_eq!(Selector::default().describe(), "any device");
        let s = Selector {
            platform: Some("nv".into()),
            device: Some(" ".into()),
            gpu_only: true,
            nth: 0,
        };
        assert_eq!(s.describe(), "platform ~ \"nv\", GPU only");
    }

    #[test]
    fn filters_drop_blanks() {
        let s = Selector::from_filters(Some(" NVIDIA "), Some(" "));
        assert_eq!(s.platform.as_deref(), Some("NVIDIA"));
        assert_eq!(s.device, None);
        assert!(!s.gpu_only);
        assert_eq!(Selector::from_filters(None, None), Selector::default());
    }

    #[test]
    fn substring_match_ignores_case() {
        assert!(contains_ci("NVIDIA CUDA", "cuda"));
        assert!(contains_ci("Portable Computing Language", "PORTABLE"));
        assert!(!contains_ci("NVIDIA CUDA", "amd"));
    }

    #[test]
    fn description_format() {
        let d = DeviceInfo {
            platform: "P".into(),
            name: "D".into(),
            device_type: "GPU",
            is_gpu: true,
            fp64: true,
            global_mem_bytes: 80 << 30,
            max_alloc_bytes: 20 << 30,
            global_mem_cache_bytes: 50 << 20,
            max_work_group_size: 1024,
            compute_units: 132,
            place: (0, 1),
        };
        assert_eq!(d.description(), "P: D (GPU, 80 GiB)");
        let d = DeviceInfo { place: (2, 4), ..d };
        assert_eq!(d.description(), "P: D #2 of 4 (GPU, 80 GiB)");
    }

    #[test]
    fn nth_takes_turns_among_the_gpus() {
        // A CPU, two GPUs, a CPU: the GPUs take turns; without GPUs, every candidate does.
        let mixed = [false, true, true, false];
        let got: Vec<Option<usize>> = (0..5).map(|n| pick(&mixed, n)).collect();
        assert_eq!(got, [Some(1), Some(2), Some(1), Some(2), Some(1)]);
        assert_eq!(pick(&[false, false, false], 4), Some(1));
        assert_eq!(pick(&[], 3), None);
    }
}
