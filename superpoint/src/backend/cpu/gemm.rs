//! The matrix product the convolutions are made of: `C (m×n) = [C +] A (m×k) · B (k×n)`, A
//! and C row-major with any row pitch, B packed once per weight tensor.
//!
//! B is stored in panels of two vectors' width (32 columns with AVX-512), each panel k rows of
//! contiguous values, zero-padded past n; C is written in whole panels (its pitch covers the
//! padding). The micro-kernel keeps an `MR × 2`-vector block of C in registers and walks k:
//! per step it loads one panel row and broadcasts one value of each of the MR rows of A, for
//! 2·MR fused multiply-adds. A panel (k ≤ 256 rows, 32 KiB at most) stays in L1 while the rows
//! of A stream past it. Each level's MR fills its register file: 12 rows (24 accumulators of 32
//! zmm registers) for AVX-512, 6 (12 of 16 ymm) for AVX2.

use super::simd::Simd;

/// A k×n right-hand matrix packed for the micro-kernel of one vector width.
#[derive(Debug)]
pub(crate) struct PackedB {
    k: usize,
    n: usize,
    /// Columns per panel: two vectors.
    panel: usize,
    data: Vec<f32>,
}

impl PackedB {
    /// Packs the k×n matrix whose element (row, column) is `b(row, column)` for vectors of
    /// `lanes` f32.
    pub(crate) fn new(k: usize, n: usize, lanes: usize, b: impl Fn(usize, usize) -> f32) -> Self {
        let panel = 2 * lanes;
        let panels = n.div_ceil(panel);
        let mut data = vec![0.0; panels * k * panel];
        for (j, block) in data.chunks_exact_mut((k * panel).max(1)).enumerate() {
            for (row, values) in block.chunks_exact_mut(panel).enumerate() {
                for (c, v) in values.iter_mut().enumerate() {
                    let col = j * panel + c;
                    if col < n {
                        *v = b(row, col);
                    }
                }
            }
        }
        Self { k, n, panel, data }
    }

    /// Columns of C the product writes: n rounded up to whole panels.
    pub(crate) fn padded_n(&self) -> usize {
        self.n.div_ceil(self.panel) * self.panel
    }
}

/// `C = [C +] A · B` for the m rows of A at pitch `lda` (its first `b.k()` columns) into the m
/// rows of C at pitch `ldc`, whole panels (`b.padded_n()` columns).
///
/// # Panics
/// When `b` was packed for another vector width or an operand is too short for its shape.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm<S: Simd>(
    s: S,
    m: usize,
    a: &[f32],
    lda: usize,
    b: &PackedB,
    c: &mut [f32],
    ldc: usize,
    accumulate: bool,
) {
    let (k, width) = (b.k, b.padded_n());
    if m == 0 || width == 0 {
        return;
    }
    assert!(
        b.panel == 2 * S::LANES
            && lda >= k
            && ldc >= width
            && a.len() >= (m - 1) * lda + k
            && c.len() >= (m - 1) * ldc + width,
        "gemm operands do not fit their shapes"
    );
    if k == 0 {
        if !accumulate {
            c.chunks_mut(ldc)
                .take(m)
                .for_each(|row| row[..width].fill(0.0));
        }
        return;
    }
    for (j, panel) in b.data.chunks_exact(k * b.panel).enumerate() {
        let mut i = 0;
        while i < m {
            let rows = (m - i).min(S::MR);
            // SAFETY: rows i..i + rows of A hold k values each from `i * lda`, and of C
            // `width ≥ (j + 1) · panel` values from `i * ldc` (the assertion above); the panel
            // holds k rows of 2·LANES values.
            unsafe {
                block(
                    s,
                    rows,
                    k,
                    a.as_ptr().add(i * lda),
                    lda,
                    panel.as_ptr(),
                    c.as_mut_ptr().add(i * ldc + j * b.panel),
                    ldc,
                    accumulate,
                );
            }
            i += rows;
        }
    }
}

/// The micro-kernel for `rows` (1..=12) rows: a const-generic instance per row count, so that
/// the accumulators are registers.
///
/// # Safety
/// As [`micro`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn block<S: Simd>(
    s: S,
    rows: usize,
    k: usize,
    a: *const f32,
    lda: usize,
    b: *const f32,
    c: *mut f32,
    ldc: usize,
    accumulate: bool,
) {
    macro_rules! by_rows {
        ($($n:literal)*) => {
            match rows {
                // SAFETY: forwarded from the caller.
                $($n => unsafe { micro::<S, $n>(s, k, a, lda, b, c, ldc, accumulate) },)*
                _ => unreachable!("at most 12 rows per block"),
            }
        };
    }
    by_rows!(1 2 3 4 5 6 7 8 9 10 11 12)
}

/// `C[R × 2 vectors] = [C +] A[R × k] · panel[k × 2 vectors]`.
///
/// # Safety
/// `a` must be readable at `r * lda + kk` for r < R, kk < k; `b` for `2 * LANES * k` values;
/// `c` readable and writable for `2 * LANES` values at `r * ldc` for r < R.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn micro<S: Simd, const R: usize>(
    s: S,
    k: usize,
    a: *const f32,
    lda: usize,
    b: *const f32,
    c: *mut f32,
    ldc: usize,
    accumulate: bool,
) {
    let l = S::LANES;
    let mut acc = [[s.zero(); 2]; R];
    if accumulate {
        for (r, row) in acc.iter_mut().enumerate() {
            // SAFETY: the caller's bounds for C.
            unsafe {
                row[0] = s.load_ptr(c.add(r * ldc));
                row[1] = s.load_ptr(c.add(r * ldc + l));
            }
        }
    }
    for kk in 0..k {
        // SAFETY: the caller's bounds for the panel and A.
        unsafe {
            let b0 = s.load_ptr(b.add(kk * 2 * l));
            let b1 = s.load_ptr(b.add(kk * 2 * l + l));
            for (r, row) in acc.iter_mut().enumerate() {
                let x = s.splat(*a.add(r * lda + kk));
                row[0] = s.mul_add(x, b0, row[0]);
                row[1] = s.mul_add(x, b1, row[1]);
            }
        }
    }
    for (r, row) in acc.iter().enumerate() {
        // SAFETY: the caller's bounds for C.
        unsafe {
            s.store_ptr(row[0], c.add(r * ldc));
            s.store_ptr(row[1], c.add(r * ldc + l));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::simd::testing::supported_levels;
    use super::super::simd::{dispatch, Kernel, Simd};
    use super::{gemm, PackedB};

    struct Product<'a> {
        m: usize,
        k: usize,
        n: usize,
        a: &'a [f32],
        lda: usize,
        c0: &'a [f32],
        accumulate: bool,
    }

    impl Kernel for Product<'_> {
        type Output = (Vec<f32>, usize);
        #[inline(always)]
        fn run<S: Simd>(self, s: S) -> (Vec<f32>, usize) {
            let (k, n) = (self.k, self.n);
            let b = PackedB::new(k, n, S::LANES, entry_b);
            let ldc = b.padded_n() + 3;
            let mut c = vec![0.0; self.m * ldc];
            for (row, init) in c.chunks_exact_mut(ldc).zip(self.c0.chunks_exact(n)) {
                row[..n].copy_from_slice(init);
            }
            gemm(
                s,
                self.m,
                self.a,
                self.lda,
                &b,
                &mut c,
                ldc,
                self.accumulate,
            );
            (c, ldc)
        }
    }

    /// Small integers: every product and sum is exact in f32, so any level must match exactly.
    fn entry_b(r: usize, c: usize) -> f32 {
        ((r * 7 + c * 3) % 11) as f32 - 5.0
    }

    #[test]
    fn products_are_exact_for_every_shape_and_level() {
        for isa in supported_levels() {
            for (m, k, n) in [(1, 1, 1), (13, 5, 33), (25, 64, 64), (7, 3, 65), (12, 0, 4)] {
                let lda = k + 2;
                let a: Vec<f32> = (0..m * lda).map(|i| ((i * 5) % 7) as f32 - 3.0).collect();
                let c0: Vec<f32> = (0..m * n).map(|i| (i % 5) as f32).collect();
                for accumulate in [false, true] {
                    let p = Product {
                        m,
                        k,
                        n,
                        a: &a,
                        lda,
                        c0: &c0,
                        accumulate,
                    };
                    let (c, ldc) = dispatch(isa, p);
                    for i in 0..m {
                        for j in 0..n {
                            let mut want = if accumulate { c0[i * n + j] } else { 0.0 };
                            for kk in 0..k {
                                want += a[i * lda + kk] * entry_b(kk, j);
                            }
                            assert_eq!(
                                c[i * ldc + j],
                                want,
                                "{isa} {m}x{k}x{n} accumulate {accumulate} at ({i}, {j})"
                            );
                        }
                    }
                }
            }
        }
    }
}
