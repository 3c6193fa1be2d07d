//! One module per subcommand: its arguments (`Args`) and `run`.

pub mod cluster;
pub mod generate;
pub mod info;
pub mod matmul;
pub mod spmv;
pub mod stats;
pub mod svd;
pub mod triangles;
