//! The PTX of `kernels/cuda/*.cu`, compiled by `build.rs` with nvcc: one module per file,
//! each with `PTX_SM90` (`-arch=compute_90`, for compute capability 9.0 and newer) and
//! `PTX_PORTABLE` (`-arch=compute_75`). [`COMPILED`] is false, the constants empty and
//! [`MISSING_REASON`] set when nvcc was not found at build time.

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// The `.version X.Y` (PTX ISA) of a PTX text.
pub fn ptx_version(ptx: &str) -> Option<(u32, u32)> {
    let line = ptx
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(".version"))?;
    let (major, minor) = line.trim_start_matches(".version").trim().split_once('.')?;
    Some((major.trim().parse().ok()?, minor.trim().parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: &[(&str, &str)] = &[
        ("spmv sm90", spmv::PTX_SM90),
        ("spmv portable", spmv::PTX_PORTABLE),
    ];

    #[test]
    fn ptx_is_present_when_compiled() {
        if !COMPILED {
            assert!(MISSING_REASON.is_some());
            eprintln!("skipping: {}", MISSING_REASON.unwrap_or_default());
            return;
        }
        for (name, ptx) in ALL {
            assert!(!ptx.is_empty(), "{name}: empty PTX");
        }
        for kernel in ["spmv_ellr_f32", "spmv_ellr_f64"] {
            for (name, ptx) in ALL {
                assert!(
                    ptx.contains(&format!(".entry {kernel}(")),
                    "{name}: no kernel {kernel}"
                );
            }
        }
        assert!(spmv::PTX_SM90.contains(".target sm_90"));
        assert!(spmv::PTX_PORTABLE.contains(".target sm_75"));
    }

    #[test]
    fn ptx_version_is_accepted_by_cuda_13_0_drivers() {
        if !COMPILED {
            return;
        }
        for (name, ptx) in ALL {
            let v = ptx_version(ptx).unwrap_or_else(|| panic!("{name}: no .version"));
            assert!(v <= (9, 0), "{name}: PTX ISA {}.{} > 9.0", v.0, v.1);
        }
    }

    #[test]
    fn parses_ptx_versions() {
        assert_eq!(ptx_version("//\n.version 9.0\n.target sm_90"), Some((9, 0)));
        assert_eq!(ptx_version(".version 8.10"), Some((8, 10)));
        assert_eq!(ptx_version(".target sm_90"), None);
    }
}
