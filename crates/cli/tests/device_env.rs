//! The device-selection variables (`TRIDENT_CUDA_DEVICE`, `TRIDENT_OPENCL_PLATFORM`,
//! `TRIDENT_OPENCL_DEVICE`) are read by the CLI and handed to the backends as options (the
//! libraries read no environment): `trident info` shows their effect.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_trident");

fn info(backend: &str, env: &[(&str, &str)]) -> String {
    let mut c = Command::new(BIN);
    c.args(["info", "--backend", backend]);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().expect("run trident");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn cuda_device_variable_reaches_the_backend() {
    let out = info("cuda", &[("TRIDENT_CUDA_DEVICE", "not-a-number")]);
    assert!(
        out.contains("TRIDENT_CUDA_DEVICE=\"not-a-number\" is not a device ordinal"),
        "{out}"
    );
}

#[test]
fn opencl_filters_reach_the_backend() {
    for var in ["TRIDENT_OPENCL_PLATFORM", "TRIDENT_OPENCL_DEVICE"] {
        let out = info("opencl", &[(var, "no-such-xyzzy")]);
        let line = out.lines().find(|l| l.starts_with("opencl:")).unwrap_or("");
        assert!(line.contains("no device"), "{var}: {out}");
        assert!(line.contains("no-such-xyzzy"), "{var}: {out}");
    }
}
