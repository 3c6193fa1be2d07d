//! The thin layer over the CUDA driver API: error translation, and the few driver calls made
//! directly rather than through `cust`.
//!
//! Calls whose error codes matter most (`cuInit`, module loading with the JIT error log,
//! kernel launches) are declared here with a plain `c_int` result: `cust_raw` declares them
//! as returning a Rust enum, which cannot represent codes newer than its CUDA 11.4 headers.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

use cust::error::CudaError;
use cust::sys::{CUfunction, CUjit_option, CUmodule, CUstream};
use trident_core::Error;

/// Backend name used in every error.
pub(crate) const BACKEND: &str = "cuda";

/// `CUDA_ERROR_OUT_OF_MEMORY`.
const OUT_OF_MEMORY: c_int = 2;
/// `CUDA_ERROR_NO_DEVICE`.
const NO_DEVICE: c_int = 100;

mod ffi {
    use super::*;

    extern "C" {
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

/// `"CUDA_ERROR_NAME (code): description"` for a driver result code; never fails.
pub(crate) fn describe_code(code: c_int) -> String {
    let name = driver_string(ffi::cuGetErrorName, code);
    let text = driver_string(ffi::cuGetErrorString, code);
    match (name, text) {
        (Some(n), Some(t)) => format!("{n} ({code}): {t}"),
        (Some(n), None) => format!("{n} ({code})"),
        (None, Some(t)) => format!("CUDA error {code}: {t}"),
        (None, None) => format!("CUDA error {code}"),
    }
}

/// The driver code of a `cust` error (`None` for cust's own, non-driver errors).
fn code_of(e: CudaError) -> Option<c_int> {
    let code = e as u32;
    (code <= 999).then_some(code as c_int)
}

/// Describes a `cust` error without `CudaError`'s `Display` (which can fail, and then panic).
fn describe_cust(e: CudaError) -> String {
    match code_of(e) {
        Some(code) => describe_code(code),
        None => format!("{e:?}"),
    }
}

/// Translates a driver result code of the operation `what` into a Trident error.
pub(crate) fn error_from_code(code: c_int, what: &str) -> Error {
    let message = format!("{what}: {}", describe_code(code));
    match code {
        OUT_OF_MEMORY => Error::out_of_memory(BACKEND, message),
        NO_DEVICE => Error::no_device(BACKEND, message),
        _ => Error::backend(BACKEND, message),
    }
}

/// Translates a `cust` error of the operation `what` into a Trident error.
pub(crate) fn error(e: CudaError, what: &str) -> Error {
    match code_of(e) {
        Some(code) => error_from_code(code, what),
        None => Error::Backend {
            backend: BACKEND,
            message: format!("{what}: {}", describe_cust(e)),
            source: None,
        },
    }
}

/// Like [`error`], but any failure means the device is unusable: [`Error::NoDevice`].
pub(crate) fn no_device(e: CudaError, what: &str) -> Error {
    Error::NoDevice {
        backend: BACKEND,
        message: format!("{what}: {}", describe_cust(e)),
        source: None,
    }
}

/// A plain backend error.
pub(crate) fn backend(message: impl Into<String>) -> Error {
    Error::Backend {
        backend: BACKEND,
        message: message.into(),
        source: None,
    }
}

/// `cuInit(0)`; any failure (no driver, no device, driver too old) is [`Error::NoDevice`].
pub(crate) fn init() -> trident_core::Result<()> {
    // SAFETY: cuInit takes a flags word (must be 0) and may be called any number of times.
    let rc = unsafe { ffi::cuInit(0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::NoDevice {
            backend: BACKEND,
            message: format!("cuInit failed: {}", describe_code(rc)),
            source: None,
        })
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
    pub(crate) fn from_ptx(ptx: &str) -> trident_core::Result<Module> {
        let image = CString::new(ptx).map_err(|_| backend("PTX contains a NUL byte"))?;
        const LOG: usize = 16 * 1024;
        let mut log = vec![0u8; LOG];
        let mut options = [
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        // cuModuleLoadDataEx takes option values that fit in a pointer by value.
        let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), LOG as *mut c_void];
        let mut raw: CUmodule = std::ptr::null_mut();
        // SAFETY: `image` is a NUL-terminated PTX string; the two options name a writable
        // buffer of LOG bytes (`log`, alive across the call) and its size; `raw` is writable.
        let rc = unsafe {
            ffi::cuModuleLoadDataEx(
                &mut raw,
                image.as_ptr().cast(),
                options.len() as c_uint,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if rc != 0 {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(&log[..end]);
            let mut e = error_from_code(rc, "loading the CUDA kernels (PTX JIT)");
            if let Error::Backend { message, .. } | Error::OutOfMemory { message, .. } = &mut e {
                if !text.trim().is_empty() {
                    message.push_str("; JIT log: ");
                    message.push_str(text.trim());
                }
            }
            return Err(e);
        }
        Ok(Module { raw })
    }

    /// The kernel called `name`.
    pub(crate) fn function(&self, name: &str) -> trident_core::Result<Function> {
        let cname = CString::new(name).map_err(|_| backend("kernel name contains a NUL"))?;
        let mut raw: CUfunction = std::ptr::null_mut();
        // SAFETY: `self.raw` is a loaded module, `cname` NUL-terminated, `raw` writable.
        let rc = unsafe { ffi::cuModuleGetFunction(&mut raw, self.raw, cname.as_ptr()) };
        if rc != 0 {
            return Err(error_from_code(rc, &format!("finding kernel {name}")));
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

/// Launch geometry.
#[derive(Clone, Copy)]
pub(crate) struct Launch {
    pub grid: u32,
    pub block: u32,
}

impl Function {
    /// Queues the kernel on `stream` with the given argument pointers.
    ///
    /// # Safety
    ///
    /// `args` must hold, in order, one pointer to a value of exactly the type of each kernel
    /// parameter, and every device pointer among them must be valid for what the kernel
    /// accesses under this launch geometry, until the kernel has finished.
    pub(crate) unsafe fn launch(
        &self,
        stream: CUstream,
        geometry: Launch,
        args: &mut [*mut c_void],
        what: &str,
    ) -> trident_core::Result<()> {
        // SAFETY: the caller guarantees the argument list; `self.raw` is a loaded kernel.
        let rc = unsafe {
            ffi::cuLaunchKernel(
                self.raw,
                geometry.grid,
                1,
                1,
                geometry.block,
                1,
                1,
                0,
                stream,
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        if rc != 0 {
            return Err(error_from_code(rc, what));
        }
        Ok(())
    }
}
