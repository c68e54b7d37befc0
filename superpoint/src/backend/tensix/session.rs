//! One opened device and the programs loaded on it: one main program per (frame, input plane
//! size), each with its NMS-variant programs by radius (sharing its score map and dense
//! descriptors), each with its trace once captured. A frame writes the plane, runs (or replays)
//! the main program and the variant its radius needs, and says where its results are and how
//! long it spent compiling and loading programs; the read-back functions take them from there.
//! Warming a variant up runs a frame of zeros through its programs, so that they are loaded
//! and their traces captured before a caller's frame needs them.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kernel_gen::layout::host::{descriptor_row, unpack_map};
use kernel_gen::layout::unpack_channels_last;
use kernel_gen::ops::nms::MAX_DEVICE_RADIUS;
use kernel_gen::ops::resize::{pack_plane, MAX_PLANE_SIDE};
use kernel_gen::plan::Content;
use kernel_gen::runner::{L1Arena, Loaded, RunError};
use kernel_gen::{Compiled, DeviceTensor};
use serde::Serialize;
use superpoint_graph::{names, Keypoint, Tensor, WeightSet};
use tt_runtime::{Device, Trace};

use super::error::TensixError;
use super::{host, programs, DispatchReport, TensixConfig, TensixGrid};
use crate::backend::cpu::CpuKernels;
use crate::backend::DenseMaps;
use crate::options::Options;

pub use kernel_gen::runner::StepCounters;

/// What one profiled frame left: each step's counters, and the bytes of the buffers asked for.
#[derive(Debug, Clone)]
pub struct Profile {
    pub steps: Vec<StepCounters>,
    pub buffers: BTreeMap<String, Vec<u8>>,
}

/// Descriptor rows: (dim, N × dim values).
pub type Rows = (usize, Vec<f32>);

/// NMS radii the device programs run: the main program's and the variants' 1..=8.
pub fn device_radii() -> Vec<usize> {
    (1..=MAX_DEVICE_RADIUS).collect()
}

/// Whether NMS with radius `r` runs an NMS-variant program (device radii other than the main
/// program's); 0 and radii above 8 run on the host.
fn needs_variant(r: usize) -> bool {
    r != programs::main_radius() && (1..=MAX_DEVICE_RADIUS).contains(&r)
}

/// A (width, height) the device programs take: each side at most the resize's limit.
fn sides((w, h): (usize, usize)) -> Result<(u32, u32), TensixError> {
    let side = |v: usize| u32::try_from(v).ok().filter(|&v| v <= MAX_PLANE_SIDE);
    match (side(w), side(h)) {
        (Some(w), Some(h)) => Ok((w, h)),
        _ => Err(TensixError::InputSize {
            width: w,
            height: h,
            max: MAX_PLANE_SIDE,
        }),
    }
}

/// One loaded program, as `superpoint info` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct LoadedProgram {
    /// `main` or `nms<r>`.
    pub kind: String,
    pub frame: [u32; 2],
    pub input: [u32; 2],
    /// Steps (device programs) per run, which is what its trace replays.
    pub steps: usize,
    /// The node each step runs, in launch order.
    pub nodes: Vec<String>,
    pub trace_captured: bool,
    /// Frames run so far.
    pub frames: u64,
}

/// A program on the device with its trace.
struct Program {
    loaded: Loaded,
    trace: Option<Trace>,
    frames: u64,
}

impl Program {
    fn load(
        dev: &Device,
        compiled: &Compiled,
        arena: &L1Arena,
        main: Option<&Loaded>,
    ) -> Result<Self, RunError> {
        let loaded = Loaded::load_in(dev, compiled, arena, main)?;
        Ok(Self {
            loaded,
            trace: None,
            frames: 0,
        })
    }

    /// Runs every step: by replaying the trace once captured; the first run launches the steps
    /// (the warm-up capture needs) and then captures them when `trace` is on.
    fn run(&mut self, dev: &Device, trace: bool) -> Result<(), RunError> {
        match &self.trace {
            Some(t) => {
                dev.replay(t)?;
                dev.finish()?;
            }
            None => {
                self.loaded.run(dev)?;
                if trace {
                    self.trace = Some(self.loaded.capture(dev)?);
                }
            }
        }
        self.frames += 1;
        Ok(())
    }

    /// The layout of buffer `name`'s tensor.
    fn tensor(&self, name: &str) -> Option<DeviceTensor> {
        self.loaded
            .program()
            .buffers
            .iter()
            .find(|b| b.name == name)
            .and_then(|b| match &b.content {
                Content::Output { tensor, .. } | Content::External { tensor, .. } => Some(*tensor),
                _ => None,
            })
    }

    fn info(&self, kind: String, frame: (u32, u32), input: (u32, u32)) -> LoadedProgram {
        LoadedProgram {
            kind,
            frame: [frame.0, frame.1],
            input: [input.0, input.1],
            steps: self.loaded.program().steps.len(),
            nodes: self
                .loaded
                .program()
                .steps
                .iter()
                .map(|s| s.node.clone())
                .collect(),
            trace_captured: self.trace.is_some(),
            frames: self.frames,
        }
    }
}

/// The main program of one (frame, input size) and its NMS variants.
struct Main {
    frame: (u32, u32),
    input: (u32, u32),
    program: Program,
    variants: Vec<(usize, Program)>,
}

/// Where the post-NMS map of a frame comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NmsSource {
    /// The main program's NMS.
    Main,
    /// Variant `i` of the main program.
    Variant(usize),
    /// The host, on the device's score map.
    Host,
}

/// Where one frame's results are on the device.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    main: usize,
    nms: NmsSource,
    radius: usize,
    /// The device's candidates cover the request (device NMS and a threshold at least the
    /// compiled one); otherwise the host selects from the post-NMS map.
    device_select: bool,
    /// Time spent compiling and loading the programs the frame needed and no earlier frame or
    /// warm-up had loaded.
    pub compile: Duration,
}

impl Frame {
    /// The device ran the frame's NMS (radius 1..8).
    pub fn device_nms(&self) -> bool {
        self.nms != NmsSource::Host
    }
}

/// The device and its programs.
pub struct Session {
    config: TensixConfig,
    device: Device,
    /// The runtime's id of the device.
    id: u32,
    /// The grid the device opened with, which every program is compiled for.
    grid: TensixGrid,
    /// The L1 region every loaded program's L1 activations share (programs run one at a time).
    arena: L1Arena,
    mains: Vec<Main>,
    /// Compile and load time of the frame being prepared.
    compiling: Duration,
}

/// The error of a runtime call on device `id` while `doing`.
fn device_err(id: u32, doing: impl Into<String>) -> impl FnOnce(RunError) -> TensixError {
    let doing = format!("{} on device {id}", doing.into());
    move |source| TensixError::Device { doing, source }
}

fn malformed(buffer: &str, why: impl Into<String>) -> TensixError {
    TensixError::Readback {
        buffer: buffer.to_string(),
        why: why.into(),
    }
}

impl Session {
    /// Opens device `id` with the dispatch of `config.grid`, or `Auto`; checks that the grid
    /// obtained is the one that dispatch leaves.
    pub fn open(config: TensixConfig, id: u32) -> Result<Self, TensixError> {
        let requested = config
            .grid
            .map_or(tt_runtime::Dispatch::Auto, TensixGrid::dispatch);
        let opening = |e: tt_runtime::Error| TensixError::Device {
            doing: format!("opening device {id} ({} dispatch)", requested.name()),
            source: RunError::Runtime(e),
        };
        let device = Device::open_id(id, requested).map_err(opening)?;
        let info = device.info().map_err(opening)?;
        let grid = TensixGrid::of_dispatch(info.dispatch)
            .filter(|g| {
                let want = g.grid();
                (want.x, want.y) == (info.grid_x, info.grid_y)
            })
            .ok_or(TensixError::Grid {
                dispatch: info.dispatch.name(),
                width: info.grid_x,
                height: info.grid_y,
            })?;
        Ok(Self {
            config,
            device,
            id,
            grid,
            arena: L1Arena::new(),
            mains: Vec::new(),
            compiling: Duration::ZERO,
        })
    }

    /// The grid the device opened with.
    pub fn grid(&self) -> TensixGrid {
        self.grid
    }

    /// The runtime's facts about the device.
    pub fn device_info(&self) -> Option<tt_runtime::DeviceInfo> {
        self.device.info().ok()
    }

    /// The opened device.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// How the device was opened.
    pub fn dispatch_report(&self) -> DispatchReport {
        let opening = self.device.opening();
        let installation = &opening.installation;
        DispatchReport {
            requested: opening.requested.name(),
            dispatch: self.grid.dispatch().name(),
            grid: self.grid,
            eth_patch: installation.eth_dispatch.name(),
            detection: format!(
                "{}: ETH dispatch {}",
                installation.describe_source(),
                installation.eth_dispatch
            ),
            warning: opening.warning.clone(),
        }
    }

    /// Every loaded program.
    pub fn loaded(&self) -> Vec<LoadedProgram> {
        let mut out = Vec::new();
        for m in &self.mains {
            out.push(m.program.info("main".to_string(), m.frame, m.input));
            for (r, v) in &m.variants {
                out.push(v.info(format!("nms{r}"), m.frame, m.input));
            }
        }
        out
    }

    /// The main program for the frame and plane size, loaded (weights uploaded) on first use.
    fn main_index(
        &mut self,
        weights: &WeightSet,
        frame: (u32, u32),
        input: (u32, u32),
    ) -> Result<usize, TensixError> {
        if let Some(i) = self
            .mains
            .iter()
            .position(|m| m.frame == frame && m.input == input)
        {
            return Ok(i);
        }
        let start = Instant::now();
        let compiled =
            programs::main_program(frame, input, self.grid.grid(), self.config.precision)?;
        let what = format!(
            "loading the {}x{} main program for {}x{} planes",
            frame.0, frame.1, input.0, input.1
        );
        let id = self.id;
        let program = Program::load(&self.device, &compiled, &self.arena, None)
            .map_err(device_err(id, &what))?;
        program
            .loaded
            .upload_weights(weights)
            .map_err(device_err(id, format!("{what}: uploading the weights")))?;
        self.compiling += start.elapsed();
        self.mains.push(Main {
            frame,
            input,
            program,
            variants: Vec::new(),
        });
        Ok(self.mains.len() - 1)
    }

    /// The NMS variant with `radius` of main program `main`, loaded on first use.
    fn variant_index(&mut self, main: usize, radius: usize) -> Result<usize, TensixError> {
        let m = &self.mains[main];
        if let Some(i) = m.variants.iter().position(|(r, _)| *r == radius) {
            return Ok(i);
        }
        let start = Instant::now();
        let compiled = programs::nms_program(
            m.frame,
            radius,
            self.grid.grid(),
            self.config.precision,
            m.program.loaded.program(),
        )?;
        let program = Program::load(
            &self.device,
            &compiled,
            &self.arena,
            Some(&m.program.loaded),
        )
        .map_err(device_err(
            self.id,
            format!(
                "loading the NMS r = {radius} program for {}x{}",
                m.frame.0, m.frame.1
            ),
        ))?;
        self.compiling += start.elapsed();
        let m = &mut self.mains[main];
        m.variants.push((radius, program));
        Ok(m.variants.len() - 1)
    }

    /// Loads what `options` need, writes the plane and runs the device for one frame.
    pub fn run_frame(
        &mut self,
        weights: &WeightSet,
        plane: &Tensor<u8>,
        options: &Options,
    ) -> Result<Frame, TensixError> {
        let frame = self.prepare(weights, plane, options)?;
        let (trace, id) = (self.config.trace, self.id);
        let dev = &self.device;
        let m = &mut self.mains[frame.main];
        m.program
            .run(dev, trace)
            .map_err(device_err(id, "running the main program"))?;
        if let NmsSource::Variant(v) = frame.nms {
            let (r, program) = &mut m.variants[v];
            let what = format!("running the NMS r = {r} program");
            program.run(dev, trace).map_err(device_err(id, what))?;
        }
        Ok(frame)
    }

    /// Whether the programs a frame of `input`-sized planes with `options` needs have run
    /// (so are loaded and, with traces on, captured).
    fn is_warm(&self, input: (usize, usize), options: &Options) -> bool {
        let (Ok(frame), Ok(input)) = (sides(options.frame), sides(input)) else {
            return false;
        };
        let r = options.nms_radius;
        self.mains
            .iter()
            .find(|m| m.frame == frame && m.input == input)
            .is_some_and(|m| {
                m.program.frames > 0
                    && (!needs_variant(r)
                        || m.variants.iter().any(|(vr, p)| *vr == r && p.frames > 0))
            })
    }

    /// Prepares the programs for `input`-sized planes with `options` (frame, NMS radius) by
    /// running a frame of zeros through them, unless they have run already; true when it did.
    pub fn warm(
        &mut self,
        weights: &WeightSet,
        input: (usize, usize),
        options: &Options,
    ) -> Result<bool, TensixError> {
        if self.is_warm(input, options) {
            return Ok(false);
        }
        let zeros = Tensor::<u8>::zeros(1, input.1, input.0);
        self.run_frame(weights, &zeros, options)?;
        Ok(true)
    }

    /// Loads the programs, then writes the plane.
    fn prepare(
        &mut self,
        weights: &WeightSet,
        plane: &Tensor<u8>,
        options: &Options,
    ) -> Result<Frame, TensixError> {
        let frame = self.load(weights, plane.width, plane.height, options)?;
        self.mains[frame.main]
            .program
            .loaded
            .write(names::INPUT, &pack_plane(plane))
            .map_err(device_err(self.id, "writing the input plane"))?;
        Ok(frame)
    }

    /// Checks the sizes and loads the programs a `width`×`height` plane with `options` needs.
    fn load(
        &mut self,
        weights: &WeightSet,
        width: usize,
        height: usize,
        options: &Options,
    ) -> Result<Frame, TensixError> {
        let (w, h) = options.frame;
        if w % 32 != 0 || h % 32 != 0 {
            return Err(TensixError::FrameSize {
                width: w,
                height: h,
            });
        }
        let frame = sides(options.frame)?;
        let input = sides((width, height))?;
        self.compiling = Duration::ZERO;
        let main = self.main_index(weights, frame, input)?;
        let r = options.nms_radius;
        let nms = if r == programs::main_radius() {
            NmsSource::Main
        } else if needs_variant(r) {
            NmsSource::Variant(self.variant_index(main, r)?)
        } else {
            NmsSource::Host
        };
        Ok(Frame {
            main,
            nms,
            radius: r,
            device_select: !matches!(nms, NmsSource::Host)
                && options.keypoint_threshold >= programs::compiled_threshold(),
            compile: self.compiling,
        })
    }

    /// The program holding the frame's post-NMS map and candidates, if the device ran NMS.
    fn nms_program(&self, frame: &Frame) -> Option<&Program> {
        let m = &self.mains[frame.main];
        match frame.nms {
            NmsSource::Main => Some(&m.program),
            NmsSource::Variant(v) => Some(&m.variants[v].1),
            NmsSource::Host => None,
        }
    }

    fn read(&self, program: &Program, name: &str) -> Result<Vec<u8>, TensixError> {
        program
            .loaded
            .read(name)
            .map_err(device_err(self.id, format!("reading buffer `{name}`")))
    }

    /// A Map-layout buffer of the frame's size as a 1×H×W tensor.
    fn read_map(
        &self,
        program: &Program,
        name: &str,
        frame: &Frame,
    ) -> Result<Tensor<f32>, TensixError> {
        let (w, h) = self.mains[frame.main].frame;
        unpack_map(&self.read(program, name)?, h as usize, w as usize)
            .ok_or_else(|| malformed(name, format!("not a {w}x{h} score map")))
    }

    /// The device's dense descriptors as a planar C×Hc×Wc tensor.
    fn read_dense_descriptors(&self, frame: &Frame) -> Result<Tensor<f32>, TensixError> {
        let main = &self.mains[frame.main].program;
        let name = names::DESCRIPTORS_DENSE;
        let tensor = main
            .tensor(name)
            .ok_or_else(|| malformed(name, "the program has no tensor of that name"))?;
        unpack_channels_last(&self.read(main, name)?, &tensor)
            .ok_or_else(|| malformed(name, "not a channels-last tensor of its length"))
    }

    /// The frame's post-NMS map: the device's, or the host's NMS of the device's score map.
    fn post_nms_map(&self, host: &CpuKernels, frame: &Frame) -> Result<Tensor<f32>, TensixError> {
        match self.nms_program(frame) {
            Some(p) => self.read_map(p, names::NMS, frame),
            None => {
                let scores =
                    self.read_map(&self.mains[frame.main].program, names::SCORES, frame)?;
                Ok(host::nms(host, &scores, frame.radius))
            }
        }
    }

    /// The frame's keypoints (frame pixels, best first) and, when requested, descriptors.
    pub fn read_results(
        &self,
        host: &CpuKernels,
        frame: &Frame,
        options: &Options,
    ) -> Result<(Vec<Keypoint>, Option<Rows>), TensixError> {
        let threshold = options.keypoint_threshold;
        let device = self.nms_program(frame).filter(|_| frame.device_select);
        let Some(program) = device else {
            let map = self.post_nms_map(host, frame)?;
            let keypoints = host::select(host, &map, threshold, options.max_keypoints);
            let descriptors = if options.return_descriptors {
                let dense = self.read_dense_descriptors(frame)?;
                Some((dense.channels, host::sample(host, &dense, &keypoints)))
            } else {
                None
            };
            return Ok((keypoints, descriptors));
        };
        let candidates = program
            .tensor(names::KEYPOINTS)
            .ok_or_else(|| malformed(names::KEYPOINTS, "the program has no candidates"))?;
        let DeviceTensor::Candidates {
            regions, capacity, ..
        } = candidates
        else {
            return Err(malformed(names::KEYPOINTS, "not laid out as candidates"));
        };
        let counts_name = format!("{}.counts", names::KEYPOINTS);
        let counts = self.read(program, &counts_name)?;
        let records = self.read_records(program, &counts, regions, capacity)?;
        let list = host::ordered_candidates(
            &records,
            &counts,
            &candidates,
            threshold,
            options.max_keypoints,
        )?;
        let descriptors = if options.return_descriptors {
            Some(self.read_descriptor_rows(program, &list)?)
        } else {
            None
        };
        Ok((list.into_iter().map(|(_, k)| k).collect(), descriptors))
    }

    /// The records buffer with only each region's first `count` records read (the rest zero).
    fn read_records(
        &self,
        program: &Program,
        counts: &[u8],
        regions: u32,
        capacity: u32,
    ) -> Result<Vec<u8>, TensixError> {
        let name = names::KEYPOINTS;
        let record = kernel_gen::layout::tensor::CANDIDATE_BYTES as usize;
        let stride = kernel_gen::layout::tensor::COUNT_STRIDE as usize;
        let mut records = vec![0u8; regions as usize * capacity as usize * record];
        for region in 0..regions as usize {
            let count = counts
                .get(region * stride..region * stride + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or_else(|| {
                    malformed("keypoints.counts", format!("no count for region {region}"))
                })?;
            if count > capacity {
                return Err(malformed(
                    "keypoints.counts",
                    format!(
                        "region {region} holds {count} records, more than its capacity {capacity}"
                    ),
                ));
            }
            if count == 0 {
                continue;
            }
            let first = region * capacity as usize;
            let bytes = program
                .loaded
                .read_pages(name, first as u64, u64::from(count))
                .map_err(device_err(
                    self.id,
                    format!("reading the records of region {region}"),
                ))?;
            records[first * record..first * record + bytes.len()].copy_from_slice(&bytes);
        }
        Ok(records)
    }

    /// The descriptor rows of the returned keypoints, in their order.
    fn read_descriptor_rows(
        &self,
        program: &Program,
        list: &[(u32, Keypoint)],
    ) -> Result<Rows, TensixError> {
        let name = names::DESCRIPTORS;
        let Some(DeviceTensor::Descriptors { dim, .. }) = program.tensor(name) else {
            return Err(malformed(name, "the program has no descriptor rows"));
        };
        let mut out = Vec::with_capacity(list.len() * dim as usize);
        for (slot, _) in list {
            let bytes = program
                .loaded
                .read_pages(name, u64::from(*slot), 1)
                .map_err(device_err(
                    self.id,
                    format!("reading descriptor row {slot}"),
                ))?;
            let row = descriptor_row(&bytes, dim, 0)
                .ok_or_else(|| malformed(name, format!("row {slot} is short")))?;
            out.extend(row);
        }
        Ok((dim as usize, out))
    }

    /// The frame's dense maps.
    pub fn read_dense(&self, host: &CpuKernels, frame: &Frame) -> Result<DenseMaps, TensixError> {
        Ok(DenseMaps {
            scores: self.read_map(&self.mains[frame.main].program, names::SCORES, frame)?,
            nms: self.post_nms_map(host, frame)?,
            descriptors: self.read_dense_descriptors(frame)?,
        })
    }

    /// One frame with every step launched directly, and the counters of that frame: the main
    /// program's steps, then the variant's; with the bytes the run left in the main program's
    /// buffers named in `read` (e.g. the counts its counted loops read).
    pub fn profile(
        &mut self,
        weights: &WeightSet,
        plane: &Tensor<u8>,
        options: &Options,
        read: &[String],
    ) -> Result<Profile, TensixError> {
        let frame = self.prepare(weights, plane, options)?;
        let (dev, id) = (&self.device, self.id);
        let m = &mut self.mains[frame.main];
        let mut programs: Vec<&mut Program> = vec![&mut m.program];
        if let NmsSource::Variant(v) = frame.nms {
            programs.push(&mut m.variants[v].1);
        }
        let mut buffers = BTreeMap::new();
        let mut out = Vec::new();
        for (index, p) in programs.into_iter().enumerate() {
            p.loaded
                .reset_counters()
                .map_err(device_err(id, "resetting the counters"))?;
            p.loaded
                .run(dev)
                .map_err(device_err(id, "profiling a frame"))?;
            p.frames += 1;
            out.extend(
                p.loaded
                    .counters()
                    .map_err(device_err(id, "reading the counters"))?,
            );
            if index == 0 {
                for name in read {
                    let bytes = p
                        .loaded
                        .read(name)
                        .map_err(device_err(id, format!("reading buffer `{name}`")))?;
                    buffers.insert(name.clone(), bytes);
                }
            }
        }
        Ok(Profile {
            steps: out,
            buffers,
        })
    }
}
