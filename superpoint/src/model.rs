//! `SuperPoint`: the model users hold. It owns the weights and a backend, and turns inputs into
//! [`Detection`]s: decode → graph (resize, network, NMS, selection, sampling) → rescale to
//! original pixels. One model can be shared by threads (`&SuperPoint` is `Sync`). On the Tensix
//! backend it runs on a pool of devices ([`DeviceSet`]) and warms variants up when built
//! ([`Warmup`]).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use superpoint_graph::{names, run, superpoint_with, Kernels, Tensor, WeightSet};

use crate::alloc::check_available;
use crate::backend::cpu::{self, CpuKernels, Isa};
use crate::backend::tensix::{
    DeviceSet, TensixBackend, TensixConfig, Warmup, WarmupProgress, WarmupVariant,
};
use crate::backend::{Backend, DenseMaps, FrameResult};
use crate::decode::{check_size, decode_plane};
use crate::error::{Error, Result};
use crate::hub::{self, HubEnv, WeightsSource};
use crate::input::Input;
use crate::options::Options;
use crate::output::{Detection, Timing};
use crate::stream::DetectStream;
use crate::weights::load_safetensors;

/// A loaded SuperPoint model.
pub struct SuperPoint {
    source: WeightsSource,
    runner: Runner,
    decode_workers: usize,
}

/// What runs a decoded plane through the graph; shared with the threads of a stream.
#[derive(Clone)]
pub(crate) struct Runner {
    weights: Arc<WeightSet>,
    backend: Backend,
    engine: Arc<Engine>,
}

/// What runs the graph: the CPU kernels, or the generated program on a pool of Tensix devices.
enum Engine {
    Cpu(CpuKernels),
    Tensix(TensixBackend),
}

/// Configures a [`SuperPoint`] before loading it.
#[derive(Clone)]
pub struct Builder {
    weights: Option<std::path::PathBuf>,
    backend: Backend,
    decode_workers: usize,
    hub_env: Option<HubEnv>,
    tensix: TensixConfig,
    devices: DeviceSet,
    warmup: Warmup,
    precompile: Vec<(usize, usize)>,
    frame: (usize, usize),
    progress: Option<Arc<WarmupProgress<'static>>>,
}

impl std::fmt::Debug for Builder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("weights", &self.weights)
            .field("backend", &self.backend)
            .field("decode_workers", &self.decode_workers)
            .field("hub_env", &self.hub_env)
            .field("tensix", &self.tensix)
            .field("devices", &self.devices)
            .field("warmup", &self.warmup)
            .field("precompile", &self.precompile)
            .field("frame", &self.frame)
            .field("progress", &self.progress.is_some())
            .finish()
    }
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
            tensix: TensixConfig::default(),
            devices: DeviceSet::default(),
            warmup: Warmup::default(),
            precompile: Vec::new(),
            frame: Options::default().frame,
            progress: None,
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

    /// How the Tensix backend runs (grid, traces); used when the backend resolves to Tensix.
    pub fn tensix(mut self, config: TensixConfig) -> Self {
        self.tensix = config;
        self
    }

    /// Which Tensix devices run the model (default: all); one model is loaded on each, and
    /// frames go to the least-loaded one.
    pub fn devices(mut self, devices: DeviceSet) -> Self {
        self.devices = devices;
        self
    }

    /// Which variants the Tensix backend prepares when the model is built (default: none; the
    /// port's `from_pretrained` prepares the common ones); the CPU backend has nothing to
    /// prepare.
    pub fn warmup(mut self, warmup: Warmup) -> Self {
        self.warmup = warmup;
        self
    }

    /// Input sizes (width, height) whose device resize is also prepared at build, at the
    /// default NMS radius (the port's `precompile_sizes`).
    pub fn precompile_sizes(mut self, sizes: impl IntoIterator<Item = (usize, usize)>) -> Self {
        self.precompile = sizes.into_iter().collect();
        self
    }

    /// The network frame warm-up prepares (default 640×480); detection calls still choose
    /// theirs with [`Options::frame`], so set both alike.
    pub fn frame(mut self, frame: (usize, usize)) -> Self {
        self.frame = frame;
        self
    }

    /// Called after each warm-up step at build (one variant on one device), e.g. for a
    /// progress bar; each step is also logged (`tracing`, level info).
    pub fn on_warmup(
        mut self,
        progress: impl Fn(&crate::WarmupStep) + Send + Sync + 'static,
    ) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// The variants the build prepares: the warm-up level's and the precompiled sizes, for the
    /// builder's frame.
    pub fn warmup_variants(&self) -> Vec<WarmupVariant> {
        self.warmup.variants(self.frame, &self.precompile)
    }

    /// Loads the weights, opens the backend (every device of the set) and warms the variants up.
    pub fn build(self) -> Result<SuperPoint> {
        Options {
            frame: self.frame,
            ..Options::default()
        }
        .validate()?;
        let variants = self.warmup_variants();
        let source = match self.weights {
            Some(path) => WeightsSource::File(path),
            None => hub::locate(&self.hub_env.unwrap_or_else(HubEnv::from_process))?,
        };
        let weights = load_safetensors(source.path())?;
        let backend = self.backend.resolve()?;
        let weights = Arc::new(weights);
        let engine = match backend {
            Backend::Tensix => Engine::Tensix(TensixBackend::open_devices(
                self.tensix,
                &self.devices,
                Arc::clone(&weights),
            )?),
            // A forced instruction-set level this CPU cannot run is refused, not ignored.
            _ => Engine::Cpu(CpuKernels::with_isa(Isa::from_env().map_err(|e| {
                Error::BackendUnavailable {
                    backend: "cpu",
                    why: e.to_string(),
                }
            })?)),
        };
        let model = SuperPoint {
            source,
            runner: Runner {
                weights,
                backend,
                engine: Arc::new(engine),
            },
            decode_workers: self.decode_workers,
        };
        model.warmup_variants(&variants, self.progress.as_deref())?;
        Ok(model)
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
        self.runner.backend
    }

    /// The Tensix backend, when it runs the network (devices, programs, traces).
    pub fn tensix(&self) -> Option<&TensixBackend> {
        match &*self.runner.engine {
            Engine::Tensix(t) => Some(t),
            Engine::Cpu(_) => None,
        }
    }

    /// How many frames it runs at once: the Tensix devices still in its pool, or 1 on the CPU
    /// (whose frame uses every core).
    pub fn parallelism(&self) -> usize {
        self.tensix().map_or(1, |t| t.healthy_devices().max(1))
    }

    /// Prepares images of `size` (width, height) detected with `options` (their frame and NMS
    /// radius) on every device, as the port's `warmup(size=, nms_radius=)`: on the Tensix
    /// backend the programs are compiled (unless checked in) and loaded, the weights uploaded
    /// and a frame of zeros run through them, capturing their traces, so that the first such
    /// call runs as fast as later ones. The CPU backend has nothing to prepare.
    pub fn warmup(&self, size: (usize, usize), options: &Options) -> Result<()> {
        options.validate()?;
        self.warmup_variants(
            &[WarmupVariant {
                input: size,
                frame: options.frame,
                nms_radius: options.nms_radius,
            }],
            None,
        )
    }

    /// Prepares each of `variants` on every device (the devices in parallel), calling
    /// `progress` after each variant on each device. Nothing to do on the CPU.
    pub fn warmup_variants(
        &self,
        variants: &[WarmupVariant],
        progress: Option<&WarmupProgress<'_>>,
    ) -> Result<()> {
        for v in variants {
            let options = v.options();
            options.validate()?;
            check_size(v.input.0 as u64, v.input.1 as u64)?;
        }
        match self.tensix() {
            Some(t) => t.warmup(variants, progress),
            None => Ok(()),
        }
    }

    /// The detection of one image together with the dense maps the backend computed on the way
    /// (pre-NMS scores, post-NMS scores, normalised descriptors), from the same run; for
    /// accuracy checks and debugging.
    pub fn detect_with_maps<'a>(
        &self,
        input: impl Into<Input<'a>>,
        options: &Options,
    ) -> Result<(Detection, DenseMaps)> {
        options.validate()?;
        let start = Instant::now();
        let plane = decode_plane(&input.into(), options.plane_spec())?;
        let (detection, maps) = self
            .runner
            .run_plane(plane, options, start.elapsed(), true)?;
        let maps = maps.ok_or(crate::error::Error::BackendUnavailable {
            backend: self.backend().name(),
            why: "the backend returned no dense maps".to_string(),
        })?;
        Ok((detection, maps))
    }

    /// Keypoints, scores and descriptors of one image.
    pub fn detect<'a>(&self, input: impl Into<Input<'a>>, options: &Options) -> Result<Detection> {
        options.validate()?;
        let start = Instant::now();
        let plane = decode_plane(&input.into(), options.plane_spec())?;
        self.detect_plane(plane, options, start.elapsed())
    }

    /// One detection per input, in order; decoding runs ahead on worker threads and every
    /// device of a Tensix pool runs a frame at a time.
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
    /// ahead are decoded on worker threads while the network runs, on as many frames at once
    /// as the model has devices ([`SuperPoint::parallelism`]).
    pub fn stream<I>(&self, inputs: I, options: Options) -> DetectStream<'_>
    where
        I: IntoIterator<Item = Input<'static>>,
        I::IntoIter: Send + 'static,
    {
        self.stream_with(inputs, options, self.decode_workers)
    }

    /// [`stream`](Self::stream) with `workers` decoding threads (at least one) instead of the
    /// model's [`Builder::decode_workers`].
    pub fn stream_with<I>(&self, inputs: I, options: Options, workers: usize) -> DetectStream<'_>
    where
        I: IntoIterator<Item = Input<'static>>,
        I::IntoIter: Send + 'static,
    {
        DetectStream::new(
            self.runner.clone(),
            inputs.into_iter(),
            options,
            workers.max(1),
            self.parallelism(),
        )
    }

    /// Runs the graph on a decoded plane; `decode` is the time already spent decoding it.
    pub(crate) fn detect_plane(
        &self,
        plane: Tensor<u8>,
        options: &Options,
        decode: Duration,
    ) -> Result<Detection> {
        self.runner.detect_plane(plane, options, decode)
    }
}

impl Runner {
    /// Runs the graph on a decoded plane; `decode` is the time already spent decoding it.
    pub(crate) fn detect_plane(
        &self,
        plane: Tensor<u8>,
        options: &Options,
        decode: Duration,
    ) -> Result<Detection> {
        self.run_plane(plane, options, decode, false)
            .map(|(detection, _)| detection)
    }

    /// Runs the graph on a decoded plane, also returning the dense maps when `maps` is set.
    fn run_plane(
        &self,
        plane: Tensor<u8>,
        options: &Options,
        decode: Duration,
        maps: bool,
    ) -> Result<(Detection, Option<DenseMaps>)> {
        options.validate()?;
        let (w0, h0) = (plane.width, plane.height);
        let (w, h) = options.frame;
        let run_start = Instant::now();
        let (frame, dense) = match &*self.engine {
            Engine::Cpu(k) => cpu_frame(k, &self.weights, &plane, options, maps)?,
            Engine::Tensix(t) => {
                let ran = t.detect(&plane, options, maps)?;
                (ran.result, ran.maps)
            }
        };
        let run_ms = millis(run_start.elapsed());
        let rescale_start = Instant::now();
        let keypoints = &frame.keypoints;
        let (descriptor_dim, descriptors) = match frame.descriptors {
            Some((dim, data)) => (dim, Some(data)),
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
        let (resize_ms, select_ms) = (frame.resize_ms, frame.select_ms);
        let (queue_ms, compile_ms) = (frame.queue_ms, frame.compile_ms);
        let decode_ms = millis(decode);
        let detection = Detection {
            keypoints: points,
            scores,
            descriptors,
            descriptor_dim,
            image_size: [w0, h0],
            frame_size: [w, h],
            scale: [sx as f32, sy as f32],
            backend: self.backend.name(),
            device_nms: frame.device_nms,
            device: frame.device,
            timing: Timing {
                preprocess: decode_ms + resize_ms,
                forward: (run_ms - resize_ms - select_ms - queue_ms - compile_ms).max(0.0),
                postprocess: select_ms + rescale_ms,
                queue: queue_ms,
                compile: compile_ms,
                total: decode_ms + run_ms + rescale_ms,
            },
        };
        Ok((detection, dense))
    }
}

/// One frame on the CPU kernels: the graph, with the resize and selection times taken from its
/// node timings, and the dense maps when `maps` is set.
fn cpu_frame(
    kernels: &CpuKernels,
    weights: &WeightSet,
    plane: &Tensor<u8>,
    options: &Options,
    maps: bool,
) -> Result<(FrameResult, Option<DenseMaps>)> {
    let (w, h) = options.frame;
    check_available(
        cpu::working_bytes(w, h),
        &format!("the CPU backend's {w}x{h} frame"),
        "choose a smaller frame (--frame)",
    )?;
    let full = superpoint_with(&options.graph_params());
    let graph = if options.return_descriptors || maps {
        full
    } else {
        full.pruned(&[names::KEYPOINTS])
    };
    let keep: &[&str] = if maps {
        &[names::SCORES, names::NMS, names::DESCRIPTORS_DENSE]
    } else {
        &[]
    };
    let values = run(kernels, &graph, weights, plane, keep)?;
    let dense = |name: &str| values.dense(name).map(|d| kernels.to_planar(d));
    let dense_maps = match (
        dense(names::SCORES),
        dense(names::NMS),
        dense(names::DESCRIPTORS_DENSE),
    ) {
        (Some(scores), Some(nms), Some(descriptors)) if maps => Some(DenseMaps {
            scores,
            nms,
            descriptors,
        }),
        _ => None,
    };
    let node_ms = |wanted: &[&str]| -> f64 {
        values
            .timings
            .iter()
            .filter(|(n, _)| wanted.contains(&n.as_str()))
            .map(|(_, d)| millis(*d))
            .sum()
    };
    let frame = FrameResult {
        keypoints: values.keypoints(names::KEYPOINTS).unwrap_or(&[]).to_vec(),
        descriptors: values
            .descriptors(names::DESCRIPTORS)
            .filter(|_| options.return_descriptors)
            .map(|(dim, data)| (dim, data.to_vec())),
        resize_ms: node_ms(&[names::RESIZE]),
        select_ms: node_ms(&[names::KEYPOINTS, names::DESCRIPTORS]),
        device_nms: false,
        device: None,
        queue_ms: 0.0,
        compile_ms: 0.0,
    };
    Ok((frame, dense_maps))
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
