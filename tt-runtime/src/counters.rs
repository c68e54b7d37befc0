//! [`Counters`]: the work a kernel did, as the emulator counts it, for cost models.

use crate::program::MathFidelity;
use crate::sys;

/// Kinds of tile operations the compute engine performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TileOp {
    /// One 32x32x32 tile product.
    Matmul = 0,
    /// Element-wise add of two tiles.
    Add = 1,
    /// Element-wise subtract.
    Sub = 2,
    /// Element-wise multiply.
    Mul = 3,
    /// Unpack a tile into DST.
    Copy = 4,
    /// Reduce a tile.
    Reduce = 5,
    /// Transpose a tile.
    Transpose = 6,
    /// Tilize one tile's worth of rows.
    Tilize = 7,
    /// Untilize one tile.
    Untilize = 8,
    /// Pack a DST tile into a CB.
    Pack = 9,
    /// One SFPU instruction over one tile.
    Sfpu = 10,
    /// A row-wise MAX reduce of a tile (`reduce_tile<MAX, REDUCE_ROW>`; the other reduces count
    /// as [`TileOp::Reduce`]): on Blackhole it also moves each face's pooled row through SrcB
    /// and back, which costs more ([`crate::TimelineModel::reduce_max_row_cycles`]).
    ReduceMaxRow = 11,
}

/// SFPU operations by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SfpuOp {
    /// max(x, 0), with or without an upper bound.
    Relu = 0,
    /// e^x.
    Exp = 1,
    /// 1/x.
    Recip = 2,
    /// sqrt(x).
    Sqrt = 3,
    /// 1/sqrt(x).
    Rsqrt = 4,
    /// Element-wise max or min of two DST tiles.
    Max = 5,
    /// Add, subtract, multiply or divide by a scalar.
    Scalar = 6,
    /// Add or subtract two DST tiles, compare them for equality, or select between them.
    Binary = 7,
}

/// Op inits and data format reconfigs by what they program (each costs differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitKind {
    /// `copy_tile_init`, `copy_init`, the transpose inits: the datacopy unpack and math setup.
    Copy = 0,
    /// `matmul_init`, `matmul_block_init`.
    Matmul = 1,
    /// Element-wise add, subtract, multiply (and broadcast) inits, `binary_op_init_common`.
    Binary = 2,
    /// `reduce_init`.
    Reduce = 3,
    /// Tilize, untilize and pack-untilize inits and the uninits.
    Layout = 4,
    /// An SFPU op's init.
    Sfpu = 5,
    /// One unpacker source (SrcA or SrcB) reprogrammed for a CB's format.
    UnpackReconfig = 6,
    /// The packer reprogrammed: its output format, ReLU or L1 accumulation.
    PackReconfig = 7,
}

/// Number of [`InitKind`]s.
pub const INIT_KINDS: usize = 8;

/// Upper bounds (bytes) of the NoC transfer size classes; the last class is everything larger.
pub const NOC_SIZE_CLASS_LIMITS: [u32; 9] = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];

/// Number of NoC size classes.
pub const NOC_SIZE_CLASSES: usize = NOC_SIZE_CLASS_LIMITS.len() + 1;

/// The size class ([`NOC_SIZE_CLASS_LIMITS`]) of a transfer of `bytes` bytes.
pub fn noc_size_class(bytes: u64) -> usize {
    NOC_SIZE_CLASS_LIMITS
        .iter()
        .position(|&limit| bytes <= u64::from(limit))
        .unwrap_or(NOC_SIZE_CLASSES - 1)
}

/// Work counted over some kernels, cores and runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Kernel instances that ran to completion.
    pub runs: u64,
    /// Tile operations by [`TileOp`] and by the kernel's [`MathFidelity`].
    pub tile_ops: [[u64; 4]; 12],
    /// SFPU work by [`SfpuOp`], in 16×16 faces: 4 for an op over a whole tile, 2 for one in
    /// `VectorMode::R` or `C` (the faces it works on).
    pub sfpu_faces: [u64; 8],
    /// NoC reads by size class.
    pub noc_reads: [u64; NOC_SIZE_CLASSES],
    /// NoC read bytes by size class.
    pub noc_read_bytes: [u64; NOC_SIZE_CLASSES],
    /// Unicast NoC writes by size class.
    pub noc_writes: [u64; NOC_SIZE_CLASSES],
    /// Unicast NoC write bytes by size class.
    pub noc_write_bytes: [u64; NOC_SIZE_CLASSES],
    /// Multicast writes.
    pub noc_mcasts: u64,
    /// Bytes sent by multicast writes (once per multicast).
    pub noc_mcast_bytes: u64,
    /// Destinations reached by multicast writes.
    pub noc_mcast_dests: u64,
    /// Of the multicast writes, those issued with `linked = true` (the NoC path stays reserved
    /// for the next request of the same transaction).
    pub noc_linked_mcasts: u64,
    /// Their bytes (once per multicast).
    pub noc_linked_mcast_bytes: u64,
    /// Their destinations.
    pub noc_linked_mcast_dests: u64,
    /// Multicast bytes landed in other cores' L1: each multicast's bytes once per destination
    /// but the sender (a loopback multicast's copy on its sender stays local).
    pub noc_mcast_landed_bytes: u64,
    /// Semaphore increments and remote or multicast sets.
    pub noc_sem_ops: u64,
    /// Bytes read from DRAM.
    pub dram_read_bytes: u64,
    /// Bytes written to DRAM.
    pub dram_write_bytes: u64,
    /// cb_wait_front and cb_reserve_back calls.
    pub cb_waits: u64,
    /// Of those, the ones that had to wait.
    pub cb_blocked: u64,
    /// NoC hops travelled on Blackhole's 17×12 torus along the kernel's NoC: reads there and
    /// back, writes and semaphore updates one way, multicasts to their farthest destination.
    pub noc_hops: u64,
    /// Read and write barriers that found transfers in flight.
    pub noc_barriers: u64,
    /// Semaphore waits.
    pub sem_waits: u64,
    /// Op inits and format reconfigs by [`InitKind`]; a conditional reconfig `(old, new)` counts
    /// only when the two formats differ, as the LLK skips it otherwise.
    pub inits: [u64; INIT_KINDS],
}

impl Counters {
    /// Tile operations of one kind at every fidelity.
    pub fn tile_ops(&self, op: TileOp) -> u64 {
        self.tile_ops[op as usize].iter().sum()
    }

    /// Tile operations of one kind at one fidelity.
    pub fn tile_ops_at(&self, op: TileOp, fidelity: MathFidelity) -> u64 {
        self.tile_ops[op as usize][fidelity as usize]
    }

    /// SFPU work of one kind, in tiles (faces / 4).
    pub fn sfpu_tiles(&self, op: SfpuOp) -> f64 {
        self.sfpu_faces[op as usize] as f64 / 4.0
    }

    /// SFPU work of every kind, in tiles.
    pub fn all_sfpu_tiles(&self) -> f64 {
        self.sfpu_faces.iter().sum::<u64>() as f64 / 4.0
    }

    /// Inits or reconfigs of one kind.
    pub fn inits(&self, kind: InitKind) -> u64 {
        self.inits[kind as usize]
    }

    /// NoC transactions: unicast reads and writes, multicasts and semaphore updates.
    pub fn noc_transactions(&self) -> u64 {
        self.noc_reads.iter().sum::<u64>()
            + self.noc_writes.iter().sum::<u64>()
            + self.noc_mcasts
            + self.noc_sem_ops
    }

    /// Bytes moved by unicast reads and writes plus multicast payloads, all size classes.
    pub fn noc_bytes(&self) -> u64 {
        self.noc_read_bytes.iter().sum::<u64>()
            + self.noc_write_bytes.iter().sum::<u64>()
            + self.noc_mcast_bytes
    }

    pub(crate) fn from_raw(c: &sys::ttr_counters) -> Counters {
        Counters {
            runs: c.runs,
            tile_ops: c.tile_ops,
            sfpu_faces: c.sfpu_faces,
            noc_reads: c.noc_reads,
            noc_read_bytes: c.noc_read_bytes,
            noc_writes: c.noc_writes,
            noc_write_bytes: c.noc_write_bytes,
            noc_mcasts: c.noc_mcasts,
            noc_mcast_bytes: c.noc_mcast_bytes,
            noc_mcast_dests: c.noc_mcast_dests,
            noc_linked_mcasts: c.noc_linked_mcasts,
            noc_linked_mcast_bytes: c.noc_linked_mcast_bytes,
            noc_linked_mcast_dests: c.noc_linked_mcast_dests,
            noc_mcast_landed_bytes: c.noc_mcast_landed_bytes,
            noc_sem_ops: c.noc_sem_ops,
            dram_read_bytes: c.dram_read_bytes,
            dram_write_bytes: c.dram_write_bytes,
            cb_waits: c.cb_waits,
            cb_blocked: c.cb_blocked,
            noc_hops: c.noc_hops,
            noc_barriers: c.noc_barriers,
            sem_waits: c.sem_waits,
            inits: c.inits,
        }
    }
}
