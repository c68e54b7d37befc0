//! Convolution (+ bias, optional ReLU) on channels-last tensors.
//!
//! A k×k convolution over a zero-padded input is k² GEMMs accumulated into one buffer: with the
//! padded input stored row-major as (H+2p)×(W+2p) pixels of C channels, output pixel
//! q = y·(W+2p) + x of tap (ky, kx) reads input pixel q + ky·(W+2p) + kx, so every tap is a
//! `pixels × C_in` by `C_in × C_out` GEMM whose left operand is the padded buffer at a fixed
//! offset (no im2col copy; the 2p junk columns per row are computed and dropped). The output
//! rows are split into blocks processed in parallel with rayon; each block copies its padded
//! input rows into a worker-local buffer (so it stays in L2), runs its GEMMs single-threaded and
//! writes bias + ReLU into the output. This is the general path; a one-channel input (conv1a)
//! uses the direct kernel of [`super::direct`] and 3×3 convolutions with enough input channels
//! the Winograd kernel of [`super::winograd`].

use gemm::{gemm, Parallelism};
use rayon::prelude::*;
use superpoint_graph::ConvWeights;

use super::direct::{self, DirectWeights};
use super::packed::PackCache;
use super::tensor::Hwc;
use super::winograd::{self, WinogradWeights};

/// Target GEMM rows (pixels, junk columns included) per block: enough to amortise packing the
/// weights, few enough that a block's input rows and accumulators stay in a core's L2.
const BLOCK_PIXELS: usize = 768;
/// Blocks per worker thread at least, so that uneven block costs balance out.
const MIN_BLOCKS_PER_THREAD: usize = 4;
/// Input channels from which a 3×3 convolution runs as Winograd F(2×2, 3×3): below, the GEMMs
/// are too thin for the transforms to pay off.
const WINOGRAD_MIN_CHANNELS: usize = 16;

/// A convolution's weights in the form its kernel reads.
#[derive(Debug)]
pub(crate) enum Packed {
    /// One input channel: the direct kernel's lanes.
    Direct(DirectWeights),
    /// 3×3 with enough input channels: the Winograd-transformed weights.
    Winograd(WinogradWeights),
    /// Anything else: the shifted GEMMs' k² `C_in × C_out` matrices.
    Taps(Vec<f32>),
}

impl Packed {
    /// The kernel for `w` applied to an input with `channels` channels, and its packed weights.
    pub(crate) fn new(w: &ConvWeights, channels: usize) -> Self {
        // Like the reference, use the first min(C_in, channels of x) input channels.
        let cin = w.in_channels.min(channels);
        if channels == 1 && cin == 1 {
            Self::Direct(DirectWeights::new(w))
        } else if w.kernel == 3 && cin >= WINOGRAD_MIN_CHANNELS {
            Self::Winograd(WinogradWeights::new(w, cin))
        } else {
            Self::Taps(pack_taps(w, cin))
        }
    }
}

/// The convolution of `x` with `w` (stride 1, `pad` zero pixels on every side), with the
/// weights packed once per weight tensor in `cache`.
pub(crate) fn conv2d(x: &Hwc, w: &ConvWeights, pad: usize, relu: bool, cache: &PackCache) -> Hwc {
    let packed = cache.get(w, x.channels());
    run(x, w, &packed, pad, relu)
}

/// The convolution of `x` with `w` by the kernel `packed` was made for.
pub(crate) fn run(x: &Hwc, w: &ConvWeights, packed: &Packed, pad: usize, relu: bool) -> Hwc {
    let epilogue = Epilogue {
        bias: &w.bias,
        relu,
    };
    match packed {
        Packed::Direct(d) => direct::conv2d(x, d, pad, &epilogue),
        Packed::Winograd(u) => winograd::conv3x3(x, u, pad, &epilogue),
        Packed::Taps(taps) => shifted_gemm(x, w, taps, pad, &epilogue),
    }
}

/// The convolution as k² GEMMs over the padded input (the module documentation).
fn shifted_gemm(
    x: &Hwc,
    w: &ConvWeights,
    taps: &[f32],
    pad: usize,
    epilogue: &Epilogue<'_>,
) -> Hwc {
    let k = w.kernel;
    let geometry = Geometry::new(x, k, pad);
    let cout = w.out_channels;
    if k == 0 {
        return Hwc::zeros(cout, geometry.out_h, geometry.out_w);
    }
    let mut out = Hwc::for_overwrite(cout, geometry.out_h, geometry.out_w);
    if out.data().is_empty() {
        return out;
    }
    let cin = w.in_channels.min(x.channels());
    let rows = geometry.rows_per_block();
    let block_len = rows * geometry.out_w * cout;
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
                    cout,
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
                    epilogue.apply(0, o, a);
                }
            }
        });
    out
}

/// Sizes of one convolution: input, padded input and output.
pub(crate) struct Geometry {
    pub(crate) k: usize,
    pub(crate) pad: usize,
    pub(crate) in_h: usize,
    pub(crate) in_w: usize,
    /// Padded input width: the row pitch of the GEMM's left operand.
    pub(crate) pw: usize,
    pub(crate) out_h: usize,
    pub(crate) out_w: usize,
}

impl Geometry {
    pub(crate) fn new(x: &Hwc, k: usize, pad: usize) -> Self {
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
    pub(crate) fn rows_per_block(&self) -> usize {
        let by_size = BLOCK_PIXELS.div_ceil(self.pw.max(1));
        let by_balance = self
            .out_h
            .div_ceil(MIN_BLOCKS_PER_THREAD * rayon::current_num_threads().max(1));
        by_size.min(by_balance).max(1)
    }

    /// Fills `buf` with the zero-padded input rows that output rows `y0..y0 + r` read:
    /// `(r + k - 1)` rows of `pw` pixels, plus `k` zero pixels so the last tap's junk columns
    /// stay in bounds.
    pub(crate) fn padded_rows(&self, x: &Hwc, y0: usize, r: usize, buf: &mut Vec<f32>) {
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
pub(crate) struct Epilogue<'a> {
    bias: &'a [f32],
    relu: bool,
}

impl Epilogue<'_> {
    /// `out = act(acc + bias)` for the channels from `first` on.
    #[inline]
    pub(crate) fn apply(&self, first: usize, out: &mut [f32], acc: &[f32]) {
        let it = out.iter_mut().zip(acc).zip(&self.bias[first..]);
        if self.relu {
            it.for_each(|((o, &a), &b)| *o = (a + b).max(0.0));
        } else {
            it.for_each(|((o, &a), &b)| *o = a + b);
        }
    }
}

/// The weights as k² matrices `C_in × C_out` (row-major), tap (ky, kx) at index ky·k + kx.
fn pack_taps(w: &ConvWeights, cin: usize) -> Vec<f32> {
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

/// `dst (m×n, row pitch dst_rs) = [dst +] lhs (m×k, row pitch lhs_rs) · rhs (k×n)`, all
/// row-major, on this thread.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_rows(
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [f32],
    dst_rs: usize,
    lhs: &[f32],
    lhs_rs: usize,
    rhs: &[f32],
    accumulate: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(
        n <= dst_rs
            && dst.len() >= (m - 1) * dst_rs + n
            && rhs.len() >= k * n
            && (k == 0 || lhs.len() >= (m - 1) * lhs_rs + k),
        "gemm operands out of bounds"
    );
    // SAFETY: the assertion above keeps every element the GEMM reads or writes inside the
    // slices (dst m×n with row stride dst_rs ≥ n; lhs rows at stride lhs_rs, k columns; rhs k×n), and
    // `dst` is a unique borrow that aliases neither operand.
    unsafe {
        gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            dst_rs as isize,
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

/// Checks shared by the tests of the convolution kernels: each path against the reference
/// evaluator and against the shifted-GEMM path, on random inputs.
#[cfg(test)]
pub(crate) mod testing {
    use superpoint_graph::reference;
    use superpoint_graph::{ConvWeights, Tensor};

    use super::{pack_taps, run, Hwc, Packed};

    /// Largest |difference| allowed (the same bound as the backend-level conv test).
    const TOLERANCE: f32 = 1e-5;

    /// A deterministic generator (xorshift64*), uniform in [−1, 1).
    pub(crate) struct Rng(u64);

    impl Rng {
        pub(crate) fn new(seed: u64) -> Self {
            Self(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
        }
        fn signed(&mut self) -> f32 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let u = (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32;
            2.0 * u - 1.0
        }
        pub(crate) fn tensor(&mut self, c: usize, h: usize, w: usize) -> Tensor<f32> {
            let data = (0..c * h * w).map(|_| self.signed()).collect();
            Tensor::from_vec(c, h, w, data).expect("consistent shape")
        }
        pub(crate) fn conv(&mut self, cin: usize, cout: usize, k: usize) -> ConvWeights {
            let scale = (2.0 / (cin * k * k) as f32).sqrt();
            ConvWeights {
                out_channels: cout,
                in_channels: cin,
                kernel: k,
                weight: (0..cout * cin * k * k)
                    .map(|_| scale * self.signed())
                    .collect(),
                bias: (0..cout).map(|_| 0.1 * self.signed()).collect(),
            }
        }
    }

    fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
        assert_eq!(a.len(), b.len());
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max)
    }

    /// Runs `packed` (made for `w`) on `x` and compares it with the reference evaluator and with
    /// the shifted-GEMM path, with and without ReLU.
    pub(crate) fn check(x: &Tensor<f32>, w: &ConvWeights, packed: &Packed, pad: usize) {
        let hwc = Hwc::from_planar(x);
        let taps = Packed::Taps(pack_taps(w, w.in_channels.min(x.channels)));
        for relu in [false, true] {
            let want = reference::conv::conv2d(x, w, pad, relu);
            let got = run(&hwc, w, packed, pad, relu).to_planar();
            let what = format!(
                "{}->{} k{} on {}x{} pad {pad} relu {relu}",
                w.in_channels, w.out_channels, w.kernel, x.height, x.width
            );
            assert_eq!(
                (got.channels, got.height, got.width),
                (want.channels, want.height, want.width),
                "{what}: shape"
            );
            let diff = max_abs_diff(&got.data, &want.data);
            assert!(
                diff <= TOLERANCE,
                "{what}: max diff {diff} vs the reference"
            );
            let shifted = run(&hwc, w, &taps, pad, relu).to_planar();
            let diff = max_abs_diff(&got.data, &shifted.data);
            assert!(
                diff <= TOLERANCE,
                "{what}: max diff {diff} vs shifted GEMMs"
            );
        }
    }
}
