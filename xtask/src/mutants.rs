//! `xtask mutants`: plants every kernel mutation listed in `xtask/mutants/*.toml` (one
//! `[[mutant]]` table per planted bug, with `name`, `file`, `kernel`, `find`, `replace` and
//! `tests`) and fails unless the conformance suite catches each one.
//!
//! Nothing is rebuilt per mutant. The OpenCL conformance test binary is built once; each
//! mutant's file goes, mutated, into a temporary kernel folder that the test harness hands to
//! the backend (`TRIDENT_KERNEL_DIR`, see `OpenClOptions::kernel_dir`), and the prebuilt
//! binary runs with the mutant's `tests` filter, under a timeout (a hang counts as caught, and
//! is reported). CUDA mutants cannot run without a GPU: `cargo xtask bundle` compiles each to
//! machine code and PTX here ([`emit_cuda`], with the pinned nvcc and the flags of
//! `crates/backend-cuda/build.rs`), and `run.sh mutants` runs them on the GPU machine.
//!
//! Before any mutant runs, every list is checked: names unique, each `find` text occurring
//! exactly once in its file, each `kernel` an entry point of the file's kernel table, and
//! (in a full run) at least [`MIN_PER_FILE`] mutants per kernel file and every entry point
//! covered. The unmutated suite must pass each filter first (with the unmutated sources
//! loaded from a kernel folder, which proves the folder is used).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{cargo, fail, flag_value, rel, usage, workspace_root, Context, Result};

use crate::nvcc;

/// Fewest mutants per kernel file (and dialect) that a full run accepts.
pub const MIN_PER_FILE: usize = 3;

/// Time budget of `--quick` (what `cargo xtask test` runs), in seconds.
pub const QUICK_BUDGET_S: u64 = 180;

/// The seed of the random conformance cases while mutants run (a mutant must be caught by
/// the same cases every time). `run.sh mutants` uses the same.
pub const SEED: &str = "20261126";

/// One planted bug.
#[derive(Debug, Clone)]
pub struct Mutant {
    pub name: String,
    /// Path in the repository, e.g. `kernels/opencl/spmv.cl`.
    pub file: String,
    pub kernel: String,
    pub find: String,
    pub replace: String,
    /// Substring filter of the conformance test names that must catch it.
    pub tests: String,
    /// The list it comes from, e.g. `xtask/mutants/spmv.toml`.
    pub list: String,
}

impl Mutant {
    /// Whether the mutant runs in `d`: a `.cu` file's in CUDA, a `.cl` file's in OpenCL, and
    /// a shared `.cl` file's (one that `kernels/cuda/<stem>.cu` compiles as CUDA) in both.
    fn runs_in(&self, root: &Path, d: Dialect) -> bool {
        match d {
            Dialect::Cuda => self.file.ends_with(".cu") || self.cuda_file(root).is_some(),
            Dialect::OpenCl => self.file.ends_with(".cl"),
        }
    }

    /// For a shared `.cl` file, the `.cu` file that compiles it as CUDA.
    fn cuda_file(&self, root: &Path) -> Option<String> {
        let stem = self
            .file
            .strip_prefix("kernels/opencl/")?
            .strip_suffix(".cl")?;
        shared_cuda_file(root, stem)
    }

    /// The kernel file's stem, e.g. `spmv`.
    fn stem(&self) -> &str {
        let base = self.file.rsplit('/').next().unwrap_or(&self.file);
        base.split('.').next().unwrap_or(base)
    }

    /// The mutated text of its file.
    fn mutated(&self, root: &Path) -> Result<String> {
        let text = std::fs::read_to_string(root.join(&self.file))
            .context(format!("{}: reading {}", self.name, self.file))?;
        Ok(text.replacen(&self.find, &self.replace, 1))
    }
}

/// `kernels/cuda/<stem>.cu` when it compiles the shared `kernels/opencl/<stem>.cl` (it names
/// `"../opencl/<stem>.cl"`), else `None`.
fn shared_cuda_file(root: &Path, stem: &str) -> Option<String> {
    let cu = format!("kernels/cuda/{stem}.cu");
    std::fs::read_to_string(root.join(&cu))
        .ok()
        .filter(|t| t.contains(&format!("\"../opencl/{stem}.cl\"")))
        .map(|_| cu)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Dialect {
    OpenCl,
    Cuda,
}

/// What became of one mutant.
#[derive(Debug)]
enum Outcome {
    /// Tests failed: their names (empty if the output named none).
    Caught(Vec<String>),
    /// Ran past the timeout (counts as caught).
    Hang(u64),
    /// Passed on PoCL; Oclgrind reported races or errors (the first), or tests failed.
    CaughtByOclgrind(String),
    /// Every selected test passed.
    Survived,
    /// Not run: the time budget was spent.
    NotRun,
    /// The mutant is broken (its kernel does not build, or its filter selects no test).
    Invalid(String),
}

pub fn run(args: &[String]) -> Result {
    let mut quick = false;
    let mut budget: Option<u64> = None;
    let mut only: Vec<String> = Vec::new();
    let mut timeout: Option<u64> = None;
    let mut i = 0;
    while i < args.len() {
        if let Some(v) = flag_value(args, &mut i, "--budget")? {
            budget = Some(v.parse().map_err(|_| usage("--budget takes seconds"))?);
        } else if let Some(v) = flag_value(args, &mut i, "--only")? {
            only.push(v);
        } else if let Some(v) = flag_value(args, &mut i, "--timeout")? {
            timeout = Some(v.parse().map_err(|_| usage("--timeout takes seconds"))?);
        } else if let Some(v) = flag_value(args, &mut i, "--emit-cuda")? {
            let n = emit_cuda(Path::new(&v))?;
            eprintln!("mutants: {n} CUDA mutants compiled into {v}");
            return Ok(());
        } else if args[i] == "--quick" {
            quick = true;
        } else {
            return Err(usage(format!("unexpected argument `{}`", args[i])));
        }
        i += 1;
    }
    if quick && budget.is_none() {
        budget = Some(QUICK_BUDGET_S);
    }
    let root = workspace_root();
    let all = load_lists(&root)?;
    let problems = check_lists(&root, &all, !quick && only.is_empty())?;
    let selected: Vec<Mutant> = all
        .iter()
        .filter(|m| m.runs_in(&root, Dialect::OpenCl))
        .filter(|m| only.is_empty() || only.iter().any(|o| m.name.contains(o.as_str())))
        .cloned()
        .collect();
    let cuda = all
        .iter()
        .filter(|m| m.runs_in(&root, Dialect::Cuda))
        .count();
    let opencl = all
        .iter()
        .filter(|m| m.runs_in(&root, Dialect::OpenCl))
        .count();
    eprintln!(
        "mutants: {} listed ({opencl} OpenCL, {cuda} CUDA: those run on the GPU machine, `run.sh mutants`; a mutant of a shared file is both); running {} on OpenCL",
        all.len(),
        selected.len()
    );
    let ok = run_opencl(&root, &selected, budget, timeout)?;
    if !problems.is_empty() {
        eprintln!("mutants: the lists have problems:");
        for p in &problems {
            eprintln!("  {p}");
        }
    }
    match (ok, problems.is_empty()) {
        (true, true) => Ok(()),
        (false, _) => Err(fail(
            "a mutant survived or was broken (see the table): add the check that catches it",
        )),
        (true, false) => Err(fail("the mutant lists are incomplete (see above)")),
    }
}

/// Every `[[mutant]]` of `xtask/mutants/*.toml`, in file then list order.
pub fn load_lists(root: &Path) -> Result<Vec<Mutant>> {
    let dir = root.join("xtask/mutants");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .context(format!("reading {}", rel(&dir)))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).context(format!("reading {}", rel(&f)))?;
        let doc: toml_edit::DocumentMut = text
            .parse()
            .map_err(|e| fail(format!("{}: {e}", rel(&f))))?;
        let Some(list) = doc.get("mutant").and_then(|m| m.as_array_of_tables()) else {
            return Err(fail(format!("{}: no [[mutant]] tables", rel(&f))));
        };
        for (n, t) in list.iter().enumerate() {
            let field = |key: &str| -> Result<String> {
                t.get(key)
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
                    .ok_or_else(|| {
                        fail(format!(
                            "{}: mutant #{} lacks the string `{key}`",
                            rel(&f),
                            n + 1
                        ))
                    })
            };
            let known = ["name", "file", "kernel", "find", "replace", "tests"];
            if let Some((k, _)) = t.iter().find(|(k, _)| !known.contains(k)) {
                return Err(fail(format!(
                    "{}: mutant #{} has an unknown key `{k}`",
                    rel(&f),
                    n + 1
                )));
            }
            out.push(Mutant {
                name: field("name")?,
                file: field("file")?,
                kernel: field("kernel")?,
                find: field("find")?,
                replace: field("replace")?,
                tests: field("tests")?,
                list: rel(&f),
            });
        }
    }
    Ok(out)
}

/// The kernel roots of each kernel file, from the backends' kernel tables
/// (`trident_cuda::kernels::MODULES`, `trident_opencl::kernels::MODULES`, whose lists come
/// from core's per-algorithm `KERNELS` and the backends' own additions):
/// `kernels/opencl/spmv.cl` → `["spmv_ellr"]`. Without the `backends` feature, asks a build
/// with it (`xtask kernel-tables`), so that the tables are read, not parsed.
#[cfg(feature = "backends")]
pub fn kernel_tables(_root: &Path) -> Result<BTreeMap<String, Vec<String>>> {
    let roots = |k: &trident_core::gpu::KernelList| -> Vec<String> {
        k.typed
            .iter()
            .chain(k.plain)
            .map(|r| r.to_string())
            .collect()
    };
    let mut out = BTreeMap::new();
    for m in trident_cuda::kernels::MODULES {
        out.insert(m.file.to_string(), roots(&m.kernels));
    }
    for m in trident_opencl::kernels::MODULES {
        out.insert(format!("kernels/opencl/{}.cl", m.name), roots(&m.kernels));
    }
    Ok(out)
}

/// See the `backends` version: runs `xtask kernel-tables` with the feature on and reads its
/// lines (`file root root …`).
#[cfg(not(feature = "backends"))]
pub fn kernel_tables(root: &Path) -> Result<BTreeMap<String, Vec<String>>> {
    let out = crate::util::xtask_with_backends()
        .current_dir(root)
        .arg("kernel-tables")
        .stderr(Stdio::inherit())
        .output()
        .context("running xtask kernel-tables")?;
    if !out.status.success() {
        return Err(fail(format!("xtask kernel-tables failed ({})", out.status)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let tables: BTreeMap<String, Vec<String>> = text
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let file = w.next()?.to_string();
            Some((file, w.map(str::to_string).collect()))
        })
        .collect();
    if tables.is_empty() {
        return Err(fail("xtask kernel-tables printed no table"));
    }
    Ok(tables)
}

/// `xtask kernel-tables`: prints [`kernel_tables`], one kernel file per line.
#[cfg(feature = "backends")]
pub fn print_kernel_tables() -> Result<()> {
    for (file, roots) in kernel_tables(Path::new("."))? {
        println!("{file} {}", roots.join(" "));
    }
    Ok(())
}

/// The entry point `kernel` names among `roots` (`root`, or `root_f32` / `root_f64`).
fn root_of<'a>(kernel: &str, roots: &'a [String]) -> Option<&'a String> {
    roots.iter().find(|r| {
        kernel == r.as_str()
            || kernel.strip_suffix("_f32") == Some(r.as_str())
            || kernel.strip_suffix("_f64") == Some(r.as_str())
    })
}

/// Checks the lists; returns the coverage problems (fewer than [`MIN_PER_FILE`] mutants for a
/// kernel file, an entry point no mutant breaks) when `coverage`, and fails at once on
/// errors that make a mutant meaningless (a duplicate name, a `find` that does not occur
/// exactly once, an unknown file or kernel, an empty filter).
pub fn check_lists(root: &Path, all: &[Mutant], coverage: bool) -> Result<Vec<String>> {
    let tables = kernel_tables(root)?;
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    for m in all {
        let at = format!("{} ({})", m.name, m.list);
        if !names.insert(m.name.clone()) {
            errors.push(format!("{at}: the name is used twice"));
        }
        if m.tests.trim().is_empty() {
            errors.push(format!("{at}: empty `tests` filter"));
        }
        let Some(roots) = tables.get(&m.file) else {
            errors.push(format!("{at}: {} is not a file of a kernel table", m.file));
            continue;
        };
        if root_of(&m.kernel, roots).is_none() {
            errors.push(format!(
                "{at}: kernel `{}` is not an entry point of {} ({})",
                m.kernel,
                m.file,
                roots.join(", ")
            ));
        }
        if !texts.contains_key(&m.file) {
            let text = std::fs::read_to_string(root.join(&m.file))
                .context(format!("reading {}", m.file))?;
            texts.insert(m.file.clone(), text);
        }
        let n = texts[&m.file].matches(m.find.as_str()).count();
        if n != 1 {
            errors.push(format!(
                "{at}: its `find` text occurs {n} times in {} (must be once)",
                m.file
            ));
        }
        if m.find == m.replace {
            eprintln!("mutants: warning: {at}: `replace` equals `find` (it changes nothing)");
        }
    }
    if !errors.is_empty() {
        return Err(fail(format!(
            "bad mutant lists:\n  {}",
            errors.join("\n  ")
        )));
    }
    let mut problems = Vec::new();
    if coverage {
        for (file, roots) in &tables {
            // A shared .cl file's mutants also break the .cu file that compiles it.
            let here: Vec<&Mutant> = all
                .iter()
                .filter(|m| &m.file == file || m.cuda_file(root).as_ref() == Some(file))
                .collect();
            if here.len() < MIN_PER_FILE {
                problems.push(format!(
                    "{file}: {} mutants (at least {MIN_PER_FILE} wanted)",
                    here.len()
                ));
            }
            for r in roots {
                if !here.iter().any(|m| root_of(&m.kernel, roots) == Some(r)) {
                    problems.push(format!("{file}: no mutant breaks the entry point {r}"));
                }
            }
        }
    }
    Ok(problems)
}

/// Builds the conformance test binary of `package` and returns its path.
pub fn build_test_binary(package: &str, test: &str) -> Result<PathBuf> {
    eprintln!("==== building the {test} tests of {package}");
    let out = cargo()
        .args([
            "test",
            "-p",
            package,
            "--test",
            test,
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo test --no-run")?;
    if !out.status.success() {
        return Err(fail(format!(
            "building the conformance tests of {package} failed ({})",
            out.status
        )));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == test)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| fail(format!("cargo reported no {test} test binary of {package}")))
}

/// What one run of the test binary did.
struct RunResult {
    /// Exit status success.
    passed: bool,
    timed_out: bool,
    seconds: f64,
    /// Tests that ran (from `running N tests`).
    ran: usize,
    failed: Vec<String>,
    /// The kernel did not build (from the harness's message).
    build_error: bool,
    /// The last lines of its output, for messages.
    tail: String,
    /// What Oclgrind reported (when run under it).
    races: Vec<String>,
}

/// Runs the test `binary` with `filter` and kernels from `kernel_dir`, killing it after
/// `timeout`.
fn run_tests(
    binary: &Path,
    filter: &str,
    kernel_dir: &Path,
    timeout: Duration,
    oclgrind: Option<&Path>,
) -> Result<RunResult> {
    let log = kernel_dir.join("test-output.txt");
    let race_log = kernel_dir.join("oclgrind.log");
    let file = std::fs::File::create(&log).context(format!("creating {}", log.display()))?;
    let err = file.try_clone().context("duplicating a file handle")?;
    let start = Instant::now();
    let mut cmd = Command::new(binary);
    if let Some(vendors) = oclgrind {
        crate::oclgrind::configure(&mut cmd, vendors, &race_log);
    }
    cmd.arg(filter)
        .current_dir(workspace_root())
        .env("TRIDENT_KERNEL_DIR", kernel_dir)
        .env("TRIDENT_SEED", SEED)
        .env("REQUIRE_OPENCL", "1")
        // Only pass or fail matters here: no shrinking, and nothing added to the committed
        // regressions file.
        .env("PROPTEST_MAX_SHRINK_ITERS", "0")
        .env("PROPTEST_DISABLE_FAILURE_PERSISTENCE", "1")
        .env("RUST_BACKTRACE", "0")
        .stdout(file)
        .stderr(err);
    let (status, timed_out) = wait_timeout(&mut cmd, timeout)?;
    let seconds = start.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let ran = text
        .lines()
        .filter_map(|l| l.strip_prefix("running "))
        .filter_map(|l| l.split_whitespace().next()?.parse::<usize>().ok())
        .sum();
    let failed = text
        .lines()
        .filter_map(|l| l.strip_prefix("test "))
        .filter_map(|l| l.strip_suffix(" ... FAILED"))
        .map(str::to_string)
        .collect();
    let build_error = text.contains("; build log:") || text.contains("CL_BUILD_PROGRAM_FAILURE");
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(30)..].join("\n");
    let races = match oclgrind {
        Some(_) => crate::oclgrind::reports(&race_log),
        None => Vec::new(),
    };
    Ok(RunResult {
        races,
        passed: status.is_some_and(|s| s.success()),
        timed_out,
        seconds,
        ran,
        failed,
        build_error,
        tail,
    })
}

/// Time limit of one run under Oclgrind (an interpreter, far slower than PoCL).
const OCLGRIND_LIMIT: Duration = Duration::from_secs(300);

/// Runs mutant `m` (its kernel folder `dir`) under Oclgrind's race detector, after checking
/// once per filter that the unmutated kernels run clean there.
fn under_oclgrind(
    binary: &Path,
    m: &Mutant,
    dir: &Path,
    vendors: &Path,
    clean: &mut BTreeSet<String>,
) -> Result<Outcome> {
    if !clean.contains(&m.tests) {
        let base = scratch("unmutated-oclgrind")?;
        eprintln!(
            "==== unmutated suite under Oclgrind, tests matching `{}`",
            m.tests
        );
        let r = run_tests(binary, &m.tests, &base, OCLGRIND_LIMIT, Some(vendors))?;
        if !r.races.is_empty() || (!r.passed && !r.timed_out) {
            return Ok(Outcome::Invalid(format!(
                "the unmutated kernels are not clean under Oclgrind with filter `{}`: {}",
                m.tests,
                r.races
                    .first()
                    .cloned()
                    .unwrap_or_else(|| format!("tests failed: {:?}", r.failed))
            )));
        }
        clean.insert(m.tests.clone());
    }
    eprintln!("==== mutant {} under Oclgrind", m.name);
    let r = run_tests(binary, &m.tests, dir, OCLGRIND_LIMIT, Some(vendors))?;
    eprintln!("     {} reports in {:.1} s", r.races.len(), r.seconds);
    Ok(if let Some(first) = r.races.first() {
        Outcome::CaughtByOclgrind(format!("{first} ({} reports)", r.races.len()))
    } else if !r.passed && !r.timed_out {
        Outcome::CaughtByOclgrind(format!("tests failed: {}", r.failed.join(", ")))
    } else {
        Outcome::Survived
    })
}

/// Runs `cmd`, killing it after `timeout`: its exit status (`None` if killed) and whether it
/// timed out.
pub fn wait_timeout(
    cmd: &mut Command,
    timeout: Duration,
) -> Result<(Option<std::process::ExitStatus>, bool)> {
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .context(format!("running {}", cmd.get_program().to_string_lossy()))?;
    loop {
        if let Some(s) = child.try_wait().context("waiting for the tests")? {
            return Ok((Some(s), false));
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Ok((None, true));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A fresh empty folder `<target>/mutants/<name>`.
fn scratch(name: &str) -> Result<PathBuf> {
    let dir = crate::util::target_dir().join("mutants").join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).context(format!("removing {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).context(format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// Runs the OpenCL `mutants` (round-robin over their files, so that a budget samples every
/// file) and prints the table. True if every mutant that ran was caught and none was broken.
fn run_opencl(
    root: &Path,
    mutants: &[Mutant],
    budget: Option<u64>,
    timeout: Option<u64>,
) -> Result<bool> {
    if mutants.is_empty() {
        eprintln!("mutants: no OpenCL mutant selected");
        return Ok(true);
    }
    let binary = build_test_binary("trident-opencl", "conformance")?;
    let start = Instant::now();
    // Round-robin over files: the first of each file, then the second, ...
    let mut by_file: BTreeMap<&str, Vec<&Mutant>> = BTreeMap::new();
    for m in mutants {
        by_file.entry(m.file.as_str()).or_default().push(m);
    }
    let mut order = Vec::new();
    for k in 0.. {
        let before = order.len();
        order.extend(by_file.values().filter_map(|v| v.get(k).copied()));
        if order.len() == before {
            break;
        }
    }
    let mut baselines: BTreeMap<String, f64> = BTreeMap::new();
    let mut race_baselines: BTreeSet<String> = BTreeSet::new();
    let oclgrind = crate::oclgrind::vendors()?;
    if oclgrind.is_none() {
        eprintln!("mutants: Oclgrind is not installed: mutants that survive PoCL are not run under its race detector");
    }
    let mut rows: Vec<(&Mutant, Outcome, f64)> = Vec::new();
    let mut ok = true;
    for m in order {
        let spent = start.elapsed().as_secs();
        // A mutant costs about its filter's unmutated time.
        let expected = baselines.get(&m.tests).map_or(0, |&b| b.min(1e9) as u64);
        if budget.is_some_and(|b| spent + expected > b) {
            rows.push((m, Outcome::NotRun, 0.0));
            continue;
        }
        if !baselines.contains_key(&m.tests) {
            // The unmutated sources, through a kernel folder: must pass.
            let dir = scratch("unmutated")?;
            for f in std::fs::read_dir(root.join("kernels/opencl"))
                .context("reading kernels/opencl")?
                .flatten()
            {
                std::fs::copy(f.path(), dir.join(f.file_name()))
                    .context(format!("copying {}", f.path().display()))?;
            }
            eprintln!("==== unmutated suite, tests matching `{}`", m.tests);
            // Within a budget, an unmeasured filter gets what is left of it.
            let left = budget.map(|b| b.saturating_sub(spent).max(1));
            let limit = Duration::from_secs(timeout.or(left).unwrap_or(600).min(600));
            let r = run_tests(&binary, &m.tests, &dir, limit, None)?;
            if r.timed_out && budget.is_some() {
                eprintln!("     the unmutated suite did not finish within the budget");
                baselines.insert(m.tests.clone(), f64::INFINITY);
                rows.push((m, Outcome::NotRun, 0.0));
                continue;
            }
            if !r.passed || r.ran == 0 {
                return Err(fail(format!(
                    "the unmutated suite does not pass with filter `{}` ({} tests ran, failed: {:?}{}):\n{}",
                    m.tests,
                    r.ran,
                    r.failed,
                    if r.timed_out { ", timed out" } else { "" },
                    r.tail
                )));
            }
            eprintln!("     {} tests passed in {:.1} s", r.ran, r.seconds);
            baselines.insert(m.tests.clone(), r.seconds);
        }
        let base = baselines[&m.tests];
        let limit = timeout.unwrap_or(((base * 4.0) as u64 + 20).max(30));
        let dir = scratch(&m.name)?;
        std::fs::write(dir.join(format!("{}.cl", m.stem())), m.mutated(root)?)
            .context(format!("writing the mutant {}", m.name))?;
        eprintln!("==== mutant {} ({} in {})", m.name, m.kernel, m.file);
        let mutant_start = Instant::now();
        let r = run_tests(&binary, &m.tests, &dir, Duration::from_secs(limit), None)?;
        let mut outcome = if r.timed_out {
            Outcome::Hang(limit)
        } else if r.build_error {
            Outcome::Invalid("its kernel does not build".into())
        } else if r.ran == 0 {
            Outcome::Invalid(format!("filter `{}` selects no test", m.tests))
        } else if r.passed {
            Outcome::Survived
        } else {
            Outcome::Caught(r.failed.clone())
        };
        if matches!(outcome, Outcome::Survived) {
            if let Some(vendors) = &oclgrind {
                outcome = under_oclgrind(&binary, m, &dir, vendors, &mut race_baselines)?;
            }
        }
        match &outcome {
            Outcome::Survived | Outcome::Invalid(_) => {
                ok = false;
                eprintln!("{}", r.tail);
            }
            _ => {
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
        let seconds = mutant_start.elapsed().as_secs_f64();
        eprintln!("     {outcome:?} in {seconds:.1} s");
        rows.push((m, outcome, seconds));
    }
    print_table(&rows);
    let not_run = rows
        .iter()
        .filter(|(_, o, _)| matches!(o, Outcome::NotRun))
        .count();
    println!(
        "mutants: {} run in {:.0} s{}",
        rows.len() - not_run,
        start.elapsed().as_secs_f64(),
        if not_run > 0 {
            format!(
                ", {not_run} not run (time budget of {} s)",
                budget.unwrap_or(0)
            )
        } else {
            String::new()
        }
    );
    Ok(ok)
}

fn print_table(rows: &[(&Mutant, Outcome, f64)]) {
    println!();
    println!("| mutant | kernel | result | seconds |");
    println!("|---|---|---|---|");
    for (m, o, s) in rows {
        let result = match o {
            Outcome::Caught(t) if t.is_empty() => "caught (the binary failed)".to_string(),
            Outcome::Caught(t) => {
                let mut names: Vec<&str> = t.iter().map(String::as_str).take(3).collect();
                if t.len() > 3 {
                    names.push("…");
                }
                format!("caught by {}", names.join(", "))
            }
            Outcome::Hang(l) => format!("caught: HANG (killed after {l} s)"),
            Outcome::CaughtByOclgrind(what) => format!("survived PoCL; caught by Oclgrind: {what}"),
            Outcome::Survived => "**SURVIVED**".to_string(),
            Outcome::NotRun => "not run (budget)".to_string(),
            Outcome::Invalid(why) => format!("**BROKEN**: {why}"),
        };
        println!("| {} | {} | {result} | {s:.1} |", m.name, m.kernel);
    }
}

/// Compiles every CUDA mutant into `out/<name>/` (`<stem>.sm90.cubin` and `<stem>.sm90.ptx`,
/// with the pinned nvcc and `build.rs`'s flags) and writes `out/mutants.tsv` (name, kernel,
/// tests, file) for `run.sh mutants`. Fails if nvcc is missing or a mutant does not compile.
pub fn emit_cuda(out: &Path) -> Result<usize> {
    let root = workspace_root();
    let all = load_lists(&root)?;
    check_lists(&root, &all, false)?;
    let cuda: Vec<&Mutant> = all
        .iter()
        .filter(|m| m.runs_in(&root, Dialect::Cuda))
        .collect();
    std::fs::create_dir_all(out).context(format!("creating {}", out.display()))?;
    let mut tsv = String::new();
    if !cuda.is_empty() {
        let nvcc = nvcc::find_nvcc(&root).ok_or_else(|| {
            fail("nvcc not found (install it into .tools/cuda: `cargo xtask test` does)")
        })?;
        let sources = scratch("cuda-sources")?;
        let mut jobs = Vec::new();
        for m in &cuda {
            let dir = out.join(&m.name);
            std::fs::create_dir_all(&dir).context(format!("creating {}", dir.display()))?;
            // A copy of kernels/ with the one file mutated: a .cu file includes the dialect
            // header and, when shared, its .cl file, by paths relative to itself.
            let tree = sources.join(&m.name);
            copy_kernels(&root.join("kernels"), &tree.join("kernels"))?;
            let mutated = tree.join(&m.file);
            std::fs::write(&mutated, m.mutated(&root)?)
                .context(format!("writing {}", mutated.display()))?;
            let src = match m.cuda_file(&root) {
                Some(cu) => tree.join(cu),
                None => mutated,
            };
            for (flags, arch, ext) in [
                (&nvcc::FLAGS, nvcc::TARGETS[0].1, "sm90.ptx"),
                (&nvcc::CUBIN_FLAGS, nvcc::CUBIN.1, "sm90.cubin"),
            ] {
                let target = dir.join(format!("{}.{ext}", m.stem()));
                let child = Command::new(&nvcc)
                    .args(flags)
                    .arg(format!("-arch={arch}"))
                    .arg("-o")
                    .arg(&target)
                    .arg(&src)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .context(format!("running {}", nvcc.display()))?;
                jobs.push((m.name.clone(), src.clone(), child));
                // A few nvcc at a time.
                if jobs.len() >= 4 {
                    finish_jobs(&mut jobs)?;
                }
            }
            tsv.push_str(&format!(
                "{}\t{}\t{}\t{}\n",
                m.name, m.kernel, m.tests, m.file
            ));
        }
        finish_jobs(&mut jobs)?;
    }
    std::fs::write(out.join("mutants.tsv"), tsv).context("writing mutants.tsv")?;
    Ok(cuda.len())
}

/// Copies the kernel folder `from` (its subfolders one level deep) to `to`.
fn copy_kernels(from: &Path, to: &Path) -> Result {
    for dir in std::fs::read_dir(from).context(format!("reading {}", from.display()))? {
        let dir = dir.context(format!("reading {}", from.display()))?.path();
        if !dir.is_dir() {
            continue;
        }
        let target = to.join(dir.file_name().unwrap_or_default());
        std::fs::create_dir_all(&target).context(format!("creating {}", target.display()))?;
        for f in std::fs::read_dir(&dir).context(format!("reading {}", dir.display()))? {
            let f = f.context(format!("reading {}", dir.display()))?.path();
            if f.is_file() {
                std::fs::copy(&f, target.join(f.file_name().unwrap_or_default()))
                    .context(format!("copying {}", f.display()))?;
            }
        }
    }
    Ok(())
}

/// Waits for the nvcc `jobs`; fails naming every mutant that did not compile.
fn finish_jobs(jobs: &mut Vec<(String, PathBuf, std::process::Child)>) -> Result {
    let mut errors = Vec::new();
    for (name, src, child) in jobs.drain(..) {
        let out = child.wait_with_output().context("waiting for nvcc")?;
        if !out.status.success() {
            errors.push(format!(
                "mutant {name} does not compile ({}):\n{}",
                src.display(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(fail(errors.join("\n")))
    }
}
