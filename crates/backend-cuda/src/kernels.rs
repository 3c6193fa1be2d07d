//! The kernel table: every `kernels/cuda/<name>.cu` file is one [`Module`], with its PTX and
//! the roots of the kernels it defines.
//!
//! `build.rs` compiles each file with nvcc into a generated module of the same name holding
//! `PTX_SM90` (`-arch=compute_90`, for compute capability 9.0 and newer) and `PTX_PORTABLE`
//! (`-arch=compute_75`); [`COMPILED`] is false, the constants empty and [`MISSING_REASON`]
//! set when nvcc was not found at build time. The `kernel_table!` invocation below is the one
//! place that names the modules: adding `kernels/cuda/matmul.cu` takes one line there.
//!
//! A *typed* kernel root `r` is defined by the file as `extern "C"` kernels `r_f32` and
//! `r_f64` (see [`trident_core::gpu::kernel_name`]); a *plain* kernel has one name, used as
//! is. Only the kernels listed here can be loaded, and the tests check that each is in the
//! PTX.

use trident_core::gpu::KernelList;

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// One table entry: a kernel file, its PTX and its kernels.
#[derive(Debug)]
pub struct ModuleInfo {
    /// The file stem, e.g. `spmv`.
    pub name: &'static str,
    /// Path in the repository, e.g. `kernels/cuda/spmv.cu`.
    pub file: &'static str,
    /// PTX for `compute_90` (empty without nvcc).
    pub ptx_sm90: &'static str,
    /// PTX for `compute_75` (empty without nvcc).
    pub ptx_portable: &'static str,
    /// Machine code for `sm_90` (empty without nvcc).
    pub cubin_sm90: &'static [u8],
    /// The kernels it defines; a kernel's slot indexes the loaded module's functions.
    pub kernels: KernelList,
}

impl ModuleInfo {
    /// The machine code to load on a device of compute capability `(major, minor)`, when
    /// there is some for exactly that architecture (else the PTX is JIT-compiled).
    pub fn cubin(&self, (major, minor): (u32, u32)) -> Option<&'static [u8]> {
        ((major, minor) == (9, 0) && !self.cubin_sm90.is_empty()).then_some(self.cubin_sm90)
    }

    /// The PTX to load on a device of compute capability `major`.x.
    pub fn ptx(&self, major: u32) -> &'static str {
        if major >= 9 {
            self.ptx_sm90
        } else {
            self.ptx_portable
        }
    }
}

/// One table entry: `kernels/cuda/<stem>.cu`, its PTX (the generated module `<stem>`) and
/// its kernels.
macro_rules! cuda_module {
    ($stem:ident, typed: [$($typed:literal),* $(,)?], plain: [$($plain:literal),* $(,)?]) => {
        cuda_module!($stem, KernelList::new(&[$($typed),*], &[$($plain),*]))
    };
    ($stem:ident, $kernels:expr) => {
        ModuleInfo {
            name: stringify!($stem),
            file: concat!("kernels/cuda/", stringify!($stem), ".cu"),
            ptx_sm90: $stem::PTX_SM90,
            ptx_portable: $stem::PTX_PORTABLE,
            cubin_sm90: $stem::CUBIN_SM90,
            kernels: $kernels,
        }
    };
}

trident_core::kernel_table! {
    /// A kernel file of `kernels/cuda/`; `Module::X as usize` indexes [`MODULES`].
    enum Module;
    /// The table, in the order of [`Module`]'s variants: one line per kernel file.
    static MODULES: [ModuleInfo];
    /// `kernels/cuda/spmv.cu`: ELLPACK-R SpMV.
    Spmv => cuda_module!(spmv, trident_core::spmv::device::KERNELS),
    /// `kernels/cuda/reduce.cu`: reductions over device vectors (trident_core::reduce).
    Reduce => cuda_module!(reduce, trident_core::reduce::KERNELS),
    /// `kernels/cuda/triangles.cu`: triangle counting (plain kernels, no precision), compiled
    /// from the shared `kernels/opencl/triangles.cl`.
    Triangles => cuda_module!(triangles, trident_core::triangles::device::KERNELS),
    /// `kernels/cuda/matmul.cu`: the tiled GEMM and the strided block sum of Strassen.
    /// The portable kernels of core's driver, and the FP64 tensor-core GEMMs of sm_90. Not
    /// shared with `kernels/opencl/matmul.cl`: one source measured slower on OpenCL f64
    /// (benches/results/history/one-source-2026-11-26.md).
    Matmul => cuda_module!(
        matmul,
        KernelList::new(
            trident_core::matmul::device::KERNELS.typed,
            &["gemm_dmma_f64", "gemm_dmma_fused_f64"],
        )
    ),
    /// `kernels/cuda/svd.cu`: one-sided block Jacobi SVD and Givens QR (compiles the shared
    /// `kernels/opencl/svd.cl`).
    Svd => cuda_module!(svd, trident_core::svd::device::KERNELS),
    /// `kernels/cuda/mcl.cu`: the R-MCL iteration (mass, penalty, fused column pass in
    /// shared or global memory, reduction) and the device side of the interpretation: the
    /// shared `kernels/opencl/mcl.cl` compiled as CUDA.
    Mcl => cuda_module!(mcl, trident_core::mcl::gpu::KERNELS),
}

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

    fn all_ptx() -> impl Iterator<Item = (&'static ModuleInfo, &'static str, &'static str)> {
        MODULES.iter().flat_map(|m| {
            [("sm90", m.ptx_sm90), ("portable", m.ptx_portable)].map(|(f, p)| (m, f, p))
        })
    }

    #[test]
    fn the_table_names_every_file_once_in_order() {
        for (i, m) in Module::ALL.iter().enumerate() {
            assert_eq!(*m as usize, i);
            assert_eq!(Module::by_name(m.info().name), Some(*m));
            assert_eq!(m.info().file, format!("kernels/cuda/{}.cu", m.info().name));
        }
        let mut names: Vec<&str> = MODULES.iter().map(|m| m.name).collect();
        names.sort_unstable();
        let mut files = FILES.to_vec();
        files.sort_unstable();
        assert_eq!(
            names, files,
            "every kernels/cuda/*.cu needs one kernel_table! entry"
        );
        assert_eq!(Module::by_name("no_such_file"), None);
    }

    #[test]
    fn ptx_is_present_when_compiled() {
        if !COMPILED {
            assert!(MISSING_REASON.is_some());
            return trident_core::testing::skip(
                trident_core::testing::Needs::Gpu,
                MISSING_REASON.unwrap_or_default(),
            );
        }
        for (m, flavour, ptx) in all_ptx() {
            assert!(!ptx.is_empty(), "{} {flavour}: empty PTX", m.file);
            for kernel in m.kernels.names() {
                assert!(
                    ptx.contains(&format!(".entry {kernel}(")),
                    "{} {flavour}: no kernel {kernel}",
                    m.file
                );
            }
            let target = if flavour == "sm90" { "sm_90" } else { "sm_75" };
            assert!(ptx.contains(&format!(".target {target}")), "{}", m.file);
        }
    }

    #[test]
    fn ptx_version_is_accepted_by_cuda_13_0_drivers() {
        if !COMPILED {
            return trident_core::testing::skip(
                trident_core::testing::Needs::Gpu,
                MISSING_REASON.unwrap_or_default(),
            );
        }
        for (m, flavour, ptx) in all_ptx() {
            let v = ptx_version(ptx).unwrap_or_else(|| panic!("{} {flavour}: no .version", m.file));
            assert!(
                v <= (9, 0),
                "{} {flavour}: PTX ISA {}.{} > 9.0",
                m.file,
                v.0,
                v.1
            );
        }
    }

    /// On a GPU of the machine code's architecture every module loads from it (the backend
    /// would otherwise fall back to the PTX JIT silently) and has every listed kernel.
    #[test]
    fn machine_code_loads_on_its_architecture() {
        let Some(cuda) = trident_core::testing::backend_or_skip(crate::Cuda::new()) else {
            return;
        };
        let cc = cuda.compute_capability();
        for m in MODULES {
            assert!(
                !m.cubin_sm90.is_empty(),
                "{}: no sm_90 machine code",
                m.file
            );
            let Some(image) = m.cubin(cc) else {
                continue;
            };
            cuda.shared.make_current().unwrap();
            let module = crate::driver::Module::from_cubin(image, m.file)
                .unwrap_or_else(|e| panic!("{}: {e}", m.file));
            for kernel in m.kernels.names() {
                module
                    .function(&kernel)
                    .unwrap_or_else(|e| panic!("{}: {kernel}: {e}", m.file));
            }
        }
    }

    #[test]
    fn parses_ptx_versions() {
        assert_eq!(ptx_version("//\n.version 9.0\n.target sm_90"), Some((9, 0)));
        assert_eq!(ptx_version(".version 8.10"), Some((8, 10)));
        assert_eq!(ptx_version(".target sm_90"), None);
    }
}
