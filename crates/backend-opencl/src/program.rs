//! Building OpenCL programs from the embedded sources, and the cached kernels.

use std::ffi::CString;
use std::sync::{Mutex, MutexGuard, PoisonError};

use ocl::core::{
    self, DeviceId, KernelWorkGroupInfo, KernelWorkGroupInfoResult, ProgramBuildInfo,
    ProgramBuildInfoResult,
};
use trident_core::Result;

use crate::kernels::Source;
use crate::{backend_err, describe};

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
pub(crate) fn build(
    context: &ocl::Context,
    device: DeviceId,
    device_name: &str,
    source: Source,
    options: &str,
) -> Result<core::Program> {
    let what = || {
        if options.is_empty() {
            format!("building {} for {device_name}", source.file)
        } else {
            format!("building {} ({options}) for {device_name}", source.file)
        }
    };
    let text = CString::new(source.text).map_err(|e| backend_err(&what(), e))?;
    let opts = CString::new(options).map_err(|e| backend_err(&what(), e))?;
    let program = core::create_program_with_source(context.as_core(), &[text])
        .map_err(|e| backend_err(&what(), describe(e)))?;
    if let Err(e) = core::build_program(&program, Some(&[device]), &opts, None, None) {
        let log = match core::get_program_build_info(&program, device, ProgramBuildInfo::BuildLog) {
            Ok(ProgramBuildInfoResult::BuildLog(log)) if !log.trim().is_empty() => {
                name_positions(log.trim_end(), source.file)
            }
            _ => "(the compiler left no build log)".to_string(),
        };
        // A failed compile comes back as ocl's rendering of the log; anything else has a status.
        let status = match e.api_status() {
            Some(s) => format!("{s:?} ({})", s as i32),
            None => "CL_BUILD_PROGRAM_FAILURE (-11)".to_string(),
        };
        return Err(backend_err(&what(), format!("{status}; build log:\n{log}")));
    }
    Ok(program)
}

/// Rewrites the diagnostic positions of a build log (`PATH:LINE:COL:` or `PATH:LINE:`) whose
/// PATH is the compiler's placeholder for the one source string (`<kernel>`, `<source>`,
/// `<stdin>`, a `.cl` temporary file, a bare source index) to name `file` instead. Positions
/// in other files (`<built-in>`, OpenCL headers) are left alone.
fn name_positions(log: &str, file: &str) -> String {
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
        format!("{file}:{}:", pos.join(":"))
    };
    log.lines()
        .map(|line| line.split(' ').map(token).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One kernel of a built program, with the work-group size it launches with.
///
/// `clSetKernelArg` on a shared kernel object is not thread-safe, so the kernel sits behind a
/// mutex held from setting the arguments to the enqueue (which captures them).
pub(crate) struct CachedKernel {
    kernel: Mutex<core::Kernel>,
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
        let kernel = core::create_kernel(program, name)
            .map_err(|e| backend_err(&format!("creating kernel {name}"), describe(e)))?;
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
            local,
        })
    }

    /// Exclusive use of the kernel object (a poisoned lock is recovered: the kernel holds no
    /// state beyond its arguments, which every launch sets afresh).
    pub(crate) fn lock(&self) -> MutexGuard<'_, core::Kernel> {
        self.kernel.lock().unwrap_or_else(PoisonError::into_inner)
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
                f
            ),
            "kernels/opencl/spmv.cl:4:12: error: use of undeclared identifier 'x'\n    y = x;"
        );
        // PoCL
        assert_eq!(
            name_positions(
                "error: /root/.cache/pocl/kcache/tempfile_FUQ7X3.cl:3:12: bad",
                f
            ),
            "error: kernels/opencl/spmv.cl:3:12: bad"
        );
        // A source index, a line without column, and positions that must stay.
        assert_eq!(
            name_positions("1:3:12: error: e\n<source>:7: note\n<built-in>:1:2: x\nratio 3:4: y", f),
            "kernels/opencl/spmv.cl:3:12: error: e\nkernels/opencl/spmv.cl:7: note\n<built-in>:1:2: x\nratio 3:4: y"
        );
    }
}
