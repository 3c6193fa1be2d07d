//! `xtask bundle`: everything a GPU machine without Rust needs to test and benchmark Trident,
//! in `<target>/bundle`:
//!
//! ```text
//! bundle/
//!   run.sh            validate + every test binary (+ `bench`: benchmarks, torch, report)
//!   bin/trident       the CLI
//!   bin/xtask         this tool (validate, bench-report)
//!   tests/<package>-<target>   release test binaries of the core and backend crates
//!   benches/<name>    criterion benchmark executables
//!   torch_spmv.py     the cuSPARSE baseline
//!   gapbs_tc.sh       the GAP `tc` baseline (needs a gapbs checkout: GAPBS_DIR)
//!   lib/libOpenCL.so.1  the OpenCL ICD loader, used only where the machine has none
//!   mutants.tar.xz    the CUDA kernel mutants, compiled (`run.sh mutants`)
//!   cuda-kernels.txt  every CUDA kernel root (`run.sh sanitize` checks each was launched)
//! ```
//!
//! Binaries are stripped. The bundle must stay under 64 MiB (what a device run carries).

use std::io::BufRead;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::{
    cargo, fail, human_size, rel, target_dir, usage, workspace_root, Context, Result,
};

/// Packages whose test binaries (unit and integration) go into `tests/`.
const TEST_PACKAGES: [&str; 4] = [
    "trident-core",
    "trident-cpu",
    "trident-cuda",
    "trident-opencl",
];

/// Largest bundle a device run can carry.
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The run script, written as `bundle/run.sh`.
const RUN_SH: &str = include_str!("run.sh");

/// One executable that cargo built.
#[derive(Debug)]
struct Artifact {
    package: String,
    target: String,
    kind: String,
    path: PathBuf,
}

pub fn run(args: &[String]) -> Result {
    if let Some(a) = args.first() {
        return Err(usage(format!("unexpected argument `{a}`")));
    }
    let root = workspace_root();
    let bundle = target_dir().join("bundle");
    if bundle.exists() {
        std::fs::remove_dir_all(&bundle).context(format!("removing {}", bundle.display()))?;
    }
    for sub in ["bin", "tests", "benches", "lib"] {
        std::fs::create_dir_all(bundle.join(sub)).context(format!("creating {sub}/"))?;
    }

    // The CLI with MPI (`mpirun -np N trident …` on the GPU hosts, which have Open MPI).
    eprintln!("bundle: building the CLI and xtask");
    let bins = cargo_artifacts(&[
        "build",
        "--release",
        "-p",
        "trident-cli",
        "-p",
        "xtask",
        "--features",
        "xtask/backends,trident-cli/mpi",
        "--bins",
    ])?;
    let mut test_args = vec!["test", "--release", "--no-run"];
    for p in TEST_PACKAGES {
        test_args.extend(["-p", p]);
    }
    eprintln!("bundle: building the test binaries");
    let tests = cargo_artifacts(&test_args)?;
    eprintln!("bundle: building the benchmarks");
    let benches = cargo_artifacts(&["bench", "--no-run", "-p", "trident-benches", "--benches"])?;

    let mut copied = 0;
    for a in bins.iter().filter(|a| a.kind == "bin") {
        copy_stripped(&a.path, &bundle.join("bin").join(&a.target))?;
        copied += 1;
    }
    for name in ["trident", "xtask"] {
        if !bundle.join("bin").join(name).exists() {
            return Err(fail(format!("cargo built no `{name}` binary")));
        }
    }
    for a in &tests {
        let name = if a.kind == "lib" {
            format!("{}-lib", a.package)
        } else {
            format!("{}-{}", a.package, a.target)
        };
        copy_stripped(&a.path, &bundle.join("tests").join(name))?;
        copied += 1;
    }
    for a in benches.iter().filter(|a| a.kind == "bench") {
        copy_stripped(&a.path, &bundle.join("benches").join(&a.target))?;
        copied += 1;
    }
    let torch = root.join("benches/torch_spmv.py");
    std::fs::copy(&torch, bundle.join("torch_spmv.py"))
        .context(format!("copying {}", rel(&torch)))?;
    // Same-run GPU baselines: every benches/baselines/*.py, run by `run.sh bench`.
    let baselines = root.join("benches/baselines");
    if baselines.is_dir() {
        std::fs::create_dir_all(bundle.join("baselines")).context("creating baselines/")?;
        let mut scripts: Vec<PathBuf> = std::fs::read_dir(&baselines)
            .context(format!("reading {}", rel(&baselines)))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "py"))
            .collect();
        scripts.sort();
        for script in scripts {
            let name = script.file_name().unwrap_or_default();
            std::fs::copy(&script, bundle.join("baselines").join(name))
                .context(format!("copying {}", rel(&script)))?;
        }
    }
    // The shared test data (a few MB), so data tests run there with REQUIRE_DATA=1.
    let data = std::env::var_os("TRIDENT_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/data"));
    match data.join("graphs.tsv").is_file() {
        true => copy_tree(&data, &bundle.join("data"))?,
        false => eprintln!("bundle: no shared data found here: data tests will fail there"),
    }

    let gapbs = root.join("benches/peers/gapbs_tc.sh");
    std::fs::copy(&gapbs, bundle.join("gapbs_tc.sh"))
        .context(format!("copying {}", rel(&gapbs)))?;
    match find_opencl_loader() {
        Some(lib) => {
            std::fs::copy(&lib, bundle.join("lib/libOpenCL.so.1"))
                .context(format!("copying {}", lib.display()))?;
        }
        None => eprintln!(
            "bundle: no libOpenCL.so.1 here to ship (only needed where the GPU machine lacks one)"
        ),
    }
    // Executables compress well: gzip them so the bundle stays within what a device
    // run carries; run.sh unpacks them in place before anything runs.
    for sub in ["bin", "tests", "benches"] {
        let status = Command::new("sh")
            .arg("-c")
            .arg("for f in \"$0\"/*; do [ -f \"$f\" ] && gzip -9 -n \"$f\"; done; true")
            .arg(bundle.join(sub))
            .status()
            .context("running gzip")?;
        if !status.success() {
            return Err(fail(format!("gzip failed on {sub}/ ({status})")));
        }
    }
    // The CUDA kernel mutants, compiled here (`run.sh mutants` runs them), and the kernel
    // roots that `run.sh sanitize` must see launched.
    eprintln!("bundle: compiling the CUDA mutants");
    let n = crate::mutants::emit_cuda(&bundle.join("mutants"))?;
    // The archive's path is absolute: tar opens it before `-C` moves into the bundle. xz,
    // not gzip: the mutants' PTX files differ from each other in a line or two, and only a
    // compressor whose window spans many files (xz's, at -9: 64 MiB) sees that; run.sh
    // unpacks it with Python's `tarfile` (the GPU machine need not have xz).
    let status = Command::new("tar")
        .env("XZ_OPT", "-9")
        .arg("-cJf")
        .arg(bundle.join("mutants.tar.xz"))
        .arg("-C")
        .arg(&bundle)
        .arg("mutants")
        .status()
        .context("running tar")?;
    if !status.success() {
        return Err(fail(format!("tar failed on mutants/ ({status})")));
    }
    std::fs::remove_dir_all(bundle.join("mutants")).context("removing mutants/")?;
    eprintln!("bundle: {n} CUDA mutants");
    let mut roots = String::new();
    for (file, list) in crate::mutants::kernel_tables(&root)? {
        if file.ends_with(".cu") {
            for r in list {
                roots.push_str(&format!("{r}\t{file}\n"));
            }
        }
    }
    std::fs::write(bundle.join("cuda-kernels.txt"), roots).context("writing cuda-kernels.txt")?;
    let run_sh = bundle.join("run.sh");
    let script = RUN_SH
        .replace("@CI_SEED@", &crate::test::CI_SEED.to_string())
        .replace("@MUTANT_SEED@", crate::mutants::SEED);
    std::fs::write(&run_sh, script).context("writing run.sh")?;
    std::fs::set_permissions(&run_sh, std::fs::Permissions::from_mode(0o755))
        .context("making run.sh executable")?;

    let mut files = Vec::new();
    list_files(&bundle, &mut files);
    files.sort();
    let mut total = 0;
    println!("bundle: {} ({copied} executables)", bundle.display());
    for f in &files {
        let size = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        total += size;
        println!(
            "  {:>10}  {}",
            human_size(size),
            f.strip_prefix(&bundle).unwrap_or(f).display()
        );
    }
    println!("  {:>10}  total", human_size(total));
    if total > MAX_BYTES {
        return Err(fail(format!(
            "the bundle is {}, over the {} a device run carries",
            human_size(total),
            human_size(MAX_BYTES)
        )));
    }
    Ok(())
}

/// Copies the files under `from` into `to`, recreating the folders.
fn copy_tree(from: &Path, to: &Path) -> Result {
    let mut files = Vec::new();
    list_files(from, &mut files);
    for f in files {
        let dst = to.join(f.strip_prefix(from).unwrap_or(&f));
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).context(format!("creating {}", parent.display()))?;
        }
        std::fs::copy(&f, &dst).context(format!("copying {}", f.display()))?;
    }
    Ok(())
}

/// Runs cargo with `--message-format=json-render-diagnostics` (diagnostics still shown) and
/// returns the executables it reports (for `test`: the test builds only).
fn cargo_artifacts(args: &[&str]) -> Result<Vec<Artifact>> {
    let harness_only = args.first() == Some(&"test");
    let mut child = cargo()
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        // The CUDA backend's build fails rather than ship without its kernels.
        .env("TRIDENT_REQUIRE_PTX", "1")
        .stdout(Stdio::piped())
        .spawn()
        .context(format!("running cargo {}", args.join(" ")))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut artifacts = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let Some(exe) = msg["executable"].as_str() else {
            continue;
        };
        if harness_only && msg["profile"]["test"] != true {
            continue;
        }
        artifacts.push(Artifact {
            package: package_name(msg["package_id"].as_str().unwrap_or("")),
            target: msg["target"]["name"].as_str().unwrap_or("").to_string(),
            kind: msg["target"]["kind"][0].as_str().unwrap_or("").to_string(),
            path: PathBuf::from(exe),
        });
    }
    let status = child.wait().context("waiting for cargo")?;
    if !status.success() {
        return Err(fail(format!("cargo {} failed ({status})", args.join(" "))));
    }
    Ok(artifacts)
}

/// The package name in a cargo package id: `path+file:///p/trident-core#0.1.0`,
/// `path+file:///p/core#trident-core@0.1.0`, or the old `trident-core 0.1.0 (path+file:///p)`.
fn package_name(id: &str) -> String {
    match id.split_once('#') {
        Some((url, frag)) => match frag.split_once('@') {
            Some((name, _)) => name.to_string(),
            None => url.rsplit('/').next().unwrap_or(url).to_string(),
        },
        None => id.split_whitespace().next().unwrap_or(id).to_string(),
    }
}

/// Copies `src` to `dst` without symbols (`strip`, else `objcopy`, else a plain copy).
fn copy_stripped(src: &Path, dst: &Path) -> Result {
    let stripped = |tool: &str, args: &[&std::ffi::OsStr]| {
        Command::new(tool)
            .args(args)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let (s, d) = (src.as_os_str(), dst.as_os_str());
    let ok = stripped("strip", &["--strip-all".as_ref(), "-o".as_ref(), d, s])
        || stripped("objcopy", &["--strip-all".as_ref(), s, d]);
    if !ok {
        eprintln!(
            "bundle: neither strip nor objcopy worked; copying {} unstripped",
            src.display()
        );
        std::fs::copy(src, dst).context(format!("copying {}", src.display()))?;
    }
    std::fs::set_permissions(dst, std::fs::Permissions::from_mode(0o755))
        .context(format!("setting permissions of {}", dst.display()))
}

/// This machine's `libOpenCL.so.1` (the ICD loader), from `ldconfig -p`.
fn find_opencl_loader() -> Option<PathBuf> {
    let out = Command::new("ldconfig").arg("-p").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter(|l| l.trim_start().starts_with("libOpenCL.so.1 ") && l.contains("x86-64"))
        .filter_map(|l| l.split("=>").nth(1))
        .map(|p| PathBuf::from(p.trim()))
        .find(|p| p.exists())
}

/// Every regular file under `dir`.
fn list_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => list_files(&p, out),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::package_name;

    #[test]
    fn package_ids_in_every_format() {
        assert_eq!(
            package_name("path+file:///w/crates/core#trident-core@0.1.0"),
            "trident-core"
        );
        assert_eq!(package_name("path+file:///w/xtask#0.1.0"), "xtask");
        assert_eq!(
            package_name("trident-cpu 0.1.0 (path+file:///w/crates/backend-cpu)"),
            "trident-cpu"
        );
    }
}
