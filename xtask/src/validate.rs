//! `xtask validate`: the conformance suite on every backend, as one backend × check table.
//!
//! Each check of [`trident_core::conformance::all_checks`] runs on every backend whose
//! constructor succeeds, each under `catch_unwind` so that a panicking check is one FAIL cell,
//! not the end of the table. A backend that finds no device is a column of `skip`s (its reason
//! listed under the table), or of `FAIL`s under `REQUIRE_GPU=1`, where an OpenCL backend that
//! starts on a CPU device fails too.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use serde_json::json;
use trident_core::conformance::{all_checks, require_gpu, Conformant};
use trident_core::Backend;
use trident_cpu::Cpu;
use trident_cuda::Cuda;
use trident_opencl::OpenCl;

use crate::util::{fail, flag_value, usage, Context, Result};

/// Longest failure message printed under the table (the JSON keeps all of it).
const MESSAGE_LIMIT: usize = 1500;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Pass,
    Fail,
    Skip,
}

impl Status {
    fn cell(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "FAIL",
            Status::Skip => "skip",
        }
    }
}

/// One cell of the table.
struct CheckResult {
    name: &'static str,
    status: Status,
    message: String,
    seconds: f64,
}

/// One column of the table.
struct Column {
    backend: &'static str,
    /// The device in words, when the backend started.
    device: Option<String>,
    /// Start-up: `Pass`, `Skip` (no device) or `Fail`, with the reason.
    start: Status,
    reason: String,
    checks: Vec<CheckResult>,
}

pub fn run(args: &[String]) -> Result {
    let mut json_path = None;
    let mut only: Vec<String> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if let Some(v) = flag_value(args, &mut i, "--json")? {
            json_path = Some(v);
        } else if let Some(v) = flag_value(args, &mut i, "--backend")? {
            only.extend(v.split(',').map(|s| s.trim().to_ascii_lowercase()));
        } else {
            return Err(usage(format!("unexpected argument `{}`", args[i])));
        }
        i += 1;
    }
    for b in &only {
        if !["cpu", "cuda", "opencl"].contains(&b.as_str()) {
            return Err(usage(format!(
                "unknown backend `{b}` (cpu, cuda or opencl)"
            )));
        }
    }
    let wanted = |name: &str| only.is_empty() || only.iter().any(|b| b == name);
    let check_names: Vec<&'static str> = all_checks::<Cpu>().iter().map(|c| c.name).collect();
    let gpu_required = require_gpu();

    let mut columns = Vec::new();
    if wanted("cpu") {
        columns.push(column("cpu", &check_names, || Ok(Cpu::new()), |_| None));
    }
    if wanted("cuda") {
        columns.push(column("cuda", &check_names, open_cuda, |_| None));
    }
    if wanted("opencl") {
        columns.push(column("opencl", &check_names, open_opencl, |cl| {
            (gpu_required && !cl.is_gpu()).then(|| {
                format!(
                    "REQUIRE_GPU=1 but the OpenCL device is not a GPU: {}",
                    cl.device()
                )
            })
        }));
    }

    let table = markdown(&check_names, &columns);
    println!("{table}");

    if let Some(path) = &json_path {
        let value = to_json(&columns);
        let text = serde_json::to_string_pretty(&value).context("serialising the results")?;
        std::fs::write(path, text + "\n").context(format!("writing {path}"))?;
        eprintln!("results written to {path}");
    }

    let failed: usize = columns
        .iter()
        .map(|c| {
            usize::from(c.start == Status::Fail)
                + c.checks.iter().filter(|r| r.status == Status::Fail).count()
        })
        .sum();
    if failed > 0 {
        Err(fail(format!("{failed} failure(s)")))
    } else {
        Ok(())
    }
}

/// Starts backend `name` with `make` and runs every check on it. `extra_failure` may turn a
/// started backend into a start-up failure (the checks still run).
fn column<B: Conformant>(
    name: &'static str,
    check_names: &[&'static str],
    make: impl FnOnce() -> trident_core::Result<B>,
    extra_failure: impl FnOnce(&B) -> Option<String>,
) -> Column {
    let skipped = |status: Status, reason: String| Column {
        backend: name,
        device: None,
        start: status,
        reason,
        checks: check_names
            .iter()
            .map(|&n| CheckResult {
                name: n,
                status,
                message: String::new(),
                seconds: 0.0,
            })
            .collect(),
    };
    eprintln!("validate: starting {name}");
    let backend = match catch_unwind(AssertUnwindSafe(make)) {
        Ok(Ok(b)) => b,
        Ok(Err(e)) if e.is_no_device() && !require_gpu() => {
            return skipped(Status::Skip, e.to_string())
        }
        Ok(Err(e)) if e.is_no_device() => {
            return skipped(Status::Fail, format!("REQUIRE_GPU=1 but {e}"))
        }
        Ok(Err(e)) => return skipped(Status::Fail, format!("failed to start: {e}")),
        Err(payload) => {
            return skipped(
                Status::Fail,
                format!("panicked while starting: {}", panic_message(&*payload)),
            )
        }
    };
    let device = backend.device();
    eprintln!("validate: {name} on {device}");
    let (start, reason) = match extra_failure(&backend) {
        Some(reason) => (Status::Fail, reason),
        None => (Status::Pass, String::new()),
    };
    let checks = all_checks::<B>()
        .into_iter()
        .map(|check| {
            let t = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| (check.run)(&backend)));
            let seconds = t.elapsed().as_secs_f64();
            let (status, message) = match outcome {
                Ok(Ok(())) => (Status::Pass, String::new()),
                Ok(Err(msg)) => (Status::Fail, msg),
                Err(payload) => (
                    Status::Fail,
                    format!("panicked: {}", panic_message(&*payload)),
                ),
            };
            eprintln!(
                "validate: {name} {:<32} {} ({seconds:.2} s)",
                check.name,
                status.cell()
            );
            CheckResult {
                name: check.name,
                status,
                message,
                seconds,
            }
        })
        .collect();
    Column {
        backend: name,
        device: Some(device),
        start,
        reason,
        checks,
    }
}

/// The text of a panic payload (`&str` or `String`), else a placeholder.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_string()
    }
}

/// The table, then the devices, skip reasons and failure messages, then a count line.
fn markdown(check_names: &[&str], columns: &[Column]) -> String {
    let mut out = String::new();
    let header: Vec<&str> = columns.iter().map(|c| c.backend).collect();
    out += &format!("| check | {} |\n", header.join(" | "));
    out += &format!("| --- |{}\n", " --- |".repeat(columns.len()));
    let start: Vec<&str> = columns.iter().map(|c| c.start.cell()).collect();
    out += &format!("| backend starts | {} |\n", start.join(" | "));
    for (k, name) in check_names.iter().enumerate() {
        let cells: Vec<&str> = columns
            .iter()
            .map(|c| c.checks.get(k).map_or("?", |r| r.status.cell()))
            .collect();
        out += &format!("| {name} | {} |\n", cells.join(" | "));
    }

    let devices: Vec<String> = columns
        .iter()
        .filter_map(|c| c.device.as_ref().map(|d| format!("- {}: {d}", c.backend)))
        .collect();
    if !devices.is_empty() {
        out += &format!("\nDevices:\n{}\n", devices.join("\n"));
    }
    let skips: Vec<String> = columns
        .iter()
        .filter(|c| c.start == Status::Skip)
        .map(|c| {
            // Trident's errors already start with the backend's name.
            if c.reason.starts_with(&format!("{}:", c.backend)) {
                format!("- {}", c.reason)
            } else {
                format!("- {}: {}", c.backend, c.reason)
            }
        })
        .collect();
    if !skips.is_empty() {
        out += &format!("\nSkipped (no device):\n{}\n", skips.join("\n"));
    }
    let mut failures = Vec::new();
    for c in columns {
        if c.start == Status::Fail {
            failures.push(format!("- {}: {}", c.backend, c.reason));
        }
        for r in &c.checks {
            if r.status == Status::Fail && !r.message.is_empty() {
                failures.push(format!(
                    "- {} / {}: {}",
                    c.backend,
                    r.name,
                    truncate(&r.message, MESSAGE_LIMIT)
                ));
            }
        }
    }
    if !failures.is_empty() {
        out += &format!("\nFailures:\n{}\n", failures.join("\n"));
    }

    let count = |s: Status| -> usize {
        columns
            .iter()
            .map(|c| c.checks.iter().filter(|r| r.status == s).count())
            .sum()
    };
    let start_failures = columns.iter().filter(|c| c.start == Status::Fail).count();
    out += &format!(
        "\n{} passed, {} failed, {} skipped\n",
        count(Status::Pass),
        count(Status::Fail) + start_failures,
        count(Status::Skip)
    );
    out
}

/// `s` cut to at most `limit` bytes (at a character boundary), marked when cut.
fn truncate(s: &str, limit: usize) -> String {
    if s.len() <= limit {
        return s.to_string();
    }
    let mut end = limit;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} … ({} bytes more)", &s[..end], s.len() - end)
}

fn to_json(columns: &[Column]) -> serde_json::Value {
    let backends: Vec<_> = columns
        .iter()
        .map(|c| {
            json!({
                "backend": c.backend,
                "device": c.device,
                "start": c.start.cell(),
                "reason": c.reason,
                "checks": c.checks.iter().map(|r| json!({
                    "check": r.name,
                    "result": r.status.cell(),
                    "message": r.message,
                    "seconds": r.seconds,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let ok = columns
        .iter()
        .all(|c| c.start != Status::Fail && c.checks.iter().all(|r| r.status != Status::Fail));
    json!({ "require_gpu": require_gpu(), "ok": ok, "backends": backends })
}

/// The CUDA device of `TRIDENT_CUDA_DEVICE` (default 0).
fn open_cuda() -> trident_core::Result<Cuda> {
    let ordinal = std::env::var(trident_cuda::DEVICE_ENV).ok();
    let device = trident_cuda::parse_ordinal(ordinal.as_deref())?;
    Cuda::with_options(&trident_cuda::CudaOptions::new(device))
}

/// The OpenCL device of the `TRIDENT_OPENCL_PLATFORM` / `TRIDENT_OPENCL_DEVICE` filters.
fn open_opencl() -> trident_core::Result<OpenCl> {
    let var = |name| std::env::var(name).ok();
    OpenCl::select(&trident_opencl::Selector::from_filters(
        var(trident_opencl::ENV_PLATFORM).as_deref(),
        var(trident_opencl::ENV_DEVICE).as_deref(),
    ))
}
