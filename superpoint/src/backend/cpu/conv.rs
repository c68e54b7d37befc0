//! Convolution (+ bias, optional ReLU) on channels-last tensors.
//!
//! A k×k convolution over a zero-padded input is k² GEMMs accumulated into one buffer: with the
//! padded input stored row-major as (H+2p)×(W+2p) pixels of C channels, output pixel
//! q = y·(W+2p) + x of tap (ky, kx) reads input pixel q + ky·(W+2p) + kx, so every tap is a
//! `pixels × C_in` by `C_in × C_out` GEMM whose left operand is the padded buffer at a fixed
//! offset (no im2col copy; the 2p junk columns per row are computed and dropped). The output
//! rows are split into blocks processed in parallel with rayon; each block copies its padded
//! input rows into a worker-local buffer (so it stays in L2), runs its GEMMs single-threaded and
//! writes bias + ReLU into the output. A one-channel input (conv1a) uses a direct kernel instead.

use gemm::{gemm, Parallelism};
use rayon::prelude::*;
use superpoint_graph::ConvWeights;

use super::tensor::Hwc;

/// Target GEMM rows (pixels, junk columns included) per block: enough to amortise packing the
/// weights, few enough that a block's input rows and accumulators stay in a core's L2.
const BLOCK_PIXELS: usize = 768;
/// Blocks per worker thread at least, so that uneven block costs balance out.
const MIN_BLOCKS_PER_THREAD: usize = 4;

/// The convolution of `x` with `w` (stride 1, `pad` zero pixels on every side).
pub(crate) fn conv2d(x: &Hwc, w: &ConvWeights, pad: usize, relu: bool) -> Hwc {
    let k = w.kernel;
    let geometry = Geometry::new(x, k, pad);
    let cout = w.out_channels;
    let mut out = Hwc::zeros(cout, geometry.out_h, geometry.out_w);
    if out.data().is_empty() || k == 0 {
        return out;
    }
    // Like the reference, use the first min(C_in, channels of x) input channels.
    let cin = w.in_channels.min(x.channels());
    let taps = pack_weights(w, cin);
    let rows = geometry.rows_per_block();
    let block_len = rows * geometry.out_w * cout;
    let epilogue = Epilogue {
        bias: &w.bias,
        relu,
    };
    if x.channels() == 1 && cin == 1 {
        out.data_mut()
            .par_chunks_mut(block_len)
            .enumerate()
            .for_each_init(Vec::new, |input, (b, block)| {
                let r = block.len() / (geometry.out_w * cout);
                geometry.padded_rows(x, b * rows, r, input);
                direct_single_channel(&geometry, input, &taps, cout, &epilogue, block);
            });
        return out;
    }
    out.data_mut()
        .par_chunks_mut(block_len)
        .enumerate()
        .for_each_init(Scratch::default, |s, (b, block)| {
            let r = block.len() / (geometry.out_w * cout);
            let c = x.channels();
            let m = r * geometry.pw;
            let input: &[f32] = if k == 1 && pad == 0 {
                // A 1×1 convolution reads the input rows in place.
                let n = geometry.pw * c;
                &x.data()[b * rows * n..(b * rows + r) * n]
            } else {
                geometry.padded_rows(x, b * rows, r, &mut s.input);
                &s.input
            };
            s.acc.resize(m * cout, 0.0);
            for tap in 0..k * k {
                let (ky, kx) = (tap / k, tap % k);
                let offset = (ky * geometry.pw + kx) * c;
                gemm_rows(
                    m,
                    cout,
                    cin,
                    &mut s.acc,
                    &input[offset..],
                    c,
                    &taps[tap * cin * cout..(tap + 1) * cin * cout],
                    tap > 0,
                );
            }
            for (yy, out_row) in block.chunks_exact_mut(geometry.out_w * cout).enumerate() {
                let acc_row = &s.acc[yy * geometry.pw * cout..][..geometry.out_w * cout];
                for (o, a) in out_row
                    .chunks_exact_mut(cout)
                    .zip(acc_row.chunks_exact(cout))
                {
                    epilogue.apply(o, a);
                }
            }
        });
    out
}

/// Sizes of one convolution: input, padded input and output.
struct Geometry {
    k: usize,
    pad: usize,
    in_h: usize,
    in_w: usize,
    /// Padded input width: the row pitch of the GEMM's left operand.
    pw: usize,
    out_h: usize,
    out_w: usize,
}

impl Geometry {
    fn new(x: &Hwc, k: usize, pad: usize) -> Self {
        let (ph, pw) = (x.height() + 2 * pad, x.width() + 2 * pad);
        Self {
            k,
            pad,
            in_h: x.height(),
            in_w: x.width(),
            pw,
            out_h: (ph + 1).saturating_sub(k),
            out_w: (pw + 1).saturating_sub(k),
        }
    }

    /// Output rows per parallel block.
    fn rows_per_block(&self) -> usize {
        let by_size = BLOCK_PIXELS.div_ceil(self.pw.max(1));
        let by_balance = self
            .out_h
            .div_ceil(MIN_BLOCKS_PER_THREAD * rayon::current_num_threads().max(1));
        by_size.min(by_balance).max(1)
    }

    /// Fills `buf` with the zero-padded input rows that output rows `y0..y0 + r` read:
    /// `(r + k - 1)` rows of `pw` pixels, plus `k` zero pixels so the last tap's junk columns
    /// stay in bounds.
    fn padded_rows(&self, x: &Hwc, y0: usize, r: usize, buf: &mut Vec<f32>) {
        let c = x.channels();
        let rows = r + self.k - 1;
        buf.clear();
        buf.resize((rows * self.pw + self.k) * c, 0.0);
        for j in 0..rows {
            let Some(sy) = (y0 + j).checked_sub(self.pad).filter(|&sy| sy < self.in_h) else {
                continue;
            };
            let start = (j * self.pw + self.pad) * c;
            buf[start..start + self.in_w * c].copy_from_slice(x.row(sy));
        }
    }
}

/// Per-worker buffers of the GEMM path.
#[derive(Default)]
struct Scratch {
    input: Vec<f32>,
    acc: Vec<f32>,
}

/// Bias and activation applied to the accumulators.
struct Epilogue<'a> {
    bias: &'a [f32],
    relu: bool,
}

impl Epilogue<'_> {
    #[inline]
    fn apply(&self, out: &mut [f32], acc: &[f32]) {
        let it = out.iter_mut().zip(acc).zip(self.bias);
        if self.relu {
            it.for_each(|((o, &a), &b)| *o = (a + b).max(0.0));
        } else {
            it.for_each(|((o, &a), &b)| *o = a + b);
        }
    }
}

/// The weights as k² matrices `C_in × C_out` (row-major), tap (ky, kx) at index ky·k + kx.
fn pack_weights(w: &ConvWeights, cin: usize) -> Vec<f32> {
    let (k, cout) = (w.kernel, w.out_channels);
    let mut taps = vec![0.0; k * k * cin * cout];
    for o in 0..cout {
        for i in 0..cin {
            for ky in 0..k {
                for kx in 0..k {
                    taps[((ky * k + kx) * cin + i) * cout + o] = w.at(o, i, ky, kx);
                }
            }
        }
    }
    taps
}

/// `dst (m×n) = [dst +] lhs (m×k, row pitch lhs_rs) · rhs (k×n)`, all row-major, on this thread.
#[allow(clippy::too_many_arguments)]
fn gemm_rows(
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [f32],
    lhs: &[f32],
    lhs_rs: usize,
    rhs: &[f32],
    accumulate: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(
        dst.len() >= m * n && rhs.len() >= k * n && (k == 0 || lhs.len() >= (m - 1) * lhs_rs + k),
        "gemm operands out of bounds"
    );
    // SAFETY: the assertion above keeps every element the GEMM reads or writes inside the
    // slices (dst m×n with row stride n; lhs rows at stride lhs_rs, k columns; rhs k×n), and
    // `dst` is a unique borrow that aliases neither operand.
    unsafe {
        gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            lhs.as_ptr(),
            1,
            lhs_rs as isize,
            rhs.as_ptr(),
            1,
            n as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            Parallelism::None,
        );
    }
}

/// The direct kernel for a one-channel input: each output pixel is bias + Σ_taps w·x over its
/// C_out contiguous channels.
fn direct_single_channel(
    g: &Geometry,
    input: &[f32],
    taps: &[f32],
    cout: usize,
    epilogue: &Epilogue<'_>,
    block: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports the features the function is compiled for.
        unsafe { direct_single_channel_avx2(g, input, taps, cout, epilogue, block) };
        return;
    }
    direct_single_channel_body(g, input, taps, cout, epilogue, block);
}

/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn direct_single_channel_avx2(
    g: &Geometry,
    input: &[f32],
    taps: &[f32],
    cout: usize,
    epilogue: &Epilogue<'_>,
    block: &mut [f32],
) {
    direct_single_channel_body(g, input, taps, cout, epilogue, block);
}

#[inline(always)]
fn direct_single_channel_body(
    g: &Geometry,
    input: &[f32],
    taps: &[f32],
    cout: usize,
    epilogue: &Epilogue<'_>,
    block: &mut [f32],
) {
    let k = g.k;
    let mut acc = vec![0.0f32; cout];
    for (yy, out_row) in block.chunks_exact_mut(g.out_w * cout).enumerate() {
        for (xx, o) in out_row.chunks_exact_mut(cout).enumerate() {
            acc.fill(0.0);
            for ky in 0..k {
                let src = &input[(yy + ky) * g.pw + xx..][..k];
                for (kx, &v) in src.iter().enumerate() {
                    let wt = &taps[(ky * k + kx) * cout..][..cout];
                    for (a, &wv) in acc.iter_mut().zip(wt) {
                        *a += wv * v;
                    }
                }
            }
            epilogue.apply(o, &acc);
        }
    }
}
