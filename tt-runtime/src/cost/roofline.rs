//! Cost model v1: a roofline of Blackhole device time over the emulator's [`Counters`]: modeled
//! time, never a measurement (TENSIX_FACTS "Estimating device time without a card", DESIGN §6).
//!
//! Per core, each of the three processors gets a cycle count and the slowest one is the core's
//! time (they run concurrently, coupled only through circular buffers), except that a data-
//! movement kernel whose stream to or from the compute kernel holds a single batch
//! ([`KernelWork::single_buffered`]) takes turns with it: their cycles add.
//! * **compute** (TRISC0–2): the math thread drives the FPU and then the SFPU on the same DST,
//!   so their cycles add; the packer runs alongside, so compute = max(FPU + SFPU, pack).
//!   FPU: 16 cycles per 32×32×32 tile matmul per fidelity phase (LoFi 1 … HiFi4 4 phases);
//!   8 per element-wise tile, times the phases for the ops that use fidelity (multiply and
//!   reduce; add, subtract and the datacopies copy / transpose / tilize / untilize do not). The
//!   counters do not tell reduce-MAX from reduce-SUM, so every reduce pays its phases (an upper
//!   bound for MAX). SFPU: 32 cycles per counted SFPU op per tile, the "≥ 32 per instruction"
//!   floor; `exp`, `recip` and `rsqrt` are several instructions, so the SFPU figure is a lower
//!   bound. Pack: 8 cycles per tile (assumed equal to the element-wise rate).
//! * **reader** (BRISC) and **writer** (NCRISC): every NoC transfer the kernel issued, in the
//!   order of the counters' size classes: `bytes / bandwidth(class) + issue` cycles, summed.
//!   Summing is right for one core's kernel: each data-movement kernel has one NoC and its
//!   transfers share that core's port (≤ 64 B/cycle per link; the per-transfer figures below
//!   are already just under it). Multicasts pay once (the NoC replicates them), semaphore
//!   updates pay the issue cost only. Plus the kernel's scalar work (below).
//!
//! A step (one program) takes the slowest core's time, at least the step's DRAM bytes (read +
//! written, all cores) at the aggregate DRAM bandwidth, plus the launch overhead. The
//! [`Bound`] says which term won, and the [`StepEstimate`] keeps every component.
//!
//! # Scalar RISC-V work
//! The emulator runs kernels as native C++: it cannot count the instructions of plain loops on
//! the data-movement cores (im2col gathers, the NMS mask and candidate scan, the sampling tap
//! arithmetic, u8→bf16 table lookups). A counter the kernels bump would need an API call that
//! does not exist on the device (the stand-in headers must match the real ones), so instead the
//! caller passes each kernel's scalar work per core in cycles ([`KernelWork::scalar_cycles`]),
//! e.g. from kernel-gen's static report (the kir `L1Gather` bytes) through
//! [`CostModel::l1_rearrange_cycles`]. That figure is a lower bound: it charges one 32-bit L1
//! store every ~5 cycles (TENSIX_FACTS) and nothing for the address arithmetic or for 16-bit
//! stores. Passing 0 (the default) models the data movement alone, which understates any
//! kernel that loops over data on a RISC-V.
//!
//! # Assumptions not in TENSIX_FACTS
//! * NoC bandwidth below 128 B: the tt-npe table halves per halving of the size from 128 B up
//!   to 1 KiB (≈ 21 cycles a transfer), so 64 B and smaller get 3 B/cycle; 4 KiB and 8 KiB are
//!   interpolated between 2 KiB (58) and 16 KiB (61); larger transfers are split into 16 KiB
//!   packets and get 61.
//! * Issue cost: 8 RISC-V cycles to program the NoC command buffer per transfer, on top of the
//!   transfer's own cycles (the data then streams at the bandwidth above).
//! * Launch overhead: TENSIX_FACTS gives none; 2 µs per program (step) is assumed for a
//!   traced replay. [`StepEstimate::launch_seconds`] keeps it apart so a report can drop it.

use crate::counters::{noc_size_class, Counters, TileOp, NOC_SIZE_CLASSES};
use crate::program::{KernelRole, MathFidelity};

/// The constants of the roofline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// Tensix clock, Hz.
    pub clock_hz: f64,
    /// FPU cycles of one 32×32×32 tile matmul per fidelity phase.
    pub matmul_cycles_per_phase: f64,
    /// FPU cycles of one element-wise tile operation (per phase for multiply and reduce).
    pub eltwise_cycles: f64,
    /// SFPU cycles of one SFPU instruction over one tile.
    pub sfpu_cycles: f64,
    /// Packer cycles per tile.
    pub pack_cycles: f64,
    /// NoC bytes per cycle of one transfer, by the size classes of
    /// [`NOC_SIZE_CLASS_LIMITS`](crate::NOC_SIZE_CLASS_LIMITS) (last: larger than 16 KiB).
    pub noc_bytes_per_cycle: [f64; NOC_SIZE_CLASSES],
    /// RISC-V cycles to issue one NoC transfer or semaphore update.
    pub noc_issue_cycles: f64,
    /// RISC-V cycles per 32-bit L1 store of scalar code.
    pub riscv_cycles_per_l1_word: f64,
    /// Aggregate DRAM bandwidth, bytes per second.
    pub dram_bytes_per_second: f64,
    /// Fixed cost of launching one program, seconds.
    pub launch_seconds: f64,
}

impl CostModel {
    /// Blackhole p150a (TENSIX_FACTS; assumptions in the module docs).
    pub const BLACKHOLE: CostModel = CostModel {
        clock_hz: 1.35e9,
        matmul_cycles_per_phase: 16.0,
        eltwise_cycles: 8.0,
        sfpu_cycles: 32.0,
        pack_cycles: 8.0,
        noc_bytes_per_cycle: [3.0, 6.0, 12.0, 24.0, 48.0, 58.0, 59.0, 60.0, 61.0, 61.0],
        noc_issue_cycles: 8.0,
        riscv_cycles_per_l1_word: 5.0,
        dram_bytes_per_second: 512e9,
        launch_seconds: 2e-6,
    };

    /// FPU cycles of a compute kernel's tile operations.
    pub fn fpu_cycles(&self, c: &Counters) -> f64 {
        let mut cycles = 0.0;
        for fidelity in MathFidelity::ALL {
            let phases = (fidelity as u32 + 1) as f64;
            let at = |op| c.tile_ops_at(op, fidelity) as f64;
            cycles += at(TileOp::Matmul) * self.matmul_cycles_per_phase * phases;
            cycles += (at(TileOp::Mul) + at(TileOp::Reduce) + at(TileOp::ReduceMaxRow))
                * self.eltwise_cycles
                * phases;
            let plain = [
                TileOp::Add,
                TileOp::Sub,
                TileOp::Copy,
                TileOp::Transpose,
                TileOp::Tilize,
                TileOp::Untilize,
            ];
            cycles += plain.into_iter().map(at).sum::<f64>() * self.eltwise_cycles;
        }
        cycles
    }

    /// SFPU cycles of a compute kernel: its SFPU work in tiles (an op over half the faces is
    /// half a tile).
    pub fn sfpu_cycles(&self, c: &Counters) -> f64 {
        c.all_sfpu_tiles() * self.sfpu_cycles
    }

    /// Packer cycles of a compute kernel.
    pub fn pack_cycles(&self, c: &Counters) -> f64 {
        c.tile_ops(TileOp::Pack) as f64 * self.pack_cycles
    }

    /// Cycles of every NoC transfer a data-movement kernel issued, one after another.
    pub fn noc_cycles(&self, c: &Counters) -> f64 {
        let mut cycles = 0.0;
        for class in 0..NOC_SIZE_CLASSES {
            let bw = self.noc_bytes_per_cycle[class];
            let transfers = c.noc_reads[class] + c.noc_writes[class];
            let bytes = c.noc_read_bytes[class] + c.noc_write_bytes[class];
            cycles += bytes as f64 / bw + transfers as f64 * self.noc_issue_cycles;
        }
        // Multicasts are counted without size classes: charge their mean size's class.
        let mean = c.noc_mcast_bytes.checked_div(c.noc_mcasts).unwrap_or(0);
        cycles += c.noc_mcast_bytes as f64 / self.noc_bytes_per_cycle[noc_size_class(mean)]
            + (c.noc_mcasts + c.noc_sem_ops) as f64 * self.noc_issue_cycles;
        cycles
    }

    /// Cycles of `n` NoC transfers of `bytes` bytes each, one after another (the rate of their
    /// size class, plus the issue), as [`CostModel::noc_cycles`] charges them.
    pub fn transfer_cycles(&self, n: u64, bytes: u64) -> f64 {
        n as f64
            * (bytes as f64 / self.noc_bytes_per_cycle[noc_size_class(bytes)]
                + self.noc_issue_cycles)
    }

    /// Scalar cycles of rearranging `bytes` in L1 on a RISC-V, at one 32-bit store per
    /// [`CostModel::riscv_cycles_per_l1_word`] (a lower bound, see the module docs).
    pub fn l1_rearrange_cycles(&self, bytes: u64) -> f64 {
        bytes.div_ceil(4) as f64 * self.riscv_cycles_per_l1_word
    }

    /// The estimate of one core running `kernels`.
    pub fn core(&self, kernels: &[KernelWork]) -> CoreEstimate {
        let mut e = CoreEstimate::default();
        for k in kernels {
            match k.role {
                KernelRole::Compute => {
                    e.fpu += self.fpu_cycles(&k.counters);
                    e.sfpu += self.sfpu_cycles(&k.counters);
                    e.pack += self.pack_cycles(&k.counters);
                    e.compute_scalar += k.scalar_cycles;
                }
                KernelRole::Reader => {
                    e.reader_noc += self.noc_cycles(&k.counters);
                    e.reader_scalar += k.scalar_cycles;
                    e.reader_turns |= k.single_buffered;
                }
                KernelRole::Writer => {
                    e.writer_noc += self.noc_cycles(&k.counters);
                    e.writer_scalar += k.scalar_cycles;
                    e.writer_turns |= k.single_buffered;
                }
            }
            e.dram_bytes += k.counters.dram_read_bytes + k.counters.dram_write_bytes;
        }
        e
    }

    /// The estimate of one step (program) whose cores ran the given kernels.
    pub fn step(&self, cores: &[Vec<KernelWork>]) -> StepEstimate {
        let estimates: Vec<CoreEstimate> = cores.iter().map(|k| self.core(k)).collect();
        let slowest = estimates
            .iter()
            .copied()
            .max_by(|a, b| a.cycles().total_cmp(&b.cycles()))
            .unwrap_or_default();
        let dram_bytes = estimates.iter().map(|e| e.dram_bytes).sum();
        StepEstimate {
            cores: cores.len(),
            core_seconds: slowest.cycles() / self.clock_hz,
            dram_bytes,
            dram_seconds: dram_bytes as f64 / self.dram_bytes_per_second,
            launch_seconds: self.launch_seconds,
            slowest,
        }
    }
}

/// One kernel's work on one core.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelWork {
    /// The processor it ran on.
    pub role: KernelRole,
    /// What the emulator counted for it on that core.
    pub counters: Counters,
    /// Scalar RISC-V cycles the emulator cannot count (module docs); 0 when unknown.
    pub scalar_cycles: f64,
    /// A data-movement kernel whose stream CB to or from the compute kernel holds one batch:
    /// neither side can work on the next batch while the other has this one, so they take
    /// turns (module docs).
    pub single_buffered: bool,
}

/// What bounds a core or a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// The matrix / element-wise engine (or the packer keeping up with it).
    Fpu,
    /// The SFPU.
    Sfpu,
    /// NoC transfers of a data-movement kernel.
    Noc,
    /// Scalar RISC-V loops (a caller-supplied figure).
    Scalar,
    /// Aggregate DRAM bandwidth.
    Dram,
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            Bound::Fpu => "FPU",
            Bound::Sfpu => "SFPU",
            Bound::Noc => "NoC",
            Bound::Scalar => "RISC-V loops",
            Bound::Dram => "DRAM",
        })
    }
}

/// The cycle components of one core.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CoreEstimate {
    pub fpu: f64,
    pub sfpu: f64,
    pub pack: f64,
    pub compute_scalar: f64,
    pub reader_noc: f64,
    pub reader_scalar: f64,
    pub writer_noc: f64,
    pub writer_scalar: f64,
    /// The reader and the compute take turns ([`KernelWork::single_buffered`]).
    pub reader_turns: bool,
    /// The compute and the writer take turns.
    pub writer_turns: bool,
    /// DRAM bytes its kernels read and wrote.
    pub dram_bytes: u64,
}

impl CoreEstimate {
    /// Compute (TRISC) cycles: math (FPU then SFPU, plus scalar work) against the packer.
    pub fn compute(&self) -> f64 {
        (self.fpu + self.sfpu + self.compute_scalar).max(self.pack)
    }

    /// Reader (BRISC) cycles.
    pub fn reader(&self) -> f64 {
        self.reader_noc + self.reader_scalar
    }

    /// Writer (NCRISC) cycles.
    pub fn writer(&self) -> f64 {
        self.writer_noc + self.writer_scalar
    }

    /// The reader's chain with the compute: the slower of the two, or both in turn.
    fn reader_chain(&self) -> f64 {
        if self.reader_turns {
            self.reader() + self.compute()
        } else {
            self.reader().max(self.compute())
        }
    }

    /// The compute's chain with the writer.
    fn writer_chain(&self) -> f64 {
        if self.writer_turns {
            self.compute() + self.writer()
        } else {
            self.compute().max(self.writer())
        }
    }

    /// The core's cycles: the slowest of its three processors, or of a pair taking turns.
    pub fn cycles(&self) -> f64 {
        self.reader_chain().max(self.writer_chain())
    }

    /// What the core waits on: of its slower chain (reader–compute or compute–writer), the
    /// member with more cycles, and what that one spends most of its cycles on.
    pub fn bound(&self) -> Bound {
        let compute = self.compute();
        let reader_side = self.reader_chain() >= self.writer_chain();
        let (noc, scalar) = if reader_side {
            (self.reader_noc, self.reader_scalar)
        } else {
            (self.writer_noc, self.writer_scalar)
        };
        if compute >= noc + scalar {
            if self.compute_scalar > self.fpu.max(self.sfpu) {
                Bound::Scalar
            } else if self.sfpu > self.fpu {
                Bound::Sfpu
            } else {
                Bound::Fpu
            }
        } else if scalar > noc {
            Bound::Scalar
        } else {
            Bound::Noc
        }
    }
}

/// The modeled time of one step (program).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepEstimate {
    /// Cores that ran kernels.
    pub cores: usize,
    /// The slowest core's components.
    pub slowest: CoreEstimate,
    /// The slowest core's time.
    pub core_seconds: f64,
    /// DRAM bytes read and written by all cores.
    pub dram_bytes: u64,
    /// Those bytes at the aggregate DRAM bandwidth.
    pub dram_seconds: f64,
    /// The launch overhead.
    pub launch_seconds: f64,
}

impl StepEstimate {
    /// Modeled time: max(slowest core, DRAM) + launch.
    pub fn seconds(&self) -> f64 {
        self.core_seconds.max(self.dram_seconds) + self.launch_seconds
    }

    /// What bounds the step.
    pub fn bound(&self) -> Bound {
        if self.dram_seconds > self.core_seconds {
            Bound::Dram
        } else {
            self.slowest.bound()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: CostModel = CostModel::BLACKHOLE;

    fn close(got: f64, want: f64) {
        assert!(
            (got - want).abs() <= 1e-9 * want.abs().max(1.0),
            "got {got}, want {want}"
        );
    }

    fn tiles(op: TileOp, fidelity: MathFidelity, n: u64) -> Counters {
        let mut c = Counters::default();
        c.tile_ops[op as usize][fidelity as usize] = n;
        c
    }

    /// `n` DRAM reads (or writes) of `bytes` each in size class `class`.
    fn dram(class: usize, n: u64, bytes: u64, write: bool) -> Counters {
        let mut c = Counters::default();
        if write {
            c.noc_writes[class] = n;
            c.noc_write_bytes[class] = n * bytes;
            c.dram_write_bytes = n * bytes;
        } else {
            c.noc_reads[class] = n;
            c.noc_read_bytes[class] = n * bytes;
            c.dram_read_bytes = n * bytes;
        }
        c
    }

    fn work(role: KernelRole, counters: Counters) -> KernelWork {
        KernelWork {
            role,
            counters,
            scalar_cycles: 0.0,
            single_buffered: false,
        }
    }

    #[test]
    fn matmul_cycles_scale_with_fidelity_phases() {
        // 100 tile matmuls: 16 cycles per phase, LoFi 1 ... HiFi4 4 phases.
        for (fidelity, want) in [
            (MathFidelity::LoFi, 1600.0),
            (MathFidelity::HiFi2, 3200.0),
            (MathFidelity::HiFi3, 4800.0),
            (MathFidelity::HiFi4, 6400.0),
        ] {
            close(M.fpu_cycles(&tiles(TileOp::Matmul, fidelity, 100)), want);
        }
        // Multiply and reduce use fidelity (8 per phase); add and copy do not.
        close(
            M.fpu_cycles(&tiles(TileOp::Mul, MathFidelity::HiFi4, 10)),
            320.0,
        );
        close(
            M.fpu_cycles(&tiles(TileOp::Reduce, MathFidelity::HiFi2, 10)),
            160.0,
        );
        close(
            M.fpu_cycles(&tiles(TileOp::Add, MathFidelity::HiFi4, 10)),
            80.0,
        );
        close(
            M.fpu_cycles(&tiles(TileOp::Copy, MathFidelity::HiFi4, 10)),
            80.0,
        );
    }

    #[test]
    fn matmul_bound_kernel() {
        let mut compute = tiles(TileOp::Matmul, MathFidelity::HiFi2, 100);
        compute.tile_ops[TileOp::Pack as usize][MathFidelity::HiFi2 as usize] = 10;
        // 10 tiles of 2048 B in, 10 out: 20480 / 58 + 10 * 8 cycles each way.
        let core = M.core(&[
            work(KernelRole::Reader, dram(5, 10, 2048, false)),
            work(KernelRole::Compute, compute),
            work(KernelRole::Writer, dram(5, 10, 2048, true)),
        ]);
        close(core.fpu, 3200.0);
        close(core.pack, 80.0);
        close(core.reader(), 20480.0 / 58.0 + 80.0);
        close(core.writer(), 20480.0 / 58.0 + 80.0);
        close(core.cycles(), 3200.0);
        assert_eq!(core.bound(), Bound::Fpu);
        assert_eq!(core.dram_bytes, 40960);

        let step = M.step(&[vec![
            work(KernelRole::Reader, dram(5, 10, 2048, false)),
            work(KernelRole::Compute, compute),
        ]]);
        close(step.core_seconds, 3200.0 / 1.35e9);
        close(step.dram_seconds, 20480.0 / 512e9);
        close(step.seconds(), 3200.0 / 1.35e9 + 2e-6);
        assert_eq!(step.bound(), Bound::Fpu);
    }

    #[test]
    fn sfpu_adds_to_the_fpu_on_the_math_thread() {
        // 10 whole-tile SFPU ops (40 faces) and 4 over half a tile (8 faces): 12 tiles.
        let mut c = tiles(TileOp::Sfpu, MathFidelity::HiFi4, 14);
        c.sfpu_faces[crate::SfpuOp::Relu as usize] = 48;
        c.tile_ops[TileOp::Add as usize][MathFidelity::HiFi4 as usize] = 12;
        let core = M.core(&[work(KernelRole::Compute, c)]);
        close(core.compute(), 384.0 + 96.0);
        assert_eq!(core.bound(), Bound::Sfpu);
    }

    #[test]
    fn noc_bound_kernel() {
        // 1000 reads of 128 B at 6 B/cycle plus 8 cycles of issue each, against 10 adds.
        let core = M.core(&[
            work(KernelRole::Reader, dram(1, 1000, 128, false)),
            work(
                KernelRole::Compute,
                tiles(TileOp::Add, MathFidelity::HiFi2, 10),
            ),
        ]);
        close(core.reader(), 128000.0 / 6.0 + 8000.0);
        close(core.cycles(), 128000.0 / 6.0 + 8000.0);
        assert_eq!(core.bound(), Bound::Noc);
        // The writer's NoC counts too: 64 B writes at 3 B/cycle.
        let core = M.core(&[work(KernelRole::Writer, dram(0, 30, 64, true))]);
        close(core.cycles(), 30.0 * 64.0 / 3.0 + 30.0 * 8.0);
        assert_eq!(core.bound(), Bound::Noc);
    }

    #[test]
    fn multicasts_and_semaphores_pay_once() {
        let c = Counters {
            noc_mcasts: 2,
            noc_mcast_bytes: 4096,
            noc_mcast_dests: 200,
            noc_sem_ops: 3,
            ..Counters::default()
        };
        close(M.noc_cycles(&c), 4096.0 / 58.0 + 5.0 * 8.0);
    }

    #[test]
    fn transfer_cycles_charge_as_counted_transfers_do() {
        // Three 2 KiB reads: size class 5 (≤ 2048 B) at 58 B/cycle, plus 8 issue cycles each.
        close(M.transfer_cycles(3, 2048), 3.0 * (2048.0 / 58.0 + 8.0));
        close(
            M.transfer_cycles(3, 2048),
            M.noc_cycles(&dram(5, 3, 2048, false)),
        );
        assert_eq!(crate::noc_size_class(2049), 6);
        assert_eq!(crate::noc_size_class(1 << 20), NOC_SIZE_CLASSES - 1);
    }

    #[test]
    fn dram_bound_program() {
        // 120 cores each read 100 pages of 16 KiB: each core's NoC takes
        // 1638400 / 61 + 800 cycles (20.5 µs), the DRAM 120 * 1638400 B / 512 GB/s = 384 µs.
        let cores: Vec<Vec<KernelWork>> = (0..120)
            .map(|_| vec![work(KernelRole::Reader, dram(8, 100, 16384, false))])
            .collect();
        let step = M.step(&cores);
        assert_eq!(step.cores, 120);
        assert_eq!(step.dram_bytes, 196_608_000);
        close(step.core_seconds, (1638400.0 / 61.0 + 800.0) / 1.35e9);
        close(step.dram_seconds, 384e-6);
        close(step.seconds(), 386e-6);
        assert_eq!(step.bound(), Bound::Dram);
    }

    #[test]
    fn bounds_print_their_names_padded() {
        assert_eq!(
            format!("{:<5}|{}", Bound::Fpu, Bound::Scalar),
            "FPU  |RISC-V loops"
        );
    }

    #[test]
    fn the_slowest_core_sets_the_step() {
        let light = vec![work(
            KernelRole::Compute,
            tiles(TileOp::Matmul, MathFidelity::LoFi, 10),
        )];
        let heavy = vec![work(
            KernelRole::Compute,
            tiles(TileOp::Matmul, MathFidelity::LoFi, 30),
        )];
        let step = M.step(&[light, heavy]);
        close(step.slowest.fpu, 480.0);
        close(step.core_seconds, 480.0 / 1.35e9);
    }

    #[test]
    fn scalar_work_is_an_input() {
        // 10 bytes = 3 words at 5 cycles each.
        close(M.l1_rearrange_cycles(10), 15.0);
        let reader = KernelWork {
            role: KernelRole::Reader,
            counters: dram(5, 1, 2048, false),
            scalar_cycles: M.l1_rearrange_cycles(40960),
            single_buffered: false,
        };
        let core = M.core(&[reader]);
        close(core.reader(), 2048.0 / 58.0 + 8.0 + 51200.0);
        assert_eq!(core.bound(), Bound::Scalar);
        let core = M.core(&[KernelWork {
            scalar_cycles: 0.0,
            ..reader
        }]);
        assert_eq!(core.bound(), Bound::Noc);
    }

    #[test]
    fn single_buffered_streams_take_turns_with_the_compute() {
        // 100 HiFi2 matmuls (3200 cycles) against 10 DRAM reads of 2 KiB (10 × (2048 / 58 + 8)).
        let compute = tiles(TileOp::Matmul, MathFidelity::HiFi2, 100);
        let reader = work(KernelRole::Reader, dram(5, 10, 2048, false));
        let read = 10.0 * (2048.0 / 58.0 + 8.0);
        let overlapped = M.core(&[reader, work(KernelRole::Compute, compute)]);
        close(overlapped.cycles(), 3200.0);
        let turns = M.core(&[
            KernelWork {
                single_buffered: true,
                ..reader
            },
            work(KernelRole::Compute, compute),
        ]);
        close(turns.cycles(), 3200.0 + read);
        assert_eq!(turns.bound(), Bound::Fpu);
        // A single-buffered writer adds to the compute the same way; the reader still overlaps.
        let writer = KernelWork {
            single_buffered: true,
            ..work(KernelRole::Writer, dram(5, 10, 2048, true))
        };
        let write = M.core(&[writer]).writer();
        let core = M.core(&[reader, work(KernelRole::Compute, compute), writer]);
        close(core.cycles(), 3200.0 + write);
    }
}
