//! Modeled device time of a program that ran on the emulator: each step's per-core counters
//! ([`crate::runner::Loaded::counters`]) plus the scalar RISC-V work read off the kernel IR (the
//! `L1Gather` bytes a data-movement or compute kernel rearranges in L1, which the emulator cannot
//! count) go through [`tt_runtime::CostModel`]. Every figure is a model, never a measurement.
//!
//! Loops whose trips the kernel reads at run time ([`kir::Trips::Counted`], e.g. the descriptor
//! sampler's tiles of candidates) are charged with the counts the run left in the node's
//! [`kir::CountSource`] buffer ([`Counts::Run`]); [`Counts::Bound`] charges their bound instead,
//! the worst case the static report ([`crate::report`]) uses.
//!
//! A reader (writer) whose stream CB to (from) the compute kernel holds fewer than two of the
//! batches it pushes (pops) takes turns with the compute (`single_buffered`): the model adds
//! their cycles instead of overlapping them. A CB pushed only once (constant tiles set up before
//! the loops) makes no one wait and does not count.

use std::collections::BTreeMap;

use thiserror::Error;
use tt_runtime::{
    Axis, Contention, CostModel, KernelRole, KernelWork, PhasedKernel, StepEstimate, TimelineModel,
    TimelineStep,
};

use crate::device::Core;
use crate::kir::{self, Call, Kir, NodeKir, OnCore, Role};
use crate::phases::{handoffs, landed_wait, phases, Handoffs};
use crate::plan::CbKind;
use crate::runner::StepCounters;

/// The port's device time per trace replay on a p150a (device profiler, 23 ops; seed 000).
pub const PORT_MEASURED_US: f64 = 462.8;
/// DESIGN §6's goal for the device program on 12×10 as it was set by the roofline (v1).
pub const GOAL_US: f64 = 250.0;
/// Issue 18's target (DESIGN §6) by the timeline model (v2) at port precision, on 12×10.
pub const TIMELINE_TARGET_12X10_US: f64 = 300.0;
/// The same on 11×10.
pub const TIMELINE_TARGET_11X10_US: f64 = 330.0;

/// Counters and kernel IR that do not belong together.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ModelError {
    #[error("step `{0}` ran but has no kernel IR")]
    NoKir(String),
    #[error("step `{step}`: kernel `{kernel}` has no kernel IR of its role")]
    NoKernel { step: String, kernel: String },
    #[error("step `{step}` loops over counts from buffer `{buffer}`, which was not read after the run; read every buffer of `model::count_buffers`")]
    NoCounts { step: String, buffer: String },
    #[error("step `{step}`: core {index} reads its count at byte {offset} of buffer `{buffer}`, which holds {len} bytes")]
    ShortCounts {
        step: String,
        buffer: String,
        index: usize,
        offset: usize,
        len: usize,
    },
}

/// How the trips of counted loops ([`kir::Trips::Counted`]) are resolved.
#[derive(Debug, Clone, Copy)]
pub enum Counts<'a> {
    /// Every counted loop at its bound (the core's output blocks): the worst case.
    Bound,
    /// The bytes of the buffers the counted loops read, by buffer name, as a run left them
    /// ([`count_buffers`] names them).
    Run(&'a BTreeMap<String, Vec<u8>>),
}

/// One step's modeled time, with and without the scalar RISC-V work.
#[derive(Debug, Clone)]
pub struct NodeEstimate {
    pub node: String,
    pub op: String,
    pub with_scalar: StepEstimate,
    pub without_scalar: StepEstimate,
    /// DRAM bytes the static report expects (worst case: no cache hits, full candidate regions).
    pub static_dram_bytes: u64,
    /// What each core's kernels did, as modeled (counters and scalar cycles).
    pub work: Vec<(Core, Vec<KernelWork>)>,
}

/// The buffers whose run-time counts the counted loops of `kir` read, each once.
pub fn count_buffers(kir: &Kir) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for source in kir.nodes.iter().filter_map(|n| n.counted.as_ref()) {
        if !out.contains(&source.buffer) {
            out.push(source.buffer.clone());
        }
    }
    out
}

/// Every core of `node` with what its loops run over, the counted loops resolved by `counts`.
fn cores_of(node: &NodeKir, counts: Counts) -> Result<Vec<(Core, OnCore)>, ModelError> {
    let (Some(source), Counts::Run(buffers)) = (&node.counted, counts) else {
        return Ok(node.cores().collect());
    };
    let bytes = buffers
        .get(&source.buffer)
        .ok_or_else(|| ModelError::NoCounts {
            step: node.node.clone(),
            buffer: source.buffer.clone(),
        })?;
    node.cores()
        .enumerate()
        .map(|(index, (core, on))| {
            let offset = index * source.page_bytes as usize;
            let count = bytes
                .get(offset..offset + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or_else(|| ModelError::ShortCounts {
                    step: node.node.clone(),
                    buffer: source.buffer.clone(),
                    index,
                    offset,
                    len: bytes.len(),
                })?;
            let counted = source.trips(count, on.blocks);
            Ok((core, OnCore { counted, ..on }))
        })
        .collect()
}

fn runtime_role(role: Role) -> KernelRole {
    match role {
        Role::Reader => KernelRole::Reader,
        Role::Writer => KernelRole::Writer,
        Role::Compute => KernelRole::Compute,
    }
}

/// L1 bytes a kernel body rearranges on its RISC-V on core `on`.
fn gather_bytes(body: &[Call], on: OnCore) -> u64 {
    let mut bytes = 0;
    kir::walk(body, on, 1, &mut |call, times| {
        if let Call::L1Gather { bytes: b } = call {
            bytes += times * u64::from(*b);
        }
    });
    bytes
}

/// The largest batch of CB `cb` that a `CbPush` (`push`) or `CbWait` (else) of `body` names.
fn batch(body: &[Call], cb: u32, push: bool) -> u32 {
    let on = OnCore {
        blocks: 1,
        units: 1,
        counted: 1,
        sender: true,
        other_senders: 1,
        stager: false,
        first_sender: false,
    };
    let mut most = 0;
    kir::walk(body, on, 1, &mut |call, _| match call {
        Call::CbPush { cb: c, pages } if push && *c == cb => most = most.max(*pages),
        Call::CbWait { cb: c, pages } if !push && *c == cb => most = most.max(*pages),
        _ => {}
    });
    most
}

/// The CBs the kernel of `role` pushes (`push`) or waits on that another kernel of `node` waits
/// on or pushes: the CBs linking it to the next or the previous stage.
fn links(node: &NodeKir, role: KernelRole, push: bool) -> Vec<u32> {
    let cbs = |body: &[Call], push: bool| {
        let on = OnCore {
            blocks: 1,
            units: 1,
            counted: 1,
            sender: true,
            other_senders: 1,
            stager: false,
            first_sender: false,
        };
        let mut out = Vec::new();
        kir::walk(body, on, 1, &mut |call, _| match call {
            Call::CbPush { cb, .. } if push => out.push(*cb),
            Call::CbWait { cb, .. } if !push => out.push(*cb),
            _ => {}
        });
        out
    };
    let (mine, others): (Vec<_>, Vec<_>) = node
        .kernels
        .iter()
        .partition(|k| runtime_role(k.role) == role);
    let theirs: Vec<u32> = others.iter().flat_map(|k| cbs(&k.body, !push)).collect();
    mine.iter()
        .flat_map(|k| cbs(&k.body, push))
        .filter(|cb| theirs.contains(cb))
        .collect()
}

/// Whether `body` pushes CB `cb` more than once on a core of two blocks and two counted trips:
/// a CB pushed once (a constant tile set up before the loops) never makes its producer wait.
fn pushes_repeatedly(body: &[Call], cb: u32) -> bool {
    let on = OnCore {
        blocks: 2,
        units: 2,
        counted: 2,
        sender: true,
        other_senders: 1,
        stager: false,
        first_sender: false,
    };
    let mut pushes = 0;
    kir::walk(body, on, 1, &mut |call, times| {
        if matches!(call, Call::CbPush { cb: c, .. } if *c == cb) {
            pushes += times;
        }
    });
    pushes > 1
}

/// Whether the `role` data-movement kernel of `node` takes turns with the compute kernel: a
/// stream CB between them (the reader pushes and the compute waits, or the compute pushes and
/// the writer waits) that is pushed repeatedly holds fewer pages than two of the batches moved
/// through it.
fn single_buffered(node: &NodeKir, role: Role) -> bool {
    let body = |r: Role| {
        node.kernels
            .iter()
            .find(|k| k.role == r)
            .map(|k| &k.body[..])
    };
    let (Some(compute), Some(mover)) = (body(Role::Compute), body(role)) else {
        return false;
    };
    let (producer, consumer) = if role == Role::Reader {
        (mover, compute)
    } else {
        (compute, mover)
    };
    node.cbs
        .iter()
        .filter(|c| c.kind == CbKind::Stream)
        .any(|c| {
            let pushed = batch(producer, c.id, true);
            let waited = batch(consumer, c.id, false);
            pushed > 0
                && waited > 0
                && c.pages < 2 * pushed.max(waited)
                && pushes_repeatedly(producer, c.id)
        })
}

/// Models every step that ran, in launch order, its counted loops resolved by `counts`.
pub fn estimate(
    kir: &Kir,
    steps: &[StepCounters],
    counts: Counts,
    model: &CostModel,
) -> Result<Vec<NodeEstimate>, ModelError> {
    let static_dram: BTreeMap<String, u64> = crate::report::report(kir)
        .into_iter()
        .map(|r| (r.node, r.dram_read_bytes + r.dram_write_bytes))
        .collect();
    steps
        .iter()
        .map(|step| {
            let node = kir
                .nodes
                .iter()
                .find(|n| n.node == step.node)
                .ok_or_else(|| ModelError::NoKir(step.node.clone()))?;
            let on_cores = cores_of(node, counts)?;
            let (reader_turns, writer_turns) = (
                single_buffered(node, Role::Reader),
                single_buffered(node, Role::Writer),
            );
            let turns = |role: Role| match role {
                Role::Reader => reader_turns,
                Role::Writer => writer_turns,
                Role::Compute => false,
            };
            let mut cores: BTreeMap<Core, Vec<KernelWork>> = BTreeMap::new();
            for k in &step.kernels {
                let body = &node
                    .kernels
                    .iter()
                    .find(|kk| kk.role == k.role)
                    .ok_or_else(|| ModelError::NoKernel {
                        step: step.node.clone(),
                        kernel: k.kernel.clone(),
                    })?
                    .body;
                for (core, counters) in &k.cores {
                    let on = on_cores.iter().find(|(c, _)| c == core).map_or(
                        OnCore {
                            blocks: 0,
                            units: 0,
                            counted: 0,
                            sender: false,
                            other_senders: 0,
                            stager: false,
                            first_sender: false,
                        },
                        |(_, on)| *on,
                    );
                    cores.entry(*core).or_default().push(KernelWork {
                        role: runtime_role(k.role),
                        counters: *counters,
                        scalar_cycles: model.l1_rearrange_cycles(gather_bytes(body, on)),
                        single_buffered: turns(k.role),
                    });
                }
            }
            let with: Vec<Vec<KernelWork>> = cores.values().cloned().collect();
            let without: Vec<Vec<KernelWork>> = with
                .iter()
                .map(|ks| {
                    ks.iter()
                        .map(|k| KernelWork {
                            scalar_cycles: 0.0,
                            ..*k
                        })
                        .collect()
                })
                .collect();
            Ok(NodeEstimate {
                node: step.node.clone(),
                op: step.op.clone(),
                with_scalar: model.step(&with),
                without_scalar: model.step(&without),
                static_dram_bytes: static_dram.get(&step.node).copied().unwrap_or(0),
                work: cores.into_iter().collect(),
            })
        })
        .collect()
}

/// One step's modeled time by the timeline model (v2).
#[derive(Debug, Clone)]
pub struct NodeTimeline {
    pub node: String,
    pub op: String,
    pub step: TimelineStep,
    /// Per core and kernel, the work its phase split comes from against what the model
    /// charges its counters.
    pub phase_work: Vec<PhaseWork>,
}

/// One kernel's work on one core two ways: the cycles of its kernel IR's calls by the weights
/// its phases are split with ([`crate::phases::Phases::work`]), and the cycles the timeline
/// model charges the emulator's counters of the same run, of which `flight_cycles` are its
/// barriers' and semaphore waits' NoC flight (the IR has no call for them). Far apart, the IR
/// misdescribes the kernel and the split is off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseWork {
    pub core: Core,
    pub role: KernelRole,
    pub ir_cycles: f64,
    pub counted_cycles: f64,
    pub flight_cycles: f64,
}

/// Models every step that ran with the timeline model (v2): the same counters and scalar work
/// as [`estimate`], each kernel's phases read off its kernel IR ([`crate::phases`]).
pub fn timeline(
    kir: &Kir,
    steps: &[StepCounters],
    counts: Counts,
    model: &TimelineModel,
) -> Result<Vec<NodeTimeline>, ModelError> {
    let flat = estimate(kir, steps, counts, &CostModel::BLACKHOLE)?;
    flat.into_iter()
        .zip(steps)
        .map(|(n, counted)| {
            let node = kir
                .nodes
                .iter()
                .find(|k| k.node == n.node)
                .ok_or_else(|| ModelError::NoKir(n.node.clone()))?;
            let on_cores = cores_of(node, counts)?;
            // The resident CBs (filled once, e.g. a conv's weights, which its reader may push
            // round by round as a multicast lands them: `phases::landed_wait`), and per role the
            // other CBs linking it to the next and to the previous stage (the same on every
            // core).
            let resident: Vec<u32> = node
                .cbs
                .iter()
                .filter(|c| c.kind == CbKind::Resident)
                .map(|c| c.id)
                .collect();
            let linked =
                [KernelRole::Reader, KernelRole::Compute, KernelRole::Writer].map(|role| {
                    (
                        role,
                        [true, false].map(|push| {
                            let mut cbs = links(node, role, push);
                            cbs.retain(|cb| !resident.contains(cb));
                            cbs
                        }),
                    )
                });
            let mut phase_work = Vec::new();
            let cores: Vec<Vec<PhasedKernel>> = n
                .work
                .iter()
                .map(|(core, work)| {
                    let on = on_cores.iter().find(|(c, _)| c == core).map(|(_, on)| *on);
                    work.iter()
                        .map(|w| {
                            let body = node
                                .kernels
                                .iter()
                                .find(|k| runtime_role(k.role) == w.role)
                                .map(|k| &k.body[..])
                                .unwrap_or(&[]);
                            let p = on.map(|on| phases(body, on, &kir.arena));
                            let h = on
                                .zip(linked.iter().find(|(role, _)| *role == w.role))
                                .map_or(Handoffs::WHOLE_BLOCK, |(on, (_, [next, previous]))| {
                                    handoffs(body, on, next, previous, &kir.arena)
                                });
                            let kernel = PhasedKernel {
                                role: w.role,
                                counters: w.counters,
                                scalar_cycles: w.scalar_cycles,
                                single_buffered: w.single_buffered,
                                prologue_share: p.map_or(0.0, |p| p.prologue_share),
                                blocks: p.map_or(0, |p| p.blocks),
                                first_blocks: p.map_or(0, |p| p.first_blocks),
                                first_blocks_share: p.map_or(0.0, |p| p.first_blocks_share),
                                waits_for_sender: p.is_some_and(|p| p.waits_for_sender),
                                before_wait_share: p.map_or(0.0, |p| p.before_wait_share),
                                sends: p.is_some_and(|p| p.sends),
                                loads_share: p.map_or(0.0, |p| p.loads_share),
                                first_push_share: h.first_push_share,
                                last_push_share: h.last_push_share,
                                first_wait_share: h.first_wait_share,
                                last_wait_share: h.last_wait_share,
                                waits_first_round: p.is_some_and(|p| p.waits_first_round),
                                first_signal_share: p.map_or(0.0, |p| p.first_signal_share),
                                landed_wait_share: on
                                    .and_then(|on| landed_wait(body, on, &resident, &kir.arena)),
                                prologue_feeds: p.is_none_or(|p| p.feeds),
                            };
                            phase_work.push(PhaseWork {
                                core: *core,
                                role: w.role,
                                ir_cycles: p.map_or(0.0, |p| p.work),
                                counted_cycles: model.kernel_cycles(&kernel).total(),
                                flight_cycles: model.flight_cycles(&w.counters),
                            });
                            kernel
                        })
                        .collect()
                })
                .collect();
            Ok(NodeTimeline {
                node: n.node,
                op: n.op,
                step: model.contended_step(&cores, &counted.occupancy),
                phase_work,
            })
        })
        .collect()
}

/// Where the slowest core's time goes in the timeline model, in modeled µs, for a report line;
/// the start-up bound ([`TimelineStep::startup`]) after the senders' time when it is later.
pub fn why_timeline(t: &TimelineStep, clock_hz: f64) -> String {
    let s = &t.slowest;
    let us = |cycles: f64| cycles / clock_hz * 1e6;
    let bound = &t.startup;
    let binds = if bound.cycles() <= t.sender_cycles {
        String::new()
    } else if bound.link_cycles >= bound.bank_cycles {
        format!(", receivers' NoC port {:.1}", us(bound.cycles()))
    } else {
        format!(", DRAM banks {:.1}", us(bound.cycles()))
    };
    format!(
        "start-up {:.1} (senders {:.1}{binds}) first block {:.1} steady {:.1} | rd {:.1} cmp {:.1} wr {:.1} | dram {:.1} | {}",
        us(s.prologue),
        us(t.sender_cycles),
        us(s.first_block),
        us(s.steady),
        us(s.of(KernelRole::Reader)),
        us(s.of(KernelRole::Compute)),
        us(s.of(KernelRole::Writer)),
        t.dram_seconds * 1e6,
        busiest(&t.contention)
    )
}

/// The busiest NoC link and DRAM bank of a step, for a report line: where they are, their KiB
/// and their modeled µs at one link's or bank's rate.
pub fn busiest(c: &Contention) -> String {
    let link = c.link.map_or("no link used".to_string(), |(l, bytes)| {
        format!(
            "link NoC{} ({},{}) {} {} KiB {:.1}",
            l.noc,
            l.x,
            l.y,
            match l.axis {
                Axis::X => "x",
                Axis::Y => "y",
            },
            bytes / 1024,
            c.link_seconds * 1e6
        )
    });
    let bank = c.bank.map_or("no bank used".to_string(), |(b, bytes)| {
        format!("bank {b} {} KiB {:.1}", bytes / 1024, c.bank_seconds * 1e6)
    });
    format!("{link}, {bank}")
}

/// What the slowest core and DRAM spend, in modeled µs, for a report line.
pub fn why(e: &StepEstimate, clock_hz: f64) -> String {
    let s = &e.slowest;
    let us = |cycles: f64| cycles / clock_hz * 1e6;
    format!(
        "fpu {:.1} sfpu {:.1} pack {:.1} | rd noc {:.1} scalar {:.1} | wr noc {:.1} scalar {:.1} | dram {:.1}",
        us(s.fpu),
        us(s.sfpu),
        us(s.pack),
        us(s.reader_noc),
        us(s.reader_scalar),
        us(s.writer_noc),
        us(s.writer_scalar),
        e.dram_seconds * 1e6
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kir::{CountSource, Kernel, NodeKir, Trips};
    use crate::runner::KernelCounters;
    use tt_runtime::Counters;

    const CORES: [Core; 2] = [Core { x: 0, y: 0 }, Core { x: 1, y: 0 }];

    fn kernel(role: Role, body: Vec<Call>) -> Kernel {
        Kernel {
            role,
            template: String::new(),
            ranges: Vec::new(),
            compile_args: Vec::new(),
            runtime_arg_names: Vec::new(),
            runtime_args: Vec::new(),
            precision: None,
            unpack_to_dest_fp32: Vec::new(),
            body,
        }
    }

    /// Two cores of 4 blocks; the reader gathers 400 B once and 100 B per counted trip (16
    /// items a trip), the writer 8 B per block.
    fn kir() -> Kir {
        let gather = |bytes| Call::L1Gather { bytes };
        Kir {
            nodes: vec![NodeKir {
                node: "s".into(),
                op: "sample_descriptors".into(),
                ranges: Vec::new(),
                cbs: Vec::new(),
                semaphores: 0,
                blocks: CORES.iter().map(|c| (*c, 4)).collect(),
                units: Vec::new(),
                senders: vec![CORES[..1].to_vec()],
                stagers: Vec::new(),
                counted: Some(CountSource {
                    buffer: "s.counts".into(),
                    page_bytes: 64,
                    per_trip: 16,
                    per_block: 1,
                }),
                kernels: vec![
                    kernel(
                        Role::Reader,
                        vec![
                            gather(400),
                            Call::Loop {
                                trips: Trips::Counted,
                                body: vec![gather(100)],
                            },
                        ],
                    ),
                    kernel(
                        Role::Writer,
                        vec![Call::Loop {
                            trips: Trips::Blocks,
                            body: vec![gather(8)],
                        }],
                    ),
                ],
            }],
            arena: Default::default(),
        }
    }

    fn steps() -> Vec<StepCounters> {
        let counters = |role, kernel: &str| KernelCounters {
            kernel: kernel.into(),
            role,
            cores: CORES.iter().map(|c| (*c, Counters::default())).collect(),
        };
        vec![StepCounters {
            node: "s".into(),
            op: "sample_descriptors".into(),
            kernels: vec![
                counters(Role::Reader, "s_reader"),
                counters(Role::Writer, "s_writer"),
            ],
            occupancy: Default::default(),
        }]
    }

    /// Count pages of 64 bytes holding `counts`.
    fn pages(counts: &[u32]) -> Vec<u8> {
        counts
            .iter()
            .flat_map(|c| {
                let mut page = vec![0u8; 64];
                page[..4].copy_from_slice(&c.to_le_bytes());
                page
            })
            .collect()
    }

    /// (reader, writer) scalar cycles per core.
    fn scalar(counts: Counts) -> Result<Vec<(f64, f64)>, ModelError> {
        let nodes = estimate(&kir(), &steps(), counts, &CostModel::BLACKHOLE)?;
        Ok(nodes[0]
            .work
            .iter()
            .map(|(_, ks)| (ks[0].scalar_cycles, ks[1].scalar_cycles))
            .collect())
    }

    #[test]
    fn counted_loops_are_charged_with_the_run_counts_or_at_their_bound() {
        let buffers = BTreeMap::from([("s.counts".to_string(), pages(&[17, 1000]))]);
        // 5 cycles per 4-byte word. Core 0: 17 items → 2 trips, (400 + 2·100) / 4 · 5 = 750;
        // core 1: 1000 items → 63 trips, clamped to its 4 blocks: (400 + 400) / 4 · 5 = 1000.
        // Writers: 4 blocks · 8 B / 4 · 5 = 40.
        assert_eq!(
            scalar(Counts::Run(&buffers)),
            Ok(vec![(750.0, 40.0), (1000.0, 40.0)])
        );
        assert_eq!(
            scalar(Counts::Bound),
            Ok(vec![(1000.0, 40.0), (1000.0, 40.0)])
        );
        let empty = BTreeMap::from([("s.counts".to_string(), pages(&[0, 16]))]);
        // 0 items → no trip: 400 / 4 · 5 = 500; 16 items → 1 trip: 500 / 4 · 5 = 625.
        assert_eq!(
            scalar(Counts::Run(&empty)),
            Ok(vec![(500.0, 40.0), (625.0, 40.0)])
        );
        assert_eq!(count_buffers(&kir()), vec!["s.counts".to_string()]);
    }

    /// A reader and a compute kernel sharing stream CB 0 (`pages` pages, batches of 2 pushed per
    /// block, or once before the blocks).
    fn stream_node(pages: u32, per_block: bool) -> NodeKir {
        let push = vec![
            Call::CbReserve { cb: 0, pages: 2 },
            Call::CbPush { cb: 0, pages: 2 },
        ];
        let wait = vec![
            Call::CbWait { cb: 0, pages: 2 },
            Call::CbPop { cb: 0, pages: 2 },
        ];
        let in_blocks = |body: Vec<Call>| {
            if per_block {
                vec![Call::Loop {
                    trips: Trips::Blocks,
                    body,
                }]
            } else {
                body
            }
        };
        NodeKir {
            node: "n".into(),
            op: "op".into(),
            ranges: Vec::new(),
            cbs: vec![crate::plan::CbPlan {
                id: 0,
                name: "cb_in".into(),
                pages,
                page_bytes: 2048,
                format: crate::device::Format::Bf16,
                kind: crate::plan::CbKind::Stream,
                buffer: None,
            }],
            semaphores: 0,
            blocks: CORES.iter().map(|c| (*c, 4)).collect(),
            units: Vec::new(),
            senders: Vec::new(),
            stagers: Vec::new(),
            counted: None,
            kernels: vec![
                kernel(Role::Reader, in_blocks(push)),
                kernel(Role::Compute, in_blocks(wait)),
            ],
        }
    }

    #[test]
    fn only_repeated_pushes_into_a_short_stream_take_turns() {
        assert!(single_buffered(&stream_node(2, true), Role::Reader));
        assert!(single_buffered(&stream_node(3, true), Role::Reader));
        assert!(!single_buffered(&stream_node(4, true), Role::Reader));
        assert!(!single_buffered(&stream_node(2, false), Role::Reader));
        assert!(!single_buffered(&stream_node(2, true), Role::Writer));
    }

    #[test]
    fn missing_or_short_count_buffers_are_typed_errors() {
        assert_eq!(
            scalar(Counts::Run(&BTreeMap::new())),
            Err(ModelError::NoCounts {
                step: "s".into(),
                buffer: "s.counts".into()
            })
        );
        let short = BTreeMap::from([("s.counts".to_string(), pages(&[3]))]);
        assert_eq!(
            scalar(Counts::Run(&short)),
            Err(ModelError::ShortCounts {
                step: "s".into(),
                buffer: "s.counts".into(),
                index: 1,
                offset: 64,
                len: 64
            })
        );
    }
}
