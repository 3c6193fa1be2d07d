//! The thin layer over the CUDA driver API: error translation, and the few driver calls made
//! directly rather than through `cust`.
//!
//! Calls whose error codes matter most (`cuInit`, module loading with the JIT error log,
//! kernel launches) are declared here with a plain `c_int` result: `cust_raw` declares them
//! as returning a Rust enum, which cannot represent codes newer than its CUDA 11.4 headers.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

use cust::error::CudaError;
use cust::sys::{CUfunction, CUjit_option, CUmodule, CUstream};
use trident_core::{Error, Result};

/// Grid and block dimensions (x, y, z) and dynamic shared memory of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LaunchConfig {
    /// Blocks in x, y, z.
    pub grid: (u32, u32, u32),
    /// Threads per block in x, y, z.
    pub block: (u32, u32, u32),
    /// Bytes of dynamic shared memory per block (`extern __shared__`).
    pub shared_mem_bytes: u32,
}

impl LaunchConfig {
    /// A 1-D launch of `grid` blocks of `block` threads, no dynamic shared memory.
    #[allow(dead_code)] // the launch tests; the drivers' geometry comes from core
    pub(crate) fn grid_1d(grid: u32, block: u32) -> Self {
        Self {
            grid: (grid, 1, 1),
            block: (block, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    #[allow(dead_code)] // for the kernels that use shared memory
    pub(crate) fn with_shared_mem(self, bytes: u32) -> Self {
        Self {
            shared_mem_bytes: bytes,
            ..self
        }
    }
}

/// Names the CUDA driver library that the first CUDA call loads (a path such as
/// `/usr/lib/x86_64-linux-gnu/libcuda.so.1`, or a soname), instead of `libcuda.so.1`; a file
/// that does not exist makes every device query report no device, as on a machine without a
/// driver. The `trident` command, the benchmarks and the test harnesses call it with
/// [`crate::LIBRARY_ENV`]; the library reads no environment.
///
/// `Ok(true)` when the choice is taken (or was already this one); `Ok(false)` on targets
/// where the driver is linked directly rather than loaded on first use (all but x86-64
/// Linux), where there is nothing to choose. Fails with [`Error::Backend`] once the driver
/// has been loaded with another choice (any CUDA call loads it).
pub fn set_driver_library(path: &std::path::Path) -> Result<bool> {
    if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        // Linked directly: the dynamic linker loaded the driver when the program started.
        return Ok(false);
    }
    set_lazy_library(path).map(|()| true)
}

/// [`set_driver_library`] where the driver is bound lazily.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn set_lazy_library(path: &std::path::Path) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let shown = path.display();
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| backend(format!("driver library {shown}: the path holds a NUL byte")))?;
    // SAFETY: `c` is NUL-terminated and outlives the call; the lazy-binding shim
    // (trident-lazy-link, linked through cust_raw's build) copies it under its own lock, so any
    // thread may call it at any time.
    match unsafe { ffi::trident_lazy_cuda_set_library(c.as_ptr()) } {
        0 => Ok(()),
        -1 => Err(backend(format!(
            "cannot take the driver library {shown}: the CUDA driver is already loaded (name it \
             before the first CUDA call)"
        ))),
        _ => Err(Error::out_of_memory(
            BACKEND,
            "copying the driver library path",
        )),
    }
}

/// [`set_driver_library`] where the driver is linked directly: never called.
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn set_lazy_library(_: &std::path::Path) -> Result<()> {
    Ok(())
}

/// Backend name used in every error.
pub(crate) const BACKEND: &str = "cuda";

/// `CUDA_ERROR_OUT_OF_MEMORY`.
const OUT_OF_MEMORY: c_int = 2;
/// `CUDA_ERROR_NO_DEVICE`.
const NO_DEVICE: c_int = 100;

mod ffi {
    use super::*;

    extern "C" {
        /// The lazy-binding shim's (trident-lazy-link): names the library its first call
        /// loads. 0, or -1 once another choice was loaded, -2 out of memory.
        #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
        pub fn trident_lazy_cuda_set_library(path: *const c_char) -> c_int;
        pub fn cuInit(flags: c_uint) -> c_int;
        pub fn cuGetErrorName(error: c_int, p_str: *mut *const c_char) -> c_int;
        pub fn cuGetErrorString(error: c_int, p_str: *mut *const c_char) -> c_int;
        pub fn cuModuleLoadDataEx(
            module: *mut CUmodule,
            image: *const c_void,
            num_options: c_uint,
            options: *mut CUjit_option,
            option_values: *mut *mut c_void,
        ) -> c_int;
        pub fn cuModuleGetFunction(
            hfunc: *mut CUfunction,
            hmod: CUmodule,
            name: *const c_char,
        ) -> c_int;
        pub fn cuModuleUnload(hmod: CUmodule) -> c_int;
        #[allow(clippy::too_many_arguments)]
        pub fn cuLaunchKernel(
            f: CUfunction,
            grid_x: c_uint,
            grid_y: c_uint,
            grid_z: c_uint,
            block_x: c_uint,
            block_y: c_uint,
            block_z: c_uint,
            shared_mem_bytes: c_uint,
            stream: CUstream,
            kernel_params: *mut *mut c_void,
            extra: *mut *mut c_void,
        ) -> c_int;
    }
}

/// One static string from `cuGetErrorName` / `cuGetErrorString`, if the driver has one.
fn driver_string(
    f: unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int,
    code: c_int,
) -> Option<String> {
    let mut p: *const c_char = std::ptr::null();
    // SAFETY: both functions only write a pointer to a static, NUL-terminated string into `p`
    // (or nothing, with an error result) and accept any error code.
    let rc = unsafe { f(code, &mut p) };
    if rc != 0 || p.is_null() {
        return None;
    }
    // SAFETY: on success `p` points to a static NUL-terminated string owned by the driver.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// A CUDA driver result code with the driver's name and description for it: the
/// [`std::error::Error::source`] of every Trident error that a driver call caused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverError {
    /// The `CUresult` code, e.g. 2.
    pub code: i32,
    /// `cuGetErrorName`, e.g. `CUDA_ERROR_OUT_OF_MEMORY` (`None` for a code the driver does
    /// not know).
    pub name: Option<String>,
    /// `cuGetErrorString`, e.g. `out of memory`.
    pub description: Option<String>,
}

impl DriverError {
    /// Looks up the name and description of `code`; never fails.
    pub fn new(code: i32) -> Self {
        Self {
            code,
            name: driver_string(ffi::cuGetErrorName, code),
            description: driver_string(ffi::cuGetErrorString, code),
        }
    }
}

impl std::fmt::Display for DriverError {
    /// `CUDA_ERROR_NAME (code): description`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let code = self.code;
        match (&self.name, &self.description) {
            (Some(n), Some(t)) => write!(f, "{n} ({code}): {t}"),
            (Some(n), None) => write!(f, "{n} ({code})"),
            (None, Some(t)) => write!(f, "CUDA error {code}: {t}"),
            (None, None) => write!(f, "CUDA error {code}"),
        }
    }
}

impl std::error::Error for DriverError {}

/// The driver code of a `cust` error (`None` for cust's own, non-driver errors).
fn code_of(e: CudaError) -> Option<c_int> {
    let code = e as u32;
    (code <= 999).then_some(code as c_int)
}

/// Translates a driver result code of the operation `what` into a Trident error of the kind
/// the code calls for, with the code as its source.
pub(crate) fn error_from_code(code: c_int, what: impl Into<String>) -> Error {
    let e = match code {
        OUT_OF_MEMORY => Error::out_of_memory(BACKEND, what),
        NO_DEVICE => Error::no_device(BACKEND, what),
        _ => Error::backend(BACKEND, what),
    };
    e.with_source(DriverError::new(code))
}

/// Translates a `cust` error of the operation `what` into a Trident error (see
/// [`error_from_code`]). `CudaError`'s own `Display` can fail, and then panic, so it is
/// never used.
pub(crate) fn error(e: CudaError, what: impl Into<String>) -> Error {
    match code_of(e) {
        Some(code) => error_from_code(code, what),
        None => Error::backend(BACKEND, format!("{}: {e:?}", what.into())),
    }
}

/// Like [`error`], but any failure means the device is unusable: [`Error::NoDevice`].
pub(crate) fn no_device(e: CudaError, what: impl Into<String>) -> Error {
    match code_of(e) {
        Some(code) => Error::no_device(BACKEND, what).with_source(DriverError::new(code)),
        None => Error::no_device(BACKEND, format!("{}: {e:?}", what.into())),
    }
}

/// A plain backend error.
pub(crate) fn backend(message: impl Into<String>) -> Error {
    Error::backend(BACKEND, message)
}

/// Turns the `cust` errors of a `Result` into Trident errors that say what was being done
/// (evaluated only on failure) and keep the driver code as their source.
pub(crate) trait CuResultExt<T> {
    /// [`error`]: the kind follows the driver code (out of memory, no device, backend).
    fn or_cuda<D: Into<String>>(self, what: impl FnOnce() -> D) -> Result<T>;
    /// [`no_device`]: any failure is [`Error::NoDevice`].
    fn or_no_device<D: Into<String>>(self, what: impl FnOnce() -> D) -> Result<T>;
}

impl<T> CuResultExt<T> for std::result::Result<T, CudaError> {
    fn or_cuda<D: Into<String>>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| error(e, what()))
    }

    fn or_no_device<D: Into<String>>(self, what: impl FnOnce() -> D) -> Result<T> {
        self.map_err(|e| no_device(e, what()))
    }
}

/// `cuInit(0)`; any failure (no driver, no device, driver too old) is [`Error::NoDevice`].
pub(crate) fn init() -> Result<()> {
    // SAFETY: cuInit takes a flags word (must be 0) and may be called any number of times.
    let rc = unsafe { ffi::cuInit(0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::no_device(BACKEND, "cuInit failed").with_source(DriverError::new(rc)))
    }
}

/// A loaded module (unloaded on drop, with its context current) and its kernels.
pub(crate) struct Module {
    raw: CUmodule,
}

// SAFETY: a CUmodule is an opaque driver handle; the driver API is thread-safe and the handle
// stays valid on any thread until `cuModuleUnload`, which only `Drop` (with `&mut self`) calls.
unsafe impl Send for Module {}
// SAFETY: as above; shared use only reads the handle value.
unsafe impl Sync for Module {}

/// A kernel of a loaded [`Module`].
#[derive(Clone, Copy)]
pub(crate) struct Function {
    raw: CUfunction,
}

// SAFETY: a CUfunction is an opaque driver handle, valid on any thread while its module is
// loaded; `Shared` keeps the module loaded as long as the functions can be reached.
unsafe impl Send for Function {}
// SAFETY: as above; launching only reads the handle value.
unsafe impl Sync for Function {}

impl Module {
    /// JIT-compiles and loads PTX into the current context; the error names the JIT's log.
    pub(crate) fn from_ptx(ptx: &str, file: &str) -> Result<Module> {
        let what = format!("loading {file} (PTX JIT)");
        let image =
            CString::new(ptx).map_err(|_| backend(format!("{what}: PTX contains a NUL")))?;
        Self::load(image.as_ptr().cast(), what)
    }

    /// Loads machine code (a cubin) into the current context.
    pub(crate) fn from_cubin(cubin: &[u8], file: &str) -> Result<Module> {
        // An 8-byte-aligned copy: the driver reads the ELF image in place.
        let mut aligned = vec![0u64; cubin.len().div_ceil(8)];
        for (word, bytes) in aligned.iter_mut().zip(cubin.chunks(8)) {
            let mut b = [0u8; 8];
            b[..bytes.len()].copy_from_slice(bytes);
            *word = u64::from_ne_bytes(b);
        }
        Self::load(
            aligned.as_ptr().cast(),
            format!("loading {file} (sm_90 machine code)"),
        )
    }

    /// `cuModuleLoadDataEx` of `image` (PTX text or a cubin, alive for the call); the error
    /// names the driver's log.
    fn load(image: *const c_void, what: String) -> Result<Module> {
        const LOG: usize = 16 * 1024;
        let mut log = vec![0u8; LOG];
        let mut options = [
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        // cuModuleLoadDataEx takes option values that fit in a pointer by value.
        let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), LOG as *mut c_void];
        let mut raw: CUmodule = std::ptr::null_mut();
        // SAFETY: the caller passes a NUL-terminated PTX string or a complete cubin image,
        // alive across the call; the two options name a writable buffer of LOG bytes (`log`,
        // alive across the call) and its size; `raw` is writable.
        let rc = unsafe {
            ffi::cuModuleLoadDataEx(
                &mut raw,
                image,
                options.len() as c_uint,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if rc != 0 {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(&log[..end]);
            let text = text.trim();
            let what = if text.is_empty() {
                what
            } else {
                format!("{what}; JIT log: {text}")
            };
            return Err(error_from_code(rc, what));
        }
        Ok(Module { raw })
    }

    /// The kernel called `name`.
    pub(crate) fn function(&self, name: &str) -> Result<Function> {
        let cname = CString::new(name).map_err(|_| backend("kernel name contains a NUL"))?;
        let mut raw: CUfunction = std::ptr::null_mut();
        // SAFETY: `self.raw` is a loaded module, `cname` NUL-terminated, `raw` writable.
        let rc = unsafe { ffi::cuModuleGetFunction(&mut raw, self.raw, cname.as_ptr()) };
        if rc != 0 {
            return Err(error_from_code(rc, format!("finding kernel {name}")));
        }
        Ok(Function { raw })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: `raw` was loaded by cuModuleLoadDataEx and is unloaded exactly once, here;
        // the owner makes the module's context current first.
        unsafe {
            ffi::cuModuleUnload(self.raw);
        }
    }
}

impl Function {
    /// Queues the kernel on `stream` with the given argument pointers; see
    /// [`crate::launch::LaunchArgs`], the only caller.
    ///
    /// # Safety
    ///
    /// `args` must hold, in order, one pointer to a value of exactly the type of each kernel
    /// parameter, each valid until this returns, and every device pointer among them must be
    /// valid for what the kernel accesses under this configuration, until it has finished.
    pub(crate) unsafe fn launch(
        &self,
        stream: CUstream,
        cfg: &LaunchConfig,
        args: &mut [*mut c_void],
    ) -> std::result::Result<(), c_int> {
        // SAFETY: the caller guarantees the argument list; `self.raw` is a loaded kernel.
        let rc = unsafe {
            ffi::cuLaunchKernel(
                self.raw,
                cfg.grid.0,
                cfg.grid.1,
                cfg.grid.2,
                cfg.block.0,
                cfg.block.1,
                cfg.block.2,
                cfg.shared_mem_bytes,
                stream,
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        if rc != 0 {
            return Err(rc);
        }
        Ok(())
    }
}
