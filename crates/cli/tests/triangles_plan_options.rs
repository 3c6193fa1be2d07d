//! `trident triangles --search-kernel / --plan-limits`: the GPU plan's options (what the
//! library once read from TRIDENT_TC_SEARCH / TRIDENT_TC_BINS) are accepted, change no count,
//! and bad values are refused before any work.

use std::path::PathBuf;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_trident");

fn trident(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run trident")
}

/// A 5-clique (10 triangles) plus a pendant path: 10 triangles in all.
fn graph(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trident-tc-plan-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join("g.el");
    let mut text = String::new();
    for i in 0..5 {
        for j in i + 1..5 {
            text += &format!("{i} {j}\n");
        }
    }
    text += "4 5\n5 6\n";
    std::fs::write(&p, text).unwrap();
    p
}

fn count(o: &Output) -> Option<u64> {
    let s = String::from_utf8_lossy(&o.stdout);
    s.lines()
        .find_map(|l| l.strip_prefix("triangles:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

#[test]
fn plan_options_are_accepted_and_change_no_count() {
    let g = graph("ok");
    let g = g.to_str().unwrap();
    for extra in [
        &[][..],
        &["--search-kernel", "row", "--plan-limits", "0,0,2"][..],
        &["--search-kernel", "flat-global", "--plan-limits", "8,100"][..],
        &["--search-kernel", "EDGE"][..],
    ] {
        let mut args = vec!["triangles", g, "--backend", "cpu", "--algorithm", "hash"];
        args.extend_from_slice(extra);
        let o = trident(&args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            count(&o),
            Some(10),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
}

#[test]
fn bad_plan_options_are_refused() {
    let g = graph("bad");
    let g = g.to_str().unwrap();
    for (flag, value, says) in [
        ("--plan-limits", "1,2,0", "GROUPS >= 1"),
        ("--plan-limits", "x", "WARP_MAX,BLOCK_MAX"),
        ("--search-kernel", "bogus", "flat-global"),
    ] {
        let o = trident(&["triangles", g, "--backend", "cpu", flag, value]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{flag} {value} accepted");
        assert!(err.contains(says), "{flag} {value}: {err}");
    }
}
