//! Convolution (+ bias, optional ReLU, optionally followed by a 2×2 max-pool) on channels-last
//! tensors: the choice of kernel, and the general kernel, shifted GEMMs.
//!
//! A k×k convolution over a zero-padded input is k² GEMMs accumulated into one buffer: with the
//! padded input stored row-major as (H+2p)×(W+2p) pixels of C channels, output pixel
//! q = y·(W+2p) + x of tap (ky, kx) reads input pixel q + ky·(W+2p) + kx, so every tap is a
//! `pixels × C_in` by `C_in × C_out` GEMM ([`super::gemm`]) whose left operand is the padded
//! buffer at a fixed offset (no im2col copy; the 2p junk columns per row are computed and
//! dropped). The output rows are split into blocks processed in parallel; each block copies its
//! padded input rows into a worker-local buffer (a 1×1 convolution reads its input in place),
//! runs its GEMMs and writes bias + ReLU into the output. This is the path of the 1×1 heads
//! and of small shapes; a one-channel input (conv1a) uses the direct kernel of [`super::direct`]
//! and 3×3 convolutions with enough input channels the Winograd kernel of [`super::winograd`],
//! which also fuses a following 2×2 max-pool.

use std::cell::RefCell;

use rayon::prelude::*;
use superpoint_graph::{ConvStep, ConvWeights, Tensor};

use super::direct::{self, DirectSource, DirectWeights};
use super::gemm::{gemm, PackedB};
use super::isa::Isa;
use super::packed::PackCache;
use super::pool;
use super::recycle;
use super::simd::{dispatch, lanes, Kernel, Simd};
use super::tensor::Hwc;
use super::winograd::{self, WinogradWeights};

/// Target GEMM rows (pixels, junk columns included) per block: enough to amortise the
/// weights' trips through L1, few enough that a block's input rows and accumulators stay in L2.
const BLOCK_PIXELS: usize = 768;
/// Blocks per worker thread at least, so that uneven block costs balance out.
const MIN_BLOCKS_PER_THREAD: usize = 4;
/// Input channels from which a 3×3 convolution runs as Winograd F(4×4, 3×3): below, the GEMMs
/// are too thin for the transforms to pay off.
const WINOGRAD_MIN_CHANNELS: usize = 16;

/// The kernel a convolution runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Path {
    /// One input channel: the direct kernel.
    Direct,
    /// 3×3 with enough input channels: Winograd F(4×4, 3×3).
    Winograd,
    /// Anything else: shifted GEMMs.
    Taps,
}

impl Path {
    /// The kernel for `w` applied to an input with `channels` channels.
    pub(crate) fn of(w: &ConvWeights, channels: usize) -> Self {
        // Like the reference, use the first min(C_in, channels of x) input channels.
        let cin = w.in_channels.min(channels);
        if channels == 1 && cin == 1 {
            Self::Direct
        } else if w.kernel == 3 && cin >= WINOGRAD_MIN_CHANNELS {
            Self::Winograd
        } else {
            Self::Taps
        }
    }
}

/// A convolution's weights in the form its kernel reads, for one instruction-set level.
#[derive(Debug)]
pub(crate) enum Packed {
    Direct(DirectWeights),
    Winograd(WinogradWeights),
    /// The shifted GEMMs' k² `C_in × C_out` matrices, tap (ky, kx) at ky·k + kx.
    Taps(Vec<PackedB>),
}

impl Packed {
    /// The packed weights of `w` for an input with `channels` channels, at level `isa`.
    pub(crate) fn new(isa: Isa, w: &ConvWeights, channels: usize) -> Self {
        let cin = w.in_channels.min(channels);
        let lanes = lanes(isa);
        match Path::of(w, channels) {
            Path::Direct => Self::Direct(DirectWeights::new(w, lanes)),
            Path::Winograd => Self::Winograd(WinogradWeights::new(w, cin, lanes)),
            Path::Taps => Self::Taps(pack_taps(w, cin, lanes)),
        }
    }
}

/// The convolution of `x` with `w` (stride 1, `pad` zero pixels on every side), then the 2×2
/// max-pool when `pool` is set, with the weights packed once per weight tensor in `cache`.
pub(crate) fn conv2d(
    isa: Isa,
    x: &Hwc,
    w: &ConvWeights,
    pad: usize,
    relu: bool,
    pool: bool,
    cache: &PackCache,
) -> Hwc {
    let packed = cache.get(isa, w, x.channels());
    run(isa, x, w, &packed, pad, relu, pool)
}

/// `second(first(x))`, then the 2×2 max-pool when `pool`, in one pass when `first` is a 3×3
/// convolution of a one-channel `x` (the direct kernel) and `second` a Winograd convolution of
/// all its channels: the first is computed inside the second's input transform
/// ([`direct::DirectSource`]), bit-identical to running them one by one. `None` for other
/// pairs.
pub(crate) fn chain(
    isa: Isa,
    x: &Hwc,
    first: ConvStep<'_>,
    second: ConvStep<'_>,
    pool: bool,
    cache: &PackCache,
) -> Option<Hwc> {
    let mid = first.weights.out_channels;
    if second.weights.in_channels != mid {
        return None;
    }
    let direct = cache.get(isa, first.weights, x.channels());
    let Packed::Direct(d) = &*direct else {
        return None;
    };
    let winograd = cache.get(isa, second.weights, mid);
    let Packed::Winograd(u) = &*winograd else {
        return None;
    };
    let conv1 = Epilogue {
        bias: &first.weights.bias,
        relu: first.relu,
    };
    let conv2 = Epilogue {
        bias: &second.weights.bias,
        relu: second.relu,
    };
    let source = DirectSource::new(x, d, first.pad, conv1)?;
    Some(winograd::conv3x3(isa, &source, u, second.pad, &conv2, pool))
}

/// The convolution of `x` with `w` by the kernel `packed` was made for (at level `isa`), then
/// the 2×2 max-pool when `pool` is set (fused into the Winograd kernel).
pub(crate) fn run(
    isa: Isa,
    x: &Hwc,
    w: &ConvWeights,
    packed: &Packed,
    pad: usize,
    relu: bool,
    pool: bool,
) -> Hwc {
    let epilogue = Epilogue {
        bias: &w.bias,
        relu,
    };
    let full = match packed {
        Packed::Winograd(u) => return winograd::conv3x3(isa, x, u, pad, &epilogue, pool),
        Packed::Direct(d) => direct::conv2d(isa, x, d, pad, &epilogue),
        Packed::Taps(taps) => shifted_gemm(isa, x, w, taps, pad, &epilogue),
    };
    if pool {
        pool::max_pool2(isa, &full)
    } else {
        full
    }
}

/// The largest error the CPU backend's convolution of `x` with `w` (`pad` zero pixels) may
/// have at each output element, before ReLU and pooling, in the planar layout of the reference
/// convolution: the Winograd bound of [`winograd`]'s module documentation for the Winograd
/// path, and for the direct and GEMM paths, whose every output is a sum of the C_in·k² products
/// and the bias, γₙ · (Σ|w·x| + |bias|) with n = 2·C_in·k² + 2 roundings (a multiply-add
/// counted as two).
pub fn error_bound(x: &Tensor<f32>, w: &ConvWeights, pad: usize) -> Tensor<f32> {
    if Path::of(w, x.channels) == Path::Winograd {
        return winograd::error_bound(x, w, pad);
    }
    let cin = w.in_channels.min(x.channels);
    let k = w.kernel;
    let out_h = (x.height + 2 * pad + 1).saturating_sub(k);
    let out_w = (x.width + 2 * pad + 1).saturating_sub(k);
    let n = (2 * cin * k * k + 2) as f64;
    let u = f64::from(f32::EPSILON) / 2.0;
    let gamma = n * u / (1.0 - n * u);
    let mut data = vec![0.0f32; w.out_channels * out_h * out_w];
    for o in 0..w.out_channels {
        for oy in 0..out_h {
            for ox in 0..out_w {
                let mut sum = f64::from(w.bias[o]).abs();
                for i in 0..cin {
                    for ky in 0..k {
                        for kx in 0..k {
                            let (y, xx) =
                                ((oy + ky).wrapping_sub(pad), (ox + kx).wrapping_sub(pad));
                            if y < x.height && xx < x.width {
                                let v = x.data[(i * x.height + y) * x.width + xx];
                                sum += f64::from(w.at(o, i, ky, kx) * v).abs();
                            }
                        }
                    }
                }
                data[(o * out_h + oy) * out_w + ox] = (gamma * sum) as f32;
            }
        }
    }
    Tensor {
        channels: w.out_channels,
        height: out_h,
        width: out_w,
        data,
    }
}

/// The convolution as k² GEMMs over the padded input (the module documentation).
fn shifted_gemm(
    isa: Isa,
    x: &Hwc,
    w: &ConvWeights,
    taps: &[PackedB],
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
    let rows = geometry.rows_per_block();
    let block_len = rows * geometry.out_w * cout;
    out.data_mut()
        .par_chunks_mut(block_len)
        .enumerate()
        .for_each(|(b, block)| {
            // Nothing in a block calls into rayon, so the borrow is never taken twice.
            SCRATCH.with_borrow_mut(|scratch| {
                dispatch(
                    isa,
                    TapsBlock {
                        x,
                        geometry: &geometry,
                        taps,
                        epilogue,
                        y0: b * rows,
                        block,
                        scratch,
                    },
                )
            });
        });
    out
}

thread_local! {
    /// Each worker thread's buffers, kept from block to block (rayon's `for_each_init` would
    /// make new ones, zeroed, for every split of the work).
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// One block of output rows of the shifted-GEMM path.
struct TapsBlock<'a> {
    x: &'a Hwc,
    geometry: &'a Geometry,
    taps: &'a [PackedB],
    epilogue: &'a Epilogue<'a>,
    /// The block's first output row.
    y0: usize,
    block: &'a mut [f32],
    scratch: &'a mut Scratch,
}

impl Kernel for TapsBlock<'_> {
    type Output = ();

    #[inline(always)]
    fn run<S: Simd>(self, s: S) {
        let g = self.geometry;
        let (c, cout) = (self.x.channels(), self.epilogue.bias.len());
        let r = self.block.len() / (g.out_w * cout);
        let m = r * g.pw;
        let width = self.taps[0].padded_n();
        let input: &[f32] = if g.k == 1 && g.pad == 0 {
            // A 1×1 convolution reads the input rows in place.
            let n = g.pw * c;
            &self.x.data()[self.y0 * n..(self.y0 + r) * n]
        } else {
            g.padded_rows(self.x, self.y0, r, &mut self.scratch.input);
            &self.scratch.input
        };
        let acc = recycle::scratch(&mut self.scratch.acc, m * width);
        for (tap, b) in self.taps.iter().enumerate() {
            let (ky, kx) = (tap / g.k, tap % g.k);
            let offset = (ky * g.pw + kx) * c;
            gemm(s, m, &input[offset..], c, b, acc, width, tap > 0);
        }
        for (yy, out_row) in self.block.chunks_exact_mut(g.out_w * cout).enumerate() {
            for (xx, o) in out_row.chunks_exact_mut(cout).enumerate() {
                let a = &acc[(yy * g.pw + xx) * width..];
                self.epilogue.apply(s, o, a);
            }
        }
    }
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
    pub(crate) bias: &'a [f32],
    pub(crate) relu: bool,
}

impl Epilogue<'_> {
    /// `act(acc + bias)` of the vector of channels `first..first + LANES` (the lanes past the
    /// last channel get no bias).
    #[inline(always)]
    pub(crate) fn vector<S: Simd>(&self, s: S, first: usize, acc: S::V) -> S::V {
        self.finish(s, self.bias_vector(s, first), acc)
    }

    /// The bias of channels `first..first + LANES` (zero past the last channel).
    #[inline(always)]
    pub(crate) fn bias_vector<S: Simd>(&self, s: S, first: usize) -> S::V {
        let rest = &self.bias[first..];
        if rest.len() >= S::LANES {
            s.load(rest)
        } else {
            s.load_partial(rest)
        }
    }

    /// `act(acc + bias)`, with `bias` from [`Self::bias_vector`].
    #[inline(always)]
    pub(crate) fn finish<S: Simd>(&self, s: S, bias: S::V, acc: S::V) -> S::V {
        let v = s.add(acc, bias);
        if self.relu {
            s.max(v, s.zero())
        } else {
            v
        }
    }

    /// `out = act(acc + bias)` for every channel of one pixel (`acc` holds at least as many
    /// values, in whole vectors).
    #[inline(always)]
    pub(crate) fn apply<S: Simd>(&self, s: S, out: &mut [f32], acc: &[f32]) {
        for first in (0..out.len()).step_by(S::LANES) {
            let v = self.vector(s, first, s.load(&acc[first..]));
            let dst = &mut out[first..];
            if dst.len() >= S::LANES {
                s.store(v, dst);
            } else {
                s.store_partial(v, dst);
            }
        }
    }
}

/// An output buffer that parallel workers write disjoint parts of.
pub(crate) struct OutPtr {
    ptr: *mut f32,
    len: usize,
}

// SAFETY: the pointer is only used through `slice`, whose callers write disjoint elements.
unsafe impl Send for OutPtr {}
// SAFETY: as above.
unsafe impl Sync for OutPtr {}

impl OutPtr {
    pub(crate) fn new(out: &mut [f32]) -> Self {
        Self {
            ptr: out.as_mut_ptr(),
            len: out.len(),
        }
    }

    /// A pointer to element `at` of the buffer, for writes to elements below `at + n` only.
    ///
    /// # Panics
    /// When the range is out of bounds.
    pub(crate) fn range(&self, at: usize, n: usize) -> *mut f32 {
        assert!(at + n <= self.len, "output range out of bounds");
        self.ptr.wrapping_add(at)
    }

    /// Elements `at..at + n` of the buffer.
    ///
    /// # Safety
    /// No other live reference may cover any of these elements, and the buffer must outlive
    /// the slice.
    ///
    /// # Panics
    /// When the range is out of bounds.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn slice(&self, at: usize, n: usize) -> &mut [f32] {
        assert!(at + n <= self.len, "output slice out of bounds");
        // SAFETY: in bounds (checked); exclusive by the caller's guarantee.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(at), n) }
    }
}

/// The weights as k² packed matrices `C_in × C_out`, tap (ky, kx) at index ky·k + kx.
fn pack_taps(w: &ConvWeights, cin: usize, lanes: usize) -> Vec<PackedB> {
    let k = w.kernel;
    (0..k * k)
        .map(|tap| {
            PackedB::new(cin, w.out_channels, lanes, |i, o| {
                w.at(o, i, tap / k, tap % k)
            })
        })
        .collect()
}

/// Checks shared by the tests of the convolution kernels: each path against the reference
/// evaluator, within the error bound of [`error_bound`], on random inputs.
#[cfg(test)]
pub(crate) mod testing {
    use superpoint_graph::reference;
    use superpoint_graph::{ConvWeights, Tensor};

    use super::{error_bound, run, Hwc, Isa, Packed};

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

    /// The first element where `got` is further from `want` than `bound` allows.
    pub(crate) fn outside_bound(got: &[f32], want: &[f32], bound: &[f32]) -> Option<String> {
        assert_eq!((got.len(), want.len()), (bound.len(), bound.len()));
        (0..got.len())
            .find(|&i| (got[i] - want[i]).abs() > bound[i])
            .map(|i| {
                format!(
                    "element {i}: {} vs {}, difference {:e} > bound {:e}",
                    got[i],
                    want[i],
                    (got[i] - want[i]).abs(),
                    bound[i]
                )
            })
    }

    /// Runs `packed` (made for `w` at level `isa`) on `x` and compares it with the reference
    /// evaluator within the error bound, with and without ReLU (ReLU only shrinks errors).
    pub(crate) fn check(isa: Isa, x: &Tensor<f32>, w: &ConvWeights, packed: &Packed, pad: usize) {
        let hwc = Hwc::from_planar(x);
        let bound = error_bound(x, w, pad);
        for relu in [false, true] {
            let want = reference::conv::conv2d(x, w, pad, relu);
            let got = run(isa, &hwc, w, packed, pad, relu, false).to_planar();
            let what = format!(
                "{isa}: {}->{} k{} on {}x{} pad {pad} relu {relu}",
                w.in_channels, w.out_channels, w.kernel, x.height, x.width
            );
            assert_eq!(
                (got.channels, got.height, got.width),
                (want.channels, want.height, want.width),
                "{what}: shape"
            );
            if let Some(e) = outside_bound(&got.data, &want.data, &bound.data) {
                panic!("{what}: {e}");
            }
        }
    }
}
