//! Cost model v2 ([`TimelineModel`]): each core's time is a timeline of the kernels' phases
//! (prologue, pipelined blocks, drain) at rates measured on Blackhole silicon, instead of the
//! roofline's maximum of totals at peak rates. Every constant and its public source is in the
//! table of the [`cost`](super) module docs; what the model still leaves out is listed there too.
//!
//! Per kernel (counters from the emulator, phase facts from the caller, e.g. kernel-gen's kernel
//! IR through `kernel_gen::phases` and `kernel_gen::model::timeline`):
//! * **compute**: every FPU tile operation takes the longer of its math cycles and the
//!   unpackers' L1 reads for it (each unpacker reads at most 64 B/cycle; a matmul's busier
//!   unpacker reads one tile per product whatever the block, [`TimelineModel::fpu_cycles`]);
//!   SFPU passes add their measured cycles per tile
//!   by kind; the packer runs beside the math.
//! * **data movement**: each transfer at the lower of its size's rate (the roofline's table) and
//!   the measured bulk rate of its kind (DRAM read, DRAM write, core to core), plus the issue
//!   cycles; each multicast at its measured cost for the cores it reaches
//!   ([`TimelineModel::multicast_cycles`]); plus the NoC flight time (hops × 9 cycles, mean hops
//!   of the kernel's transactions) of every barrier and semaphore wait; plus the scalar work.
//!
//! Per core, each kernel splits into a prologue (its [`PhasedKernel::prologue_share`] of its
//! cycles, e.g. the weights fill and the input ring's first reads) and the core's block steps:
//! as many as the kernel with the most [`PhasedKernel::blocks`] runs (a kernel whose loop runs
//! fewer, e.g. once per two blocks, spreads its work over them). A kernel whose prologue waits
//! for a multicast ([`PhasedKernel::waits_for_sender`]) does its work before that wait
//! ([`PhasedKernel::before_wait_share`]) from the start and resumes when that work and the
//! step's slowest sending prologue ([`PhasedKernel::sends`]) are both done, and no earlier than
//! the pages can reach it ([`TimelineModel::startup_bound`]); a sending prologue
//! starts once the pages another kernel of its core loads for it are in
//! ([`PhasedKernel::loads_share`]). Pages multicast in rounds land round by round ([`Arrivals`]:
//! the first once the senders signal their first slab, [`PhasedKernel::first_signal_share`]): a
//! prologue that waits only for the first round ([`PhasedKernel::waits_first_round`]) resumes
//! then, and a first block that waits for the later rounds as it goes
//! ([`PhasedKernel::landed_wait_share`]) does no work after its last such wait before the last
//! round is in. The blocks then run as a three-stage
//! pipeline (reader → compute → writer), which starts once the prologues are done but that of a
//! writer that pushes nothing in it (a weights multicast, a staging,
//! [`PhasedKernel::prologue_feeds`]): that writer only starts its own first block no sooner. The
//! first block passes through every stage, each
//! stage starting on its predecessor's first hand-off ([`TimelineModel::first_block`]), each
//! further one costs the slowest stage (the sum of a pair that takes turns,
//! [`PhasedKernel::single_buffered`]). The core ends at the later of that pipeline and each
//! kernel's own start plus total. A step takes its slowest core, at least its DRAM bytes at the
//! aggregate DRAM rate (and, built by [`TimelineModel::contended_step`], its busiest link's and
//! bank's bytes at one link's and one bank's rate), plus the dispatch of one program.

use crate::counters::{noc_size_class, Counters, TileOp, INIT_KINDS, NOC_SIZE_CLASSES};
use crate::program::{KernelRole, MathFidelity};

use super::contention::Contention;
use super::roofline::CostModel;

/// The constants of the timeline model (sources: the [`cost`](super) module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimelineModel {
    /// Tensix clock, Hz.
    pub clock_hz: f64,
    /// FPU cycles of one 32×32×32 tile matmul per fidelity phase.
    pub matmul_cycles_per_phase: f64,
    /// FPU cycles of one element-wise tile operation (per phase for multiply and reduce).
    pub eltwise_cycles: f64,
    /// Bytes per cycle one unpacker reads from L1.
    pub unpack_bytes_per_cycle: f64,
    /// Bytes per cycle the packer writes to L1.
    pub pack_bytes_per_cycle: f64,
    /// Math cycles of one row-wise MAX reduce of a tile ([`TileOp::ReduceMaxRow`]).
    pub reduce_max_row_cycles: f64,
    /// SFPU cycles per tile by [`SfpuOp`](crate::SfpuOp) kind.
    pub sfpu_cycles: [f64; 8],
    /// NoC bytes per cycle of one transfer by size class (the roofline's table; an upper bound).
    pub noc_bytes_per_cycle: [f64; NOC_SIZE_CLASSES],
    /// Measured bulk rates, bytes per cycle: one core reading DRAM.
    pub dram_read_bytes_per_cycle: f64,
    /// One core writing DRAM.
    pub dram_write_bytes_per_cycle: f64,
    /// One core to another core's L1.
    pub l1_bytes_per_cycle: f64,
    /// Measured multicasts (not linked) by destinations, fewest first: the cost of one multicast
    /// is interpolated between them ([`TimelineModel::multicast_cycles`]).
    pub mcast: [McastPoint; 3],
    /// Measured linked multicasts (`linked = true`: the path stays reserved for the next
    /// multicast of the same transaction) by destinations, the sender included
    /// ([`TimelineModel::linked_multicast_cycles`]).
    pub mcast_linked: [McastPoint; 3],
    /// RISC-V cycles to issue one NoC transfer or semaphore update.
    pub noc_issue_cycles: f64,
    /// Cycles a NoC packet takes per hop.
    pub hop_cycles: f64,
    /// Aggregate DRAM bandwidth, bytes per second.
    pub dram_bytes_per_second: f64,
    /// Bytes per cycle one NoC link carries ([`TimelineModel::contention`]).
    pub noc_link_bytes_per_cycle: f64,
    /// Bytes per second one DRAM bank moves ([`TimelineModel::contention`]).
    pub dram_bank_bytes_per_second: f64,
    /// DRAM banks, over which buffers' pages are interleaved ([`TimelineModel::startup_bound`]).
    pub dram_banks: f64,
    /// Dispatch cost of one program inside a trace, seconds.
    pub dispatch_seconds: f64,
    /// Bytes of one tile the unpackers and the packer move (bf16).
    pub tile_bytes: f64,
    /// Compute-thread cycles of one op init or format reconfig by
    /// [`InitKind`](crate::InitKind) ([`TimelineModel::init_cycles`]).
    pub init_cycles: [f64; INIT_KINDS],
}

/// Sender cycles of one multicast of `bytes` to `destinations` cores by the measured `points`:
/// at least the fixed cost plus the bytes at `l1_rate`, at most the bulk rate, interpolated
/// linearly between the measured destination counts and clamped outside them.
fn multicast_cost(points: &[McastPoint; 3], l1_rate: f64, bytes: f64, destinations: f64) -> f64 {
    let [first, .., last] = *points;
    let (lo, hi) = points
        .windows(2)
        .map(|w| (w[0], w[1]))
        .find(|(_, hi)| destinations <= hi.destinations)
        .unwrap_or((first, last));
    let t =
        ((destinations - lo.destinations) / (hi.destinations - lo.destinations)).clamp(0.0, 1.0);
    let at = |a: f64, b: f64| a + t * (b - a);
    let fixed = at(lo.fixed_cycles, hi.fixed_cycles);
    let bulk = at(lo.bytes_per_cycle, hi.bytes_per_cycle);
    (bytes / bulk).max(fixed + bytes / l1_rate)
}

/// One measured multicast figure: the sender's cost of multicasting to `destinations` cores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct McastPoint {
    /// Cores reached.
    pub destinations: f64,
    /// Cycles of one small multicast (issue, the destinations' acknowledgements).
    pub fixed_cycles: f64,
    /// Bytes per cycle of a long stream of large multicasts.
    pub bytes_per_cycle: f64,
}

impl TimelineModel {
    /// Blackhole p150a at measured rates (sources in the [`cost`](super) module docs).
    pub const BLACKHOLE: TimelineModel = TimelineModel {
        clock_hz: 1.35e9,
        matmul_cycles_per_phase: 16.0,
        eltwise_cycles: 8.0,
        unpack_bytes_per_cycle: 64.0,
        pack_bytes_per_cycle: 64.0,
        reduce_max_row_cycles: 97.94,
        // Relu, Exp, Recip, Sqrt, Rsqrt, Max, Scalar, Binary.
        sfpu_cycles: [124.0, 1150.0, 124.0, 124.0, 124.0, 109.0, 124.0, 193.0],
        noc_bytes_per_cycle: CostModel::BLACKHOLE.noc_bytes_per_cycle,
        dram_read_bytes_per_cycle: 33.0,
        dram_write_bytes_per_cycle: 34.0,
        l1_bytes_per_cycle: 60.0,
        mcast: [
            McastPoint {
                destinations: 3.0,
                fixed_cycles: 40.3,
                bytes_per_cycle: 54.7,
            },
            McastPoint {
                destinations: 24.0,
                fixed_cycles: 136.4,
                bytes_per_cycle: 39.7,
            },
            McastPoint {
                destinations: 109.0,
                fixed_cycles: 374.6,
                bytes_per_cycle: 24.6,
            },
        ],
        mcast_linked: [
            McastPoint {
                destinations: 4.0,
                fixed_cycles: 25.5,
                bytes_per_cycle: 60.0,
            },
            McastPoint {
                destinations: 25.0,
                fixed_cycles: 29.4,
                bytes_per_cycle: 54.7,
            },
            McastPoint {
                destinations: 110.0,
                fixed_cycles: 114.4,
                bytes_per_cycle: 41.6,
            },
        ],
        noc_issue_cycles: 8.0,
        hop_cycles: 9.0,
        dram_bytes_per_second: 512e9,
        noc_link_bytes_per_cycle: 64.0,
        dram_bank_bytes_per_second: 512e9 / 8.0,
        dram_banks: 8.0,
        dispatch_seconds: 1e-6,
        tile_bytes: 2048.0,
        // Copy, Matmul, Binary, Reduce, Layout, Sfpu, UnpackReconfig, PackReconfig.
        init_cycles: [40.0, 70.0, 40.0, 50.0, 80.0, 20.0, 35.0, 35.0],
    };

    /// Unpacker cycles of `tiles` tiles.
    fn unpack(&self, tiles: f64) -> f64 {
        tiles * self.tile_bytes / self.unpack_bytes_per_cycle
    }

    /// Math-thread cycles of a compute kernel's FPU operations, each the longer of its math and
    /// its unpack.
    ///
    /// A matmul block's K step, as tt-llk's `_llk_unpack_AB_matmul_` issues it, reads the
    /// operand it reuses once per output row (`ct >= rt`: in0 into SrcB) or column (in1 into
    /// SrcA) and the other operand's tiles again for each, `rt · ct` of them, on the other
    /// unpacker; the two unpackers run side by side, so the busier one reads one tile per
    /// product for any block shape. (Both together read `rt · ct + min(rt, ct)` tiles: were
    /// those bytes limited to 64 B/cycle between the unpackers, as the Wormhole ISA's
    /// interference rule has it, the 4×2 blocks of tt-metal's GEMM benchmark could not pass 80 %
    /// of the BF16 HiFi2 peak, nor BFP8 LoFi 75 %; P150 measures 90.25 % and 87.5 %.)
    pub fn fpu_cycles(&self, c: &Counters) -> f64 {
        let mut cycles = 0.0;
        for fidelity in MathFidelity::ALL {
            let phases = (fidelity as u32 + 1) as f64;
            let at = |op| c.tile_ops_at(op, fidelity) as f64;
            let matmul = (self.matmul_cycles_per_phase * phases).max(self.unpack(1.0));
            cycles += at(TileOp::Matmul) * matmul;
            // Two operands unpacked, charged as if through one unpacker (the Wormhole rule: both
            // at x4 get x2 each; no Blackhole measurement of element-wise ops says otherwise),
            // fidelity phases on the FPU.
            cycles += at(TileOp::Mul) * (self.eltwise_cycles * phases).max(self.unpack(2.0));
            cycles +=
                (at(TileOp::Add) + at(TileOp::Sub)) * self.eltwise_cycles.max(self.unpack(2.0));
            // One operand unpacked (the reduce's scaler stays in SrcB).
            cycles += at(TileOp::Reduce) * (self.eltwise_cycles * phases).max(self.unpack(1.0));
            // The row-wise MAX reduce at its measured math cycles (fidelity-free: GMPOOL).
            cycles += at(TileOp::ReduceMaxRow) * self.reduce_max_row_cycles.max(self.unpack(1.0));
            let one = [
                TileOp::Copy,
                TileOp::Transpose,
                TileOp::Tilize,
                TileOp::Untilize,
            ];
            cycles +=
                one.into_iter().map(at).sum::<f64>() * self.eltwise_cycles.max(self.unpack(1.0));
        }
        cycles
    }

    /// SFPU cycles of a compute kernel, by kind: an op over some of a tile's faces
    /// (`VectorMode::R` or `C`) is charged their share of the tile's cycles.
    pub fn sfpu_cycles(&self, c: &Counters) -> f64 {
        c.sfpu_faces
            .iter()
            .zip(self.sfpu_cycles)
            .map(|(&faces, cycles)| faces as f64 / 4.0 * cycles)
            .sum()
    }

    /// Cycles a compute kernel spends in op inits and format reconfigs: each reprograms the
    /// unpackers, the math or the packer after a stall, in series with its tile operations.
    pub fn init_cycles(&self, c: &Counters) -> f64 {
        c.inits
            .iter()
            .zip(self.init_cycles)
            .map(|(&n, cycles)| n as f64 * cycles)
            .sum()
    }

    /// Packer cycles of a compute kernel.
    pub fn pack_cycles(&self, c: &Counters) -> f64 {
        c.tile_ops(TileOp::Pack) as f64 * self.tile_bytes / self.pack_bytes_per_cycle
    }

    /// Bytes per cycle of a transfer in size class `class` whose kind moves at most `bulk`.
    fn class_rate(&self, class: usize, bulk: f64) -> f64 {
        self.noc_bytes_per_cycle[class].min(bulk)
    }

    /// Cycles of `n` transfers moving `bytes` in all, as [`TimelineModel::noc_cycles`] charges
    /// counted ones: the bytes at their (mean) size class's rate, at most `bulk` bytes a cycle,
    /// and an issue each (no flight).
    pub fn transfer_cycles(&self, n: u64, bytes: f64, bulk: f64) -> f64 {
        if n == 0 {
            return 0.0;
        }
        let size = (bytes / n as f64).ceil() as u64;
        n as f64 * self.noc_issue_cycles + bytes / self.class_rate(noc_size_class(size), bulk)
    }

    /// Cycles of a data-movement kernel's NoC transfers, issue and flight.
    pub fn noc_cycles(&self, c: &Counters) -> f64 {
        let read: u64 = c.noc_read_bytes.iter().sum();
        let written: u64 = c.noc_write_bytes.iter().sum();
        let share = |dram: u64, all: u64| {
            if all == 0 {
                0.0
            } else {
                dram as f64 / all as f64
            }
        };
        let (dram_read, dram_written) = (
            share(c.dram_read_bytes, read),
            share(c.dram_write_bytes, written),
        );
        let mut cycles = 0.0;
        for class in 0..NOC_SIZE_CLASSES {
            let rate = |bulk: f64| self.class_rate(class, bulk);
            let l1 = rate(self.l1_bytes_per_cycle);
            let r = c.noc_read_bytes[class] as f64;
            let w = c.noc_write_bytes[class] as f64;
            cycles +=
                r * (dram_read / rate(self.dram_read_bytes_per_cycle) + (1.0 - dram_read) / l1);
            cycles += w
                * (dram_written / rate(self.dram_write_bytes_per_cycle)
                    + (1.0 - dram_written) / l1);
        }
        // The counters keep totals: every multicast at the mean size and destinations of its
        // kind (linked or not).
        let unlinked = (
            c.noc_mcasts - c.noc_linked_mcasts,
            c.noc_mcast_bytes - c.noc_linked_mcast_bytes,
            c.noc_mcast_dests - c.noc_linked_mcast_dests,
        );
        let linked = (
            c.noc_linked_mcasts,
            c.noc_linked_mcast_bytes,
            c.noc_linked_mcast_dests,
        );
        for ((count, bytes, dests), points) in
            [(unlinked, &self.mcast), (linked, &self.mcast_linked)]
        {
            if count > 0 {
                let n = count as f64;
                cycles += n * multicast_cost(
                    points,
                    self.l1_bytes_per_cycle,
                    bytes as f64 / n,
                    dests as f64 / n,
                );
            }
        }
        // A multicast's measured fixed cost includes its issue.
        let issued = c.noc_transactions() - c.noc_mcasts;
        cycles + issued as f64 * self.noc_issue_cycles + self.flight_cycles(c)
    }

    /// Sender cycles of one multicast of `bytes` to `destinations` cores: at least the measured
    /// fixed cost of a multicast to that many plus its bytes at the core-to-core rate, and at
    /// most the measured bulk rate to that many ([`McastPoint`], interpolated linearly between
    /// the measured destination counts, clamped outside them).
    pub fn multicast_cycles(&self, bytes: f64, destinations: f64) -> f64 {
        multicast_cost(&self.mcast, self.l1_bytes_per_cycle, bytes, destinations)
    }

    /// Sender cycles of one linked multicast (one whose path the previous multicast of the same
    /// transaction reserved): as [`TimelineModel::multicast_cycles`], at the linked measurements.
    pub fn linked_multicast_cycles(&self, bytes: f64, destinations: f64) -> f64 {
        multicast_cost(
            &self.mcast_linked,
            self.l1_bytes_per_cycle,
            bytes,
            destinations,
        )
    }

    /// NoC flight time the kernel waits for: each barrier and semaphore wait waits for a
    /// transaction of the kernel's mean hop count.
    pub fn flight_cycles(&self, c: &Counters) -> f64 {
        let transactions = c.noc_transactions();
        if transactions == 0 {
            return 0.0;
        }
        let mean_hops = c.noc_hops as f64 / transactions as f64;
        (c.noc_barriers + c.sem_waits) as f64 * mean_hops * self.hop_cycles
    }

    /// The cycles of one kernel on one core.
    pub fn kernel_cycles(&self, k: &PhasedKernel) -> KernelCycles {
        let c = &k.counters;
        match k.role {
            KernelRole::Compute => {
                let fpu = self.fpu_cycles(c);
                let sfpu = self.sfpu_cycles(c);
                let pack = self.pack_cycles(c);
                KernelCycles {
                    fpu,
                    sfpu,
                    init: self.init_cycles(c),
                    pack,
                    noc: 0.0,
                    scalar: k.scalar_cycles,
                }
            }
            KernelRole::Reader | KernelRole::Writer => KernelCycles {
                noc: self.noc_cycles(c),
                scalar: k.scalar_cycles,
                ..KernelCycles::default()
            },
        }
    }

    /// The timeline of one core whose kernels start no earlier than `senders_done` cycles when
    /// they wait for a multicast whose pages all land then.
    pub fn core(&self, kernels: &[PhasedKernel], senders_done: f64) -> CoreTimeline {
        self.core_fed(kernels, Arrivals::at(senders_done))
    }

    /// The timeline of one core whose kernels wait for a multicast whose pages land by
    /// `arrivals`: a prologue that waits for all of them resumes at the last, one that waits for
    /// the first round only ([`PhasedKernel::waits_first_round`]) at the first, and the first
    /// block's work after its last wait for them ([`PhasedKernel::landed_wait_share`]) comes
    /// after the last ([`TimelineModel::first_block_fed`]).
    pub fn core_fed(&self, kernels: &[PhasedKernel], arrivals: Arrivals) -> CoreTimeline {
        let mut t = CoreTimeline::default();
        let mut landed_waits = [None; 3];
        // Per role, a block's work in the role's first blocks (as many as the second entry),
        // then in the later ones.
        let mut stage = [(0.0f64, 0u64, 0.0f64); 3];
        let mut turns = [false; 2];
        let (mut pushes, mut waits) = ([[1.0f64; 2]; 3], [[0.0f64; 2]; 3]);
        let mut prologues_done = 0.0f64;
        // The end of a writer prologue that feeds no other kernel (`prologue_feeds`).
        let mut writer_ready = 0.0f64;
        let blocks = kernels.iter().map(|k| k.blocks).max().unwrap_or(0);
        for k in kernels {
            let cycles = self.kernel_cycles(k);
            let total = cycles.total();
            let prologue = total * k.prologue_share.clamp(0.0, 1.0);
            // Work before the wait for the multicast runs from the start; the rest resumes
            // when both it and the senders are done.
            let (resumed, before) = if k.waits_for_sender {
                let before = total * k.before_wait_share.clamp(0.0, k.prologue_share);
                let landed = if k.waits_first_round {
                    arrivals.first
                } else {
                    arrivals.last
                };
                (before.max(landed), before)
            } else {
                (0.0, 0.0)
            };
            if k.role == KernelRole::Writer && !k.prologue_feeds {
                writer_ready = writer_ready.max(resumed + prologue - before);
            } else {
                prologues_done = prologues_done.max(resumed + prologue - before);
            }
            t.end = t.end.max(resumed + total - before);
            if blocks > 0 {
                let i = match k.role {
                    KernelRole::Reader => 0,
                    KernelRole::Compute => 1,
                    KernelRole::Writer => 2,
                };
                let first = k.first_blocks.min(blocks);
                let work = total - prologue;
                let (at_first, at_later) = if first == 0 || first == blocks {
                    (work / blocks as f64, work / blocks as f64)
                } else {
                    let first_work = (total * k.first_blocks_share.clamp(0.0, 1.0)).min(work);
                    (
                        first_work / first as f64,
                        (work - first_work) / (blocks - first) as f64,
                    )
                };
                let (f, n, l) = &mut stage[i];
                *f += at_first;
                *n = (*n).max(first);
                *l += at_later;
                pushes[i] = [k.first_push_share, k.last_push_share].map(|s| s.clamp(0.0, 1.0));
                waits[i] = [k.first_wait_share, k.last_wait_share].map(|s| s.clamp(0.0, 1.0));
                landed_waits[i] = k.landed_wait_share.map(|s| s.clamp(0.0, 1.0));
            }
            match k.role {
                KernelRole::Reader => turns[0] |= k.single_buffered,
                KernelRole::Writer => turns[1] |= k.single_buffered,
                KernelRole::Compute => {}
            }
            t.kernels.push((k.role, cycles));
            t.dram_bytes += c_dram(&k.counters);
        }
        t.prologue = prologues_done;
        if blocks > 0 {
            let slowest = |[r, c, w]: [f64; 3]| {
                (if turns[0] { r + c } else { r.max(c) }).max(if turns[1] {
                    c + w
                } else {
                    c.max(w)
                })
            };
            // Block j (from 1) takes the first-block work of the roles whose first blocks
            // reach it (one kernel per role), the later-block work of the others.
            let at = |j: u64| stage.map(|(f, n, l)| if j <= n { f } else { l });
            // A writer whose prologue fed no one starts its first block no sooner than that
            // prologue's end; the blocks after it wait as long (the compute may run ahead only
            // by the writer's CB, taken as no room: an upper bound).
            t.first_block = Self::first_block_fed(
                at(1),
                pushes,
                waits,
                arrivals.last - prologues_done,
                landed_waits,
            )
            .max(writer_ready - prologues_done + at(1)[2]);
            let mut ends: Vec<u64> = stage.iter().map(|s| s.1.min(blocks)).collect();
            ends.push(blocks);
            ends.sort_unstable();
            let mut from = 2;
            let mut steady = 0.0;
            for end in ends {
                if end >= from {
                    steady += (end + 1 - from) as f64 * slowest(at(from));
                    from = end + 1;
                }
            }
            t.steady = steady;
            t.end = t.end.max(prologues_done + t.first_block + t.steady);
        } else {
            t.end = t.end.max(prologues_done);
        }
        t
    }

    /// The first block through the reader, compute and writer `stage` cycles, each stage handing
    /// its work over as it goes: `pushes` are each stage's shares of its block done before its
    /// first and its last hand-off ([`PhasedKernel::first_push_share`],
    /// [`PhasedKernel::last_push_share`]), `waits` before its first and its last wait for its
    /// predecessor's ([`PhasedKernel::first_wait_share`], [`PhasedKernel::last_wait_share`]).
    /// A stage cannot pass its predecessor: it ends no earlier than its whole block, than its
    /// predecessor's first hand-off plus its work from its first wait on, and than its
    /// predecessor's last hand-off plus its work from its last wait on (hand-offs and waits in
    /// between spread evenly, so those two bound the rest). The compute's hand-offs are taken to
    /// run without waiting from there to its end (its waits come first, as in a conv's first
    /// group of output tiles). Blocks handed over whole pass the stages in series: `r + c + w`.
    pub fn first_block(stage: [f64; 3], pushes: [[f64; 2]; 3], waits: [[f64; 2]; 3]) -> f64 {
        Self::first_block_fed(stage, pushes, waits, 0.0, [None; 3])
    }

    /// [`TimelineModel::first_block`] whose stages also wait for a multicast's pages as they go:
    /// the last of them lands `landed` cycles after the block starts, and a stage that last
    /// waits for them after its `landed_waits` share of its block
    /// ([`PhasedKernel::landed_wait_share`]) does the rest of its block no earlier than that: the
    /// reader's hand-offs after that share, and the compute's end, which is at least `landed`
    /// plus its work after that wait (and at least its own work and what its hand-offs allow).
    pub fn first_block_fed(
        stage: [f64; 3],
        pushes: [[f64; 2]; 3],
        waits: [[f64; 2]; 3],
        landed: f64,
        landed_waits: [Option<f64>; 3],
    ) -> f64 {
        let [r, c, w] = stage;
        let after = |work: f64, [first, last]: [f64; 2], [pushed_first, pushed_last]: [f64; 2]| {
            work.max(pushed_first + work * (1.0 - first))
                .max(pushed_last + work * (1.0 - last))
        };
        // When a stage of `work` that last waits for the pages after `wait` of it is `share` in.
        let reached = |work: f64, wait: Option<f64>, share: f64| match wait {
            Some(wait) if share >= wait => (work * share).max(landed + work * (share - wait)),
            _ => work * share,
        };
        let compute_end = after(
            c,
            waits[1],
            pushes[0].map(|s| reached(r, landed_waits[0], s)),
        )
        .max(reached(c, landed_waits[1], 1.0));
        let compute_pushed = pushes[1].map(|s| compute_end - c * (1.0 - s));
        // A stage that hands nothing over (push shares 0: no later stage waits for it, e.g. a
        // reader and a writer that share no CB) is through its block at its end.
        let unlinked = |end: f64, shares: [f64; 2]| if shares == [0.0; 2] { end } else { 0.0 };
        after(w, waits[2], compute_pushed)
            .max(unlinked(r, pushes[0]))
            .max(unlinked(compute_end, pushes[1]))
    }

    /// The estimate of one step (program) whose cores ran the given kernels.
    pub fn step(&self, cores: &[Vec<PhasedKernel>]) -> TimelineStep {
        let share = |k: &PhasedKernel, share: f64| self.kernel_cycles(k).total() * share;
        // Per sending kernel: when it is done and when it signals its first round, and the
        // share of its sending prologue done by then.
        let sending: Vec<(f64, f64, f64)> = cores
            .iter()
            .flat_map(|core| {
                // The sending prologue waits for the pages its core's other kernels load.
                let loaded = core
                    .iter()
                    .filter(|k| !k.sends)
                    .map(|k| share(k, k.loads_share.clamp(0.0, 1.0)))
                    .fold(0.0, f64::max);
                core.iter().filter(|k| k.sends).map(move |k| {
                    let prologue = k.prologue_share.clamp(0.0, 1.0);
                    let first = k.first_signal_share.clamp(0.0, prologue);
                    let fraction = if prologue > 0.0 {
                        first / prologue
                    } else {
                        1.0
                    };
                    (
                        loaded + share(k, prologue),
                        loaded + share(k, first),
                        fraction,
                    )
                })
            })
            .collect();
        let most = |f: fn(&(f64, f64, f64)) -> f64| sending.iter().map(f).fold(0.0, f64::max);
        let sends = most(|s| s.0);
        let startup = self.startup_bound(cores);
        // The first round can come no sooner than its share of the pages through the port.
        let arrivals = Arrivals {
            first: most(|s| s.1).max(startup.cycles() * most(|s| s.2)),
            last: sends.max(startup.cycles()),
        };
        let timelines: Vec<CoreTimeline> =
            cores.iter().map(|k| self.core_fed(k, arrivals)).collect();
        let slowest = timelines
            .iter()
            .cloned()
            .max_by(|a, b| a.end.total_cmp(&b.end))
            .unwrap_or_default();
        let dram_bytes = timelines.iter().map(|t| t.dram_bytes).sum();
        TimelineStep {
            cores: cores.len(),
            core_seconds: slowest.end / self.clock_hz,
            dram_bytes,
            dram_seconds: dram_bytes as f64 / self.dram_bytes_per_second,
            dispatch_seconds: self.dispatch_seconds,
            sender_cycles: sends,
            startup,
            slowest,
            contention: Contention::default(),
        }
    }
}

impl TimelineModel {
    /// The start-up bound of a step whose cores ran `cores`: the cores that wait for a
    /// multicast ([`PhasedKernel::waits_for_sender`]) take in, on the mean, the bytes the
    /// sending kernels ([`PhasedKernel::sends`]) landed in other cores' L1 (counted per
    /// destination) over the number of waiting cores. However many senders there are, those
    /// bytes enter a core through its NoC port at one link's rate (the senders multicast on one
    /// NoC, their writers'), and the senders read them from DRAM first, interleaved over the
    /// banks: at best an even share per bank at one bank's rate. The busiest receiver takes in
    /// at least the mean, so both are lower bounds of when the last receiver has its pages.
    pub fn startup_bound(&self, cores: &[Vec<PhasedKernel>]) -> StartupBound {
        let landed: u64 = cores
            .iter()
            .flatten()
            .filter(|k| k.sends)
            .map(|k| k.counters.noc_mcast_landed_bytes)
            .sum();
        let receivers = cores
            .iter()
            .filter(|core| core.iter().any(|k| k.waits_for_sender))
            .count();
        if receivers == 0 {
            return StartupBound::default();
        }
        let bytes = landed as f64 / receivers as f64;
        let bank_bytes_per_cycle = self.dram_bank_bytes_per_second / self.clock_hz;
        StartupBound {
            landed_bytes: bytes,
            link_cycles: bytes / self.noc_link_bytes_per_cycle,
            bank_cycles: bytes / self.dram_banks / bank_bytes_per_cycle,
        }
    }
}

/// The earliest the cores waiting for a step's senders can have their pages
/// ([`TimelineModel::startup_bound`]), cycles.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StartupBound {
    /// The bytes multicast into one waiting core (the mean over them).
    pub landed_bytes: f64,
    /// Those bytes through its NoC port at one link's rate.
    pub link_cycles: f64,
    /// Those bytes read from DRAM, an even share per bank, at one bank's rate.
    pub bank_cycles: f64,
}

impl StartupBound {
    /// The later of the two.
    pub fn cycles(&self) -> f64 {
        self.link_cycles.max(self.bank_cycles)
    }
}

fn c_dram(c: &Counters) -> u64 {
    c.dram_read_bytes + c.dram_write_bytes
}

/// One kernel's work on one core, with the phase facts the counters do not carry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhasedKernel {
    /// The processor it ran on.
    pub role: KernelRole,
    /// What the emulator counted for it on that core.
    pub counters: Counters,
    /// Scalar RISC-V cycles the emulator cannot count (roofline module docs); 0 when unknown.
    pub scalar_cycles: f64,
    /// Its stream CB to or from the compute kernel holds one batch: they take turns.
    pub single_buffered: bool,
    /// The share (0..=1) of its work done before its block loop.
    pub prologue_share: f64,
    /// Iterations of its block loop on this core (0: no block loop).
    pub blocks: u64,
    /// Of those, how many come first and do more work than the rest (a conv reader that builds
    /// the rows of its ring above and beside them); 0 when every block does the same.
    pub first_blocks: u64,
    /// The share (0..=1) of its work done in those first blocks.
    pub first_blocks_share: f64,
    /// Its prologue waits for another core's multicast.
    pub waits_for_sender: bool,
    /// With [`PhasedKernel::waits_for_sender`]: the share (0..=`prologue_share`) of its work
    /// done before that wait (e.g. an input ring filled while the weights arrive).
    pub before_wait_share: f64,
    /// Its prologue multicasts to other cores.
    pub sends: bool,
    /// On a sender core, the share (0..=1) of its work done before it tells the core's sending
    /// kernel that the pages to multicast are loaded (0 when it loads none for it).
    pub loads_share: f64,
    /// The share (0..=1) of one block's work done before its first hand-off (push) to the next
    /// stage: 1 when it hands the block over at its end ([`TimelineModel::first_block`]).
    pub first_push_share: f64,
    /// The same before its last hand-off in the block.
    pub last_push_share: f64,
    /// The share (0..=1) of one block's work done before its first wait for the previous stage's
    /// hand-offs: 0 when it waits for the whole block first ([`TimelineModel::first_block`]).
    pub first_wait_share: f64,
    /// The same before its last wait in the block.
    pub last_wait_share: f64,
    /// With [`PhasedKernel::waits_for_sender`]: its prologue waits only for the first round of
    /// the multicast's pages (it pushes the later rounds in its first block), so it resumes once
    /// that round has landed ([`Arrivals::first`]) instead of all of them ([`Arrivals::last`]).
    pub waits_first_round: bool,
    /// With [`PhasedKernel::sends`]: the share (0..=`prologue_share`) of its work done when it
    /// signals its first round of pages (its first slab's semaphore); its `prologue_share` when
    /// it signals once, after all of them.
    pub first_signal_share: f64,
    /// The share (0..=1) of its first block's work done before it last waits for the
    /// multicast's pages (a reader for the last round's semaphore, a compute for the last pages
    /// its reader pushes); `None` when its first block does not wait for them.
    pub landed_wait_share: Option<f64>,
    /// Its prologue pushes pages the core's other kernels wait for (a reader's weights and
    /// input ring, constants a writer makes for the compute), or loads pages for another kernel
    /// to push (a weights sender's writer reading its share). A writer whose prologue does
    /// neither (a weights multicast, the staging of a later conv's weights) holds the others back
    /// only through its own first block: the compute packs its first output into the CB the
    /// writer has not started popping ([`TimelineModel::core_fed`]).
    pub prologue_feeds: bool,
}

/// When a step's multicast pages have landed on the cores that wait for them, cycles from the
/// step's start ([`TimelineModel::step`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Arrivals {
    /// The first round (every sender's first slab).
    pub first: f64,
    /// All of them.
    pub last: f64,
}

impl Arrivals {
    /// Pages that all land at once, at `cycles`.
    pub fn at(cycles: f64) -> Arrivals {
        Arrivals {
            first: cycles,
            last: cycles,
        }
    }
}

impl PhasedKernel {
    /// A kernel with no phase facts: all its work in one block, no multicast.
    pub fn flat(role: KernelRole, counters: Counters) -> PhasedKernel {
        PhasedKernel {
            role,
            counters,
            scalar_cycles: 0.0,
            single_buffered: false,
            prologue_share: 0.0,
            blocks: 1,
            first_blocks: 0,
            first_blocks_share: 0.0,
            waits_for_sender: false,
            before_wait_share: 0.0,
            sends: false,
            loads_share: 0.0,
            first_push_share: 1.0,
            last_push_share: 1.0,
            first_wait_share: 0.0,
            last_wait_share: 0.0,
            waits_first_round: false,
            first_signal_share: 0.0,
            landed_wait_share: None,
            prologue_feeds: true,
        }
    }
}

/// One kernel's cycle components.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct KernelCycles {
    /// FPU operations, each the longer of math and unpack.
    pub fpu: f64,
    pub sfpu: f64,
    /// Op inits and format reconfigs.
    pub init: f64,
    pub pack: f64,
    /// NoC transfers, issue and flight.
    pub noc: f64,
    pub scalar: f64,
}

impl KernelCycles {
    /// The kernel's cycles: the math thread (FPU, SFPU, inits, scalar) against the packer, or
    /// the data-movement core's NoC and scalar work.
    pub fn total(&self) -> f64 {
        (self.fpu + self.sfpu + self.init + self.scalar).max(self.pack) + self.noc
    }
}

/// One core's timeline, in cycles.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CoreTimeline {
    /// Each kernel's components.
    pub kernels: Vec<(KernelRole, KernelCycles)>,
    /// When the last prologue ends and the blocks start (start-up: weights and ring fill,
    /// multicast waits; with pages that land in rounds, the first round's).
    pub prologue: f64,
    /// The first block through every stage.
    pub first_block: f64,
    /// The further blocks at the slowest stage.
    pub steady: f64,
    /// When the core ends.
    pub end: f64,
    /// DRAM bytes its kernels read and wrote.
    pub dram_bytes: u64,
}

impl CoreTimeline {
    /// The cycles of the kernel of `role` (0 when the core has none).
    pub fn of(&self, role: KernelRole) -> f64 {
        self.kernels
            .iter()
            .filter(|(r, _)| *r == role)
            // Not `sum`, whose empty f64 sum is -0.0 (a report's "-0.0" for a missing kernel).
            .fold(0.0, |total, (_, c)| total + c.total())
    }
}

/// The modeled time of one step (program) by the timeline model.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineStep {
    /// Cores that ran kernels.
    pub cores: usize,
    /// The slowest core's timeline.
    pub slowest: CoreTimeline,
    /// The slowest core's time.
    pub core_seconds: f64,
    /// DRAM bytes read and written by all cores.
    pub dram_bytes: u64,
    /// Those bytes at the aggregate DRAM rate.
    pub dram_seconds: f64,
    /// The dispatch of the program.
    pub dispatch_seconds: f64,
    /// When the step's slowest multicast prologue ends, cycles.
    pub sender_cycles: f64,
    /// The earliest the cores waiting for the senders can have their pages, however fast the
    /// senders ([`TimelineModel::startup_bound`]); they resume at the later of the two.
    pub startup: StartupBound,
    /// Its busiest NoC link and DRAM bank (none unless built by
    /// [`TimelineModel::contended_step`]).
    pub contention: Contention,
}

impl TimelineStep {
    /// Modeled time: max(slowest core, DRAM, busiest link and bank) + dispatch.
    pub fn seconds(&self) -> f64 {
        self.kernel_seconds() + self.dispatch_seconds
    }

    /// Modeled time without the dispatch (what tt-metal's profiler reports as the device kernel
    /// duration).
    pub fn kernel_seconds(&self) -> f64 {
        self.core_seconds
            .max(self.dram_seconds)
            .max(self.contention.seconds())
    }

    /// The step if its slowest core's stages overlapped perfectly: its busiest kernel's total
    /// (no start-up, no first block through the other stages), or the DRAM or contention bound
    /// where longer, plus the dispatch. What a step loses to its own fill is
    /// [`TimelineStep::seconds`] minus this.
    pub fn stage_bound_seconds(&self, clock_hz: f64) -> f64 {
        let busiest = [KernelRole::Reader, KernelRole::Compute, KernelRole::Writer]
            .into_iter()
            .map(|role| self.slowest.of(role))
            .fold(0.0, f64::max);
        (busiest / clock_hz)
            .max(self.dram_seconds)
            .max(self.contention.seconds())
            + self.dispatch_seconds
    }

    /// What dominates the step, for a report: "DRAM bank" or "NoC link" (contention), "DRAM"
    /// (aggregate), or in the slowest core "start-up" (its prologue and the first block) or the
    /// busiest kernel of its steady state.
    pub fn dominant(&self) -> &'static str {
        let s = &self.slowest;
        if self.contention.seconds() > self.core_seconds.max(self.dram_seconds) {
            return self.contention.bound();
        }
        if self.dram_seconds > self.core_seconds {
            return "DRAM";
        }
        if s.prologue + s.first_block >= s.steady.max(0.0) && s.prologue > 0.0 {
            return "start-up";
        }
        let (reader, compute, writer) = (
            s.of(KernelRole::Reader),
            s.of(KernelRole::Compute),
            s.of(KernelRole::Writer),
        );
        if compute >= reader.max(writer) {
            "compute"
        } else if reader >= writer {
            "reader"
        } else {
            "writer"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: TimelineModel = TimelineModel::BLACKHOLE;

    fn close(got: f64, want: f64) {
        assert!(
            (got - want).abs() <= 1e-9 * want.abs().max(1.0),
            "got {got}, want {want}"
        );
    }

    fn matmuls(n: u64) -> Counters {
        let mut c = Counters::default();
        c.tile_ops[TileOp::Matmul as usize][MathFidelity::HiFi2 as usize] = n;
        c
    }

    #[test]
    fn a_matmul_is_unpack_bound_below_hifi2() {
        // The busier unpacker reads a 2048-byte tile per product: 32 cycles at 64 B/cycle.
        // HiFi2: 32 FPU cycles a product, FPU and unpack even; LoFi: 16, unpack bound.
        close(M.fpu_cycles(&matmuls(100)), 3200.0);
        let mut lofi = Counters::default();
        lofi.tile_ops[TileOp::Matmul as usize][MathFidelity::LoFi as usize] = 100;
        close(M.fpu_cycles(&lofi), 3200.0);
        // HiFi4: 64 FPU cycles a product.
        let mut hifi4 = Counters::default();
        hifi4.tile_ops[TileOp::Matmul as usize][MathFidelity::HiFi4 as usize] = 100;
        close(M.fpu_cycles(&hifi4), 6400.0);
        // Element-wise add: 8 FPU cycles, two tiles unpacked (64 cycles).
        let mut add = Counters::default();
        add.tile_ops[TileOp::Add as usize][0] = 10;
        close(M.fpu_cycles(&add), 640.0);
    }

    #[test]
    fn a_row_max_reduce_costs_its_measured_cycles() {
        // tt-metal PR #55053: 97.94 cycles a tile on Blackhole's math thread, above the 32 of
        // the unpack and of the other reduces.
        let mut c = Counters::default();
        c.tile_ops[TileOp::ReduceMaxRow as usize][MathFidelity::HiFi4 as usize] = 3;
        c.tile_ops[TileOp::Reduce as usize][MathFidelity::LoFi as usize] = 2;
        close(M.fpu_cycles(&c), 3.0 * 97.94 + 2.0 * 32.0);
    }

    #[test]
    fn sfpu_is_charged_by_kind() {
        use crate::SfpuOp;
        let mut c = Counters::default();
        c.sfpu_faces[SfpuOp::Relu as usize] = 8;
        c.sfpu_faces[SfpuOp::Exp as usize] = 4;
        close(M.sfpu_cycles(&c), 2.0 * 124.0 + 1150.0);
        // An exp over faces 0 and 1 only (VectorMode::R): half a tile.
        c.sfpu_faces[SfpuOp::Exp as usize] += 2;
        close(M.sfpu_cycles(&c), 2.0 * 124.0 + 1.5 * 1150.0);
    }

    #[test]
    fn every_init_in_a_loop_is_charged_once_more_than_a_hoisted_one() {
        use crate::InitKind;
        // 8 copies: copy_init before each (8 inits) against once before the loop (1), and two
        // unpack reconfigs per copy against none.
        let copies = |inits: u64, reconfigs: u64| {
            let mut c = Counters::default();
            c.tile_ops[TileOp::Copy as usize][MathFidelity::HiFi2 as usize] = 8;
            c.inits[InitKind::Copy as usize] = inits;
            c.inits[InitKind::UnpackReconfig as usize] = reconfigs;
            M.kernel_cycles(&PhasedKernel::flat(KernelRole::Compute, c))
                .total()
        };
        // Each copy unpacks one tile: 2048 / 64 = 32 cycles.
        close(copies(1, 0), 8.0 * 32.0 + 40.0);
        close(copies(8, 0) - copies(1, 0), 7.0 * 40.0);
        close(copies(8, 16) - copies(8, 0), 16.0 * 35.0);
    }

    #[test]
    fn dram_reads_run_at_the_measured_rate_and_barriers_pay_the_flight() {
        // 10 DRAM reads of 2 KiB (class 5, size rate 58, measured 33), 2 barriers, 40 hops.
        let mut c = Counters::default();
        c.noc_reads[5] = 10;
        c.noc_read_bytes[5] = 20480;
        c.dram_read_bytes = 20480;
        c.noc_barriers = 2;
        c.noc_hops = 40;
        close(M.noc_cycles(&c), 20480.0 / 33.0 + 80.0 + 2.0 * 4.0 * 9.0);
        // The same bytes from another core's L1: 58 (the size rate is below the bulk 60).
        c.dram_read_bytes = 0;
        close(M.noc_cycles(&c), 20480.0 / 58.0 + 80.0 + 72.0);
        // Multicasts to the 109 other cores of 11×10: a small one pays the measured fixed cost
        // (374.6 cycles) plus its bytes at 60 B/cycle, a large one streams at 24.6 B/cycle.
        let m = |bytes: u64| Counters {
            noc_mcasts: 2,
            noc_mcast_bytes: 2 * bytes,
            noc_mcast_dests: 2 * 109,
            ..Counters::default()
        };
        close(M.noc_cycles(&m(4096)), 2.0 * (374.6 + 4096.0 / 60.0));
        close(M.noc_cycles(&m(65536)), 2.0 * 65536.0 / 24.6);
    }

    #[test]
    fn linked_multicasts_run_at_the_linked_measurements() {
        // A transaction of three 64 KiB multicasts to the 120 cores of 12×10 (the sender
        // included, clamped to the 110-core measurement), the first two linked: those stream at
        // 41.6 B/cycle, the last (unlinked, to 120 clamped to 109) at 24.6.
        let c = Counters {
            noc_mcasts: 3,
            noc_mcast_bytes: 3 * 65536,
            noc_mcast_dests: 3 * 120,
            noc_linked_mcasts: 2,
            noc_linked_mcast_bytes: 2 * 65536,
            noc_linked_mcast_dests: 2 * 120,
            ..Counters::default()
        };
        close(M.noc_cycles(&c), 2.0 * 65536.0 / 41.6 + 65536.0 / 24.6);
        // Small linked multicasts pay the linked fixed cost (25.5 cycles to 4 cores), far below
        // the unlinked one's 40.3 to 3.
        close(M.linked_multicast_cycles(64.0, 4.0), 25.5 + 64.0 / 60.0);
        close(M.linked_multicast_cycles(64.0, 25.0), 29.4 + 64.0 / 60.0);
    }

    #[test]
    fn multicasts_cost_more_the_more_cores_they_reach() {
        // Halfway between the 2×2 (3) and 5×5 (24) measurements: fixed 88.35, bulk 47.2.
        close(M.multicast_cycles(64.0, 13.5), 88.35 + 64.0 / 60.0);
        close(M.multicast_cycles(65536.0, 13.5), 65536.0 / 47.2);
        // Outside the measured counts the nearest measurement holds.
        close(M.multicast_cycles(64.0, 1.0), 40.3 + 64.0 / 60.0);
        close(M.multicast_cycles(65536.0, 200.0), 65536.0 / 24.6);
        assert!(M.multicast_cycles(8192.0, 12.0) < M.multicast_cycles(8192.0, 9.0 * 12.0));
    }

    fn kernel(role: KernelRole, counters: Counters, blocks: u64, prologue: f64) -> PhasedKernel {
        PhasedKernel {
            blocks,
            prologue_share: prologue,
            ..PhasedKernel::flat(role, counters)
        }
    }

    fn dram_reads(pages: u64) -> Counters {
        let mut c = Counters::default();
        c.noc_reads[5] = pages;
        c.noc_read_bytes[5] = pages * 2048;
        c.dram_read_bytes = pages * 2048;
        c
    }

    #[test]
    fn blocks_pipeline_after_the_prologue() {
        // Reader: 40 pages, a quarter before its 10 blocks; compute: 100 products in 10 blocks.
        let reader = kernel(KernelRole::Reader, dram_reads(40), 10, 0.25);
        let compute = kernel(KernelRole::Compute, matmuls(100), 10, 0.0);
        let r = M.kernel_cycles(&reader).total();
        let core = M.core(&[reader, compute], 0.0);
        let (rb, cb) = (0.75 * r / 10.0, 320.0);
        close(core.prologue, 0.25 * r);
        close(core.first_block, rb + cb);
        close(core.steady, 9.0 * rb.max(cb));
        close(core.end, 0.25 * r + rb + cb + 9.0 * rb.max(cb));
        // Taking turns adds the pair's block times.
        let turns = M.core(
            &[
                PhasedKernel {
                    single_buffered: true,
                    ..reader
                },
                compute,
            ],
            0.0,
        );
        close(turns.steady, 9.0 * (rb + cb));
        // A kernel whose loop runs once per two blocks spreads its work over the core's 10.
        let halves = kernel(KernelRole::Compute, matmuls(100), 5, 0.0);
        assert_eq!(M.core(&[reader, halves], 0.0), core);
    }

    #[test]
    fn a_writer_prologue_that_feeds_no_one_holds_back_only_its_first_block() {
        // Reader: 40 pages, a quarter before its 10 blocks; compute: 100 products (320 cycles a
        // block); writer: 60 DRAM pages all in its prologue (a staging), no block work.
        let reader = kernel(KernelRole::Reader, dram_reads(40), 10, 0.25);
        let compute = kernel(KernelRole::Compute, matmuls(100), 10, 0.0);
        let writer = kernel(KernelRole::Writer, dram_reads(60), 10, 1.0);
        let (r, w) = (
            M.kernel_cycles(&reader).total(),
            M.kernel_cycles(&writer).total(),
        );
        let (rb, cb) = (0.75 * r / 10.0, 320.0);
        // Feeding the others (the default), the writer's prologue is the core's start-up.
        let fed = M.core(&[reader, compute, writer], 0.0);
        close(fed.prologue, w);
        close(fed.first_block, rb + cb);
        close(fed.end, w + rb + cb + 9.0 * rb.max(cb));
        // Feeding no one, the reader's prologue starts the blocks, and the first block ends
        // no earlier than the writer's prologue (its own block work is none).
        let alone = PhasedKernel {
            prologue_feeds: false,
            ..writer
        };
        let core = M.core(&[reader, compute, alone], 0.0);
        close(core.prologue, 0.25 * r);
        close(core.first_block, (rb + cb).max(w - 0.25 * r));
        close(
            core.end,
            0.25 * r + (rb + cb).max(w - 0.25 * r) + 9.0 * rb.max(cb),
        );
        assert!(w - 0.25 * r > rb + cb && core.end < fed.end);
        // A short one costs nothing.
        let short = PhasedKernel {
            prologue_feeds: false,
            ..kernel(KernelRole::Writer, dram_reads(1), 10, 1.0)
        };
        assert_eq!(
            M.core(&[reader, compute, short], 0.0).end,
            M.core(&[reader, compute], 0.0).end
        );
    }

    #[test]
    fn first_blocks_that_do_more_are_charged_apart() {
        // Reader: 40 pages in its 10 blocks, 60 % of them in its first 4; compute: 100 products
        // in 10 blocks (320 cycles a block). The reader's first blocks outrun the compute's,
        // its later ones do not, and its mean block does not either.
        let reader = PhasedKernel {
            first_blocks: 4,
            first_blocks_share: 0.6,
            ..kernel(KernelRole::Reader, dram_reads(40), 10, 0.0)
        };
        let compute = kernel(KernelRole::Compute, matmuls(100), 10, 0.0);
        let r = M.kernel_cycles(&reader).total();
        let (first, later, cb) = (0.6 * r / 4.0, 0.4 * r / 6.0, 320.0);
        assert!(first > cb && later < cb && r / 10.0 < cb);
        let core = M.core(&[reader, compute], 0.0);
        close(core.first_block, first + cb);
        close(core.steady, 3.0 * first + 6.0 * cb);
        let even = M.core(
            &[kernel(KernelRole::Reader, dram_reads(40), 10, 0.0), compute],
            0.0,
        );
        close(even.steady, 9.0 * cb);
        // All blocks first ones: the same as blocks alike.
        let all = PhasedKernel {
            first_blocks: 10,
            first_blocks_share: 1.0,
            ..reader
        };
        assert_eq!(M.core(&[all, compute], 0.0), even);
    }

    // A core without a compute kernel spends +0 cycles on one (a report prints "0.0", not
    // "-0.0", for the identity resize's missing compute).
    #[test]
    fn a_missing_kernel_takes_positive_zero_cycles() {
        let t = M.core(&[kernel(KernelRole::Reader, dram_reads(4), 1, 0.0)], 0.0);
        let none = t.of(KernelRole::Compute);
        assert_eq!(none, 0.0);
        assert!(none.is_sign_positive());
    }

    // Stages that hand nothing over (push shares 0: a reader and a writer sharing no CB, no
    // compute) run side by side: the first block is the longer of the two, not their sum.
    #[test]
    fn stages_that_hand_nothing_over_run_side_by_side() {
        let none = [[0.0; 2], [1.0; 2], [0.0; 2]];
        close(
            TimelineModel::first_block([900.0, 0.0, 700.0], none, [[0.0; 2]; 3]),
            900.0,
        );
        close(
            TimelineModel::first_block([300.0, 0.0, 700.0], none, [[0.0; 2]; 3]),
            700.0,
        );
    }

    #[test]
    fn a_block_handed_over_as_it_goes_pipelines_its_parts() {
        // Reader 900, compute 300, writer 200 cycles a block.
        let stage = [900.0, 300.0, 200.0];
        let whole = TimelineModel::first_block(stage, [[1.0; 2]; 3], [[0.0; 2]; 3]);
        close(whole, 1400.0);
        // The reader pushes a third of its block at a time (after 1/3 and 3/3 of it); the
        // compute's 3 groups of output tiles wait for a third each in the first group (after 0
        // and 2/9 of its work) and push after each group (after 1/3 and 3/3): the compute ends
        // at max(300, 300 + 300, 900 + 300 · 7/9) = 1133.3 and hands its first group over at
        // 1133.3 − 200; the writer waits for a third each (after 0 and 2/3 of its work) and
        // ends at max(200, 933.3 + 200, 1133.3 + 200/3) = 1200.
        let (pushes, waits) = (
            [[1.0 / 3.0, 1.0], [1.0 / 3.0, 1.0], [1.0; 2]],
            [[0.0; 2], [0.0, 2.0 / 9.0], [0.0, 2.0 / 3.0]],
        );
        let parts = TimelineModel::first_block(stage, pushes, waits);
        close(parts, 900.0 + 700.0 / 3.0 + 200.0 / 3.0);
        // A compute slower than its reader: it starts on the reader's first third and runs
        // through: 300 + 2700 + 200/3.
        let slow = TimelineModel::first_block([900.0, 2700.0, 200.0], pushes, waits);
        close(slow, 300.0 + 2700.0 + 200.0 / 3.0);
        // A compute that starts its block before waiting (2/3 of its only group before the wait
        // for the reader's one hand-off, pushed at 5/9 of its block, its last 4/9 preparing
        // later blocks): max(300, 500 + 100) + 200.
        let ahead = TimelineModel::first_block(
            stage,
            [[5.0 / 9.0; 2], [1.0; 2], [1.0; 2]],
            [[0.0; 2], [2.0 / 3.0; 2], [0.0; 2]],
        );
        close(ahead, 600.0 + 200.0);
        // The core's first block is this pipeline.
        let reader = PhasedKernel {
            first_push_share: 0.5,
            ..kernel(KernelRole::Reader, dram_reads(40), 10, 0.0)
        };
        let compute = PhasedKernel {
            last_wait_share: 0.5,
            ..kernel(KernelRole::Compute, matmuls(100), 10, 0.0)
        };
        let (r, c) = (M.kernel_cycles(&reader).total() / 10.0, 320.0);
        let core = M.core(&[reader, compute], 0.0);
        close(core.first_block, (0.5 * r + c).max(r + 0.5 * c));
    }

    /// The stage bound takes the slowest core's busiest kernel alone: a core of a reader of 4
    /// DRAM pages and a compute of 100 HiFi2 matmuls (3200 cycles: 32 a product at 64 B/cycle of
    /// unpack, as above) over 4 blocks ends later than its compute (the first block passes the
    /// reader first), but its stage bound is the compute's 3200 cycles plus the dispatch; a
    /// busier link than that takes its place.
    #[test]
    fn the_stage_bound_is_the_busiest_kernel_without_the_fill() {
        let reader = kernel(KernelRole::Reader, dram_reads(4), 4, 0.0);
        let compute = kernel(KernelRole::Compute, matmuls(100), 4, 0.0);
        let mut step = M.step(&[vec![reader, compute]]);
        assert!(step.slowest.end > 3200.0);
        close(
            step.stage_bound_seconds(M.clock_hz),
            3200.0 / M.clock_hz + M.dispatch_seconds,
        );
        step.contention.link_seconds = 4000.0 / M.clock_hz;
        close(
            step.stage_bound_seconds(M.clock_hz),
            4000.0 / M.clock_hz + M.dispatch_seconds,
        );
    }

    #[test]
    fn receivers_start_after_the_slowest_sender() {
        // The sender's writer multicasts 64 KiB to 109 cores in its prologue; the receiver's
        // reader waits.
        let send = Counters {
            noc_mcasts: 32,
            noc_mcast_bytes: 65536,
            noc_mcast_dests: 32 * 109,
            ..Counters::default()
        };
        let sender = PhasedKernel {
            sends: true,
            ..kernel(KernelRole::Writer, send, 0, 1.0)
        };
        let receiver = PhasedKernel {
            waits_for_sender: true,
            ..kernel(KernelRole::Reader, dram_reads(4), 4, 0.0)
        };
        let compute = kernel(KernelRole::Compute, matmuls(40), 4, 0.0);
        let step = M.step(&[vec![sender], vec![receiver, compute]]);
        let sent = 32.0 * (374.6 + 2048.0 / 60.0);
        close(step.sender_cycles, sent);
        // When the sender's reader loads the pages (its first 8 of 16 DRAM pages) before its
        // writer multicasts them, the multicast starts after those reads.
        let loader = PhasedKernel {
            loads_share: 0.5,
            ..kernel(KernelRole::Reader, dram_reads(16), 0, 1.0)
        };
        let loads = 0.5 * M.kernel_cycles(&loader).total();
        let loaded = M.step(&[vec![loader, sender], vec![receiver, compute]]);
        close(loaded.sender_cycles, loads + sent);
        close(loaded.slowest.end, step.slowest.end + loads);
        let r = M.kernel_cycles(&receiver).total() / 4.0;
        close(step.slowest.end, sent + r + 320.0 + 3.0 * r.max(320.0));
        close(
            step.seconds(),
            step.slowest.end / 1.35e9 + TimelineModel::BLACKHOLE.dispatch_seconds,
        );
    }

    #[test]
    fn receivers_cannot_take_in_the_pages_faster_than_their_port_and_the_banks() {
        // Four senders each multicast 72 KiB (a quarter of 288 KiB of weights) to the 119 other
        // cores of 12×10, unlinked, after their readers have read the first slab (a quarter of
        // 36 pages of 2 KiB at 33 B/cycle and 8 issue cycles a page) from DRAM: then at most
        // 24.6 B/cycle to 109+ cores (2997.1 cycles).
        let quarter = 72.0 * 1024.0;
        let send = Counters {
            noc_mcasts: 1,
            noc_mcast_bytes: 73728,
            noc_mcast_dests: 120,
            noc_mcast_landed_bytes: 73728 * 119,
            ..Counters::default()
        };
        let sender = PhasedKernel {
            sends: true,
            ..kernel(KernelRole::Writer, send, 0, 1.0)
        };
        let loader = PhasedKernel {
            loads_share: 0.25,
            ..kernel(KernelRole::Reader, dram_reads(36), 0, 1.0)
        };
        let waiting = PhasedKernel {
            waits_for_sender: true,
            ..kernel(KernelRole::Reader, Counters::default(), 0, 0.0)
        };
        // 4 sender cores (each also waits for the 3 others) and 116 other cores.
        let mut cores = vec![vec![loader, sender, waiting]; 4];
        cores.extend(vec![vec![waiting]; 116]);
        let step = M.step(&cores);
        // Landed: 4 × 72 KiB × 119 over 120 waiting cores = 285.6 KiB a core: through one port
        // at 64 B/cycle, 4569.6 cycles; from DRAM, an eighth per bank at 47.41 B/cycle,
        // 771.1 cycles.
        let landed = 4.0 * quarter * 119.0 / 120.0;
        close(step.startup.landed_bytes, landed);
        close(step.startup.link_cycles, landed / 64.0);
        close(step.startup.bank_cycles, landed / 8.0 / (64e9 / 1.35e9));
        close(step.startup.cycles(), 4569.6);
        // The senders alone would be done sooner: the waiting cores resume at the bound.
        let sent = 0.25 * M.kernel_cycles(&loader).total() + 73728.0 / 24.6;
        close(step.sender_cycles, sent);
        assert!(sent < 4569.6);
        close(step.slowest.end, 4569.6);
        // One sender of all 288 KiB is slower than the bound: the bound does not bind.
        let all = Counters {
            noc_mcast_bytes: 4 * 73728,
            noc_mcast_landed_bytes: 4 * 73728 * 119,
            ..send
        };
        let one = PhasedKernel {
            counters: all,
            ..sender
        };
        let mut cores = vec![vec![one]];
        cores.extend(vec![vec![waiting]; 119]);
        let step = M.step(&cores);
        close(step.startup.landed_bytes, 4.0 * quarter);
        assert!(step.sender_cycles > step.startup.cycles());
        close(step.slowest.end, step.sender_cycles);
        // No waiting core: no bound.
        assert_eq!(M.step(&[vec![sender]]).startup, StartupBound::default());
    }

    #[test]
    fn a_first_block_fed_round_by_round_starts_on_the_first_round() {
        // The receiver's reader (4 DRAM pages over its 4 blocks: r a block) waits in its
        // prologue only for the first round of the weights, which lands at 1000 cycles (all of
        // them at 4000), and pushes the rest in its first block; its compute (320 cycles a
        // block) last waits for them after 3/4 of its first block.
        let reader = PhasedKernel {
            waits_for_sender: true,
            waits_first_round: true,
            ..kernel(KernelRole::Reader, dram_reads(4), 4, 0.0)
        };
        let compute = PhasedKernel {
            landed_wait_share: Some(0.75),
            ..kernel(KernelRole::Compute, matmuls(40), 4, 0.0)
        };
        let r = M.kernel_cycles(&reader).total() / 4.0;
        assert!(r + 320.0 < 3080.0);
        let arrivals = Arrivals {
            first: 1000.0,
            last: 4000.0,
        };
        // The blocks start at 1000; the compute's first block ends no earlier than the last
        // round (3000 cycles in) plus its last quarter (80), later than its own r + 320.
        let fed = M.core_fed(&[reader, compute], arrivals);
        close(fed.prologue, 1000.0);
        close(fed.first_block, 3000.0 + 80.0);
        close(fed.end, 1000.0 + 3080.0 + 3.0 * r.max(320.0));
        // Waiting for all of them first: the blocks start at 4000, r + 320 later the first ends.
        let all = PhasedKernel {
            waits_first_round: false,
            ..reader
        };
        let waited = M.core_fed(&[all, compute], arrivals);
        close(waited.prologue, 4000.0);
        close(waited.first_block, r + 320.0);
        close(waited.end - fed.end, r + 240.0);
        // Nor earlier than its own work: a compute of 6400 cycles a block runs its first block
        // from 1000 to 1000 + r + 6400, past the last round's 4000 + 1600.
        let slow = PhasedKernel {
            landed_wait_share: Some(0.75),
            ..kernel(KernelRole::Compute, matmuls(800), 4, 0.0)
        };
        close(
            M.core_fed(&[reader, slow], arrivals).first_block,
            r + 6400.0,
        );
        // A reader that last waits for them halfway through its first block hands over its
        // block (at its end) no earlier than the last round plus its second half: the compute
        // (no wait of its own) ends 320 later.
        let late = PhasedKernel {
            landed_wait_share: Some(0.5),
            ..reader
        };
        let plain = kernel(KernelRole::Compute, matmuls(40), 4, 0.0);
        close(
            M.core_fed(&[late, plain], arrivals).first_block,
            3000.0 + 0.5 * r + 320.0,
        );
        // The senders' first signal sets the first round's arrival: a sender whose multicast
        // of 64 KiB to 109 cores signals its first round a quarter of the way through.
        let send = Counters {
            noc_mcasts: 32,
            noc_mcast_bytes: 65536,
            noc_mcast_dests: 32 * 109,
            ..Counters::default()
        };
        let sender = PhasedKernel {
            sends: true,
            first_signal_share: 0.25,
            ..kernel(KernelRole::Writer, send, 0, 1.0)
        };
        let sent = 32.0 * (374.6 + 2048.0 / 60.0);
        let step = M.step(&[vec![sender], vec![reader, compute]]);
        close(step.sender_cycles, sent);
        close(step.slowest.prologue, 0.25 * sent);
        close(
            step.slowest.first_block,
            (r + 320.0).max(0.75 * sent + 80.0),
        );
    }

    #[test]
    fn work_before_the_wait_overlaps_the_senders() {
        // The receiver's reader reads 8 pages: 4 (its ring) before it waits for the multicast,
        // then 1 per block for 4 blocks.
        let receiver = |before: f64| PhasedKernel {
            waits_for_sender: true,
            before_wait_share: before,
            ..kernel(KernelRole::Reader, dram_reads(8), 4, 0.5)
        };
        let r = M.kernel_cycles(&receiver(0.0)).total();
        // Waiting first: the ring starts when the senders end.
        close(M.core(&[receiver(0.0)], 1000.0).prologue, 1000.0 + 0.5 * r);
        // The ring first: the prologue ends at the later of the ring and the senders.
        close(
            M.core(&[receiver(0.5)], 1000.0).prologue,
            1000.0f64.max(0.5 * r),
        );
        close(M.core(&[receiver(0.5)], 10.0).prologue, 0.5 * r);
        close(M.core(&[receiver(0.5)], 10.0).end, r);
        // The share before the wait is at most the prologue's.
        assert_eq!(
            M.core(&[receiver(0.9)], 10.0),
            M.core(&[receiver(0.5)], 10.0)
        );
    }

    #[test]
    fn the_timeline_is_at_least_the_roofline() {
        // Same counters, flat phases: v2 ≥ v1 because every v2 rate is at or below v1's.
        let reader = dram_reads(64);
        let compute = matmuls(256);
        let v1 = CostModel::BLACKHOLE.step(&[vec![
            crate::KernelWork {
                role: KernelRole::Reader,
                counters: reader,
                scalar_cycles: 0.0,
                single_buffered: false,
            },
            crate::KernelWork {
                role: KernelRole::Compute,
                counters: compute,
                scalar_cycles: 0.0,
                single_buffered: false,
            },
        ]]);
        let v2 = M.step(&[vec![
            PhasedKernel::flat(KernelRole::Reader, reader),
            PhasedKernel::flat(KernelRole::Compute, compute),
        ]]);
        assert!(v2.kernel_seconds() >= v1.core_seconds);
    }
}
