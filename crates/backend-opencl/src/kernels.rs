//! The kernel table: every `kernels/opencl/<name>.cl` file is one [`Module`], with its
//! embedded source and the roots of the kernels it defines.
//!
//! A module is built on first use, once per precision: `f32` with
//! `-D REAL=float -D SUFFIX=f32`, `f64` with `-D REAL=double -D SUFFIX=f64 -D TRIDENT_FP64`
//! (only on devices with double precision; see [`build_options`]). A *typed* kernel root `r`
//! is defined as `TRIDENT_CAT(r_, SUFFIX)`, i.e. `r_f32` / `r_f64` (see
//! [`trident_core::gpu::kernel_name`]); a *plain* kernel has one name, taken from the `f32`
//! build. The `kernel_table!` invocation below is the one place that names the modules: adding
//! `kernels/opencl/matmul.cl` takes one line there.

use trident_core::gpu::{KernelList, Precision};

/// One OpenCL C source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    /// Path in the repository; build errors name it, with the line, in their message.
    pub file: &'static str,
    /// The OpenCL C text.
    pub text: &'static str,
    /// Written in the kernel dialect shared with CUDA ([`DIALECT`] is built in front of it;
    /// `kernels/cuda/<name>.cu` compiles the same file as CUDA).
    pub shared: bool,
}

/// `kernels/common/dialect.h`: what a shared kernel file may use beyond OpenCL C (macros that
/// CUDA defines otherwise). The OpenCL build of a shared file places it in front of the file.
pub const DIALECT: Source = Source {
    file: "kernels/common/dialect.h",
    text: include_str!("../../../kernels/common/dialect.h"),
    shared: false,
};

/// One table entry: a kernel file and its kernels.
#[derive(Debug)]
pub struct ModuleInfo {
    /// The file stem, e.g. `spmv`.
    pub name: &'static str,
    /// The embedded source.
    pub source: Source,
    /// The kernels it defines; a kernel's slot indexes the built program's kernels.
    pub kernels: KernelList,
}

/// The compiler options that build a module for precision `p`. `f32` division and square
/// root are correctly rounded (as in CUDA without fast math): NVIDIA's OpenCL otherwise
/// rounds them within 2.5 ulp, and R-MCL's identical-partition guarantee across backends
/// needs the exact IEEE results.
pub fn build_options(p: Precision) -> &'static str {
    match p {
        Precision::F32 => "-D REAL=float -D SUFFIX=f32 -cl-fp32-correctly-rounded-divide-sqrt",
        Precision::F64 => "-D REAL=double -D SUFFIX=f64 -D TRIDENT_FP64",
    }
}

/// One table entry: `kernels/opencl/<stem>.cl`, embedded, and its kernels; `shared` marks a
/// file written in the dialect shared with CUDA.
macro_rules! cl_module {
    ($stem:ident, typed: [$($typed:literal),* $(,)?], plain: [$($plain:literal),* $(,)?]) => {
        cl_module!($stem, KernelList::new(&[$($typed),*], &[$($plain),*]))
    };
    ($stem:ident, shared, $kernels:expr) => {
        cl_module!(@entry $stem, true, $kernels)
    };
    ($stem:ident, $kernels:expr) => {
        cl_module!(@entry $stem, false, $kernels)
    };
    (@entry $stem:ident, $shared:expr, $kernels:expr) => {
        ModuleInfo {
            name: stringify!($stem),
            source: Source {
                file: concat!("kernels/opencl/", stringify!($stem), ".cl"),
                text: include_str!(concat!("../../../kernels/opencl/", stringify!($stem), ".cl")),
                shared: $shared,
            },
            kernels: $kernels,
        }
    };
}

trident_core::kernel_table! {
    /// A kernel file of `kernels/opencl/`; `Module::X as usize` indexes [`MODULES`].
    enum Module;
    /// The table, in the order of [`Module`]'s variants: one line per kernel file.
    static MODULES: [ModuleInfo];
    /// `kernels/opencl/spmv.cl`: ELLPACK-R SpMV (shared with CUDA).
    Spmv => cl_module!(spmv, shared, trident_core::spmv::device::KERNELS),
    /// `kernels/opencl/reduce.cl`: reductions over device vectors (trident_core::reduce;
    /// shared with CUDA).
    Reduce => cl_module!(reduce, shared, trident_core::reduce::KERNELS),
    /// `kernels/opencl/triangles.cl`: triangle counting (no precision; plain kernels; shared
    /// with CUDA).
    Triangles => cl_module!(triangles, shared, trident_core::triangles::device::KERNELS),
    /// `kernels/opencl/matmul.cl`: the tiled GEMM and the strided block sum of Strassen (its
    /// own source: the shared one measured slower here in f64; `kernels/cuda/matmul.cu`).
    Matmul => cl_module!(matmul, trident_core::matmul::device::KERNELS),
    /// `kernels/opencl/mcl.cl`: the R-MCL iteration (mass, penalty, fused column pass in
    /// local or global memory, reduction) and the device side of the interpretation
    /// (shared with CUDA).
    Mcl => cl_module!(mcl, shared, trident_core::mcl::gpu::KERNELS),
    /// `kernels/opencl/svd.cl`: one-sided block Jacobi SVD and Givens QR (shared with CUDA).
    Svd => cl_module!(svd, shared, trident_core::svd::device::KERNELS),
}

#[cfg(test)]
mod tests {
    use super::*;

    // `FILES`: every `kernels/opencl/*.cl` stem, listed by build.rs when the crate was built
    // (so that this test does not depend on the folder it runs in).
    include!(concat!(env!("OUT_DIR"), "/kernel_files.rs"));

    #[test]
    fn the_table_names_every_file_once_in_order() {
        for (i, m) in Module::ALL.iter().enumerate() {
            assert_eq!(*m as usize, i);
            assert_eq!(Module::by_name(m.info().name), Some(*m));
            assert_eq!(
                m.info().source.file,
                format!("kernels/opencl/{}.cl", m.info().name)
            );
        }
        let mut files = FILES.to_vec();
        files.sort_unstable();
        let mut names: Vec<&str> = MODULES.iter().map(|m| m.name).collect();
        names.sort_unstable();
        assert_eq!(
            names, files,
            "every kernels/opencl/*.cl needs one kernel_table! entry"
        );
        assert_eq!(Module::by_name("no_such_file"), None);
    }

    #[test]
    fn a_file_is_shared_exactly_when_the_cuda_build_includes_it() {
        for m in MODULES {
            assert_eq!(
                m.source.shared,
                SHARED.contains(&m.name),
                "{}: marked shared in the table: {}; included by kernels/cuda/{}.cu: {}",
                m.source.file,
                m.source.shared,
                m.name,
                SHARED.contains(&m.name)
            );
        }
    }
}
