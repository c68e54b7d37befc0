//! The Tensix backend: the program `kernel-gen` generates, run on `tt-runtime` (the emulator of a
//! Blackhole p150a unless the runtime is built on tt-metal with a card present).
//!
//! Opening it opens the device with the dispatch the configured grid needs (12×10 → Ethernet
//! dispatch, 11×10 → Tensix dispatch) or, by default, with `tt_runtime::Dispatch::Auto`: Ethernet
//! dispatch when the tt-metal it drives carries the ETH-dispatch patch (the emulator stands in for
//! a patched one), else Tensix dispatch with a warning; the grid then follows the dispatch
//! obtained ([`DispatchReport`]). Programs are compiled for that grid and the configured precision
//! ([`TensixPrecision`]: the port's bf16, or the accurate Float32 one that meets DESIGN §5's
//! keypoint F1 gate). Programs load on first use and stay loaded: the main program per
//! (frame, input plane size) — the 640×480 one at the port's precision with an identity resize is
//! the checked-in artifact, the others are compiled by `kernel-gen` — with every weight and
//! resize-filter buffer uploaded once; an NMS-variant program per (frame, radius 1..8 other than
//! 4), sharing the main program's score map and dense descriptors. The first frame of a program runs its steps
//! directly (the warm-up every program needs before capture) and then its trace is captured;
//! later frames replay it. Per frame only the u8 plane is written; the candidate counts, the
//! records they cover and the descriptor rows of the returned keypoints are read back, and the
//! host orders and cuts ([`host`]). Radius 0 or > 8, or a threshold below the compiled one,
//! post-process the device's maps on the host.
//!
//! A model runs on a set of devices ([`DeviceSet`]), one session each with its own loaded
//! programs and traces, in a [`pool`] that sends each frame to the least-loaded device and takes
//! a failed device out; one mutex per device serialises its work. Every device of a pool has the
//! same grid and runs the same programs, so a frame's outputs do not depend on the device.
//! [`warmup`] prepares variants on every device in parallel.

mod error;
mod host;
pub mod pool;
mod programs;
mod session;
pub mod warmup;

use std::sync::Arc;
use std::time::{Duration, Instant};

use kernel_gen::{Grid, Precision};
use serde::Serialize;
use superpoint_graph::{Tensor, WeightSet};

pub use error::TensixError;
pub use pool::{DeviceSet, DeviceStats};
pub use programs::{checked_in_program, main_variant};
pub use session::{LoadedProgram, Profile, StepCounters};
pub use warmup::{Warmup, WarmupProgress, WarmupStep, WarmupVariant};

use super::{DenseMaps, FrameResult};
use crate::backend::cpu::CpuKernels;
use crate::error::Result;
use crate::options::Options;
use pool::{Done, Pool};
use session::Session;

/// The compute grid the programs are compiled for; it decides the dispatch placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
pub enum TensixGrid {
    /// 12×10 cores, dispatch on the Ethernet cores.
    #[value(name = "12x10")]
    #[serde(rename = "12x10")]
    Eth12x10,
    /// 11×10 cores, dispatch on a Tensix column.
    #[value(name = "11x10")]
    #[serde(rename = "11x10")]
    Tensix11x10,
}

impl TensixGrid {
    /// The grid kernel-gen compiles for.
    pub fn grid(self) -> Grid {
        match self {
            TensixGrid::Eth12x10 => Grid::ETH_DISPATCH,
            TensixGrid::Tensix11x10 => Grid::TENSIX_DISPATCH,
        }
    }

    /// The dispatch placement the device is opened with.
    pub fn dispatch(self) -> tt_runtime::Dispatch {
        match self {
            TensixGrid::Eth12x10 => tt_runtime::Dispatch::Eth,
            TensixGrid::Tensix11x10 => tt_runtime::Dispatch::Tensix,
        }
    }

    /// The grid a dispatch placement leaves (`None` for `Auto`, which is not a placement).
    pub fn of_dispatch(dispatch: tt_runtime::Dispatch) -> Option<TensixGrid> {
        match dispatch {
            tt_runtime::Dispatch::Eth => Some(TensixGrid::Eth12x10),
            tt_runtime::Dispatch::Tensix => Some(TensixGrid::Tensix11x10),
            tt_runtime::Dispatch::Auto => None,
        }
    }

    /// "12x10" or "11x10".
    pub fn name(self) -> &'static str {
        match self {
            TensixGrid::Eth12x10 => "12x10",
            TensixGrid::Tensix11x10 => "11x10",
        }
    }
}

/// The numeric precision the programs are compiled at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TensixPrecision {
    /// The port's: bf16 activations and weights, HiFi2, fp32 accumulation; the checked-in
    /// program. Meets the §5 PCC gates; its keypoint F1 is below the gate on weights whose
    /// scores are nearly tied (`examples/precision_bound.rs`).
    #[default]
    Port,
    /// Float32 activations, each weight as a bf16 high plus a bf16 low part, HiFi4, fp32
    /// accumulation: meets every §5 gate, at about 4× the port's matrix-unit time. Compiled at
    /// first use.
    Accurate,
}

impl TensixPrecision {
    /// The precision kernel-gen compiles every node at.
    pub fn precision(self) -> Precision {
        match self {
            TensixPrecision::Port => Precision::PORT,
            TensixPrecision::Accurate => Precision::ACCURATE,
        }
    }

    /// "port" or "accurate".
    pub fn name(self) -> &'static str {
        match self {
            TensixPrecision::Port => "port",
            TensixPrecision::Accurate => "accurate",
        }
    }
}

/// How the Tensix backend runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TensixConfig {
    /// The grid to open; `None` (the default) follows the dispatch `Auto` obtains: 12×10 with a
    /// patched tt-metal (or the emulator), 11×10 otherwise.
    pub grid: Option<TensixGrid>,
    pub precision: TensixPrecision,
    /// Replay captured traces after each program's first frame (default); `false` runs every
    /// step directly each frame.
    pub trace: bool,
}

impl Default for TensixConfig {
    fn default() -> Self {
        Self {
            grid: None,
            precision: TensixPrecision::default(),
            trace: true,
        }
    }
}

/// True when the runtime drives real hardware (built on tt-metal), not the emulator.
pub fn card_present() -> bool {
    tt_runtime::Device::backend_name() == "tt-metal"
}

/// How the device was opened: the dispatch asked for and obtained, the grid it leaves, and what
/// detection found about the tt-metal behind it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DispatchReport {
    /// "auto", "eth" or "tensix": what was asked (`auto` unless a grid was configured).
    pub requested: &'static str,
    /// "eth" or "tensix": what the device opened with.
    pub dispatch: &'static str,
    /// The compute grid obtained, which the programs are compiled for.
    pub grid: TensixGrid,
    /// "patched", "stock" or "unknown": whether the tt-metal behind the runtime carries the
    /// ETH-dispatch patch.
    pub eth_patch: &'static str,
    /// What detection found, and where.
    pub detection: String,
    /// Why `auto` fell back to Tensix dispatch and how to get 12×10.
    pub warning: Option<String>,
}

/// Facts about the opened device and the loaded programs.
#[derive(Debug, Clone, Serialize)]
pub struct TensixInfo {
    /// "emulator" or "tt-metal".
    pub runtime: String,
    /// The grid obtained.
    pub grid: TensixGrid,
    pub precision: TensixPrecision,
    /// "eth" or "tensix": the dispatch obtained.
    pub dispatch: &'static str,
    /// How the device was opened and why.
    pub selection: DispatchReport,
    pub trace: bool,
    /// L1 bytes per core and DRAM banks, as the runtime reports them.
    pub l1_bytes: u32,
    pub dram_banks: u32,
    /// Steps (device programs) the trace of the default 640×480 main program replays.
    pub default_trace_steps: usize,
    /// NMS radii the device runs (the main program's and the variants'); others run on the host.
    pub device_radii: Vec<usize>,
    /// The programs loaded on the first device of the pool.
    pub programs: Vec<LoadedProgram>,
    /// Every device of the pool, with the programs loaded on it.
    pub devices: Vec<PoolDevice>,
}

/// One device of the pool: how it was opened, what it has done, what it has loaded.
#[derive(Debug, Clone, Serialize)]
pub struct PoolDevice {
    /// The grid obtained.
    pub grid: TensixGrid,
    /// "eth" or "tensix": the dispatch obtained.
    pub dispatch: &'static str,
    #[serde(flatten)]
    pub stats: DeviceStats,
    /// Loaded programs (empty where only the figures were asked for, e.g. `/info`).
    pub programs: Vec<LoadedProgram>,
}

/// The Tensix backend of a model.
pub struct TensixBackend {
    config: TensixConfig,
    /// How the first device was opened (every device of the pool opens alike; fixed for its
    /// life; read without waiting for a frame).
    selection: DispatchReport,
    weights: Arc<WeightSet>,
    host: CpuKernels,
    pool: Pool<Session>,
}

/// One frame run on the pool: its outputs (with the device that ran it, the time it waited for
/// a device and the time it spent compiling and loading programs) and its dense maps if asked.
pub(crate) struct PoolFrame {
    pub result: FrameResult,
    pub maps: Option<DenseMaps>,
}

impl TensixBackend {
    /// Opens every device (`DeviceSet::All`) for `config.grid` (or with `Auto` dispatch, the
    /// grid following); programs are compiled (unless checked in) and load at first use.
    pub fn open(config: TensixConfig, weights: Arc<WeightSet>) -> Result<Self> {
        Self::open_devices(config, &DeviceSet::All, weights)
    }

    /// Opens the devices of `devices`, each as [`TensixBackend::open`] opens one.
    pub fn open_devices(
        config: TensixConfig,
        devices: &DeviceSet,
        weights: Arc<WeightSet>,
    ) -> Result<Self> {
        let available = tt_runtime::Device::count().map_err(|e| TensixError::Device {
            doing: "counting the devices".to_string(),
            source: kernel_gen::runner::RunError::Runtime(e),
        })?;
        let mut sessions: Vec<(u32, Session)> = Vec::new();
        for id in devices.resolve(available)? {
            let session = Session::open(config, id)?;
            if let Some((first, s)) = sessions.first() {
                if s.grid() != session.grid() {
                    return Err(TensixError::MixedGrids {
                        first: *first,
                        first_grid: s.grid().name(),
                        other: id,
                        other_grid: session.grid().name(),
                    }
                    .into());
                }
            }
            sessions.push((id, session));
        }
        let selection = match sessions.first() {
            Some((_, s)) => s.dispatch_report(),
            None => {
                return Err(TensixError::NoDevices {
                    failures: format!("the set `{devices}` names no device"),
                }
                .into())
            }
        };
        Ok(Self {
            config,
            selection,
            weights,
            host: CpuKernels::new(),
            pool: Pool::new(sessions)?,
        })
    }

    /// The configuration it was opened with.
    pub fn config(&self) -> TensixConfig {
        self.config
    }

    /// How the devices were opened.
    pub fn dispatch(&self) -> DispatchReport {
        self.selection.clone()
    }

    /// Devices still in the pool (those that have not failed).
    pub fn healthy_devices(&self) -> usize {
        self.pool.healthy()
    }

    /// Runs `f` on the first device of the pool (serialised with its frames), e.g. for
    /// self-checks ([`tt_runtime::selftest`]) before any program is loaded.
    pub fn with_device<T>(&self, f: impl FnOnce(&tt_runtime::Device) -> T) -> T {
        self.pool.with_first(|s| f(s.device()))
    }

    /// Runs `f` on device `id` of the pool (serialised with its frames); `None` when the pool
    /// has no device of that id.
    pub fn with_device_id<T>(
        &self,
        id: u32,
        f: impl FnOnce(&tt_runtime::Device) -> T,
    ) -> Option<T> {
        self.pool.with_id(id, |s| f(s.device()))
    }

    /// Every device of the pool with its figures, without waiting for any (no programs listed).
    pub fn devices(&self) -> Vec<PoolDevice> {
        self.pool
            .stats()
            .into_iter()
            .map(|stats| PoolDevice {
                grid: self.selection.grid,
                dispatch: self.selection.dispatch,
                stats,
                programs: Vec::new(),
            })
            .collect()
    }

    /// The devices and every loaded program (waits for each device in turn).
    pub fn info(&self) -> TensixInfo {
        let loaded = self.pool.each(|_, s| (s.device_info(), s.loaded()));
        let mut devices = self.devices();
        for (d, (_, programs)) in devices.iter_mut().zip(&loaded) {
            d.programs = programs.clone();
        }
        let first = loaded.first().and_then(|(info, _)| *info);
        TensixInfo {
            runtime: tt_runtime::Device::backend_name(),
            grid: self.selection.grid,
            precision: self.config.precision,
            dispatch: self.selection.dispatch,
            selection: self.dispatch(),
            trace: self.config.trace,
            l1_bytes: first.map_or(0, |i| i.l1_size),
            dram_banks: first.map_or(0, |i| i.dram_banks),
            default_trace_steps: programs::default_steps(),
            device_radii: session::device_radii(),
            programs: loaded
                .into_iter()
                .next()
                .map(|(_, p)| p)
                .unwrap_or_default(),
            devices,
        }
    }

    /// Keypoints and descriptors of one decoded plane, and the dense maps of the same run when
    /// `maps` is set: the score map, the post-NMS map (the device's for radii 1..8, the host's
    /// NMS of the device's score map otherwise) and the dense descriptors. It runs on the
    /// least-loaded device, and again on another if that one is lost.
    pub(crate) fn detect(
        &self,
        plane: &Tensor<u8>,
        options: &Options,
        maps: bool,
    ) -> Result<PoolFrame> {
        let ran = self.pool.run(|session| {
            let frame = session.run_frame(&self.weights, plane, options)?;
            let select_start = Instant::now();
            let (keypoints, descriptors) = session.read_results(&self.host, &frame, options)?;
            let select = select_start.elapsed();
            let dense = if maps {
                Some(session.read_dense(&self.host, &frame)?)
            } else {
                None
            };
            Ok(Done {
                value: (keypoints, descriptors, select, dense, frame.device_nms()),
                compile: frame.compile,
            })
        })?;
        let (keypoints, descriptors, select, maps, device_nms) = ran.value;
        // The resize runs inside the device program, so it counts as the network's time.
        let result = FrameResult {
            keypoints,
            descriptors,
            resize_ms: 0.0,
            select_ms: millis(select),
            device: Some(ran.device),
            queue_ms: millis(ran.queue),
            compile_ms: millis(ran.compile),
            device_nms,
        };
        Ok(PoolFrame { result, maps })
    }

    /// Prepares `variants` on every device of the pool, the devices in parallel, calling
    /// `progress` after each variant on each device and logging a line for it. A device lost
    /// meanwhile leaves the pool; the others carry on.
    pub fn warmup(
        &self,
        variants: &[WarmupVariant],
        progress: Option<&WarmupProgress<'_>>,
    ) -> Result<()> {
        let total = variants.len() * self.pool.healthy();
        let done = std::sync::atomic::AtomicUsize::new(0);
        self.pool.each_parallel(|device, session| {
            for variant in variants {
                let start = Instant::now();
                let prepared = session.warm(&self.weights, variant.input, &variant.options())?;
                let seconds = start.elapsed().as_secs_f64();
                let step = WarmupStep {
                    variant: *variant,
                    device,
                    prepared,
                    seconds,
                    done: done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                    total,
                };
                tracing::info!(
                    device,
                    "warm-up {}/{}: {variant} on device {device}: {}",
                    step.done,
                    step.total,
                    if prepared {
                        format!("prepared in {seconds:.1} s")
                    } else {
                        "already prepared".to_string()
                    }
                );
                if let Some(progress) = progress {
                    progress(&step);
                }
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Runs one frame with every step launched directly and returns each step's counters (the
    /// main program's, then the NMS variant's when `options` needs one) and the bytes the run
    /// left in the main program's buffers named in `read`.
    pub fn profile(
        &self,
        plane: &Tensor<u8>,
        options: &Options,
        read: &[String],
    ) -> Result<Profile> {
        let ran = self.pool.run(|session| {
            Ok(Done {
                value: session.profile(&self.weights, plane, options, read)?,
                compile: Duration::ZERO,
            })
        })?;
        Ok(ran.value)
    }
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
