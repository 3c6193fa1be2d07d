//! Links the OpenCL ICD loader lazily: `libOpenCL.so.1` is `dlopen`ed on the first OpenCL call,
//! so binaries start on machines without it (and then find no platform).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    find_cuda_helper::link_lazy_opencl();
}
