use trident_core::svd::{validity, Svd, SvdOptions, Vectors};
use trident_core::{Dense, Scalar};

fn mat<T: Scalar>(n: usize) -> Dense<T> {
    let mut x = 12345u64;
    Dense::from_fn(n, n, |_, _| {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        T::from_f64(((x >> 11) as f64 / (1u64 << 53) as f64) - 0.5)
    })
}

fn probe<T: Scalar, B: Svd<T>>(b: &B, name: &str, n: usize) {
    let a = mat::<T>(n);
    let t = std::time::Instant::now();
    let r = b
        .svd(
            a.view(),
            &SvdOptions {
                vectors: Vectors::Thin,
                ..Default::default()
            },
        )
        .unwrap();
    let v = validity(a.view(), &r).unwrap();
    eprintln!(
        "{name} {} n={n}: sweeps {} {:.1}s  {v}  u/eps {:.0} v/eps {:.0}",
        T::NAME,
        r.sweeps,
        t.elapsed().as_secs_f64(),
        v.u_orth / T::EPS.to_f64(),
        v.v_orth / T::EPS.to_f64()
    );
}

#[test]
#[ignore]
fn svd_probe() {
    let ns: Vec<usize> = std::env::var("NS")
        .unwrap()
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    let cl = trident_opencl::OpenCl::new().unwrap();
    for &n in &ns {
        if std::env::var("PREC").map_or(true, |p| p.contains("32")) {
            probe::<f32, _>(&cl, "cl", n);
        }
        if std::env::var("PREC").map_or(true, |p| p.contains("64")) {
            probe::<f64, _>(&cl, "cl", n);
        }
    }
}
