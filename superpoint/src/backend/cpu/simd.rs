//! Runs a kernel's loops compiled for AVX2 + FMA when the CPU has them (the build targets
//! baseline x86-64), so that the compiler vectorises them eight lanes wide and fuses multiply-adds.

/// Calls `f`, compiled with AVX2 and FMA enabled when the CPU supports them. `f` and what it
/// calls must be inlined (`#[inline(always)]`) to be compiled with the features.
#[inline(always)]
pub(crate) fn with_avx2<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports the features the function is compiled for.
        return unsafe { avx2_fma(f) };
    }
    f()
}

/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn avx2_fma<R>(f: impl FnOnce() -> R) -> R {
    f()
}
