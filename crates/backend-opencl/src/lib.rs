//! Trident OpenCL backend.
