//! `xtask layout`: the shape of the source tree, checked in a second or so without building
//! anything (issue 24, "Guard and done"). It fails on:
//!
//! - **long**: a source file (`.rs`, `.cu`, `.cl`, `.h`, `.cuh`, `.c`, `.py`, `.sh`) outside
//!   `kernels/` of more than [`MAX_LINES`] lines;
//! - **cycle**: two or more modules of one crate that use each other, directly or round a
//!   ring (see `layout/cycles.rs` for what counts as a use, and its limits);
//! - **env**: a `TRIDENT_*` environment variable read (`env::var`, `env::var_os`) in library
//!   code: `crates/*/src`, except the CLI and the test harness (`core/src/testing.rs` and `testing/`,
//!   `core/src/conformance/`). The name is the literal passed, a `const` of the crate that
//!   holds it, or, for a read through a local (`let var = |name| env::var(name)`), every
//!   `TRIDENT_*` constant of the crate passed in parentheses in that file. Reads through
//!   `std::env::vars()` or a renamed import of `var` are not seen;
//! - **dup**: a block of [`DUP_LINES`] or more lines repeated between
//!   `crates/backend-cuda/src` and `crates/backend-opencl/src` (lines compared with their
//!   whitespace collapsed and blank lines dropped; windows of lines that are all braces,
//!   brackets and the opening of a unit-test module do not count);
//! - **cli**: a subcommand of `trident` (`enum Command` in `crates/cli/src/main.rs`) whose
//!   module (`cmd::name::Args`) is not named as the command, or a `cmd/` module that is no
//!   command.
//!
//! [`ALLOWLIST`] holds today's violations, each with the part of issue 24 that removes it:
//! they are reported and counted but pass; any other violation fails. An entry that no
//! longer matches is reported, so that it can be deleted.

mod cycles;
mod lexer;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::util::{fail, usage, workspace_root, Result};

/// Longest a source file outside `kernels/` may be.
pub const MAX_LINES: usize = 1000;
/// Shortest repeated block between the two GPU crates that counts.
pub const DUP_LINES: usize = 6;

/// Which check a violation fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Long,
    Cycle,
    Env,
    Dup,
    Cli,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Long => "long",
            Kind::Cycle => "cycle",
            Kind::Env => "env",
            Kind::Dup => "dup",
            Kind::Cli => "cli",
        }
    }
}

/// A violation: its check, the key the allowlist matches (a path, `crate: a, b`,
/// `path: VAR`, `cuda file <-> opencl file`), and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub kind: Kind,
    pub key: String,
    pub detail: String,
}

/// Today's violations, removed by other parts of issue 24 (the engineers' branches named):
/// `(check, key, why it is here)`.
pub const ALLOWLIST: &[(Kind, &str, &str)] = &[];

/// `xtask layout [--root DIR]`: checks this workspace, or the tree at `DIR` (another
/// checkout, e.g. `git archive` of an older commit).
pub fn run(args: &[String]) -> Result {
    let mut root = workspace_root();
    let mut i = 0;
    while i < args.len() {
        match crate::util::flag_value(args, &mut i, "--root")? {
            Some(dir) => root = PathBuf::from(dir),
            None => return Err(usage(format!("unexpected argument `{}`", args[i]))),
        }
        i += 1;
    }
    check(&root)
}

/// Runs every check on the tree at `root` and prints the outcome.
pub fn check(root: &Path) -> Result {
    let start = std::time::Instant::now();
    let files = source_files(root);
    let found = find_all(root, &files)?;
    let (allowed, new) = split_allowed(&found, ALLOWLIST);
    for v in &allowed {
        eprintln!("layout: allowed {} {}: {}", v.kind.name(), v.key, v.detail);
    }
    let stale: Vec<String> = ALLOWLIST
        .iter()
        .filter(|(k, key, _)| !found.iter().any(|v| v.kind == *k && v.key == *key))
        .map(|(k, key, _)| format!("{} {key}", k.name()))
        .collect();
    for s in &stale {
        eprintln!("layout: allowlist entry no longer needed (delete it): {s}");
    }
    for v in &new {
        eprintln!("layout: NEW {} {}: {}", v.kind.name(), v.key, v.detail);
    }
    eprintln!(
        "layout: {} files checked in {:.2} s; {} allowlisted (of {} entries), {} stale, {} new",
        files.len(),
        start.elapsed().as_secs_f64(),
        allowed.len(),
        ALLOWLIST.len(),
        stale.len(),
        new.len()
    );
    if new.is_empty() {
        Ok(())
    } else {
        Err(fail(format!(
            "{} layout violation(s); fix them (see xtask/src/layout.rs for each check)",
            new.len()
        )))
    }
}

/// `found` split into (allowlisted, new).
pub fn split_allowed(
    found: &[Violation],
    allow: &[(Kind, &str, &str)],
) -> (Vec<Violation>, Vec<Violation>) {
    found.iter().cloned().partition(|v| {
        allow
            .iter()
            .any(|(k, key, _)| *k == v.kind && *key == v.key)
    })
}

/// Source files of the workspace (relative, `/`-separated, sorted) outside `target`, `.git`,
/// `.tools`, `shared` and the top-level `kernels/`.
fn source_files(root: &Path) -> Vec<String> {
    const EXT: [&str; 8] = ["rs", "cu", "cl", "h", "cuh", "c", "py", "sh"];
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = dir.join(&name);
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                let top = dir.as_os_str().is_empty();
                let skip = name.starts_with('.')
                    || name == "target"
                    || (top && (name == "kernels" || name == "shared"));
                if !skip {
                    stack.push(rel);
                }
            } else if t.is_file() && EXT.iter().any(|x| name.ends_with(&format!(".{x}"))) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

fn read(root: &Path, rel: &str) -> Result<String> {
    std::fs::read_to_string(root.join(rel)).map_err(|e| fail(format!("reading {rel}: {e}")))
}

/// Every violation of the tree at `root` (with its source `files`).
fn find_all(root: &Path, files: &[String]) -> Result<Vec<Violation>> {
    let mut texts: BTreeMap<&str, String> = BTreeMap::new();
    for f in files {
        texts.insert(f, read(root, f)?);
    }
    let mut found = long_files(texts.iter().map(|(f, t)| (*f, t.as_str())));
    // Crates: every directory with a Cargo.toml and src/lib.rs or src/main.rs.
    let mut crates: BTreeMap<String, Vec<cycles::Source>> = BTreeMap::new();
    for (f, t) in &texts {
        let Some((dir, rel)) = f
            .split_once("/src/")
            .or_else(|| f.strip_prefix("src/").map(|r| ("", r)))
        else {
            continue;
        };
        if !f.ends_with(".rs") || rel.starts_with("bin/") {
            continue;
        }
        let Some(name) = crate_name(root, dir) else {
            continue;
        };
        let Some(module) = cycles::module_of(rel) else {
            continue;
        };
        crates.entry(name).or_default().push(cycles::Source {
            module,
            file: f.to_string(),
            bare: lexer::strip(t).bare,
        });
    }
    for (name, sources) in &crates {
        found.extend(cycles_of(name, sources));
    }
    found.extend(env_reads(texts.iter().map(|(f, t)| (*f, t.as_str()))));
    let gpu = |prefix: &str| -> Vec<(&str, &str)> {
        texts
            .iter()
            .filter(|(f, _)| f.starts_with(prefix) && f.ends_with(".rs"))
            .map(|(f, t)| (*f, t.as_str()))
            .collect()
    };
    found.extend(duplicates(
        &gpu("crates/backend-cuda/src/"),
        &gpu("crates/backend-opencl/src/"),
    ));
    if let Some(main) = texts.get("crates/cli/src/main.rs") {
        let cmds: Vec<&str> = texts
            .keys()
            .filter_map(|f| f.strip_prefix("crates/cli/src/cmd/"))
            .filter_map(|f| f.strip_suffix(".rs"))
            // A command's submodules (`cmd/triangles/distributed.rs`) are part of it.
            .filter(|m| *m != "mod" && !m.contains('/'))
            .collect();
        found.extend(cli_names(main, &cmds));
    }
    Ok(found)
}

/// The package name of the crate in `dir` (from its Cargo.toml), if it is one.
fn crate_name(root: &Path, dir: &str) -> Option<String> {
    let toml = std::fs::read_to_string(root.join(dir).join("Cargo.toml")).ok()?;
    let doc: toml_edit::DocumentMut = toml.parse().ok()?;
    doc.get("package")?
        .get("name")?
        .as_str()
        .map(str::to_string)
}

/// Files of more than [`MAX_LINES`] lines (outside `kernels/`).
pub fn long_files<'a>(files: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<Violation> {
    files
        .filter(|(f, _)| !f.starts_with("kernels/"))
        .filter_map(|(f, t)| {
            let n = t.lines().count();
            (n > MAX_LINES).then(|| Violation {
                kind: Kind::Long,
                key: f.to_string(),
                detail: format!("{n} lines (at most {MAX_LINES})"),
            })
        })
        .collect()
}

/// The import cycles of crate `name`.
pub fn cycles_of(name: &str, sources: &[cycles::Source]) -> Vec<Violation> {
    cycles::find(sources)
        .into_iter()
        .map(|c| Violation {
            kind: Kind::Cycle,
            key: format!("{name}: {}", c.members.join(", ")),
            detail: c.uses.join("; "),
        })
        .collect()
}

/// Whether `f` is library code for the env check.
fn is_library(f: &str) -> bool {
    let Some((_, rel)) = f.split_once("/src/") else {
        return false;
    };
    f.starts_with("crates/")
        && f.ends_with(".rs")
        && !f.starts_with("crates/cli/")
        && !(f.starts_with("crates/core/src/")
            && (rel == "testing.rs"
                || rel.starts_with("testing/")
                || rel.starts_with("conformance/")
                || rel == "conformance.rs"))
}

/// `TRIDENT_*` variables read in library code.
pub fn env_reads<'a>(files: impl Iterator<Item = (&'a str, &'a str)> + Clone) -> Vec<Violation> {
    // Constants holding a TRIDENT_* name, per crate directory.
    let mut consts: BTreeMap<&str, BTreeMap<String, String>> = BTreeMap::new();
    let files: Vec<(&str, String)> = files.map(|(f, t)| (f, lexer::strip(t).code)).collect();
    for (f, code) in &files {
        let krate = f.split_once("/src/").map_or(*f, |(d, _)| d);
        for (name, value) in str_consts(code) {
            if value.starts_with("TRIDENT_") {
                consts.entry(krate).or_default().insert(name, value);
            }
        }
    }
    let mut out = Vec::new();
    for (f, code) in files.iter().filter(|(f, _)| is_library(f)) {
        let krate = f.split_once("/src/").map_or(*f, |(d, _)| d);
        let empty = BTreeMap::new();
        let consts = consts.get(krate).unwrap_or(&empty);
        let mut vars = BTreeSet::new();
        for arg in env_args(code) {
            let arg = arg.trim().trim_start_matches('&').trim_start_matches('*');
            if let Some(lit) = arg.strip_prefix('"').and_then(|a| a.strip_suffix('"')) {
                if lit.starts_with("TRIDENT_") {
                    vars.insert(lit.to_string());
                }
            } else if let Some(v) = consts.get(arg.rsplit("::").next().unwrap_or(arg)) {
                vars.insert(v.clone());
            } else {
                // Through a local: every TRIDENT_* constant passed in parentheses here.
                for (name, v) in consts {
                    if code.contains(&format!("({name})")) {
                        vars.insert(v.clone());
                    }
                }
            }
        }
        out.extend(vars.into_iter().map(|var| Violation {
            kind: Kind::Env,
            key: format!("{f}: {var}"),
            detail: "read in library code; make it an option, read in the CLI".into(),
        }));
    }
    out
}

/// `const NAME: &str = "value";` definitions of `code`.
fn str_consts(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in code.lines() {
        let Some(rest) = line.split("const ").nth(1) else {
            continue;
        };
        let Some((name, rest)) = rest.split_once(':') else {
            continue;
        };
        let Some((ty, value)) = rest.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_end_matches(';').trim();
        if ty.trim() == "&str" || ty.trim() == "&'static str" {
            if let Some(v) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
                out.push((name.trim().to_string(), v.to_string()));
            }
        }
    }
    out
}

/// The argument text of every `env::var(…)` / `env::var_os(…)` call of `code`.
fn env_args(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for pat in ["env::var(", "env::var_os("] {
        let mut at = 0;
        while let Some(k) = code[at..].find(pat) {
            let open = at + k + pat.len();
            let mut depth = 1;
            let mut end = open;
            for (j, ch) in code[open..].char_indices() {
                match ch {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    end = open + j;
                    break;
                }
            }
            out.push(code[open..end].to_string());
            at = open;
        }
    }
    out
}

/// Lines of `t` as compared for duplicates: whitespace collapsed, blank lines dropped; with
/// their line numbers.
fn normalised(t: &str) -> Vec<(usize, String)> {
    t.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split_whitespace().collect::<Vec<_>>().join(" ")))
        .filter(|(_, l)| !l.is_empty())
        .collect()
}

/// Whether a (normalised) line says nothing of its own: brackets and separators, or the
/// opening of a unit-test module (`#[cfg(test)]`, `mod tests {`, `use super::*;`,
/// `#[test]`), which every file with tests repeats.
fn boilerplate(l: &str) -> bool {
    l.chars().all(|c| "{}()[];,".contains(c) || c == ' ')
        || ["#[cfg(test)]", "mod tests {", "use super::*;", "#[test]"].contains(&l)
}

/// Blocks of [`DUP_LINES`] or more (normalised) lines that occur both in a file of `a` and
/// in a file of `b`: one violation per pair of files, with every block's line ranges.
pub fn duplicates(a: &[(&str, &str)], b: &[(&str, &str)]) -> Vec<Violation> {
    let trivial = |w: &[(usize, String)]| w.iter().all(|(_, l)| boilerplate(l));
    // Every window of b: text -> (file, index of its first line).
    let nb: Vec<(&str, Vec<(usize, String)>)> =
        b.iter().map(|(f, t)| (*f, normalised(t))).collect();
    let mut windows: BTreeMap<Vec<&str>, Vec<(usize, usize)>> = BTreeMap::new();
    for (fi, (_, lines)) in nb.iter().enumerate() {
        for (s, w) in lines.windows(DUP_LINES).enumerate() {
            if !trivial(w) {
                let key: Vec<&str> = w.iter().map(|(_, l)| l.as_str()).collect();
                windows.entry(key).or_default().push((fi, s));
            }
        }
    }
    let mut out = Vec::new();
    for (fa, ta) in a {
        let la = normalised(ta);
        // Per file of b: the (a start, b start) of every matching window.
        let mut hits: BTreeMap<usize, Vec<(usize, usize)>> = BTreeMap::new();
        for (s, w) in la.windows(DUP_LINES).enumerate() {
            let key: Vec<&str> = w.iter().map(|(_, l)| l.as_str()).collect();
            for &(fi, sb) in windows.get(&key).into_iter().flatten() {
                hits.entry(fi).or_default().push((s, sb));
            }
        }
        for (fi, pairs) in hits {
            let (fb, lb) = (&nb[fi].0, &nb[fi].1);
            // Merge windows that continue each other into blocks.
            let set: BTreeSet<(usize, usize)> = pairs.iter().copied().collect();
            let mut blocks = Vec::new();
            let mut lines = 0usize;
            for &(s, t) in &set {
                if s > 0 && t > 0 && set.contains(&(s - 1, t - 1)) {
                    continue;
                }
                let mut len = DUP_LINES;
                while set.contains(&(s + len - DUP_LINES + 1, t + len - DUP_LINES + 1)) {
                    len += 1;
                }
                lines += len;
                blocks.push(format!(
                    "{}-{} = {}-{}",
                    la[s].0,
                    la[s + len - 1].0,
                    lb[t].0,
                    lb[t + len - 1].0
                ));
            }
            out.push(Violation {
                kind: Kind::Dup,
                key: format!("{fa} <-> {fb}"),
                detail: format!(
                    "{} block(s), {lines} lines repeated (lines {})",
                    blocks.len(),
                    blocks.join(", ")
                ),
            });
        }
    }
    out
}

/// Subcommands whose module is not named as the command, and `cmd/` modules that are none:
/// `main` holds `enum Command { Name(cmd::module::Args), … }` (clap names the command
/// `Name` in kebab case).
pub fn cli_names(main: &str, modules: &[&str]) -> Vec<Violation> {
    let code = lexer::strip(main).bare;
    let Some(body) = code
        .split_once("enum Command")
        .and_then(|(_, r)| r.split_once('{'))
        .and_then(|(_, r)| r.split_once("\n}"))
        .map(|(b, _)| b)
    else {
        return vec![Violation {
            kind: Kind::Cli,
            key: "crates/cli/src/main.rs".into(),
            detail: "no `enum Command { … }` found".into(),
        }];
    };
    let mut out = Vec::new();
    let mut used = BTreeSet::new();
    for line in body.lines() {
        let line = line.trim();
        let Some((variant, rest)) = line.split_once('(') else {
            continue;
        };
        let Some(module) = rest
            .strip_prefix("cmd::")
            .and_then(|r| r.split_once("::"))
            .map(|(m, _)| m)
        else {
            continue;
        };
        let mut command = String::new();
        for (i, ch) in variant.trim().chars().enumerate() {
            if ch.is_uppercase() && i > 0 {
                command.push('-');
            }
            command.extend(ch.to_lowercase());
        }
        used.insert(module.to_string());
        if command.replace('-', "_") != module {
            out.push(Violation {
                kind: Kind::Cli,
                key: command.clone(),
                detail: format!("command `{command}` is run by module `cmd::{module}`"),
            });
        }
    }
    for m in modules {
        if !used.contains(*m) {
            out.push(Violation {
                kind: Kind::Cli,
                key: format!("cmd::{m}"),
                detail: "a module of cmd/ that is no command".into(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_file_fails_unless_in_kernels() {
        let long = "x\n".repeat(MAX_LINES + 1);
        let ok = "x\n".repeat(MAX_LINES);
        let v = long_files(
            [
                ("crates/a/src/big.rs", long.as_str()),
                ("crates/a/src/ok.rs", ok.as_str()),
                ("kernels/cuda/big.cu", long.as_str()),
            ]
            .into_iter(),
        );
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].key, "crates/a/src/big.rs");
    }

    #[test]
    fn env_reads_in_library_code_fail() {
        let files = [
            // A literal, and one in a comment (not a read).
            (
                "crates/core/src/a.rs",
                "fn f() { std::env::var(\"TRIDENT_A\"); } // env::var(\"TRIDENT_X\")",
            ),
            // Through a constant of the crate, and through a local closure.
            (
                "crates/core/src/names.rs",
                "pub const B: &str = \"TRIDENT_B\";",
            ),
            (
                "crates/core/src/b.rs",
                "fn f() { std::env::var_os(crate::names::B); }",
            ),
            (
                "crates/core/src/c.rs",
                "const C: &str = \"TRIDENT_C\";\nfn f() { let v = |n| std::env::var(n); v(C); }",
            ),
            // Not library code, or not TRIDENT_*.
            (
                "crates/cli/src/main.rs",
                "fn f() { env::var(\"TRIDENT_D\"); }",
            ),
            (
                "crates/core/src/testing.rs",
                "fn f() { env::var(\"TRIDENT_E\"); }",
            ),
            (
                "crates/core/src/conformance/mod.rs",
                "fn f() { env::var(\"TRIDENT_F\"); }",
            ),
            ("crates/core/src/d.rs", "fn f() { env::var(\"CI\"); }"),
            ("benches/src/lib.rs", "fn f() { env::var(\"TRIDENT_G\"); }"),
        ];
        let mut keys: Vec<String> = env_reads(files.iter().copied())
            .into_iter()
            .map(|v| v.key)
            .collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "crates/core/src/a.rs: TRIDENT_A",
                "crates/core/src/b.rs: TRIDENT_B",
                "crates/core/src/c.rs: TRIDENT_C",
            ]
        );
    }

    #[test]
    fn a_block_repeated_between_the_gpu_crates_fails() {
        let block: String = (0..DUP_LINES)
            .map(|i| format!("let x{i} = f({i});\n"))
            .collect();
        let short: String = (0..DUP_LINES - 1)
            .map(|i| format!("let y{i} = g({i});\n"))
            .collect();
        let braces = "}\n".repeat(DUP_LINES + 2);
        let cuda = format!("fn a() {{\n{block}}}\nlet cuda = 1;\n{short}let c = 2;\n{braces}");
        // The same block re-indented, with a blank line in it; the short one; the braces.
        let opencl = format!(
            "// other\nfn b() {{\n    {}\n\n{}}}\nlet opencl = 1;\n{short}let o = 2;\n{braces}",
            block.lines().next().unwrap(),
            block
                .lines()
                .skip(1)
                .map(|l| format!("        {l}\n"))
                .collect::<String>()
        );
        let v = duplicates(&[("cuda.rs", &cuda)], &[("opencl.rs", &opencl)]);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].key, "cuda.rs <-> opencl.rs");
        // The six lines and the closing brace after them.
        assert_eq!(
            v[0].detail,
            "1 block(s), 7 lines repeated (lines 2-8 = 3-10)"
        );
        // One line changed: no block of six left.
        let changed = opencl.replace("f(3)", "f(33)");
        assert!(duplicates(&[("cuda.rs", &cuda)], &[("opencl.rs", &changed)]).is_empty());
    }

    #[test]
    fn test_module_openings_are_not_duplicates() {
        let opening = "    }\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n";
        let cuda = format!("fn a() {{\n    let c = 1;\n{opening}    fn c() {{}}\n}}\n");
        let opencl = format!("fn b() {{\n    let o = 2;\n{opening}    fn o() {{}}\n}}\n");
        assert!(duplicates(&[("cuda.rs", &cuda)], &[("opencl.rs", &opencl)]).is_empty());
    }

    #[test]
    fn cli_modules_have_their_commands_names() {
        let main = "enum Command {\n    /// Doc (with parens).\n    Info(cmd::info::Args),\n    \
                    #[command(subcommand)]\n    Generate(cmd::generate::Args),\n}\n";
        assert!(cli_names(main, &["info", "generate"]).is_empty());
        let bad = main.replace("cmd::info::", "cmd::devices::");
        let v = cli_names(&bad, &["devices", "generate", "old"]);
        let keys: Vec<&str> = v.iter().map(|v| v.key.as_str()).collect();
        assert_eq!(keys, ["info", "cmd::old"]);
    }

    #[test]
    fn allowlisted_violations_pass_and_new_ones_fail() {
        let v = |kind, key: &str| Violation {
            kind,
            key: key.into(),
            detail: String::new(),
        };
        let found = [
            v(Kind::Long, "a.rs"),
            v(Kind::Cycle, "c: x, y"),
            v(Kind::Long, "b.rs"),
        ];
        let allow = [(Kind::Long, "a.rs", "why"), (Kind::Cycle, "c: x, y", "why")];
        let (ok, new) = split_allowed(&found, &allow);
        assert_eq!(ok.len(), 2);
        assert_eq!(new, [v(Kind::Long, "b.rs")]);
    }

    /// The tree as it is passes, so that `xtask test` is green before the parallel parts
    /// of issue 24 land, and any violation beyond the allowlist fails.
    #[test]
    fn the_workspace_passes() {
        check(&workspace_root()).unwrap();
    }
}
