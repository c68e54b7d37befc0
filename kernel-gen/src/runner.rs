//! Runs a compiled program on a tt-runtime device (the emulator, or a card with the `metal`
//! build): allocates its DRAM buffers and places its L1 buffers in the device's [`L1Arena`], builds each step's program once (kernels, CBs,
//! semaphores, runtime args with buffer addresses and the device's NoC coordinates of cores), fills the weight and filter buffers, and then runs the steps in launch order, directly
//! or captured in a trace. Buffers are reached by name; an NMS-variant program shares the main
//! program's buffers for its external inputs, so nothing is copied between the two.
//!
//! Programs loaded on one device run one at a time and none keeps an arena buffer from one run
//! to the next (what another program reads stays in DRAM), so they all share one L1 arena: one
//! L1 buffer at the top of every core's L1, as large as the first program that needs one
//! allows; a later program must fit it (its buffers inside, its CBs below). The resident
//! weights' copies (`plan::BufferPlan::resident`) are L1 buffers below the arena, written once
//! on every core, which the steps' CBs live in (`plan::CbPlan::buffer`); the device keeps them
//! by buffer name, so programs with the same resident buffers (the main programs for other plane
//! sizes) share them, and room for them is reserved when the arena is made. Staged weights
//! (`plan::BufferPlan::staged_by`) are DRAM buffers (the weights are uploaded there) with a slot
//! in the arena, which the stager's and the conv's CBs live in (`Program::add_cb_in_at`): the
//! stager's kernels fill it from DRAM on every frame (`ops::stage`).

use std::collections::BTreeMap;
use std::sync::Arc;

use superpoint_graph::WeightSet;
use thiserror::Error;
use tt_runtime::{
    Buffer, CbSpec, CoreCoord, Counters, DataFormat, Device, KernelId, KernelSpec, MathFidelity,
    Occupancy, Program, Trace,
};

use crate::device::{Core, CoreRange, Fidelity, Format};
use crate::kir::{Arg, Role};
use crate::layout::{pack_conv_bias, pack_conv_weights};
use crate::plan::{cbs_l1_bytes, resident, BufferPlan, Content};
use crate::program::{Compiled, DeviceProgram, ProgramError};

/// What went wrong loading or running a program.
#[derive(Debug, Error)]
pub enum RunError {
    #[error(transparent)]
    Runtime(#[from] tt_runtime::Error),
    #[error(transparent)]
    Program(Box<ProgramError>),
    #[error("kernel `{kernel}`: its source `{source_name}` is not in the compiled program")]
    MissingSource { kernel: String, source_name: String },
    #[error("compute kernel `{0}` has no fidelity or DST mode in the program")]
    ComputeConfig(String),
    #[error(
        "kernel `{kernel}`: runtime arg names buffer `{buffer}`, which the program does not have"
    )]
    UnknownArgBuffer { kernel: String, buffer: String },
    #[error("buffer `{0}` is not in the program")]
    UnknownBuffer(String),
    #[error("buffer `{buffer}` holds {size} bytes, got {len}")]
    Size { buffer: String, size: u64, len: u64 },
    #[error("buffer `{buffer}` needs weight entry `{entry}`, which the weight set does not have")]
    MissingWeights { buffer: String, entry: String },
    #[error("external buffer `{0}` is not in the program it should be shared from")]
    NotShared(String),
    #[error("external buffer `{buffer}` was compiled to be {planned} but the program it is shared from has it {found}; compile this program with that program's placement (`variants::shared_l1`)")]
    SharedPlacement {
        buffer: String,
        planned: String,
        found: String,
    },
    #[error("the program needs an L1 arena of {need} bytes per core but the device's, shared with the programs loaded before, has {have} (load the program with the largest arena first, or on a device of its own)")]
    ArenaTooSmall { need: u32, have: u32 },
    #[error("step `{step}`: its CBs need {cbs} bytes of L1 per core but the device's L1 arena and resident weights leave {free} below them")]
    ArenaOverlap { step: String, cbs: u32, free: u32 },
    #[error("the program keeps {need} bytes of weights resident in L1 per core that the device does not hold yet, but the programs loaded before it left room for {free} (load the program with the most resident weights first, or on a device of its own)")]
    ResidentRoom { need: u32, free: u32 },
    #[error("resident buffer `{0}` already holds other bytes, written by a program loaded before on this device: programs sharing a device share its resident weights (load a model with other weights on a device of its own)")]
    ResidentConflict(String),
    #[error("resident buffer `{buffer}` has {size} bytes but the device's copy of that name, from a program loaded before, has {found}")]
    ResidentSize {
        buffer: String,
        size: u64,
        found: u64,
    },
    #[error("step `{step}`: CB `{cb}` lives in buffer `{buffer}`, which is neither a resident nor a staged buffer of the program")]
    NotResident {
        step: String,
        cb: String,
        buffer: String,
    },
    #[error(
        "the program was planned for {planned} L1 banks (its grid) but the device has {device}"
    )]
    Banks { planned: u32, device: u32 },
    #[error("step `{step}`: semaphore {expected} got id {got} from the device; the kernels address them as 0..{count}")]
    SemaphoreId {
        step: String,
        expected: u32,
        got: u32,
        count: u32,
    },
}

/// Work counters of one kernel of a step, per core.
#[derive(Debug, Clone)]
pub struct KernelCounters {
    pub kernel: String,
    pub role: Role,
    pub cores: Vec<(Core, Counters)>,
}

/// Work counters of one step (one node's program).
#[derive(Debug, Clone)]
pub struct StepCounters {
    pub node: String,
    pub op: String,
    pub kernels: Vec<KernelCounters>,
    /// Bytes over each NoC link and DRAM bank, every kernel and core of the step.
    pub occupancy: Occupancy,
}

/// The bytes of every weight and resize-filter buffer of `program`, by buffer name: convolution
/// weights and biases from `weights`, resize filters from the program's sizes.
pub fn weight_bytes(
    program: &DeviceProgram,
    weights: &WeightSet,
) -> Result<BTreeMap<String, Vec<u8>>, RunError> {
    let mut out = BTreeMap::new();
    for b in &program.buffers {
        let bytes = match &b.content {
            Content::ConvWeights { entry }
            | Content::ConvBias { entry }
            | Content::ConvWeightsHiLo { entry }
            | Content::ConvBiasFp32 { entry } => {
                let w = weights.get(entry).ok_or_else(|| RunError::MissingWeights {
                    buffer: b.name.clone(),
                    entry: entry.clone(),
                })?;
                match b.content {
                    Content::ConvWeights { .. } => pack_conv_weights(w, Format::Bf16),
                    Content::ConvWeightsHiLo { .. } => pack_conv_weights(w, Format::Fp32),
                    Content::ConvBiasFp32 { .. } => pack_conv_bias(w, Format::Fp32),
                    _ => pack_conv_bias(w, Format::Bf16),
                }
            }
            other => match crate::plan::resize::filter_bytes(other) {
                Some(bytes) => bytes,
                None => continue,
            },
        };
        out.insert(b.name.clone(), bytes);
    }
    Ok(out)
}

/// The L1 region the L1 buffers of every program loaded on one device live in (see the module
/// docs). Clones share it.
#[derive(Clone, Default)]
pub struct L1Arena {
    inner: Arc<std::sync::Mutex<Option<ArenaRegion>>>,
}

struct ArenaRegion {
    buffer: Arc<Buffer>,
    /// Logical core of each L1 bank.
    banks: Vec<CoreCoord>,
    /// Bytes per core reserved below the arena for resident copies.
    copy_room: u32,
    /// The device's L1 alignment, which the copies are sized by (`plan::resident::copy_bytes`).
    alignment: u32,
    /// The resident copies on the device by buffer name, each with its bytes per core and a
    /// hash of what was written to it (none yet).
    copies: BTreeMap<String, (Arc<Buffer>, u32, Option<u64>)>,
}

impl L1Arena {
    /// An arena with no region yet; the first program that needs one allocates it.
    pub fn new() -> L1Arena {
        L1Arena::default()
    }

    /// The region for `program`, allocating it on first use as large as the program's largest
    /// CBs leave room for; checks that the program fits it.
    fn region_for(
        &self,
        dev: &Device,
        program: &DeviceProgram,
    ) -> Result<(Arc<Buffer>, Vec<CoreCoord>), RunError> {
        let info = dev.info()?;
        let cbs = |s: &crate::program::Step| -> u32 {
            u32::try_from(cbs_l1_bytes(&s.cbs, info.l1_alignment)).unwrap_or(u32::MAX)
        };
        let usable = info.l1_size - info.l1_unreserved_base;
        let copy_bytes = resident::l1_bytes(&program.buffers, info.l1_alignment);
        let mut guard = self.lock()?;
        if guard.is_none() {
            let largest = program.steps.iter().map(cbs).max().unwrap_or(0);
            let bytes = usable.saturating_sub(largest).saturating_sub(copy_bytes);
            let banks = info.l1_banks;
            *guard = Some(ArenaRegion {
                buffer: Arc::new(dev.l1_buffer(bytes)?),
                banks: (0..banks)
                    .map(|b| dev.l1_bank_core(b))
                    .collect::<Result<_, _>>()?,
                copy_room: copy_bytes,
                alignment: info.l1_alignment,
                copies: BTreeMap::new(),
            });
        }
        let region = guard
            .as_ref()
            .ok_or_else(|| RunError::Runtime(tt_runtime::Error::Internal("no L1 arena".into())))?;
        let have = region.buffer.size() as u32;
        if program.l1_arena > have {
            return Err(RunError::ArenaTooSmall {
                need: program.l1_arena,
                have,
            });
        }
        let free = usable.saturating_sub(have).saturating_sub(region.copy_room);
        for step in &program.steps {
            if cbs(step) > free {
                return Err(RunError::ArenaOverlap {
                    step: step.node.clone(),
                    cbs: cbs(step),
                    free,
                });
            }
        }
        let planned = program.grid.x * program.grid.y;
        if planned != region.banks.len() as u32 {
            return Err(RunError::Banks {
                planned,
                device: region.banks.len() as u32,
            });
        }
        Ok((region.buffer.clone(), region.banks.clone()))
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Option<ArenaRegion>>, RunError> {
        self.inner.lock().map_err(|_| {
            RunError::Runtime(tt_runtime::Error::Internal("L1 arena lock poisoned".into()))
        })
    }

    /// The device's resident copy of buffer `b`: the one a program loaded before made under its
    /// name, or a new one in the room reserved below the arena.
    fn copy(&self, dev: &Device, b: &BufferPlan) -> Result<Arc<Buffer>, RunError> {
        let (name, size) = (
            b.name.as_str(),
            u64::from(b.pages) * u64::from(b.page_bytes),
        );
        let mut guard = self.lock()?;
        let region = guard
            .as_mut()
            .ok_or_else(|| RunError::Runtime(tt_runtime::Error::Internal("no L1 arena".into())))?;
        if let Some((found, ..)) = region.copies.get(name) {
            if found.size() != size {
                return Err(RunError::ResidentSize {
                    buffer: name.to_string(),
                    size,
                    found: found.size(),
                });
            }
            return Ok(found.clone());
        }
        let used: u32 = region.copies.values().map(|(_, bytes, _)| bytes).sum();
        let free = region.copy_room.saturating_sub(used);
        let aligned = resident::copy_bytes(b, region.alignment);
        if aligned > free {
            return Err(RunError::ResidentRoom {
                need: aligned,
                free,
            });
        }
        let buffer = Arc::new(dev.l1_buffer(u32::try_from(size).unwrap_or(u32::MAX))?);
        region
            .copies
            .insert(name.to_string(), (buffer.clone(), aligned, None));
        Ok(buffer)
    }

    /// Writes `bytes` to every core's copy of resident buffer `name` on `cores`, unless the
    /// copy holds them already; a copy another program filled with other bytes is an error
    /// (programs share copies by name, so they must share the weights).
    fn write_copy(&self, name: &str, cores: &[CoreCoord], bytes: &[u8]) -> Result<(), RunError> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(bytes, &mut hasher);
        let hash = std::hash::Hasher::finish(&hasher);
        let mut guard = self.lock()?;
        let (buffer, _, written) = guard
            .as_mut()
            .and_then(|r| r.copies.get_mut(name))
            .ok_or_else(|| RunError::UnknownBuffer(name.to_string()))?;
        match *written {
            Some(h) if h == hash => return Ok(()),
            Some(_) => return Err(RunError::ResidentConflict(name.to_string())),
            None => {}
        }
        for core in cores {
            buffer.write_core(*core, 0, bytes)?;
        }
        *written = Some(hash);
        Ok(())
    }
}

/// Where a buffer of a loaded program lives.
#[derive(Clone)]
enum Placed {
    Dram(Arc<Buffer>),
    L1(L1Pages),
    /// Resident copy `name` of `arena` on each of `cores`.
    Copies {
        buffer: Arc<Buffer>,
        cores: Arc<Vec<CoreCoord>>,
        arena: L1Arena,
        name: String,
    },
    /// Staged weights (`plan::BufferPlan::staged_by`): read and written in DRAM, and copied
    /// whole by the stager's kernels into the slot at `offset` of the `arena` buffer on every
    /// core for the steps from the stager's to the conv's, whose CBs live there.
    Staged {
        dram: Arc<Buffer>,
        arena: Arc<Buffer>,
        offset: u32,
    },
}

/// An L1 buffer: pages interleaved over the arena's banks from byte `offset` of each bank's slot.
#[derive(Clone)]
struct L1Pages {
    arena: Arc<Buffer>,
    banks: Arc<Vec<CoreCoord>>,
    offset: u32,
    page_bytes: u32,
    pages: u32,
}

impl L1Pages {
    /// Bank core and arena offset of page `p`.
    fn page(&self, p: u64) -> (CoreCoord, u32) {
        let n = self.banks.len() as u64;
        let slot = self.page_bytes.div_ceil(L1_PAGE_ALIGNMENT) * L1_PAGE_ALIGNMENT;
        (
            self.banks[(p % n) as usize],
            self.offset + (p / n) as u32 * slot,
        )
    }
}

impl Placed {
    fn address(&self) -> u32 {
        match self {
            Placed::Dram(b) | Placed::Staged { dram: b, .. } => b.address(),
            Placed::L1(l1) => l1.arena.address() + l1.offset,
            Placed::Copies { buffer, .. } => buffer.address(),
        }
    }

    fn size(&self) -> u64 {
        match self {
            Placed::Dram(b) | Placed::Staged { dram: b, .. } => b.size(),
            Placed::L1(l1) => u64::from(l1.page_bytes) * u64::from(l1.pages),
            Placed::Copies { buffer, .. } => buffer.size(),
        }
    }

    fn write(&self, bytes: &[u8]) -> Result<(), RunError> {
        match self {
            Placed::Dram(b) | Placed::Staged { dram: b, .. } => Ok(b.write(bytes)?),
            Placed::L1(l1) => {
                for (p, page) in bytes.chunks(l1.page_bytes as usize).enumerate() {
                    let (core, at) = l1.page(p as u64);
                    l1.arena.write_core(core, at, page)?;
                }
                Ok(())
            }
            Placed::Copies {
                cores, arena, name, ..
            } => arena.write_copy(name, cores, bytes),
        }
    }

    fn read_pages(&self, first: u64, pages: u64, out: &mut [u8]) -> Result<(), RunError> {
        match self {
            Placed::Dram(b) | Placed::Staged { dram: b, .. } => {
                Ok(b.read_pages(first, pages, out)?)
            }
            Placed::L1(l1) => {
                for (i, page) in out.chunks_mut(l1.page_bytes as usize).enumerate() {
                    let (core, at) = l1.page(first + i as u64);
                    l1.arena.read_core(core, at, page)?;
                }
                Ok(())
            }
            // Every core holds the same bytes: the first core's copy.
            Placed::Copies { buffer, cores, .. } => {
                let core = cores.first().copied().unwrap_or(CoreCoord::new(0, 0));
                let page_bytes = out.len() as u64 / pages.max(1);
                let offset = u32::try_from(first * page_bytes).unwrap_or(u32::MAX);
                Ok(buffer.read_core(core, offset, out)?)
            }
        }
    }
}

/// The NoC alignment of L1 pages (tt-metal aligns interleaved L1 pages to it).
const L1_PAGE_ALIGNMENT: u32 = 16;

struct LoadedStep {
    node: String,
    op: String,
    program: Program,
    kernels: Vec<(String, Role, KernelId, Vec<Core>)>,
}

/// A compiled program loaded on a device.
pub struct Loaded {
    program: DeviceProgram,
    buffers: BTreeMap<String, Placed>,
    steps: Vec<LoadedStep>,
    arena: L1Arena,
}

fn cores(ranges: &[CoreRange]) -> Vec<Core> {
    ranges
        .iter()
        .flat_map(|r| {
            (r.start.y..=r.end.y)
                .flat_map(move |y| (r.start.x..=r.end.x).map(move |x| Core { x, y }))
        })
        .collect()
}

fn runtime_range(r: &CoreRange) -> tt_runtime::CoreRange {
    tt_runtime::CoreRange::new(
        CoreCoord::new(r.start.x, r.start.y),
        CoreCoord::new(r.end.x, r.end.y),
    )
}

fn fidelity(f: Fidelity) -> MathFidelity {
    match f {
        Fidelity::LoFi => MathFidelity::LoFi,
        Fidelity::HiFi2 => MathFidelity::HiFi2,
        Fidelity::HiFi3 => MathFidelity::HiFi3,
        Fidelity::HiFi4 => MathFidelity::HiFi4,
    }
}

fn data_format(f: Format) -> DataFormat {
    match f {
        Format::Bf16 => DataFormat::Float16B,
        Format::Fp32 => DataFormat::Float32,
    }
}

impl Loaded {
    /// Loads `compiled` on `dev` with an L1 arena of its own; external inputs get buffers of
    /// their own, which the caller fills.
    pub fn load(dev: &Device, compiled: &Compiled) -> Result<Loaded, RunError> {
        Loaded::load_in(dev, compiled, &L1Arena::new(), None)
    }

    /// Loads `compiled` on `dev`, its external inputs being `main`'s buffers of the same names
    /// and its L1 buffers in `main`'s arena.
    pub fn load_sharing(
        dev: &Device,
        compiled: &Compiled,
        main: &Loaded,
    ) -> Result<Loaded, RunError> {
        Loaded::load_in(dev, compiled, &main.arena, Some(main))
    }

    /// Loads `compiled` on `dev` with its L1 buffers in `arena` (one per device, shared by every
    /// program loaded on it) and its external inputs from `main` when given.
    pub fn load_in(
        dev: &Device,
        compiled: &Compiled,
        arena: &L1Arena,
        main: Option<&Loaded>,
    ) -> Result<Loaded, RunError> {
        let program = compiled.program.clone();
        let region = if program
            .buffers
            .iter()
            .any(|b| b.l1_offset.is_some() || b.resident)
        {
            Some(arena.region_for(dev, &program)?)
        } else {
            None
        };
        let banks = region.as_ref().map(|(_, banks)| Arc::new(banks.clone()));
        let mut buffers = BTreeMap::new();
        for b in &program.buffers {
            let shared = match (&b.content, main) {
                (Content::External { .. }, Some(main)) => Some(
                    main.buffers
                        .get(&b.name)
                        .cloned()
                        .ok_or_else(|| RunError::NotShared(b.name.clone()))?,
                ),
                _ => None,
            };
            let placed = match (shared, b.l1_offset, &region, &banks) {
                (None, None, Some(_), Some(banks)) if b.resident => Placed::Copies {
                    buffer: arena.copy(dev, b)?,
                    cores: banks.clone(),
                    arena: arena.clone(),
                    name: b.name.clone(),
                },
                (Some(placed), ..) => {
                    let found = match &placed {
                        Placed::Dram(_) | Placed::Copies { .. } | Placed::Staged { .. } => None,
                        Placed::L1(p) => Some(p.offset),
                    };
                    if found != b.l1_offset {
                        let at = |o: Option<u32>| {
                            o.map_or("in DRAM".to_string(), |o| format!("in L1 at offset {o}"))
                        };
                        return Err(RunError::SharedPlacement {
                            buffer: b.name.clone(),
                            planned: at(b.l1_offset),
                            found: at(found),
                        });
                    }
                    placed
                }
                (None, Some(offset), Some((buffer, _)), Some(_)) if b.staged_by.is_some() => {
                    Placed::Staged {
                        dram: Arc::new(dev.dram_buffer(
                            u64::from(b.pages) * u64::from(b.page_bytes),
                            b.page_bytes,
                        )?),
                        arena: buffer.clone(),
                        offset,
                    }
                }
                (None, Some(offset), Some((buffer, _)), Some(banks)) => Placed::L1(L1Pages {
                    arena: buffer.clone(),
                    banks: banks.clone(),
                    offset,
                    page_bytes: b.page_bytes,
                    pages: b.pages,
                }),
                _ => Placed::Dram(Arc::new(dev.dram_buffer(
                    u64::from(b.pages) * u64::from(b.page_bytes),
                    b.page_bytes,
                )?)),
            };
            buffers.insert(b.name.clone(), placed);
        }
        let mut steps = Vec::with_capacity(program.steps.len());
        for step in &program.steps {
            let ranges: Vec<tt_runtime::CoreRange> =
                step.ranges.iter().map(runtime_range).collect();
            let mut prog = dev.program()?;
            for cb in &step.cbs {
                let spec = CbSpec {
                    id: cb.id,
                    cores: ranges.clone(),
                    total_size: cb.pages * cb.page_bytes,
                    page_size: cb.page_bytes,
                    format: data_format(cb.format),
                };
                match &cb.buffer {
                    None => prog.add_cb(&spec)?,
                    Some(name) => match buffers.get(name) {
                        Some(Placed::Copies { buffer, .. }) => prog.add_cb_in(&spec, buffer)?,
                        Some(Placed::Staged { arena, offset, .. }) => {
                            prog.add_cb_in_at(&spec, arena, *offset)?
                        }
                        _ => {
                            return Err(RunError::NotResident {
                                step: step.node.clone(),
                                cb: cb.name.clone(),
                                buffer: name.clone(),
                            })
                        }
                    },
                }
            }
            for expected in 0..step.semaphores {
                let got = prog.add_semaphore(&ranges, 0)?;
                if got != expected {
                    return Err(RunError::SemaphoreId {
                        step: step.node.clone(),
                        expected,
                        got,
                        count: step.semaphores,
                    });
                }
            }
            let mut kernels = Vec::with_capacity(step.kernels.len());
            for k in &step.kernels {
                let source =
                    compiled
                        .sources
                        .get(&k.source)
                        .ok_or_else(|| RunError::MissingSource {
                            kernel: k.name.clone(),
                            source_name: k.source.clone(),
                        })?;
                let kr: Vec<tt_runtime::CoreRange> = k.ranges.iter().map(runtime_range).collect();
                let compile_args: Vec<u32> = k.compile_args.iter().map(|a| a.value).collect();
                let spec = match k.role {
                    Role::Reader => KernelSpec::reader(&k.name, source, &kr),
                    Role::Writer => KernelSpec::writer(&k.name, source, &kr),
                    Role::Compute => {
                        let (Some(f), Some(fp32)) = (k.fidelity, k.fp32_dest_acc) else {
                            return Err(RunError::ComputeConfig(k.name.clone()));
                        };
                        k.unpack_to_dest_fp32.iter().fold(
                            KernelSpec::compute(&k.name, source, &kr)
                                .fidelity(fidelity(f))
                                .fp32_dest_acc(fp32),
                            |spec, &cb| spec.unpack_to_dest_fp32(cb),
                        )
                    }
                }
                .compile_args(&compile_args);
                let id = prog.add_kernel(&spec)?;
                for core in k.core_args().map_err(|e| RunError::Program(Box::new(e)))? {
                    let args = core
                        .args
                        .iter()
                        .map(|a| match a {
                            Arg::Const(v) => Ok(*v),
                            Arg::BufferAddress(name) => buffers
                                .get(name)
                                .map(Placed::address)
                                .ok_or_else(|| RunError::UnknownArgBuffer {
                                    kernel: k.name.clone(),
                                    buffer: name.clone(),
                                }),
                            Arg::NocX(c) => Ok(dev.worker_core(CoreCoord::new(c.x, c.y))?.x),
                            Arg::NocY(c) => Ok(dev.worker_core(CoreCoord::new(c.x, c.y))?.y),
                        })
                        .collect::<Result<Vec<u32>, RunError>>()?;
                    prog.set_runtime_args(id, CoreCoord::new(core.core.x, core.core.y), &args)?;
                }
                kernels.push((k.name.clone(), k.role, id, cores(&k.ranges)));
            }
            steps.push(LoadedStep {
                node: step.node.clone(),
                op: step.op.clone(),
                program: prog,
                kernels,
            });
        }
        Ok(Loaded {
            program,
            buffers,
            steps,
            arena: arena.clone(),
        })
    }

    /// The dispatch program this was loaded from.
    pub fn program(&self) -> &DeviceProgram {
        &self.program
    }

    fn buffer(&self, name: &str) -> Result<&Placed, RunError> {
        self.buffers
            .get(name)
            .ok_or_else(|| RunError::UnknownBuffer(name.to_string()))
    }

    /// Writes the whole buffer `name` (in DRAM or L1).
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<(), RunError> {
        let buffer = self.buffer(name)?;
        if bytes.len() as u64 != buffer.size() {
            return Err(RunError::Size {
                buffer: name.to_string(),
                size: buffer.size(),
                len: bytes.len() as u64,
            });
        }
        buffer.write(bytes)
    }

    /// Reads the whole buffer `name`. An L1 buffer ([`crate::arena`]) holds its tensor only
    /// until a later step reuses its bytes: read it right after the step that writes it.
    pub fn read(&self, name: &str) -> Result<Vec<u8>, RunError> {
        let plan = self.plan_of(name)?;
        self.read_pages(name, 0, u64::from(plan.pages))
    }

    fn plan_of(&self, name: &str) -> Result<&crate::plan::BufferPlan, RunError> {
        self.program
            .buffers
            .iter()
            .find(|b| b.name == name)
            .ok_or_else(|| RunError::UnknownBuffer(name.to_string()))
    }

    /// Reads pages `first..first + pages` of buffer `name` (e.g. the descriptor rows returned).
    pub fn read_pages(&self, name: &str, first: u64, pages: u64) -> Result<Vec<u8>, RunError> {
        let page_bytes = u64::from(self.plan_of(name)?.page_bytes);
        let mut out = vec![0u8; (pages * page_bytes) as usize];
        self.buffer(name)?.read_pages(first, pages, &mut out)?;
        Ok(out)
    }

    /// Fills every weight and resize-filter buffer ([`weight_bytes`]).
    pub fn upload_weights(&self, weights: &WeightSet) -> Result<(), RunError> {
        for (name, bytes) in weight_bytes(&self.program, weights)? {
            self.write(&name, &bytes)?;
        }
        Ok(())
    }

    /// Runs every step in launch order and waits for the device.
    pub fn run(&self, dev: &Device) -> Result<(), RunError> {
        for step in &self.steps {
            dev.enqueue(&step.program)?;
        }
        Ok(dev.finish()?)
    }

    /// Runs the steps of the named nodes only, in launch order.
    pub fn run_nodes(&self, dev: &Device, nodes: &[&str]) -> Result<(), RunError> {
        for step in self
            .steps
            .iter()
            .filter(|s| nodes.contains(&s.node.as_str()))
        {
            dev.enqueue(&step.program)?;
        }
        Ok(dev.finish()?)
    }

    /// Captures every step in a trace (the program must have run once before).
    pub fn capture(&self, dev: &Device) -> Result<Trace, RunError> {
        Ok(dev.capture_trace(|d| {
            for step in &self.steps {
                d.enqueue(&step.program)?;
            }
            Ok(())
        })?)
    }

    /// Work counters of every step since loading (or the last reset), per kernel and core.
    pub fn counters(&self) -> Result<Vec<StepCounters>, RunError> {
        self.steps
            .iter()
            .map(|s| {
                let kernels = s
                    .kernels
                    .iter()
                    .map(|(name, role, id, cores)| {
                        let per_core = cores
                            .iter()
                            .map(|c| {
                                Ok((*c, s.program.core_counters(*id, CoreCoord::new(c.x, c.y))?))
                            })
                            .collect::<Result<Vec<_>, RunError>>()?;
                        Ok(KernelCounters {
                            kernel: name.clone(),
                            role: *role,
                            cores: per_core,
                        })
                    })
                    .collect::<Result<Vec<_>, RunError>>()?;
                Ok(StepCounters {
                    node: s.node.clone(),
                    op: s.op.clone(),
                    kernels,
                    occupancy: s.program.occupancy()?,
                })
            })
            .collect()
    }

    /// Zeroes the work counters of every step.
    pub fn reset_counters(&mut self) -> Result<(), RunError> {
        for step in &mut self.steps {
            step.program.reset_counters()?;
        }
        Ok(())
    }
}
