//! The triangle checks under other plan limits (`TRIDENT_TC_BINS`, read when a graph is
//! uploaded and counted): `64,2048,1` makes one work-group of each hash kernel loop over all
//! its rows (so the shared tables are cleared and reused between rows), `0,0,2` sends every
//! row to the global-bitmap `tc_hash`, `8,100,3` moves rows between the bins. Any limits give
//! the same counts. `TRIDENT_TC_SEARCH=edge` is set throughout, so binary search runs the
//! per-edge `tc_search` here (the default `tc_search_row` is covered by the conformance
//! tests). This is its own test binary (one process), so setting the variable
//! affects no other test.

use trident_core::conformance::{acquire, run_named};
use trident_core::triangles::plan::{BINS_ENV, SEARCH_ENV};

#[test]
fn triangles_under_other_plan_limits() {
    let Some(b) = acquire(trident_opencl::OpenCl::new()) else {
        return;
    };
    let checks = trident_core::conformance::triangles::checks();
    std::env::set_var(SEARCH_ENV, "edge");
    for limits in ["64,2048,1", "0,0,2", "8,100,3"] {
        std::env::set_var(BINS_ENV, limits);
        for name in [
            "triangles_long_rows",
            "triangles_random_vs_brute_force",
            "triangles_shared_graphs",
        ] {
            eprintln!("{BINS_ENV}={limits}: {name}");
            run_named(&b, &checks, name);
        }
    }
    std::env::remove_var(BINS_ENV);
    std::env::remove_var(SEARCH_ENV);
}
