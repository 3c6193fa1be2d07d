//! `trident info`: the backends and the devices they find.

use trident_core::Result;

use crate::select::{self, BackendChoice};

/// List the backends and the devices they find.
#[derive(clap::Args)]
pub struct Args {
    /// Show only this backend.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendChoice,
}

pub fn run(args: Args) -> Result<()> {
    info(args.backend)
}

fn info(only: BackendChoice) -> Result<()> {
    let show = |c: BackendChoice| only == BackendChoice::Auto || only == c;
    if show(BackendChoice::Cpu) {
        crate::outln!(
            "cpu:    {}",
            select::describe(select::open(BackendChoice::Cpu))
        )?;
    }
    if show(BackendChoice::Cuda) {
        crate::outln!("cuda:   {}", select::describe(select::open_cuda()))?;
        #[cfg(feature = "cuda")]
        if let Ok(names) = trident_cuda::device_names() {
            for (i, n) in names.iter().enumerate() {
                crate::outln!("        device {i}: {n}")?;
            }
        }
    }
    if show(BackendChoice::Opencl) {
        crate::outln!("opencl: {}", select::describe(select::open_opencl()))?;
        #[cfg(feature = "opencl")]
        for d in trident_opencl::devices() {
            crate::outln!("        {}", d.description())?;
        }
    }
    if only == BackendChoice::Auto {
        crate::outln!("auto picks: {}", select::open(BackendChoice::Auto)?)?;
    }
    Ok(())
}
