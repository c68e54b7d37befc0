//! The CPU backend: the graph's ops as fast f32 kernels on all cores.
//!
//! Dense values are channels-last ([`Hwc`]), so convolutions are GEMMs with pixels on the large
//! side (the `gemm` crate, single-threaded per block, blocks spread over the cores with rayon):
//! 3×3 convolutions with at least 16 input channels run as Winograd F(3×3, 3×3) ([`winograd`]),
//! the one-channel conv1a as a direct vectorised stencil ([`direct`]), the rest as shifted GEMMs
//! ([`conv`]). Weights are packed (and Winograd-transformed) once per model ([`packed`]), and
//! activation buffers are recycled between frames ([`recycle`]). The cheap ops with a
//! layout-compatible reference (resize, keypoint selection on the one-channel NMS map) call the
//! reference definitions directly; the others are reimplemented for the channels-last layout and
//! tested against the reference.

mod conv;
mod direct;
mod head;
mod nms;
mod packed;
mod pool;
mod recycle;
mod sample;
mod simd;
mod tensor;
mod winograd;

use superpoint_graph::reference::{resize, select};
use superpoint_graph::{ConvWeights, Kernels, Keypoint, Tensor};

use packed::PackCache;

pub use tensor::Hwc;

/// An upper bound of the bytes one frame of `width`×`height` allocates at once: the widest
/// layers (conv1a, conv1b) hold 64-channel f32 maps of the full frame, an input and an output,
/// plus the recycled buffers and scratch, within a third such map.
pub fn working_bytes(width: usize, height: usize) -> u64 {
    3 * 64 * 4 * (width * height) as u64
}

/// The CPU kernels. They run on rayon's global pool (all cores) unless built with
/// [`CpuKernels::with_threads`].
#[derive(Debug, Default)]
pub struct CpuKernels {
    pool: Option<rayon::ThreadPool>,
    packed: PackCache,
}

impl CpuKernels {
    /// Kernels on rayon's global thread pool (one thread per core unless `RAYON_NUM_THREADS`
    /// says otherwise).
    pub fn new() -> Self {
        Self::default()
    }

    /// Kernels on a pool of their own with `threads` threads (0 = one per core).
    pub fn with_threads(threads: usize) -> Result<Self, rayon::ThreadPoolBuildError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("superpoint-cpu-{i}"))
            .build()?;
        Ok(Self {
            pool: Some(pool),
            packed: PackCache::default(),
        })
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
        Hwc::from_single_plane(resize::to_unit_range(&resize::pillow_bilinear(
            input, width, height,
        )))
    }
    fn conv2d(&self, x: &Hwc, w: &ConvWeights, pad: usize, relu: bool) -> Hwc {
        self.run(|| conv::conv2d(x, w, pad, relu, &self.packed))
    }
    fn max_pool2(&self, x: &Hwc) -> Hwc {
        self.run(|| pool::max_pool2(x))
    }
    fn softmax(&self, x: &Hwc) -> Hwc {
        self.run(|| head::softmax(x))
    }
    fn dustbin_fold(&self, x: &Hwc, cell: usize) -> Hwc {
        self.run(|| head::dustbin_fold(x, cell))
    }
    fn nms(&self, x: &Hwc, radius: usize) -> Hwc {
        self.run(|| nms::nms(x, radius))
    }
    fn l2_normalize(&self, x: &Hwc) -> Hwc {
        self.run(|| head::l2_normalize(x))
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
        sample::sample_descriptors(x, keypoints, cell)
    }
    fn channels(&self, x: &Hwc) -> usize {
        x.channels()
    }
    fn to_planar(&self, x: &Hwc) -> Tensor<f32> {
        x.to_planar()
    }
}
