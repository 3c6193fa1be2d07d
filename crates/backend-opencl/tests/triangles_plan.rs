//! The triangle checks under every binary-search kernel (`TRIDENT_TC_SEARCH`: `edge`, `row`,
//! `flat`, `flat-global`, read when a graph is counted; the default one is also covered by the
//! conformance tests) and under other plan limits (`TRIDENT_TC_BINS`, read when a graph is
//! uploaded and counted): `64,2048,1` makes one work-group of each row-list kernel and of the
//! `tc_search_flat` kernels loop over all its rows or edge chunks (so the shared tables and row
//! caches are reused), `0,0,2` sends every row to the global-bitmap `tc_hash`, `8,100,3` moves
//! rows between the bins. Any kernel and any limits give the same counts. This is its own test
//! binary (one process), so setting the variables affects no other test.

use trident_core::conformance::{acquire, run_named};
use trident_core::triangles::plan::{SearchKernel, BINS_ENV, SEARCH_ENV};

#[test]
fn triangles_under_every_search_kernel_and_other_plan_limits() {
    let Some(b) = acquire(trident_opencl::OpenCl::new()) else {
        return;
    };
    let checks = trident_core::conformance::triangles::checks();
    // Every kernel under G = 1, and each under one other setting (keeping the test short).
    let runs: [(&str, &[SearchKernel]); 3] = [
        ("64,2048,1", &SearchKernel::ALL),
        ("0,0,2", &[SearchKernel::Edge, SearchKernel::Flat]),
        ("8,100,3", &[SearchKernel::Row, SearchKernel::FlatGlobal]),
    ];
    for (limits, searches) in runs {
        std::env::set_var(BINS_ENV, limits);
        for &search in searches {
            std::env::set_var(SEARCH_ENV, search.name());
            for name in [
                "triangles_long_rows",
                "triangles_random_vs_brute_force",
                "triangles_shared_graphs",
            ] {
                eprintln!("{BINS_ENV}={limits} {SEARCH_ENV}={}: {name}", search.name());
                run_named(&b, &checks, name);
            }
        }
    }
    std::env::remove_var(BINS_ENV);
    std::env::remove_var(SEARCH_ENV);
}
