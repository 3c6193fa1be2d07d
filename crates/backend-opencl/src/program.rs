//! Building OpenCL programs from the embedded sources, the cached kernels, and launches
//! with typed arguments ([`CachedKernel::builder`]).

use std::ffi::CString;
use std::marker::PhantomData;
use std::sync::{Mutex, MutexGuard, PoisonError};

use ocl::core::{
    self, ArgVal, DeviceId, KernelInfo, KernelInfoResult, KernelWorkGroupInfo,
    KernelWorkGroupInfoResult, ProgramBuildInfo, ProgramBuildInfoResult,
};
use ocl::{Buffer, OclPrm};
use trident_core::{Error, Result};

use crate::error::{ClError, ClResultExt};
use crate::kernels::{Source, DIALECT};
use crate::BACKEND;

/// Preferred work-group size: a multiple of the warp / wavefront width of every GPU vendor,
/// small enough for any device's limit (it is still clamped to the device's and kernel's).
const PREFERRED_LOCAL: usize = 256;

/// Builds `source` for one device with the given compiler options. A failed build becomes
/// [`trident_core::Error::Backend`] carrying the compiler's log, in which the compiler's name
/// for the source (`<kernel>` on NVIDIA, a temporary file on PoCL, …) is replaced by
/// `source.file`, so diagnostics read `kernels/opencl/spmv.cl:LINE:COL`.
///
/// (A `#line 1 "file"` directive would be the standard way, but NVIDIA's compiler ignores it
/// and then reports every line one too far.)
#[allow(dead_code)] // the tests build sources of their own
pub(crate) fn build(
    context: &ocl::Context,
    device: DeviceId,
    device_name: &str,
    source: Source,
    options: &str,
) -> Result<core::Program> {
    let prelude = source.shared.then_some(&DIALECT);
    build_text(
        context,
        device,
        device_name,
        source.file,
        source.text,
        prelude,
        options,
    )
}

/// [`build`] of the OpenCL C `text`, whose diagnostics name `file`, with `prelude` (the
/// dialect header of a shared file) in front of it: the compiler sees one text, and the
/// positions of its log are mapped back to the prelude's file or to `file`.
pub(crate) fn build_text(
    context: &ocl::Context,
    device: DeviceId,
    device_name: &str,
    file: &str,
    text: &str,
    prelude: Option<&Source>,
    options: &str,
) -> Result<core::Program> {
    let joined;
    let (text, prelude_lines) = match prelude {
        Some(p) => {
            joined = format!("{}\n{text}", p.text.trim_end_matches('\n'));
            (
                joined.as_str(),
                Some((p.file, p.text.trim_end_matches('\n').lines().count())),
            )
        }
        None => (text, None),
    };
    let what = || {
        if options.is_empty() {
            format!("building {file} for {device_name}")
        } else {
            format!("building {file} ({options}) for {device_name}")
        }
    };
    let text = CString::new(text).or_cl(what)?;
    let opts = CString::new(options).or_cl(what)?;
    let program = core::create_program_with_source(context.as_core(), &[text]).or_cl(what)?;
    if let Err(e) = core::build_program(&program, Some(&[device]), &opts, None, None) {
        let log = match core::get_program_build_info(&program, device, ProgramBuildInfo::BuildLog) {
            Ok(ProgramBuildInfoResult::BuildLog(log)) if !log.trim().is_empty() => {
                name_positions(log.trim_end(), file, prelude_lines)
            }
            _ => "(the compiler left no build log)".to_string(),
        };
        // A failed compile comes back as ocl's rendering of the log; anything else has a status.
        let status = match e.api_status() {
            Some(_) => ClError::new(e),
            None => ClError {
                status: Some(core::Status::CL_BUILD_PROGRAM_FAILURE as i32),
                message: "CL_BUILD_PROGRAM_FAILURE".to_string(),
            },
        };
        let message = format!("{}; build log:\n{log}", what());
        return Err(Error::backend(BACKEND, message).with_source(status));
    }
    Ok(program)
}

/// Rewrites the diagnostic positions of a build log (`PATH:LINE:COL:` or `PATH:LINE:`) whose
/// PATH is the compiler's placeholder for the one source string (`<kernel>`, `<source>`,
/// `<stdin>`, a `.cl` temporary file, a bare source index) to name `file` instead. Positions
/// in other files (`<built-in>`, OpenCL headers) are left alone. With `prelude` (its file and
/// number of lines, which came first in the compiled text), a line within the prelude names
/// the prelude's file, and a later line names `file` at its own line.
fn name_positions(log: &str, file: &str, prelude: Option<(&str, usize)>) -> String {
    fn is_num(s: &str) -> bool {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
    }
    fn placeholder(path: &str) -> bool {
        let bracketed = path.starts_with('<')
            && path.ends_with('>')
            && path != "<built-in>"
            && path != "<command line>";
        bracketed || path.ends_with(".cl") || is_num(path)
    }
    let token = |t: &str| -> String {
        let Some(body) = t.strip_suffix(':') else {
            return t.to_string();
        };
        let mut parts: Vec<&str> = body.split(':').collect();
        let mut pos = Vec::new();
        while pos.len() < 2 && parts.len() > 1 && parts.last().is_some_and(|p| is_num(p)) {
            pos.insert(0, parts.pop().unwrap_or_default());
        }
        let path = parts.join(":");
        // A bare number as PATH (a source index) only with both line and column.
        if pos.is_empty() || !placeholder(&path) || (is_num(&path) && pos.len() < 2) {
            return t.to_string();
        }
        let line: usize = pos[0].parse().unwrap_or(0);
        let (name, line) = match prelude {
            Some((pfile, n)) if line <= n => (pfile, line),
            Some((_, n)) => (file, line - n),
            None => (file, line),
        };
        let mut out = format!("{name}:{line}:");
        for p in &pos[1..] {
            out.push_str(p);
            out.push(':');
        }
        out
    };
    log.lines()
        .map(|line| line.split(' ').map(token).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One kernel of a built program, with the work-group size it launches with.
///
/// `clSetKernelArg` on a shared kernel object is not thread-safe, so the kernel sits behind a
/// mutex held from setting the arguments to the enqueue (which captures them): a
/// `ClLaunch` holds it.
pub struct CachedKernel {
    kernel: Mutex<core::Kernel>,
    /// Full name, e.g. `spmv_ellr_f32`.
    name: String,
    /// Number of parameters, which every launch must set.
    num_args: u32,
    /// Work-group size: [`PREFERRED_LOCAL`] clamped to the device's and the kernel's limits,
    /// rounded down to a power of two.
    pub(crate) local: usize,
}

impl CachedKernel {
    /// Creates kernel `name` from `program` and sizes its work-groups for `device`.
    pub(crate) fn new(
        program: &core::Program,
        name: &str,
        device: DeviceId,
        device_max_wg: usize,
    ) -> Result<Self> {
        let what = || format!("creating kernel {name}");
        let kernel = core::create_kernel(program, name).or_cl(what)?;
        let num_args = match core::get_kernel_info(&kernel, KernelInfo::NumArgs).or_cl(what)? {
            KernelInfoResult::NumArgs(n) => n,
            _ => {
                return Err(Error::backend(
                    BACKEND,
                    format!("{}: no argument count", what()),
                ))
            }
        };
        let kernel_max = match core::get_kernel_work_group_info(
            &kernel,
            device,
            KernelWorkGroupInfo::WorkGroupSize,
        ) {
            Ok(KernelWorkGroupInfoResult::WorkGroupSize(n)) if n > 0 => n,
            _ => device_max_wg,
        };
        let limit = PREFERRED_LOCAL.min(device_max_wg).min(kernel_max).max(1);
        // Largest power of two <= limit.
        let local = 1usize << (usize::BITS - 1 - limit.leading_zeros());
        Ok(Self {
            kernel: Mutex::new(kernel),
            name: name.to_string(),
            num_args,
            local,
        })
    }

    /// The kernel's name, e.g. `spmv_ellr_f32`.
    #[allow(dead_code)] // for messages of algorithm code
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// An empty argument list for one launch, holding the kernel's lock until the launch (a
    /// poisoned lock is recovered: the kernel holds no state beyond its arguments, which every
    /// launch sets afresh).
    pub(crate) fn builder<'b>(&self) -> ClLaunch<'_, 'b> {
        ClLaunch {
            kernel: self.kernel.lock().unwrap_or_else(PoisonError::into_inner),
            cached: self,
            next: 0,
            error: None,
            _borrows: PhantomData,
        }
    }
}

/// Global and local work sizes of a launch, in 1 to 3 dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LaunchDims {
    dims: u32,
    global: [usize; 3],
    local: Option<[usize; 3]>,
}

impl LaunchDims {
    /// `groups` work-groups of `group_size` work-items in x, y, z (1-D when y and z are
    /// 1); `None` if a global size overflows.
    pub(crate) fn from_groups(groups: [usize; 3], group_size: [usize; 3]) -> Option<Self> {
        let mut global = [0; 3];
        for i in 0..3 {
            global[i] = groups[i].checked_mul(group_size[i])?;
        }
        let dims = if groups[1..] == [1, 1] && group_size[1..] == [1, 1] {
            1
        } else if groups[2] == 1 && group_size[2] == 1 {
            2
        } else {
            3
        };
        Some(Self {
            dims,
            global,
            local: Some(group_size),
        })
    }
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// A value that can be passed to an OpenCL kernel parameter: `u32` (`uint`), `i32`
/// (`int`), `u64` (`ulong`), `i64` (`long`), `f32`, `f64`, and device buffers by reference
/// (`&Buffer<T>`, `&ClVector<T>`, for a `__global T *` parameter). Sealed.
pub(crate) trait ClArg: sealed::Sealed {
    /// Sets parameter `index` of `kernel` to this value.
    fn set(&self, kernel: &core::Kernel, index: u32) -> ocl::core::Result<()>;
}

macro_rules! scalar_args {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl ClArg for $t {
            fn set(&self, kernel: &core::Kernel, index: u32) -> ocl::core::Result<()> {
                core::set_kernel_arg(kernel, index, ArgVal::scalar(self))
            }
        }
    )*};
}
scalar_args!(u32, i32, u64, i64, f32, f64);

impl<T: OclPrm> sealed::Sealed for &Buffer<T> {}
impl<T: OclPrm> ClArg for &Buffer<T> {
    fn set(&self, kernel: &core::Kernel, index: u32) -> ocl::core::Result<()> {
        core::set_kernel_arg(kernel, index, ArgVal::mem(self.as_core()))
    }
}

impl sealed::Sealed for &core::Mem {}
impl ClArg for &core::Mem {
    fn set(&self, kernel: &core::Kernel, index: u32) -> ocl::core::Result<()> {
        core::set_kernel_arg(kernel, index, ArgVal::mem(self))
    }
}

/// The arguments of one launch of a [`CachedKernel`], set in parameter order as they are
/// added; `'b` is the lifetime of the buffers passed by reference.
pub(crate) struct ClLaunch<'a, 'b> {
    kernel: MutexGuard<'a, core::Kernel>,
    cached: &'a CachedKernel,
    /// Index of the next parameter.
    next: u32,
    /// The first failure to set an argument, reported by [`ClLaunch::launch`].
    error: Option<Error>,
    _borrows: PhantomData<&'b ()>,
}

impl<'b> ClLaunch<'_, 'b> {
    /// Sets the next argument.
    pub(crate) fn arg(&mut self, value: impl ClArg + 'b) -> &mut Self {
        let index = self.next;
        self.next += 1;
        if self.error.is_none() {
            if let Err(e) = value.set(&self.kernel, index) {
                self.error = Some(crate::error::cl_error(
                    format!("setting argument {index} of {}", self.cached.name),
                    e,
                ));
            }
        }
        self
    }

    /// Sets the next argument, a `__local T *`, to `len` elements of local memory per
    /// work-group.
    #[allow(dead_code)] // for kernels with dynamic local memory
    pub(crate) fn local<T: OclPrm>(&mut self, len: usize) -> &mut Self {
        let index = self.next;
        self.next += 1;
        if self.error.is_none() {
            if let Err(e) = core::set_kernel_arg(&self.kernel, index, ArgVal::local::<T>(&len)) {
                self.error = Some(crate::error::cl_error(
                    format!("setting argument {index} of {}", self.cached.name),
                    e,
                ));
            }
        }
        self
    }

    /// Enqueues the kernel on `queue` with these arguments. Fails (enqueuing nothing) if an
    /// argument could not be set or their number is not the kernel's.
    ///
    /// # Safety
    ///
    /// The arguments must match the kernel's parameters in order and type, every buffer
    /// among them must belong to `queue`'s context and be large enough for everything the
    /// kernel accesses under `dims`. (Argument values are captured at enqueue, and OpenCL
    /// keeps the buffers alive until the kernel completes.)
    pub(crate) unsafe fn launch(&mut self, queue: &ocl::Queue, dims: LaunchDims) -> Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let name = &self.cached.name;
        if self.next != self.cached.num_args {
            return Err(Error::backend(
                BACKEND,
                format!(
                    "launching {name}: {} arguments given, the kernel has {}",
                    self.next, self.cached.num_args
                ),
            ));
        }
        // SAFETY: every parameter is set (counted above); the caller guarantees that the
        // arguments match the kernel and that the buffers suffice for `dims`.
        unsafe {
            core::enqueue_kernel(
                queue.as_core(),
                &self.kernel,
                dims.dims,
                None,
                &dims.global,
                dims.local,
                None::<()>,
                None::<()>,
            )
        }
        .or_cl(|| format!("launching {name}"))
    }
}

#[cfg(test)]
mod tests {
    use super::name_positions;

    #[test]
    fn log_positions_name_the_file() {
        let f = "kernels/opencl/spmv.cl";
        // NVIDIA
        assert_eq!(
            name_positions(
                "<kernel>:4:12: error: use of undeclared identifier 'x'\n    y = x;",
                f,
                None
            ),
            "kernels/opencl/spmv.cl:4:12: error: use of undeclared identifier 'x'\n    y = x;"
        );
        // PoCL
        assert_eq!(
            name_positions(
                "error: /root/.cache/pocl/kcache/tempfile_FUQ7X3.cl:3:12: bad",
                f,
                None
            ),
            "error: kernels/opencl/spmv.cl:3:12: bad"
        );
        // A source index, a line without column, and positions that must stay.
        assert_eq!(
            name_positions(
                "1:3:12: error: e\n<source>:7: note\n<built-in>:1:2: x\nratio 3:4: y",
                f,
                None
            ),
            "kernels/opencl/spmv.cl:3:12: error: e\nkernels/opencl/spmv.cl:7: note\n<built-in>:1:2: x\nratio 3:4: y"
        );
        // A shared file: 100 lines of dialect header came first.
        let p = Some(("kernels/common/dialect.h", 100));
        assert_eq!(
            name_positions("<kernel>:104:5: error: e\n<kernel>:7:1: note: here", f, p),
            "kernels/opencl/spmv.cl:4:5: error: e\nkernels/common/dialect.h:7:1: note: here"
        );
        assert_eq!(
            name_positions("<source>:101: warning", f, p),
            "kernels/opencl/spmv.cl:1: warning"
        );
    }
}
