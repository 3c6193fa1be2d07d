//! Trident CUDA backend.
