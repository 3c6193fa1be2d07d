//! The shared backend conformance suite, on the CPU backend.

trident_core::spmv_conformance_tests!(trident_cpu::Cpu, Ok(trident_cpu::Cpu::new()));
trident_core::triangles_conformance_tests!(trident_cpu::Cpu, Ok(trident_cpu::Cpu::new()));
trident_core::matmul_conformance_tests!(trident_cpu::Cpu, Ok(trident_cpu::Cpu::new()));
trident_core::mcl_conformance_tests!(trident_cpu::Cpu, Ok(trident_cpu::Cpu::new()));
trident_core::svd_conformance_tests!(trident_cpu::Cpu, Ok(trident_cpu::Cpu::new()));
