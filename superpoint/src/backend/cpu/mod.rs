//! The CPU backend: the graph's ops as fast f32 kernels on all cores.
//!
//! Every hot kernel is written once over the vector operations of [`simd`] and runs at the
//! instruction-set level chosen at run time ([`isa`]: AVX-512, AVX2 + FMA or portable code;
//! `SUPERPOINT_CPU_ISA` forces a lower one). Dense values are channels-last ([`Hwc`]), so
//! convolutions are GEMMs with pixels on the large side ([`gemm`]'s register-blocked
//! micro-kernel, one block per task, tasks spread over the cores with rayon): 3×3 convolutions
//! with at least 16 input channels run as Winograd F(4×4, 3×3) ([`winograd`], which also fuses
//! the 2×2 max-pool after conv1b, conv2b and conv3b), the one-channel conv1a as a direct
//! vectorised stencil ([`direct`]) computed inside conv1b's input transform (the executor's
//! `conv2d_chain`; its 64-channel full-resolution output is never stored), the rest as shifted
//! GEMMs ([`conv`]). Weights are packed
//! (and Winograd-transformed) once per model and level ([`packed`]), and activation buffers are
//! recycled between frames ([`recycle`]). Pillow's resize is the reference's, bit for bit, in
//! parallel vectorised passes ([`resize`]). Keypoint selection on the one-channel NMS map calls
//! the reference definition directly; the other ops are reimplemented for the channels-last
//! layout and tested against the reference.

mod conv;
mod direct;
mod gemm;
mod head;
mod isa;
mod nms;
mod packed;
mod pool;
mod recycle;
mod resize;
mod sample;
mod simd;
mod tensor;
mod winograd;

use superpoint_graph::reference::select;
use superpoint_graph::{ConvStep, ConvWeights, Kernels, Keypoint, Tensor};

use packed::PackCache;

pub use conv::error_bound;
pub use isa::{Isa, IsaError, ISA_ENV};
pub(crate) use simd::compiled_for;
pub use tensor::Hwc;

/// An upper bound of the bytes one frame of `width`×`height` allocates at once: the widest
/// layers (conv1a, conv1b) hold 64-channel f32 maps of the full frame, an input and an output,
/// plus the recycled buffers and scratch, within a third such map.
pub fn working_bytes(width: usize, height: usize) -> u64 {
    3 * 64 * 4 * (width * height) as u64
}

/// The CPU kernels. They run on rayon's global pool (all cores) unless built with
/// [`CpuKernels::with_threads`], at one instruction-set level.
#[derive(Debug)]
pub struct CpuKernels {
    pool: Option<rayon::ThreadPool>,
    isa: Isa,
    packed: PackCache,
}

impl Default for CpuKernels {
    /// Kernels at the level [`ISA_ENV`] asks for, or the detected one when it is unset or
    /// names a level this CPU cannot run ([`Isa::from_env`] reports that as an error).
    fn default() -> Self {
        Self::with_isa(Isa::process())
    }
}

impl CpuKernels {
    /// Kernels on rayon's global thread pool (one thread per core unless `RAYON_NUM_THREADS`
    /// says otherwise), at the level of [`CpuKernels::default`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Kernels at `isa`, or at the best level below it that this CPU supports.
    pub fn with_isa(isa: Isa) -> Self {
        Self {
            pool: None,
            isa: isa.min(Isa::detected()),
            packed: PackCache::default(),
        }
    }

    /// These kernels on a pool of their own with `threads` threads (0 = one per core).
    pub fn with_threads(self, threads: usize) -> Result<Self, rayon::ThreadPoolBuildError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("superpoint-cpu-{i}"))
            .build()?;
        Ok(Self {
            pool: Some(pool),
            ..self
        })
    }

    /// The instruction-set level the kernels run at.
    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// Runs `f` on this backend's pool.
    fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(pool) => pool.install(f),
            None => f(),
        }
    }
}

impl Kernels for CpuKernels {
    type Dense = Hwc;

    fn resize(&self, input: &Tensor<u8>, width: usize, height: usize) -> Hwc {
        self.run(|| resize::resize_to_unit(self.isa, input, width, height))
    }
    fn conv2d(&self, x: &Hwc, w: &ConvWeights, pad: usize, relu: bool) -> Hwc {
        self.run(|| conv::conv2d(self.isa, x, w, pad, relu, false, &self.packed))
    }
    fn max_pool2(&self, x: &Hwc) -> Hwc {
        self.run(|| pool::max_pool2(self.isa, x))
    }
    fn conv2d_pool(&self, x: &Hwc, w: &ConvWeights, pad: usize, relu: bool) -> Hwc {
        self.run(|| conv::conv2d(self.isa, x, w, pad, relu, true, &self.packed))
    }
    fn conv2d_chain(
        &self,
        x: &Hwc,
        first: ConvStep<'_>,
        second: ConvStep<'_>,
        pool: bool,
    ) -> Option<Hwc> {
        self.run(|| conv::chain(self.isa, x, first, second, pool, &self.packed))
    }
    fn softmax(&self, x: &Hwc) -> Hwc {
        self.run(|| head::softmax(self.isa, x))
    }
    fn dustbin_fold(&self, x: &Hwc, cell: usize) -> Hwc {
        self.run(|| head::dustbin_fold(self.isa, x, cell))
    }
    fn nms(&self, x: &Hwc, radius: usize) -> Hwc {
        self.run(|| nms::nms(self.isa, x, radius))
    }
    fn l2_normalize(&self, x: &Hwc) -> Hwc {
        self.run(|| head::l2_normalize(self.isa, x))
    }
    fn select_keypoints(
        &self,
        x: &Hwc,
        threshold: f32,
        border: usize,
        max_keypoints: i64,
    ) -> Vec<Keypoint> {
        // The reference reads channel 0 of a planar map; for one channel that is our layout.
        select::select_keypoints(&x.to_planar(), threshold, border, max_keypoints)
    }
    fn sample_descriptors(&self, x: &Hwc, keypoints: &[Keypoint], cell: usize) -> Vec<f32> {
        self.run(|| sample::sample_descriptors(self.isa, x, keypoints, cell))
    }
    fn channels(&self, x: &Hwc) -> usize {
        x.channels()
    }
    fn to_planar(&self, x: &Hwc) -> Tensor<f32> {
        x.to_planar()
    }
}
