//! What the GPU backends share about kernels: their naming ([`kernel_name`], [`Precision`]),
//! the per-algorithm kernel lists ([`KernelList`]), a build-once cache ([`Cached`]) and the
//! checks the kernels rely on (32-bit dimensions, download lengths). The SpMV launch plan
//! lives with SpMV ([`crate::spmv::EllpackPlan`]).

use std::sync::{Mutex, OnceLock, PoisonError};

use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// The floating-point precisions that GPU kernels are compiled for: every typed kernel root
/// `r` exists as `r_f32` and `r_f64` (see [`kernel_name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// `f32` (suffix `_f32`).
    F32,
    /// `f64` (suffix `_f64`).
    F64,
}

impl Precision {
    /// Both precisions, in index order ([`Precision::index`]).
    pub const ALL: [Precision; 2] = [Precision::F32, Precision::F64];

    /// The precision of `T`.
    pub fn of<T: Scalar>() -> Self {
        if T::NAME == "f64" {
            Precision::F64
        } else {
            Precision::F32
        }
    }

    /// `0` for `f32`, `1` for `f64`: the index of per-precision tables.
    pub fn index(self) -> usize {
        self as usize
    }

    /// `"f32"` or `"f64"`, the kernel-name suffix.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }

    /// `root` + `_` + [`Precision::name`], e.g. `spmv_ellr_f32`.
    pub fn kernel_name(self, root: &str) -> String {
        format!("{root}_{}", self.name())
    }
}

/// The name of the kernel `root` for the scalar type `T`, as both GPU backends' kernel files
/// define it: `kernel_name::<f32>("spmv_ellr") == "spmv_ellr_f32"`.
pub fn kernel_name<T: Scalar>(root: &str) -> String {
    Precision::of::<T>().kernel_name(root)
}

/// The kernels of one kernel file, as a GPU backend's kernel table lists them: typed roots
/// (defined as `<root>_f32` and `<root>_f64`) and plain kernels (one name each). A backend
/// resolves a kernel to its *slot*, the index in [`KernelList::names`], once per loaded
/// module, so launches look up kernels by index, not by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelList {
    /// Roots of the kernels defined for both precisions.
    pub typed: &'static [&'static str],
    /// Kernels with a single, unsuffixed name.
    pub plain: &'static [&'static str],
}

impl KernelList {
    /// The kernels `typed` (roots, both precisions) and `plain`.
    pub const fn new(typed: &'static [&'static str], plain: &'static [&'static str]) -> Self {
        Self { typed, plain }
    }

    /// Number of kernels: both precisions of each typed root, then the plain ones.
    pub fn len(&self) -> usize {
        self.typed.len() * Precision::ALL.len() + self.plain.len()
    }

    /// True if the list names no kernel.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every kernel's full name, in slot order: `typed[0]_f32, typed[0]_f64, typed[1]_f32,
    /// …, plain[0], …`.
    pub fn names(&self) -> Vec<String> {
        let typed = self
            .typed
            .iter()
            .flat_map(|r| Precision::ALL.map(|p| p.kernel_name(r)));
        typed
            .chain(self.plain.iter().map(|n| n.to_string()))
            .collect()
    }

    /// The precision of the kernel in `slot` (`None`: a plain kernel).
    pub fn precision_of(&self, slot: usize) -> Option<Precision> {
        (slot < self.typed.len() * Precision::ALL.len())
            .then(|| Precision::ALL[slot % Precision::ALL.len()])
    }

    /// The slot of typed kernel `root` in precision `p`; `None` if `root` is not listed.
    pub fn typed_slot(&self, root: &str, p: Precision) -> Option<usize> {
        let i = self.typed.iter().position(|r| *r == root)?;
        Some(i * Precision::ALL.len() + p.index())
    }

    /// The slot of the plain kernel `name`; `None` if it is not listed.
    pub fn plain_slot(&self, name: &str) -> Option<usize> {
        let i = self.plain.iter().position(|n| *n == name)?;
        Some(self.typed.len() * Precision::ALL.len() + i)
    }
}

/// Defines a GPU backend's kernel table: an enum naming each kernel file (`Module::X as
/// usize` indexes the table), `Module::ALL`, `Module::info()`, and the table itself, a static
/// slice of the backend's entry type, from one line per file. Each backend wraps it with its
/// own entry macro (see `kernels.rs` of `trident-cuda` and `trident-opencl`):
///
/// ```ignore
/// trident_core::kernel_table! {
///     /// A kernel file of `kernels/cuda/`.
///     enum Module;
///     /// The table, in the order of `Module`'s variants.
///     static MODULES: [ModuleInfo];
///     /// `kernels/cuda/spmv.cu`: ELLPACK-R SpMV.
///     Spmv => cuda_module!(spmv, typed: ["spmv_ellr"], plain: []),
/// }
/// ```
#[macro_export]
macro_rules! kernel_table {
    (
        $(#[$enum_doc:meta])* enum $module:ident;
        $(#[$table_doc:meta])* static $table:ident: [$info:ty];
        $($(#[$doc:meta])* $variant:ident => $entry:expr),+ $(,)?
    ) => {
        $(#[$enum_doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $module {
            $($(#[$doc])* $variant),+
        }

        impl $module {
            /// Every module, in table order.
            pub const ALL: &'static [$module] = &[$($module::$variant),+];

            /// This module's table entry.
            pub fn info(self) -> &'static $info {
                &$table[self as usize]
            }

            /// The module whose file stem (the entry's `name`) is `name`.
            pub fn by_name(name: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|m| m.info().name == name)
            }
        }

        $(#[$table_doc])*
        pub static $table: &[$info] = &[$($entry),+];
    };
}

/// A value built on first use by a fallible function, at most once even when threads race
/// (the backends' cache of loaded kernel modules: one per module and precision). A failure
/// is returned and not cached, so a later call tries again.
#[derive(Debug, Default)]
pub struct Cached<T> {
    value: OnceLock<T>,
    /// Held while building, so that concurrent first uses build once.
    building: Mutex<()>,
}

impl<T> Cached<T> {
    /// An empty cell.
    pub const fn new() -> Self {
        Self {
            value: OnceLock::new(),
            building: Mutex::new(()),
        }
    }

    /// The value, built by `build` if this is the first successful call.
    pub fn get_or_try_init<E>(&self, build: impl FnOnce() -> Result<T, E>) -> Result<&T, E> {
        if let Some(v) = self.value.get() {
            return Ok(v);
        }
        let _guard = self.building.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(v) = self.value.get() {
            return Ok(v);
        }
        let v = build()?;
        Ok(self.value.get_or_init(|| v))
    }

    /// The value, if it has been built.
    pub fn get(&self) -> Option<&T> {
        self.value.get()
    }
}

/// Fails to compile unless every listed type is `Send + Sync`: a GPU backend and its device
/// data may be shared between threads. `trident_core::assert_send_sync!(Cuda, CudaVector<f32>);`
#[macro_export]
macro_rules! assert_send_sync {
    ($($t:ty),+ $(,)?) => {
        const _: () = {
            const fn send_sync<T: Send + Sync>() {}
            $(send_sync::<$t>();)+
        };
    };
}

/// Fails with [`Error::Shape`] unless a download of a device vector of `len` values fits
/// the host slice of `host_len`.
pub fn check_download_len(len: usize, host_len: usize) -> Result<()> {
    if len == host_len {
        Ok(())
    } else {
        Err(Error::shape(format!(
            "download of {len} values into {host_len}"
        )))
    }
}

/// A matrix dimension as the 32-bit unsigned int that GPU kernels take, or
/// [`Error::IndexOverflow`].
pub fn to_u32(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::IndexOverflow {
        value: n as u128,
        index_type: "u32",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn kernel_names() {
        assert_eq!(kernel_name::<f32>("spmv_ellr"), "spmv_ellr_f32");
        assert_eq!(kernel_name::<f64>("gemm"), "gemm_f64");
        assert_eq!(Precision::of::<f64>().index(), 1);
        assert!(check_download_len(3, 3).is_ok());
        assert!(matches!(check_download_len(3, 2), Err(Error::Shape(_))));
    }

    #[test]
    fn kernel_list_slots_index_the_names() {
        let list = KernelList {
            typed: &["a", "b"],
            plain: &["c"],
        };
        let names = list.names();
        assert_eq!(names, ["a_f32", "a_f64", "b_f32", "b_f64", "c"]);
        assert_eq!(list.len(), names.len());
        for r in list.typed {
            for p in Precision::ALL {
                let slot = list.typed_slot(r, p).unwrap();
                assert_eq!(names[slot], p.kernel_name(r));
                assert_eq!(list.precision_of(slot), Some(p));
            }
        }
        assert_eq!(names[list.plain_slot("c").unwrap()], "c");
        assert_eq!(list.precision_of(4), None);
        assert_eq!(list.typed_slot("c", Precision::F32), None);
        assert_eq!(list.plain_slot("a"), None);
    }

    #[test]
    fn cached_builds_once_and_retries_failures() {
        let c = Cached::new();
        assert_eq!(c.get_or_try_init(|| Err::<u32, _>("no")), Err("no"));
        assert_eq!(c.get(), None);
        assert_eq!(c.get_or_try_init(|| Ok::<_, ()>(7)), Ok(&7));
        assert_eq!(c.get_or_try_init(|| Ok::<_, ()>(8)), Ok(&7));
    }
}
