//! The target: the compute grid, per-core limits of a Blackhole p150a (TENSIX_FACTS.md) and the
//! numeric precision a node runs at. These are the parameters of a compilation, not constants,
//! so the 11×10 and 12×10 grids (and a stricter budget in tests) go through the same code.

use serde::{Deserialize, Serialize};

/// A logical core coordinate: `x` is the column, `y` the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Core {
    pub x: u32,
    pub y: u32,
}

/// An inclusive rectangle of logical cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreRange {
    pub start: Core,
    pub end: Core,
}

impl CoreRange {
    /// The number of cores in the rectangle.
    pub fn len(&self) -> u32 {
        (self.end.x + 1 - self.start.x) * (self.end.y + 1 - self.start.y)
    }

    /// Whether the rectangle is empty (never, for a well-formed range).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The compute grid in logical cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    pub x: u32,
    pub y: u32,
}

impl Grid {
    /// 12×10: dispatch on Ethernet cores (the default of this project).
    pub const ETH_DISPATCH: Grid = Grid { x: 12, y: 10 };
    /// 11×10: upstream Tensix dispatch takes the last column.
    pub const TENSIX_DISPATCH: Grid = Grid { x: 11, y: 10 };

    /// The number of cores.
    pub fn cores(&self) -> u32 {
        self.x * self.y
    }

    /// The first `n` cores in row-major order (x fastest) as at most two rectangles: the full
    /// rows and the partial last row.
    pub fn first_cores(&self, n: u32) -> Vec<CoreRange> {
        let full_rows = n / self.x;
        let rest = n % self.x;
        let mut ranges = Vec::new();
        if full_rows > 0 {
            ranges.push(CoreRange {
                start: Core { x: 0, y: 0 },
                end: Core {
                    x: self.x - 1,
                    y: full_rows - 1,
                },
            });
        }
        if rest > 0 {
            ranges.push(CoreRange {
                start: Core { x: 0, y: full_rows },
                end: Core {
                    x: rest - 1,
                    y: full_rows,
                },
            });
        }
        ranges
    }

    /// Core number `i` in row-major order.
    pub fn core(&self, i: u32) -> Core {
        Core {
            x: i % self.x,
            y: i / self.x,
        }
    }

    /// Whether the grid needs dispatch on the Ethernet cores: Tensix dispatch takes a column,
    /// leaving at most [`Grid::TENSIX_DISPATCH`].
    pub fn eth_dispatch(&self) -> bool {
        self.x > Grid::TENSIX_DISPATCH.x
    }

    /// The NoC coordinates of logical `core` as the emulator places the workers (tt-runtime's
    /// `emu/device.cpp`): a p150's 14 Tensix columns sit at NoC x 1–7 and 10–16 of the 17×12
    /// tori (DRAM at 0 and 9), rows at y 2–11, the two harvested columns taken as the last.
    /// For choices that weigh routes only: a card's harvesting may shift a column, which makes
    /// such a choice a little worse, never wrong; addresses come from the device
    /// (`worker_core_from_logical_core`). `None` outside the 12 columns.
    pub fn nominal_noc(&self, core: Core) -> Option<(u32, u32)> {
        const TENSIX_NOC_X: [u32; 12] = [1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14];
        const FIRST_ROW_NOC_Y: u32 = 2;
        let x = *TENSIX_NOC_X.get(core.x as usize)?;
        Some((x, core.y + FIRST_ROW_NOC_Y))
    }

    /// The largest command the dispatch prefetcher takes in one entry
    /// (`max_prefetch_command_size`): 32 KiB on Ethernet dispatch cores (tt-metal PR #49409),
    /// 128 KiB on Tensix ones. At the pinned tt-metal a program's CB, semaphore and
    /// common-argument configuration must fit one entry (PR #53988, open, lifts that;
    /// [`crate::dispatch`]).
    pub fn max_prefetch_command_bytes(&self) -> u32 {
        if self.eth_dispatch() {
            32 * 1024
        } else {
            128 * 1024
        }
    }
}

/// Per-core limits the checks hold a program to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// L1 bytes per Tensix core.
    pub l1_size: u32,
    /// First L1 byte programs may allocate; CBs and L1 buffers live above it. Below it: the
    /// firmware and the kernel-config region.
    pub l1_base: u32,
    /// Bytes of the kernel-config region: each program's runtime args, semaphore and CB configs
    /// and, on Blackhole, its kernel binaries ([`crate::dispatch::KernelConfig`]).
    pub kernel_config_bytes: u32,
    /// CBs per core (ids 0..max_cbs).
    pub max_cbs: u32,
    /// Runtime args per kernel per core.
    pub max_runtime_args: u32,
    /// Semaphores per core.
    pub max_semaphores: u32,
    /// NoC alignment of L1 addresses and sizes.
    pub l1_alignment: u32,
    /// NoC alignment of DRAM reads.
    pub dram_read_alignment: u32,
    /// NoC alignment of DRAM writes.
    pub dram_write_alignment: u32,
}

impl Limits {
    /// Blackhole at the pinned tt-metal: 1536 KiB L1, of which firmware, mailboxes and fabric
    /// state take 40 KiB (`MEM_MAP_END`, `hw/inc/internal/tt-1xx/blackhole/dev_mem_map.h`) and
    /// the kernel-config region the next 69 KiB (`default_l1_kernel_config_size`,
    /// `llrt/hal/tt-1xx/blackhole/bh_hal_tensix.cpp`), leaving 1427 KiB from 109 KiB up
    /// (`DEFAULT_UNRESERVED`, 64-byte aligned); 64 CBs, 341 runtime args, 16 semaphores, NoC
    /// alignment 16 B (L1, DRAM writes) and 64 B (DRAM reads).
    pub const BLACKHOLE: Limits = Limits {
        l1_size: 1536 * 1024,
        l1_base: (40 + 69) * 1024,
        kernel_config_bytes: 69 * 1024,
        max_cbs: 64,
        max_runtime_args: 341,
        max_semaphores: 16,
        l1_alignment: 16,
        dram_read_alignment: 64,
        dram_write_alignment: 16,
    };

    /// Usable L1 bytes per core.
    pub fn l1_usable(&self) -> u32 {
        self.l1_size.saturating_sub(self.l1_base)
    }
}

/// Matrix-unit math fidelity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Fidelity {
    LoFi,
    HiFi2,
    HiFi3,
    HiFi4,
}

impl Fidelity {
    /// Matrix-unit phases per tile product (LoFi 1 … HiFi4 4).
    pub fn phases(self) -> u32 {
        match self {
            Fidelity::LoFi => 1,
            Fidelity::HiFi2 => 2,
            Fidelity::HiFi3 => 3,
            Fidelity::HiFi4 => 4,
        }
    }
}

/// Element format of a tensor or CB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Format {
    #[default]
    Bf16,
    Fp32,
}

impl Format {
    /// Whether this is bf16 (the format serialisation leaves out).
    pub fn is_bf16(&self) -> bool {
        *self == Format::Bf16
    }

    /// Bytes of one 32×32 tile.
    pub fn tile_bytes(self) -> u32 {
        match self {
            Format::Bf16 => 2048,
            Format::Fp32 => 4096,
        }
    }
}

/// How a node computes: activation/weight format, matmul fidelity, DST accumulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Precision {
    pub format: Format,
    pub fidelity: Fidelity,
    pub fp32_dest: bool,
}

impl Precision {
    /// The port's choice: bf16 activations and weights, HiFi2, fp32 accumulation in DST.
    pub const PORT: Precision = Precision {
        format: Format::Bf16,
        fidelity: Fidelity::HiFi2,
        fp32_dest: true,
    };

    /// Accurate: Float32 activations (tf32 in the source registers), each weight as a bf16
    /// high part plus a bf16 low part (two matmuls, both exact at HiFi4), fp32 accumulation in
    /// DST. About 4× the port's matrix-unit time; for maps that must match an f32 reference
    /// closely (the keypoint F1 gate on weights whose scores are nearly tied).
    pub const ACCURATE: Precision = Precision {
        format: Format::Fp32,
        fidelity: Fidelity::HiFi4,
        fp32_dest: true,
    };

    /// Tiles one `tile_regs_acquire` gets in half-sync mode: 8 bf16 or 4 fp32.
    pub fn dst_tiles(&self) -> u32 {
        if self.fp32_dest {
            4
        } else {
            8
        }
    }
}
