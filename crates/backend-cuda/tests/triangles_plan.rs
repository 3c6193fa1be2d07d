//! The triangle checks under every binary-search kernel and other plan limits
//! ([`trident_core::conformance::triangles::under_every_search_kernel_and_plan_limit`]). Its
//! own test binary (one process), so the environment variables it sets affect no other test.

#[test]
fn triangles_under_every_search_kernel_and_other_plan_limits() {
    if let Some(b) = trident_core::conformance::acquire(trident_cuda::Cuda::new()) {
        trident_core::conformance::triangles::under_every_search_kernel_and_plan_limit(&b);
    }
}
