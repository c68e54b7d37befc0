//! `SuperPoint`: the model users hold. It owns the weights and a backend, and turns inputs into
//! [`Detection`]s: decode → graph (resize, network, NMS, selection, sampling) → rescale to
//! original pixels. One model can be shared by threads (`&SuperPoint` is `Sync`).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use superpoint_graph::{names, run, superpoint_with, Keypoint, Tensor, WeightSet};

use crate::backend::cpu::CpuKernels;
use crate::backend::Backend;
use crate::decode::decode_plane;
use crate::error::Result;
use crate::hub::{self, HubEnv, WeightsSource};
use crate::input::Input;
use crate::options::Options;
use crate::output::{Detection, Timing};
use crate::stream::DetectStream;
use crate::weights::load_safetensors;

/// A loaded SuperPoint model.
pub struct SuperPoint {
    weights: Arc<WeightSet>,
    source: WeightsSource,
    backend: Backend,
    kernels: CpuKernels,
    decode_workers: usize,
}

/// Configures a [`SuperPoint`] before loading it.
#[derive(Debug, Clone)]
pub struct Builder {
    weights: Option<std::path::PathBuf>,
    backend: Backend,
    decode_workers: usize,
    hub_env: Option<HubEnv>,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            weights: None,
            backend: Backend::Auto,
            decode_workers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
                .clamp(1, 4),
            hub_env: None,
        }
    }
}

impl Builder {
    /// Load the checkpoint from this safetensors file instead of the pretrained one.
    pub fn weights(mut self, path: impl AsRef<Path>) -> Self {
        self.weights = Some(path.as_ref().to_path_buf());
        self
    }

    /// Which backend runs the network (default: `Auto`).
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = backend;
        self
    }

    /// How many threads decode ahead for lists and streams (default: cores, at most 4).
    pub fn decode_workers(mut self, n: usize) -> Self {
        self.decode_workers = n.max(1);
        self
    }

    /// Where to look for the pretrained checkpoint (default: the process environment).
    pub fn hub_env(mut self, env: HubEnv) -> Self {
        self.hub_env = Some(env);
        self
    }

    /// Loads the weights and opens the backend.
    pub fn build(self) -> Result<SuperPoint> {
        let source = match self.weights {
            Some(path) => WeightsSource::File(path),
            None => hub::locate(&self.hub_env.unwrap_or_else(HubEnv::from_process))?,
        };
        let weights = load_safetensors(source.path())?;
        let backend = self.backend.resolve()?;
        Ok(SuperPoint {
            weights: Arc::new(weights),
            source,
            backend,
            kernels: CpuKernels::new(),
            decode_workers: self.decode_workers,
        })
    }
}

impl SuperPoint {
    /// A builder for the model's configuration.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The pinned pretrained checkpoint from the HF cache, downloaded when absent and online.
    pub fn from_pretrained() -> Result<Self> {
        Self::builder().build()
    }

    /// The checkpoint in the safetensors file at `path` (HF or original tensor names).
    pub fn from_weights(path: impl AsRef<Path>) -> Result<Self> {
        Self::builder().weights(path).build()
    }

    /// Where the weights came from.
    pub fn weights_source(&self) -> &WeightsSource {
        &self.source
    }

    /// The backend that runs the network.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Keypoints, scores and descriptors of one image.
    pub fn detect<'a>(&self, input: impl Into<Input<'a>>, options: &Options) -> Result<Detection> {
        options.validate()?;
        let start = Instant::now();
        let plane = decode_plane(&input.into(), options.plane_spec())?;
        self.detect_plane(plane, options, start.elapsed())
    }

    /// One detection per input, in order; decoding runs ahead on worker threads.
    pub fn detect_all<'a, I>(&self, inputs: I, options: &Options) -> Vec<Result<Detection>>
    where
        I: IntoIterator,
        I::Item: Into<Input<'a>>,
    {
        let owned: Vec<Input<'static>> =
            inputs.into_iter().map(|i| i.into().into_owned()).collect();
        self.stream(owned, *options).collect()
    }

    /// Detections for a stream of inputs (e.g. video frames), in order. Up to a few inputs
    /// ahead are decoded on worker threads while the network runs on the current one.
    pub fn stream<I>(&self, inputs: I, options: Options) -> DetectStream<'_>
    where
        I: IntoIterator<Item = Input<'static>>,
        I::IntoIter: Send + 'static,
    {
        DetectStream::new(self, inputs.into_iter(), options, self.decode_workers)
    }

    /// Runs the graph on a decoded plane; `decode` is the time already spent decoding it.
    pub(crate) fn detect_plane(
        &self,
        plane: Tensor<u8>,
        options: &Options,
        decode: Duration,
    ) -> Result<Detection> {
        options.validate()?;
        let (w0, h0) = (plane.width, plane.height);
        let (w, h) = options.frame;
        let full = superpoint_with(&options.graph_params());
        let graph = if options.return_descriptors {
            full
        } else {
            full.pruned(&[names::KEYPOINTS])
        };
        let run_start = Instant::now();
        let values = run(&self.kernels, &graph, &self.weights, &plane, &[])?;
        let run_ms = millis(run_start.elapsed());
        let rescale_start = Instant::now();
        let keypoints: &[Keypoint] = values.keypoints(names::KEYPOINTS).unwrap_or(&[]);
        let (descriptor_dim, descriptors) = match values.descriptors(names::DESCRIPTORS) {
            Some((dim, data)) => (dim, Some(data.to_vec())),
            None => (0, None),
        };
        let sx = w0 as f64 / w as f64;
        let sy = h0 as f64 / h as f64;
        let points = keypoints
            .iter()
            .map(|k| [(k.x as f64 * sx) as f32, (k.y as f64 * sy) as f32])
            .collect();
        let scores = keypoints.iter().map(|k| k.score).collect();
        let rescale_ms = millis(rescale_start.elapsed());
        let node_ms = |wanted: &[&str]| -> f64 {
            values
                .timings
                .iter()
                .filter(|(n, _)| wanted.contains(&n.as_str()))
                .map(|(_, d)| millis(*d))
                .sum()
        };
        let resize_ms = node_ms(&[names::RESIZE]);
        let select_ms = node_ms(&[names::KEYPOINTS, names::DESCRIPTORS]);
        let decode_ms = millis(decode);
        Ok(Detection {
            keypoints: points,
            scores,
            descriptors,
            descriptor_dim,
            image_size: [w0, h0],
            frame_size: [w, h],
            scale: [sx as f32, sy as f32],
            backend: self.backend.name(),
            timing: Timing {
                preprocess: decode_ms + resize_ms,
                forward: (run_ms - resize_ms - select_ms).max(0.0),
                postprocess: select_ms + rescale_ms,
                total: decode_ms + run_ms + rescale_ms,
            },
        })
    }
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
