//! Vectors of f32 for each instruction-set level, and the dispatch that runs a kernel compiled
//! for the level chosen at run time.
//!
//! A kernel is written once, generic over [`Simd`], and implements [`Kernel`]; [`dispatch`]
//! calls its `run` inside a function compiled with the level's target features, where the
//! generic code (every `#[inline(always)]` function it calls, and the intrinsics) is inlined
//! and compiled for those features. A [`Simd`] value is a token: it can only be made when the
//! CPU supports its level, which is what makes its methods safe to call.

use std::mem::MaybeUninit;

use super::isa::Isa;

/// The f32 vector operations of one instruction-set level.
pub(crate) trait Simd: Copy + Send + Sync {
    /// A vector of [`Self::LANES`] f32.
    type V: Copy;
    const LANES: usize;
    /// Rows of the GEMM micro-kernel's register block (its columns are two vectors).
    const MR: usize;

    fn zero(self) -> Self::V;
    fn splat(self, x: f32) -> Self::V;
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a * b + c` (fused where the level has FMA).
    fn mul_add(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// The larger of each pair of lanes (the inputs are never NaN here).
    fn max(self, a: Self::V, b: Self::V) -> Self::V;
    /// `v` where it equals `m`, +0 elsewhere.
    fn keep_equal(self, v: Self::V, m: Self::V) -> Self::V;
    /// The first [`Self::LANES`] values of `s`.
    fn load(self, s: &[f32]) -> Self::V;
    /// Stores into the first [`Self::LANES`] values of `s`.
    fn store(self, v: Self::V, s: &mut [f32]);
    /// `s` (at most [`Self::LANES`] values) with zeros after it.
    fn load_partial(self, s: &[f32]) -> Self::V;
    /// The first `s.len()` (at most [`Self::LANES`]) lanes of `v` into `s`.
    fn store_partial(self, v: Self::V, s: &mut [f32]);
    /// # Safety
    /// `p` must be valid for reading [`Self::LANES`] f32.
    unsafe fn load_ptr(self, p: *const f32) -> Self::V;
    /// # Safety
    /// `p` must be valid for writing [`Self::LANES`] f32.
    unsafe fn store_ptr(self, v: Self::V, p: *mut f32);
}

/// A kernel written once for every [`Simd`] level.
pub(crate) trait Kernel {
    type Output;
    /// The kernel's body. Implementations must be `#[inline(always)]` (and so must what they
    /// call) to be compiled with the level's features.
    fn run<S: Simd>(self, s: S) -> Self::Output;
}

/// Runs `kernel` compiled for `isa` (for the portable level when the CPU lacks `isa`).
#[inline]
pub(crate) fn dispatch<K: Kernel>(isa: Isa, kernel: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    match isa {
        Isa::Avx512 => {
            if let Some(s) = x86::Avx512::new() {
                // SAFETY: the token exists, so the CPU supports the features of `avx512`.
                return unsafe { x86::avx512(kernel, s) };
            }
        }
        Isa::Avx2 => {
            if let Some(s) = x86::Avx2::new() {
                // SAFETY: as above, for `avx2`.
                return unsafe { x86::avx2(kernel, s) };
            }
        }
        Isa::Scalar => {}
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = isa;
    kernel.run(Scalar)
}

/// Runs `f` compiled with `isa`'s target features, for plain loops the compiler vectorises
/// itself (`f` must be an `#[inline(always)]` closure, and what it calls inlined too).
#[inline(always)]
pub(crate) fn compiled_for<R>(isa: Isa, f: impl FnOnce() -> R) -> R {
    struct Body<F>(F);
    impl<R, F: FnOnce() -> R> Kernel for Body<F> {
        type Output = R;
        #[inline(always)]
        fn run<S: Simd>(self, _: S) -> R {
            (self.0)()
        }
    }
    dispatch(isa, Body(f))
}

/// `[f(0), …, f(N − 1)]`. Kernels build arrays of vectors with this rather than
/// `std::array::from_fn`, whose closure adapters are not always inlined: a call left out of line
/// is compiled without the level's target features, and so are the vector operations inside it
/// (each then a function call of its own).
#[inline(always)]
pub(crate) fn vectors<S: Simd, const N: usize>(
    s: S,
    mut f: impl FnMut(usize) -> S::V,
) -> [S::V; N] {
    let mut out = [s.zero(); N];
    for (i, v) in out.iter_mut().enumerate() {
        *v = f(i);
    }
    out
}

/// `g(&[f(0), …, f(N − 1)])` for rows of vectors (a tile of a transform), the rows built in
/// place and the grid only lent. A grid first filled with zeros and then overwritten is cleared
/// with a `memset` call for every tile once it no longer fits the registers, and a large one
/// returned by value may be copied with `memcpy` (both seen with 8×8 grids); here each row is
/// written once where it stays.
#[inline(always)]
pub(crate) fn with_grid<S: Simd, const N: usize, const M: usize, R>(
    _: S,
    mut f: impl FnMut(usize) -> [S::V; M],
    g: impl FnOnce(&[[S::V; M]; N]) -> R,
) -> R {
    let mut out = [const { MaybeUninit::<[S::V; M]>::uninit() }; N];
    for (i, row) in out.iter_mut().enumerate() {
        row.write(f(i));
    }
    // SAFETY: every element was written above, and `MaybeUninit<T>` has the layout of `T`.
    g(unsafe { &*out.as_ptr().cast::<[[S::V; M]; N]>() })
}

/// The f32 lanes of a vector at level `isa` (as [`dispatch`] runs it).
pub(crate) fn lanes(isa: Isa) -> usize {
    struct Lanes;
    impl Kernel for Lanes {
        type Output = usize;
        #[inline(always)]
        fn run<S: Simd>(self, _: S) -> usize {
            S::LANES
        }
    }
    dispatch(isa, Lanes)
}

/// `[f(0), f(1), f(2), f(3)]`: one portable-level operation lane by lane.
#[inline(always)]
fn four(f: impl Fn(usize) -> f32) -> [f32; 4] {
    [f(0), f(1), f(2), f(3)]
}

/// The portable level: four lanes in plain Rust, multiply and add unfused.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scalar;

impl Simd for Scalar {
    type V = [f32; 4];
    const LANES: usize = 4;
    const MR: usize = 4;

    #[inline(always)]
    fn zero(self) -> [f32; 4] {
        [0.0; 4]
    }
    #[inline(always)]
    fn splat(self, x: f32) -> [f32; 4] {
        [x; 4]
    }
    #[inline(always)]
    fn add(self, a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
        four(|i| a[i] + b[i])
    }
    #[inline(always)]
    fn sub(self, a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
        four(|i| a[i] - b[i])
    }
    #[inline(always)]
    fn mul_add(self, a: [f32; 4], b: [f32; 4], c: [f32; 4]) -> [f32; 4] {
        four(|i| a[i] * b[i] + c[i])
    }
    #[inline(always)]
    fn max(self, a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
        four(|i| a[i].max(b[i]))
    }
    #[inline(always)]
    fn keep_equal(self, v: [f32; 4], m: [f32; 4]) -> [f32; 4] {
        four(|i| if v[i] == m[i] { v[i] } else { 0.0 })
    }
    #[inline(always)]
    fn load(self, s: &[f32]) -> [f32; 4] {
        let s = &s[..4];
        [s[0], s[1], s[2], s[3]]
    }
    #[inline(always)]
    fn store(self, v: [f32; 4], s: &mut [f32]) {
        s[..4].copy_from_slice(&v);
    }
    #[inline(always)]
    fn load_partial(self, s: &[f32]) -> [f32; 4] {
        let mut v = [0.0; 4];
        v[..s.len()].copy_from_slice(s);
        v
    }
    #[inline(always)]
    fn store_partial(self, v: [f32; 4], s: &mut [f32]) {
        let n = s.len();
        s.copy_from_slice(&v[..n]);
    }
    #[inline(always)]
    unsafe fn load_ptr(self, p: *const f32) -> [f32; 4] {
        // SAFETY: the caller guarantees four readable values.
        unsafe { p.cast::<[f32; 4]>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn store_ptr(self, v: [f32; 4], p: *mut f32) {
        // SAFETY: the caller guarantees four writable values.
        unsafe { p.cast::<[f32; 4]>().write_unaligned(v) }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{Kernel, Simd};

    /// # Safety
    /// The CPU must support every feature enabled here (an [`Avx512`] token proves it).
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,bmi1,bmi2")]
    pub(super) unsafe fn avx512<K: Kernel>(kernel: K, s: Avx512) -> K::Output {
        kernel.run(s)
    }

    /// # Safety
    /// The CPU must support AVX2 and FMA (an [`Avx2`] token proves it).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn avx2<K: Kernel>(kernel: K, s: Avx2) -> K::Output {
        kernel.run(s)
    }

    /// AVX-512: sixteen lanes. Only made when the CPU supports AVX-512 F, BW, DQ and VL.
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct Avx512(());

    impl Avx512 {
        pub(crate) fn new() -> Option<Self> {
            super::Isa::Avx512.supported().then_some(Self(()))
        }
    }

    /// The mask of the first `n` (≤ 16) lanes.
    #[inline(always)]
    fn mask16(n: usize) -> __mmask16 {
        debug_assert!(n <= 16);
        ((1u32 << n) - 1) as __mmask16
    }

    // SAFETY (every `unsafe` block of this impl): an `Avx512` token exists only when the CPU
    // supports the features the intrinsics need; slice loads and stores are bounds-checked
    // first, masked ones touch only the first `len` lanes.
    impl Simd for Avx512 {
        type V = __m512;
        const LANES: usize = 16;
        const MR: usize = 12;

        #[inline(always)]
        fn zero(self) -> __m512 {
            unsafe { _mm512_setzero_ps() }
        }
        #[inline(always)]
        fn splat(self, x: f32) -> __m512 {
            unsafe { _mm512_set1_ps(x) }
        }
        #[inline(always)]
        fn add(self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_add_ps(a, b) }
        }
        #[inline(always)]
        fn sub(self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_sub_ps(a, b) }
        }
        #[inline(always)]
        fn mul_add(self, a: __m512, b: __m512, c: __m512) -> __m512 {
            unsafe { _mm512_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        fn max(self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_max_ps(a, b) }
        }
        #[inline(always)]
        fn keep_equal(self, v: __m512, m: __m512) -> __m512 {
            unsafe { _mm512_maskz_mov_ps(_mm512_cmp_ps_mask::<_CMP_EQ_OQ>(v, m), v) }
        }
        #[inline(always)]
        fn load(self, s: &[f32]) -> __m512 {
            let s = &s[..16];
            unsafe { _mm512_loadu_ps(s.as_ptr()) }
        }
        #[inline(always)]
        fn store(self, v: __m512, s: &mut [f32]) {
            let s = &mut s[..16];
            unsafe { _mm512_storeu_ps(s.as_mut_ptr(), v) }
        }
        #[inline(always)]
        fn load_partial(self, s: &[f32]) -> __m512 {
            let n = s.len().min(16);
            unsafe { _mm512_maskz_loadu_ps(mask16(n), s.as_ptr()) }
        }
        #[inline(always)]
        fn store_partial(self, v: __m512, s: &mut [f32]) {
            let n = s.len().min(16);
            unsafe { _mm512_mask_storeu_ps(s.as_mut_ptr(), mask16(n), v) }
        }
        #[inline(always)]
        unsafe fn load_ptr(self, p: *const f32) -> __m512 {
            unsafe { _mm512_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn store_ptr(self, v: __m512, p: *mut f32) {
            unsafe { _mm512_storeu_ps(p, v) }
        }
    }

    /// AVX2 + FMA: eight lanes. Only made when the CPU supports both.
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct Avx2(());

    impl Avx2 {
        pub(crate) fn new() -> Option<Self> {
            super::Isa::Avx2.supported().then_some(Self(()))
        }
    }

    /// The lane mask of the first `n` (≤ 8) lanes for `maskload`/`maskstore`.
    #[inline(always)]
    fn mask8(n: usize) -> __m256i {
        debug_assert!(n <= 8);
        let n = n as i32;
        unsafe {
            _mm256_cmpgt_epi32(
                _mm256_set1_epi32(n),
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            )
        }
    }

    // SAFETY (every `unsafe` block of this impl): as for `Avx512`, with AVX2 and FMA.
    impl Simd for Avx2 {
        type V = __m256;
        const LANES: usize = 8;
        const MR: usize = 6;

        #[inline(always)]
        fn zero(self) -> __m256 {
            unsafe { _mm256_setzero_ps() }
        }
        #[inline(always)]
        fn splat(self, x: f32) -> __m256 {
            unsafe { _mm256_set1_ps(x) }
        }
        #[inline(always)]
        fn add(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_add_ps(a, b) }
        }
        #[inline(always)]
        fn sub(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_sub_ps(a, b) }
        }
        #[inline(always)]
        fn mul_add(self, a: __m256, b: __m256, c: __m256) -> __m256 {
            unsafe { _mm256_fmadd_ps(a, b, c) }
        }
        #[inline(always)]
        fn max(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_max_ps(a, b) }
        }
        #[inline(always)]
        fn keep_equal(self, v: __m256, m: __m256) -> __m256 {
            unsafe { _mm256_and_ps(_mm256_cmp_ps::<_CMP_EQ_OQ>(v, m), v) }
        }
        #[inline(always)]
        fn load(self, s: &[f32]) -> __m256 {
            let s = &s[..8];
            unsafe { _mm256_loadu_ps(s.as_ptr()) }
        }
        #[inline(always)]
        fn store(self, v: __m256, s: &mut [f32]) {
            let s = &mut s[..8];
            unsafe { _mm256_storeu_ps(s.as_mut_ptr(), v) }
        }
        #[inline(always)]
        fn load_partial(self, s: &[f32]) -> __m256 {
            let n = s.len().min(8);
            unsafe { _mm256_maskload_ps(s.as_ptr(), mask8(n)) }
        }
        #[inline(always)]
        fn store_partial(self, v: __m256, s: &mut [f32]) {
            let n = s.len().min(8);
            unsafe { _mm256_maskstore_ps(s.as_mut_ptr(), mask8(n), v) }
        }
        #[inline(always)]
        unsafe fn load_ptr(self, p: *const f32) -> __m256 {
            unsafe { _mm256_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn store_ptr(self, v: __m256, p: *mut f32) {
            unsafe { _mm256_storeu_ps(p, v) }
        }
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::super::isa::Isa;

    /// Every level this CPU supports, lowest first: the kernels' unit tests run each.
    pub(crate) fn supported_levels() -> Vec<Isa> {
        Isa::ALL.into_iter().filter(|i| i.supported()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::isa::Isa;
    use super::testing::supported_levels;
    use super::{dispatch, Kernel, Simd};

    /// Every operation of every level on lanes with distinct values, against plain f32 maths.
    struct Ops;

    impl Kernel for Ops {
        type Output = Vec<f32>;
        #[inline(always)]
        fn run<S: Simd>(self, s: S) -> Vec<f32> {
            let n = S::LANES;
            let a: Vec<f32> = (0..n).map(|i| i as f32 - 2.5).collect();
            let b: Vec<f32> = (0..n).map(|i| 1.5 - 0.25 * i as f32).collect();
            let (va, vb) = (s.load(&a), s.load(&b));
            let mut out = vec![0.0; 7 * n + 2 * n];
            for (k, v) in [
                s.add(va, vb),
                s.sub(va, vb),
                s.mul_add(va, vb, s.zero()),
                s.mul_add(va, vb, s.splat(0.5)),
                s.max(va, vb),
                s.keep_equal(va, s.max(va, vb)),
                s.load_partial(&a[..n - 1]),
            ]
            .into_iter()
            .enumerate()
            {
                s.store(v, &mut out[k * n..]);
            }
            out[7 * n..].fill(-9.0);
            s.store_partial(va, &mut out[7 * n..8 * n - 1]);
            // SAFETY: `out` has n values from 8n on.
            unsafe { s.store_ptr(s.load_ptr(b.as_ptr()), out[8 * n..].as_mut_ptr()) };
            out
        }
    }

    #[test]
    fn every_level_computes_the_same_lanes() {
        for isa in supported_levels() {
            let out = dispatch(isa, Ops);
            let n = out.len() / 9;
            for i in 0..n {
                let (a, b) = (i as f32 - 2.5, 1.5 - 0.25 * i as f32);
                let partial = if i < n - 1 { a } else { 0.0 };
                let stored = if i < n - 1 { a } else { -9.0 };
                let kept = if a >= b { a } else { 0.0 };
                let want = [
                    a + b,
                    a - b,
                    a * b,
                    a * b + 0.5,
                    a.max(b),
                    kept,
                    partial,
                    stored,
                    b,
                ];
                for (k, w) in want.into_iter().enumerate() {
                    assert_eq!(out[k * n + i], w, "{isa}: op {k}, lane {i}");
                }
            }
        }
        assert!(supported_levels().contains(&Isa::Scalar));
    }
}
