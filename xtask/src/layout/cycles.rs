//! Import cycles between the modules of one crate.
//!
//! Every module of a crate is a file under `src/` (`a.rs` or `a/mod.rs` is `a`, `a/b.rs` is
//! `a::b`, `lib.rs` / `main.rs` the root) or an inline `mod name { … }` inside one. A module
//! *uses* another when its code (comments and literals aside) names a path into it:
//! `crate::a::b…`, `super::…`, `self::…` or a child module's name, in a `use` tree (braces
//! expanded) or in an expression. A path that ends in an item resolves to the module that
//! holds it, and one step further when that module only imports it (`pub use child::X` in
//! `a`, named as `crate::a::X` or `super::X`, resolves to `a::child`).
//!
//! A module using its own ancestor or descendant is how Rust modules work (`use super::*`,
//! `pub use child::X`) and is no cycle. Every other use `a::x… → a::y…` is counted between
//! the siblings `a::x` and `a::y` below their common ancestor `a`; a cycle is a set of
//! siblings that reach each other (a strongly connected component of two or more).
//!
//! Limits: glob imports (`use super::*`) resolve to the module globbed, not to what it
//! re-exports; re-exports are followed one step; `#[path]` attributes and macros that build
//! paths are not seen; other crates' paths (`trident_core::…`) are not followed (no crate
//! imports upward, and cargo forbids cycles between crates).

use std::collections::{BTreeMap, BTreeSet};

/// A module path below the crate root (empty: the root).
pub type ModPath = Vec<String>;

/// One file of a crate: its module path and its text with comments and literals blanked.
pub struct Source {
    /// Module path of the file.
    pub module: ModPath,
    /// Path of the file, for messages.
    pub file: String,
    /// [`super::lexer::Stripped::bare`] of the file.
    pub bare: String,
}

/// A cycle: the sibling modules (full paths) and, for each use that closes it, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    /// The modules of the cycle, sorted, as `a::b` (the root's children as `b`).
    pub members: Vec<String>,
    /// `file:line: from -> to` of each use between the members.
    pub uses: Vec<String>,
}

/// The module path of a file at `rel` (relative to `src/`, `/`-separated).
pub fn module_of(rel: &str) -> Option<ModPath> {
    let rel = rel.strip_suffix(".rs")?;
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    let last = parts.last()?.as_str();
    if parts.len() == 1 && (last == "lib" || last == "main") {
        return Some(Vec::new());
    }
    if last == "mod" {
        parts.pop();
    }
    Some(parts)
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A use found in a file: from module, resolved target path (not yet reduced to a module),
/// line.
struct Use {
    from: ModPath,
    path: ModPath,
    line: usize,
    /// The name it binds (`use` trees only): last segment or alias.
    binds: Option<String>,
}

/// The cycles among the modules of `sources` (one crate).
pub fn find(sources: &[Source]) -> Vec<Cycle> {
    let mut modules: BTreeSet<ModPath> = sources.iter().map(|s| s.module.clone()).collect();
    let mut uses = Vec::new();
    for s in sources {
        scan(s, &mut modules, &mut uses);
    }
    // Names each module imports: name -> path.
    let mut names: BTreeMap<ModPath, BTreeMap<String, ModPath>> = BTreeMap::new();
    for u in &uses {
        if let Some(b) = &u.binds {
            names
                .entry(u.from.clone())
                .or_default()
                .insert(b.clone(), u.path.clone());
        }
    }
    let module_of_path = |p: &ModPath| -> ModPath {
        let longest = |p: &ModPath| {
            (0..=p.len())
                .rev()
                .find(|&k| modules.contains(&p[..k]))
                .unwrap_or(0)
        };
        let k = longest(p);
        let m = p[..k].to_vec();
        if k < p.len() {
            if let Some(q) = names.get(&m).and_then(|n| n.get(&p[k])) {
                let mut q = q.clone();
                q.extend_from_slice(&p[k + 1..]);
                return q[..longest(&q)].to_vec();
            }
        }
        m
    };
    // Sibling edges, with their witnesses.
    let mut edges: BTreeMap<(ModPath, ModPath), Vec<String>> = BTreeMap::new();
    let file_of: BTreeMap<&ModPath, &str> = sources
        .iter()
        .map(|s| (&s.module, s.file.as_str()))
        .collect();
    for u in &uses {
        let to = module_of_path(&u.path);
        let common = u.from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        if common == u.from.len() || common == to.len() {
            continue; // ancestor or descendant
        }
        let a = u.from[..=common].to_vec();
        let b = to[..=common].to_vec();
        let file = (0..=u.from.len())
            .rev()
            .find_map(|k| file_of.get(&u.from[..k].to_vec()).copied())
            .unwrap_or("?");
        edges.entry((a, b)).or_default().push(format!(
            "{file}:{}: {} -> {}",
            u.line,
            show(&u.from),
            show(&to)
        ));
    }
    components(&edges)
}

fn show(p: &ModPath) -> String {
    if p.is_empty() {
        "crate".into()
    } else {
        p.join("::")
    }
}

/// Strongly connected components of two or more nodes (by reachability: the graphs are
/// small).
fn components(edges: &BTreeMap<(ModPath, ModPath), Vec<String>>) -> Vec<Cycle> {
    let mut next: BTreeMap<&ModPath, Vec<&ModPath>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
    }
    let reach = |from: &ModPath| -> BTreeSet<ModPath> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(m) = stack.pop() {
            for &n in next.get(m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    stack.push(n);
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&ModPath, BTreeSet<ModPath>> =
        next.keys().map(|&m| (m, reach(m))).collect();
    let mut done: BTreeSet<ModPath> = BTreeSet::new();
    let mut out = Vec::new();
    for (&m, r) in &reached {
        if done.contains(m) || !r.contains(m) {
            continue;
        }
        let comp: BTreeSet<ModPath> = r
            .iter()
            .filter(|n| reached.get(n).is_some_and(|rn| rn.contains(m)))
            .cloned()
            .collect();
        let uses: BTreeSet<String> = edges
            .iter()
            .filter(|((a, b), _)| comp.contains(a) && comp.contains(b))
            .flat_map(|(_, w)| w.iter().cloned())
            .collect();
        out.push(Cycle {
            members: comp.iter().map(show).collect(),
            uses: uses.into_iter().collect(),
        });
        done.extend(comp);
    }
    out
}

/// Finds the uses of one file, and the inline modules it declares.
fn scan(s: &Source, modules: &mut BTreeSet<ModPath>, uses: &mut Vec<Use>) {
    let c: Vec<char> = s.bare.chars().collect();
    let newlines: Vec<usize> = (0..c.len()).filter(|&k| c[k] == '\n').collect();
    let line_of = |at: usize| 1 + newlines.partition_point(|&k| k < at);
    let mut depth = 0usize;
    // Inline modules open at a brace depth.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut pending_mod: Option<String> = None;
    let current = |inline: &[(String, usize)]| {
        let mut m = s.module.clone();
        m.extend(inline.iter().map(|(n, _)| n.clone()));
        m
    };
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        match ch {
            '{' => {
                depth += 1;
                if let Some(n) = pending_mod.take() {
                    inline.push((n, depth));
                    modules.insert(current(&inline));
                }
            }
            '}' => {
                if inline.last().is_some_and(|&(_, d)| d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            ';' => pending_mod = None,
            _ => {}
        }
        if !is_ident_char(ch) || (i > 0 && is_ident_char(c[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < c.len() && is_ident_char(c[i]) {
            i += 1;
        }
        let word: String = c[start..i].iter().collect();
        let here = current(&inline);
        let line = line_of(start);
        if word == "mod" {
            let (name, j) = ident_at(&c, skip_ws(&c, i));
            if !name.is_empty() {
                pending_mod = Some(name);
                i = j;
            }
            continue;
        }
        let after_colons = start >= 2 && c[start - 1] == ':' && c[start - 2] == ':';
        if word == "use" {
            let mut out = Vec::new();
            let j = use_tree(&c, skip_ws(&c, i), Vec::new(), &mut out);
            for (path, binds) in out {
                if let Some(path) = anchor(&path, &here, modules) {
                    uses.push(Use {
                        from: here.clone(),
                        path,
                        line,
                        binds: Some(binds),
                    });
                }
            }
            i = j;
            continue;
        }
        if after_colons || !followed_by_colons(&c, i) {
            continue;
        }
        // A path in an expression or a type: word::seg::seg…
        let mut path = vec![word];
        let mut j = i;
        while followed_by_colons(&c, j) {
            let (seg, k) = ident_at(&c, skip_ws(&c, skip_ws(&c, j) + 2));
            if seg.is_empty() {
                break;
            }
            path.push(seg);
            j = k;
        }
        if let Some(path) = anchor(&path, &here, modules) {
            uses.push(Use {
                from: here,
                path,
                line,
                binds: None,
            });
        }
        i = j;
    }
}

/// `path` as an absolute module path from `here`, if it starts at `crate`, `super`, `self`
/// or a child module of `here`; `None` for other crates' paths and local names.
fn anchor(path: &[String], here: &ModPath, modules: &BTreeSet<ModPath>) -> Option<ModPath> {
    let first = path.first()?;
    let (mut base, rest) = match first.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (here.clone(), &path[1..]),
        "super" => {
            let mut base = here.clone();
            let mut k = 0;
            while path.get(k).is_some_and(|p| p == "super") {
                base.pop()?;
                k += 1;
            }
            (base, &path[k..])
        }
        _ => {
            let mut child = here.clone();
            child.push(first.clone());
            if !modules.contains(&child) {
                return None;
            }
            (here.clone(), path)
        }
    };
    base.extend(rest.iter().cloned());
    Some(base)
}

fn skip_ws(c: &[char], mut i: usize) -> usize {
    while i < c.len() && c[i].is_whitespace() {
        i += 1;
    }
    i
}

fn ident_at(c: &[char], i: usize) -> (String, usize) {
    let mut j = i;
    while j < c.len() && is_ident_char(c[j]) {
        j += 1;
    }
    (c[i..j].iter().collect(), j)
}

fn followed_by_colons(c: &[char], i: usize) -> bool {
    let k = skip_ws(c, i);
    c.get(k) == Some(&':') && c.get(k + 1) == Some(&':')
}

/// Parses a `use` tree at `i` below `prefix`: every leaf as (path, the name it binds; `*`
/// for a glob). Returns the index after the tree.
fn use_tree(
    c: &[char],
    i: usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) -> usize {
    let mut path = prefix;
    let mut i = skip_ws(c, i);
    loop {
        i = skip_ws(c, i);
        match c.get(i) {
            Some('{') => {
                i += 1;
                loop {
                    i = skip_ws(c, i);
                    match c.get(i) {
                        Some('}') => return i + 1,
                        Some(',') => i += 1,
                        None => return i,
                        _ => {
                            let j = use_tree(c, i, path.clone(), out);
                            if j == i {
                                return i + 1;
                            }
                            i = j;
                        }
                    }
                }
            }
            Some('*') => {
                out.push((path, "*".into()));
                return i + 1;
            }
            Some(&ch) if is_ident_char(ch) => {
                let (seg, j) = ident_at(c, i);
                i = j;
                if followed_by_colons(c, i) {
                    i = skip_ws(c, i) + 2;
                    path.push(seg);
                    continue;
                }
                // `self` in a group names the prefix itself.
                let binds = if seg == "self" {
                    path.last().cloned().unwrap_or_default()
                } else {
                    path.push(seg.clone());
                    seg
                };
                let k = skip_ws(c, i);
                let (kw, after) = ident_at(c, k);
                if kw == "as" {
                    let (alias, after) = ident_at(c, skip_ws(c, after));
                    out.push((path, alias));
                    return after;
                }
                out.push((path, binds));
                return i;
            }
            _ => return i,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(module: &str, text: &str) -> Source {
        Source {
            module: if module.is_empty() {
                Vec::new()
            } else {
                module.split("::").map(str::to_string).collect()
            },
            file: format!("{module}.rs"),
            bare: super::super::lexer::strip(text).bare,
        }
    }

    #[test]
    fn module_paths_of_files() {
        assert_eq!(module_of("lib.rs"), Some(vec![]));
        assert_eq!(module_of("a/mod.rs"), Some(vec!["a".to_string()]));
        assert_eq!(
            module_of("a/b.rs"),
            Some(vec!["a".to_string(), "b".to_string()])
        );
    }

    #[test]
    fn a_planted_cycle_is_found_and_parents_are_not_cycles() {
        // coo <-> csr through a use tree and an expression path; a parent re-exporting its
        // child and the child using `super::*` is no cycle.
        let crate_ = [
            src("", "pub mod coo;\npub mod csr;\npub mod m;\npub use m::X;"),
            src("coo", "use crate::{dense::D, csr::Csr};\nfn f() {}"),
            src("csr", "fn g() { crate::coo::Coo::new(); }"),
            src("dense", "pub struct D;"),
            src("m", "mod a;\npub use a::X;\nfn h() { a::f(); }"),
            src("m::a", "use super::*;\npub struct X;"),
        ];
        let cycles = find(&crate_);
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        assert_eq!(cycles[0].members, ["coo", "csr"]);
        assert_eq!(cycles[0].uses.len(), 2);
        assert!(
            cycles[0].uses[0].starts_with("coo.rs:1: coo -> csr"),
            "{cycles:?}"
        );
    }

    #[test]
    fn cycles_through_re_exports_and_three_modules() {
        // driver -> launch -> memory -> driver, the last through the root's re-export;
        // comments and strings do not count.
        let crate_ = [
            src(
                "",
                "mod driver; mod launch; mod memory;\npub use driver::Device;",
            ),
            src(
                "driver",
                "use super::launch::go; // crate::nothing\npub struct Device;",
            ),
            src("launch", "use crate::memory;"),
            src(
                "memory",
                "fn f() -> crate::Device { todo!(\"crate::launch\") }",
            ),
        ];
        let cycles = find(&crate_);
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        assert_eq!(cycles[0].members, ["driver", "launch", "memory"]);
        // Siblings in a sub-module, through `super::` and an inline test module.
        let crate_ = [
            src("", "mod a;"),
            src("a", "mod x; mod y;"),
            src("a::x", "use super::y::f;"),
            src(
                "a::y",
                "pub fn f() {}\n#[cfg(test)]\nmod tests { use super::super::x; }",
            ),
        ];
        let cycles = find(&crate_);
        assert_eq!(cycles.len(), 1, "{cycles:?}");
        assert_eq!(cycles[0].members, ["a::x", "a::y"]);
        // Without the test module's use: none.
        let crate_ = [
            src("", "mod a;"),
            src("a", "mod x; mod y;"),
            src("a::x", "use super::y::f;"),
            src("a::y", "pub fn f() {}\nmod tests { use super::*; }"),
        ];
        assert!(find(&crate_).is_empty());
    }
}
