//! `xtask build-kernels`: compile every GPU kernel source on its own, to see compiler errors
//! with file and line without building (or running) a backend.
//!
//! - `kernels/cuda/*.cu` → `<target>/kernels/<name>.<arch>.ptx` with nvcc, for `compute_90`
//!   (Hopper) and `compute_75` (the portable fallback). nvcc's `file(line): error` locations are
//!   rewritten as `file:line: error`.
//! - `kernels/opencl/*.cl` → built on every device of every OpenCL platform present, through
//!   `ocl::core` (whose `get_platform_ids` fails cleanly where `Platform::list()` would panic).
//!   Errors name the repository file (through a `#line` directive) and the line.
//!   A typed source (one that uses `SUFFIX`) is built once per precision with the options the
//!   backend uses, any other once with none. The `f64` variant is skipped on devices without
//!   `cl_khr_fp64`.

use std::ffi::CString;
use std::path::Path;
use std::process::Command;

use trident_core::gpu::Precision;
use trident_opencl::kernels::build_options;

use ocl::core::{
    self as cl, ContextProperties, DeviceId, DeviceInfo, DeviceType, PlatformId, PlatformInfo,
    ProgramBuildInfo,
};

use crate::util::{fail, files_with_ext, rel, target_dir, usage, workspace_root, Result};

use crate::nvcc;

pub fn run(args: &[String]) -> Result {
    let mut require_ptx = false;
    for a in args {
        match a.as_str() {
            "--require-ptx" => require_ptx = true,
            other => return Err(usage(format!("unexpected argument `{other}`"))),
        }
    }
    let root = workspace_root();
    let mut failures = cuda(&root, require_ptx)?;
    failures += opencl(&root);
    if failures > 0 {
        return Err(fail(format!("{failures} kernel build(s) failed")));
    }
    println!("all kernels built");
    Ok(())
}

/// Compiles every `.cu` for every PTX target; returns the number of failures.
fn cuda(root: &Path, require_ptx: bool) -> Result<usize> {
    let sources = files_with_ext(&root.join("kernels/cuda"), "cu");
    println!("== CUDA: {} source(s) in kernels/cuda", sources.len());
    if sources.is_empty() {
        return Ok(0);
    }
    let Some(nvcc) = nvcc::find_nvcc(root) else {
        let msg = "nvcc not found (set NVCC, install it into .tools/cuda, or put it on PATH)";
        if require_ptx {
            return Err(fail(format!("{msg}; --require-ptx was given")));
        }
        println!("skipping CUDA: {msg}");
        return Ok(0);
    };
    match Command::new(&nvcc).arg("--version").output() {
        Ok(o) if o.status.success() => {
            let version = String::from_utf8_lossy(&o.stdout);
            let last = version.lines().last().unwrap_or("").trim();
            println!("nvcc: {} ({last})", nvcc.display());
        }
        Ok(o) => {
            return Err(fail(format!(
                "{} --version failed:\n{}",
                nvcc.display(),
                String::from_utf8_lossy(&o.stderr)
            )))
        }
        Err(e) => return Err(fail(format!("cannot run {}: {e}", nvcc.display()))),
    }
    let out_dir = target_dir().join("kernels");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| fail(format!("creating {}: {e}", out_dir.display())))?;
    let mut failures = 0;
    for src in &sources {
        let stem = src.file_stem().unwrap_or_default().to_string_lossy();
        // The PTX flavours and the machine code, as build.rs compiles them.
        let jobs = nvcc::TARGETS
            .iter()
            .map(|&(_, arch)| (&nvcc::FLAGS, arch, "ptx"))
            .chain([(&nvcc::CUBIN_FLAGS, nvcc::CUBIN.1, "cubin")]);
        for (flags, arch, ext) in jobs {
            let ptx = out_dir.join(format!("{stem}.{arch}.{ext}"));
            let output = Command::new(&nvcc)
                .current_dir(root)
                .args(flags)
                .arg(format!("-arch={arch}"))
                .arg("-o")
                .arg(&ptx)
                .arg(rel(src))
                .output();
            let label = format!("{} [{arch}]", rel(src));
            match output {
                Ok(o) => {
                    let mut text = String::from_utf8_lossy(&o.stderr).into_owned();
                    text += &String::from_utf8_lossy(&o.stdout);
                    let text = nvcc_locations(&text);
                    if o.status.success() {
                        println!("{label}: OK -> {}", ptx.display());
                        if !text.trim().is_empty() {
                            println!("{}", text.trim_end());
                        }
                    } else {
                        failures += 1;
                        println!("{label}: FAILED\n{}", text.trim_end());
                    }
                }
                Err(e) => {
                    failures += 1;
                    println!("{label}: cannot run {}: {e}", nvcc.display());
                }
            }
        }
    }
    Ok(failures)
}

/// Rewrites nvcc's `path(line): msg` as `path:line: msg`, which editors and terminals link.
fn nvcc_locations(text: &str) -> String {
    text.lines()
        .map(|line| {
            let rewritten = line.split_once("): ").and_then(|(head, msg)| {
                let (path, num) = head.rsplit_once('(')?;
                let plausible = !path.is_empty()
                    && !path.contains(' ')
                    && !num.is_empty()
                    && num.bytes().all(|b| b.is_ascii_digit());
                plausible.then(|| format!("{path}:{num}: {msg}"))
            });
            rewritten.unwrap_or_else(|| line.to_string())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The build variants of an OpenCL source: a typed module (one that uses `SUFFIX`) once per
/// precision with the backend's own options ([`trident_opencl::kernels::build_options`]), any
/// other once with none.
fn cl_variants(text: &str) -> Vec<String> {
    if text.contains("SUFFIX") {
        [Precision::F32, Precision::F64]
            .map(|p| build_options(p).to_string())
            .to_vec()
    } else {
        vec![String::new()]
    }
}

/// Builds every `.cl` on every OpenCL device; returns the number of failures.
fn opencl(root: &Path) -> usize {
    let sources = files_with_ext(&root.join("kernels/opencl"), "cl");
    println!("== OpenCL: {} source(s) in kernels/opencl", sources.len());
    if sources.is_empty() {
        return 0;
    }
    let mut texts = Vec::new();
    let mut failures = 0;
    for src in &sources {
        match std::fs::read_to_string(src) {
            Ok(t) => texts.push((rel(src), t)),
            Err(e) => {
                failures += 1;
                println!("{}: cannot read: {e}", rel(src));
            }
        }
    }
    let platforms = match cl::get_platform_ids() {
        Ok(p) => p,
        Err(e) => {
            println!(
                "skipping OpenCL: no platform ({})",
                one_line(&e.to_string())
            );
            return failures;
        }
    };
    if platforms.is_empty() {
        println!("skipping OpenCL: no platform installed");
    }
    for platform in platforms {
        let pname = cl::get_platform_info(platform, PlatformInfo::Name)
            .map(|r| r.to_string())
            .unwrap_or_else(|e| format!("(unnamed platform: {e})"));
        let devices = match cl::get_device_ids(platform, Some(DeviceType::ALL), None) {
            Ok(d) => d,
            Err(e) => {
                println!("{pname}: no devices ({})", one_line(&e.to_string()));
                continue;
            }
        };
        for device in devices {
            failures += build_on_device(platform, device, &pname, &texts);
        }
    }
    failures
}

/// Builds every source variant on one device; returns the number of failures.
fn build_on_device(
    platform: PlatformId,
    device: DeviceId,
    pname: &str,
    texts: &[(String, String)],
) -> usize {
    let info = |what: DeviceInfo| {
        cl::get_device_info(device, what)
            .map(|r| r.to_string())
            .unwrap_or_default()
    };
    let dname = format!("{pname} / {}", info(DeviceInfo::Name).trim());
    let fp64 = info(DeviceInfo::Extensions).contains("cl_khr_fp64");
    let props = ContextProperties::new().platform(platform);
    let context = match cl::create_context(Some(&props), &[device], None, None) {
        Ok(c) => c,
        Err(e) => {
            println!(
                "{dname}: cannot create a context: {}",
                one_line(&e.to_string())
            );
            return 1;
        }
    };
    let mut failures = 0;
    for (file, text) in texts {
        for options in cl_variants(text) {
            let label = if options.is_empty() {
                format!("{dname}: {file}")
            } else {
                format!("{dname}: {file} [{options}]")
            };
            if !fp64 && (options.contains("double") || options.contains("FP64")) {
                println!("{label}: skip (device has no cl_khr_fp64)");
                continue;
            }
            // `#line` makes the compiler name the repository file, not its temporary copy.
            let built = CString::new(format!("#line 1 \"{file}\"\n{text}"))
                .map_err(|e| e.to_string())
                .and_then(|src| {
                    cl::create_program_with_source(&context, &[src]).map_err(|e| e.to_string())
                })
                .and_then(|program| {
                    let opts = CString::new(options.as_str()).map_err(|e| e.to_string())?;
                    cl::build_program(&program, Some(&[device]), &opts, None, None)
                        .map_err(|e| e.to_string())?;
                    Ok(program)
                });
            match built {
                Ok(program) => {
                    println!("{label}: OK");
                    let log =
                        cl::get_program_build_info(&program, device, ProgramBuildInfo::BuildLog)
                            .map(|r| r.to_string())
                            .unwrap_or_default();
                    if !log.trim().is_empty() {
                        println!("{}", log.trim_end());
                    }
                }
                Err(e) => {
                    failures += 1;
                    println!("{label}: FAILED\n{}", e.trim_end());
                }
            }
        }
    }
    failures
}

/// The first line of `s`.
fn one_line(s: &str) -> &str {
    s.lines().find(|l| !l.trim().is_empty()).unwrap_or(s).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvcc_locations_become_file_colon_line() {
        let text = "kernels/cuda/spmv.cu(12): error: identifier \"x\" is undefined\n  x = 1;\n";
        assert_eq!(
            nvcc_locations(text),
            "kernels/cuda/spmv.cu:12: error: identifier \"x\" is undefined\n  x = 1;"
        );
        assert_eq!(nvcc_locations("f(x): not a line"), "f(x): not a line");
    }

    #[test]
    fn typed_sources_build_once_per_precision_with_the_backend_options() {
        let src = "#ifndef SUFFIX\n#error \"build with -D SUFFIX\"\n#endif\n";
        assert_eq!(
            cl_variants(src),
            [
                build_options(Precision::F32).to_string(),
                build_options(Precision::F64).to_string()
            ]
        );
        assert_eq!(cl_variants("__kernel void k() {}"), [""]);
    }
}
