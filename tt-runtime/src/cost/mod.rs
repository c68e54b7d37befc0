//! Modeled Blackhole device time over the emulator's [`Counters`](crate::Counters): two models,
//! never a measurement (TENSIX_FACTS "Estimating device time without a card", DESIGN §6).
//!
//! * [`roofline`] (v1, [`CostModel`]): peak rates, each core the maximum of its processors'
//!   totals. A floor: silicon cannot beat it, and it hides every serialised phase.
//! * [`timeline`] (v2, [`TimelineModel`]): measured rates, unpack limits, SFPU cycles by op,
//!   multicast cost by destinations, NoC flight, and each core's timeline of prologue, pipelined
//!   blocks and drain; [`contention`]: the busiest NoC link and DRAM bank. The estimate.
//!
//! `superpoint bench --calibrate` runs programs like the published measurements below on the
//! emulator and prints v2 beside them (docs/cost-model.md has the table and the method).
//!
//! # v2 constants and their public sources
//!
//! | constant | value | source |
//! |---|---|---|
//! | clock | 1.35 GHz | tenstorrent/tt-metal `tech_reports/GEMM_FLOPS/GEMM_FLOPS.md` ("At 1.35GHz (BH)") |
//! | matmul | 16 cycles per 32×32×32 tile per fidelity phase | same report: the engine does 8×16 × 16×16 a cycle; ideal cycles per tile LoFi 16, HiFi2 32, HiFi4 64 |
//! | element-wise | 8 cycles per tile (× phases for multiply and reduce) | TENSIX_FACTS (tt-lang's estimator); never the bound once unpack is charged |
//! | unpack | 64 B/cycle from L1 per unpacker, the two side by side for a matmul (its busier unpacker reads one tile per product); two-operand element-wise ops as if through one | tenstorrent/tt-isa-documentation `WormholeB0/.../UNPACR_Regular.md` "Performance": x4 = 64 B/cycle. Its interference rule (both at x4 get x2 each) is refuted on Blackhole for matmuls: with tt-llk's `_llk_unpack_AB_matmul_` reading `rt·ct + min(rt, ct)` tiles a K step, 64 B/cycle between both unpackers caps the 4×2 blocks of tt-metal's GEMM benchmark at 80 % of the BF16 HiFi2 peak and 75 % of BFP8 LoFi; tech_reports/GEMM_FLOPS measures 90.25 % and 87.5 % on P150 (both fit 64 B/cycle each: caps 100 % and 94 %) |
//! | pack | 64 B/cycle to L1 | assumption: the unpacker's x4 width; no published packer rate found |
//! | row-wise MAX reduce (`reduce_tile<MAX, REDUCE_ROW>`) | 97.94 cycles/tile | tenstorrent/tt-metal PR #55053: 97.94 cycles/tile on Blackhole's math thread against a 37.28 unpack bound, 40 of them config-register churn (a zero-flag write per face row, each draining the math and SFPU pipes), cut to 58.06 by that PR, which came after the pinned 0.78 (its LLK, `llk_math_reduce.h`, still sets and restores the flag around each face row's move through SrcB) |
//! | SFPU relu, scalar ops, recip, sqrt, rsqrt | 124 cycles/tile | tenstorrent/tt-metal PR #54317: a load/store-only SFPU pass (`identity`) 124.06 cycles/tile on Blackhole, the floor of any pass; recip/sqrt/rsqrt are Newton iterations above it (a lower bound) |
//! | SFPU exp (`exp_tile`, not approximate) | 1150 cycles/tile | tenstorrent/tt-metal issue #43569: the accurate bf16 exp ≈ 1150 cycles/tile (the approximate one: 93.59 in PR #54317, 77.15 in PR #57292) |
//! | SFPU binary max/min (`binary_max_tile`, float) | 109 cycles/tile | **estimate** from measured rates: tenstorrent/tt-metal PR #36928 measured binary max/min (float) at 6 cycles per input row of 32 values with plain loops (32 rows a tile: 192, as PR #49820 measured the plain-loop two-operand ops at 192.99 a tile) and 2 with SFPLOADMACRO; the pinned 0.78 LLK (`ckernel_sfpu_binary_max_min.h`) schedules 3 cycles a row and 3 NOPs a face: 32 × 3 + 4 × 3 + 1 = 109 |
//! | SFPU other two-operand ops (add/sub, eq of two DST tiles; where) | 193 cycles/tile | tenstorrent/tt-metal PR #49820: two-operand int32 SFPU ops (sub, rsub, and) 192.99 cycles/tile on Blackhole `main` (plain loops, 6 cycles a row) |
//! | NoC rate by transfer size | ≤ 64 B: 3 … 16 KiB: 61 B/cycle | tt-npe's Blackhole table, as the roofline; an upper bound on every kind below |
//! | DRAM read, one core | 33 B/cycle | tenstorrent/tt-low-level-documentation `data_movement_doc/general/ideal_performance.md`, Blackhole "DRAM Read" |
//! | DRAM write, one core | 34 B/cycle | same table, "DRAM Write" |
//! | core to core | 60 B/cycle | same table, "One To One" / "One From One" |
//! | multicast, by destinations | 3 cores: 40.3 cycles fixed, 54.7 B/cycle bulk; 24: 136.4, 39.7; 109: 374.6, 24.6 | tenstorrent/tt-low-level-documentation `data_movement_doc/perf_plots/blackhole/csv/One to All Multicast {2x2,5x5,11x10} Packet Sizes without Loopback.csv`: fixed = the 64 B × 256 run's cycles per multicast, bulk = the 64 KiB × 256 run's B/cycle (the table above: 24 to all, 41 linked). One multicast costs max(bytes / bulk, fixed + bytes / 60), interpolated linearly in the destinations |
//! | linked multicast, by destinations (the sender included) | 4 cores: 25.5 cycles fixed, 60.0 B/cycle bulk; 25: 29.4, 54.7; 110: 114.4, 41.6 | the same sweeps' `One to All Multicast Linked {2x2,5x5,11x10} Packet Sizes with Loopback.csv`, the same two runs; for multicasts issued with `linked = true` (a transaction's last, unlinked one is charged as above) |
//! | NoC hop | 9 cycles | TENSIX_FACTS (tt-isa-documentation, BlackholeA0 NoC); hops counted on the 17×12 torus per the kernel's NoC |
//! | issue | 8 RISC-V cycles per transfer | assumption, as the roofline |
//! | aggregate DRAM | 512 GB/s | p150a specification (TENSIX_FACTS) |
//! | NoC link ([`contention`]; a core's NoC port in [`TimelineModel::startup_bound`]) | 64 B/cycle per directed link per NoC | tenstorrent/tt-isa-documentation `WormholeB0/NoC/README.md` "Performance": one flit per cycle per link, router to router; a Blackhole flit is 64 B (TENSIX_FACTS). Assumption: header flits left out; tt-npe's Blackhole model charges every link 60.9 B/cycle |
//! | DRAM bank ([`contention`], [`TimelineModel::startup_bound`]) | 64 GB/s, 8 banks | assumption: the 512 GB/s shared evenly by the 8 banks (no per-bank measurement found; tt-npe's Blackhole model gives a DRAM endpoint 54 GB/s each way) |
//! | NoC routes ([`Occupancy`](crate::Occupancy)) | NoC 0 +x then +y, NoC 1 −y then −x, torus wrap; multicasts on the x-major tree | tenstorrent/tt-isa-documentation `WormholeB0/NoC/RoutingPaths.md`; tt-metal's `noc_nonblocking_api.h` multicasts with `NOC_CMD_BRCST_PACKET` and without `NOC_CMD_BRCST_XY` |
//! | dispatch | 1 µs per program | tenstorrent/tt-metal issue #15605: op-to-op gaps of about 1 µs in a trace, tt-metal's target |
//! | matmul init (`matmul_block_init`) | 70 cycles | tenstorrent/tt-metal issue #56692 (Blackhole p100a, SDPA: 139,214 cycles in 12 reconfig and matmul re-init sites per k step, ≈ 167 steps: ≈ 70 a site) and #55760 (74 fixed cycles of matmul overhead per q tile per k step); tt-llk `llk_math_matmul.h`: 5 ADDR_MODs, a 16-instruction replay buffer and the MOP, the unpacker's matmul MOP beside it |
//! | copy / transpose init | 40 cycles | **estimate** from tt-llk `llk_math_eltwise_unary_datacopy.h` and `llk_unpack_A.h`: 3 ADDR_MODs, the MOP, a counter reset (≈ 20 instructions) on math, the unpack-A MOP beside it, after the previous MOP drains |
//! | element-wise binary init | 40 cycles | **estimate**, the same shape as the copy init |
//! | reduce init | 50 cycles | **estimate**: the copy init's shape plus the unpacker's reduce setup |
//! | tilize / untilize init or uninit | 80 cycles | **estimate**: the unpacker's tile geometry and the packer reprogrammed |
//! | SFPU op init | 20 cycles | **estimate**: the SFPU config register, ADDR_MOD_7, a counter reset |
//! | unpack reconfig, per source | 35 cycles | tt-llk `llk_unpack_common.h` `_llk_unpack_reconfig_data_format_srca_impl_`: a STALLWAIT for the unpacker, 7 config read-modify-writes, a GPR and an ADC write, plus the math side's format write; tenstorrent/tt-metal PR #42446 ("tens of cycles each"). Charged only when it reprograms: a conditional `(old, new)` reconfig between CBs of one format is skipped by the LLK and not counted |
//! | pack reconfig (format, ReLU, L1 accumulation) | 35 cycles | **estimate**: a STALLWAIT for the packer and its config writes; PR #42446 |
//!
//! Inits and reconfigs run on the compute threads in series with the tile operations; the
//! emulator counts them by kind ([`InitKind`](crate::InitKind)).
//!
//! # What v2 leaves out
//! The per-kernel `compute_kernel_hw_startup` (a full configure, once per kernel); the drain an
//! init's stall forces beyond its own cycles; contention in time (the busiest
//! link's and bank's bytes bound the whole program, not each phase; NIU limits, header flits and
//! semaphore traffic are left out, each DRAM bank has one NoC endpoint); DRAM latency beyond the
//! hop flight; each kernel's multicasts at their mean size and destinations, semaphore
//! multicasts without a multicast's fixed cost; fp32 tiles' double unpack bytes (every tile is
//! charged as bf16); the packer's real rate; kernel launch skew between cores; instruction-cache
//! and RISC-V stalls beyond the scalar work the caller supplies. A writer's prologue that pushes
//! nothing (a weights multicast, a staging) is taken to hold the compute back by all its
//! lateness past the first block's hand-off, as if the output CB had no room (real CBs let the
//! compute run ahead by their pages): no published measurement checks this rule; the
//! calibration programs' writers have no prologue.

pub mod contention;
pub mod roofline;
pub mod timeline;

pub use contention::Contention;
pub use roofline::{Bound, CoreEstimate, CostModel, KernelWork, StepEstimate};
pub use timeline::{
    Arrivals, CoreTimeline, KernelCycles, McastPoint, PhasedKernel, StartupBound, TimelineModel,
    TimelineStep,
};
