//! tt-runtime: a generic Tensix runtime that runs any tt-metal-style program (kernels, CBs,
//! semaphores, buffers, runtime args, traces); it knows nothing of SuperPoint or the compiler.
//!
//! The C API is `include/ttr.h`. `build.rs` compiles its implementation (C++17, `cc`) and
//! generates the raw bindings ([`sys`]) with bindgen (which needs libclang, e.g. Debian's
//! `libclang-dev`). The safe types wrap the raw handles: [`Device`], [`Buffer`], [`Program`],
//! [`Trace`], [`Counters`] (and two models of Blackhole device time over them: the roofline [`CostModel`] and the timeline [`TimelineModel`]), with typed [`Error`]s and `Drop` releasing device objects. Handles
//! are reference counted inside, so any drop order is safe.
//!
//! [`Device::open`] with [`Dispatch::Auto`] (the default) first asks [`install`] whether the
//! tt-metal it drives can dispatch from the Ethernet cores (the ETH-dispatch patch), and opens
//! with ETH dispatch (12x10) when it can, else with Tensix dispatch (11x10) and a warning
//! ([`Device::opening`]): tt-metal fixes the placement once per process, so a failed ETH open
//! cannot be retried.
//!
//! **CBs in L1 buffers.** [`Program::add_cb_in`] places a CB in an L1 [`Buffer`] instead of among
//! the program's own CBs, as tt-metal's `CircularBufferConfig::set_globally_allocated_address`
//! does: the CB sits at the buffer's address on every core of its range and its pages hold what is
//! in the buffer there, what the host wrote with [`Buffer::write_core`] or earlier programs left.
//! A kernel makes them visible without writing them (`cb_reserve_back(cb, n); cb_push_back(cb,
//! n);`, as ttnn's sharded ops do), so data written once, such as weights loaded with the model,
//! stays resident across programs and frames. [`Program::add_cb_in_at`] places it at an offset
//! into the buffer (`CircularBufferConfig::set_address_offset`), so one buffer may hold several
//! CBs, each seeing its own bytes. Such a CB takes no room among the program's CBs, the program
//! keeps its buffer allocated, and every CB rule of the emulator still applies to it (a NoC write
//! into its pushed pages needs the same semaphore ordering as into any CB's).
//!
//! [`Device::count`] says how many devices [`Device::open_id`] accepts; each opened device is
//! independent (its own memory, programs and traces) and devices run in parallel from different
//! threads. A device that stops working fails every later call with [`Error::DeviceLost`].
//!
//! # The emulator (default backend)
//!
//! One Blackhole p150a per device id, as many as `$TTR_EMU_DEVICES` (default 1) or
//! [`Device::emulate_devices`] ask for (other ids: [`Error::NoDevice`]); with the
//! `fault-injection` feature, `Device::fail_after` makes a device lost after a number of program
//! runs, for tests of what handles device failure. Each device: a 12x10 compute grid with ETH dispatch or 11x10 with Tensix dispatch,
//! standing in for a patched tt-metal (`Auto` gives ETH) unless `TTR_EMU_TT_METAL=stock` asks it
//! to behave as a stock one (`Auto` gives Tensix, `Eth` is refused),
//! 1536 KiB of L1 per core (programs start at 109 KiB, leaving 1427 KiB: below are the firmware,
//! up to 40 KiB, and the 69 KiB kernel-config region, where runtime args and semaphores live as
//! tt-metal lays them out and where, on silicon, the CB configs and kernel binaries go too), eight DRAM banks with interleaved pages (page `i` in bank `i % 8` at
//! offset `(i / 8) * align(page, 64)`), up to 64 CBs per core. NoC coordinates differ from logical
//! ones (x = 1..7, 10..14, y = logical + 2; DRAM at x = 0 and 9), so kernels must get them from
//! [`Device::worker_core`] through runtime args.
//!
//! Kernels are compiled by the host C++ compiler (`$TTR_CXX`, `$CXX` or `g++`) against stand-in
//! headers in `include/tt_emu_api/` that declare the pinned tt-metal kernel API, and cached on disk
//! (`$TTR_KERNEL_CACHE`, else `$XDG_CACHE_HOME/tt-runtime/kernels`, else `~/.cache/...`) by a hash
//! of the wrapped source, the args, the defines, the compiler and the headers. A compute kernel is
//! compiled once; its unpack, math and pack parts run in one context, with the DST hand-over
//! (`tile_regs_*`) checked as a state machine. Each (core, kernel) pair is a cooperative context
//! (`ucontext`); one host thread resumes them round-robin whenever what they wait for holds, so a
//! run is deterministic and a deadlock is reported (naming every blocked kernel and what it
//! waits on) instead of hanging.
//!
//! It is stricter than the hardware: CB protocol (pop more than waited, push more than
//! reserved, counts that do not divide the capacity, wrap-straddling pushes), L1 bounds and the
//! firmware region, NoC alignment (16 B L1, 64 B DRAM reads, 16 B DRAM writes), DRAM accesses
//! outside any buffer, DST half-sync capacity (8 bf16 / 4 fp32 tiles), missing inits and
//! barriers, `noc_semaphore_wait` equality, multicast destination counts (the sender is excluded
//! unless `_loopback_src`), more than 341 runtime args, host buffer access during trace capture,
//! L1-interleaved pages (`InterleavedAddrGen<false>`: page p in the bank of worker core
//! p % cores, at the same address in each) outside every L1 buffer, and races between a NoC
//! writer and the core whose CB its pages land in, by vector clocks over the semaphores
//! (`src/emu/order.hpp`): a CB push of pages another kernel wrote must come after a semaphore
//! wait that the writer signalled after the write, and a write may not land in pages pushed
//! since the writer last learned they were freed. The scheduler's fixed order often lets a
//! sender finish before its receivers run, so without this a receiver that skips the wait would
//! pass here and race on silicon.
//! NoC transfers land at their barrier. Fresh L1 and DRAM read as 0xFF bytes (NaN).
//!
//! Numerics: tiles are stored in the 4-face layout; Float32 tiles reach the Src registers cut to
//! TF32 (truncated to 10 mantissa bits; to bf16 without fp32 DST accumulation), unless the
//! compute kernel marks the CB [`UnpackToDestMode::UnpackToDestFp32`]: then copies, transposes,
//! tilizes and `pack_untilize_block` unpack it straight into DST bit for bit, and the FPU may not
//! read it. The packer rounds to bf16 to nearest with ties away from zero, flushing denormals,
//! turning -0 into +0 and NaN into infinity; a Float32 output from an fp32 DST keeps every bit.
//! DST is bf16 (every accumulation rounds) or fp32; matmul, element-wise multiply and reduce model
//! math fidelity by splitting SrcA (matmul: in1) into its implicit 1 + 4 MSBs and the rest, and
//! SrcB (in0) into 1 + 6 MSBs and the rest, one partial product per fidelity phase. SFPU ops run
//! in f32. The packer's ReLU stage (`pack_relu_config`) acts on the packed value, after that
//! conversion: at or below 0 (or the threshold) becomes +0, a Float32 NaN passes; hardware startup
//! clears it.
//!
//! Limits of the model: kernels that spin on raw L1 reads instead of the API cannot be
//! interrupted; file-scope mutable variables in a kernel are shared by all cores running it;
//! compute on block-float formats is not emulated.
//!
//! SFPU and max-pool details follow Tenstorrent's simulator (ttsim) and the pinned LLK
//! (docs/ttsim.md): an SFPU result lands in a bf16 DST truncated to its top 16 bits, except where
//! the LLK rounds first (exp, sqrt, rsqrt: to nearest, ties away, zero to +0;
//! `add/sub_binary_tile<NearestEven>`); `binary_max/min_tile` and the MAX reduce order values by
//! sign and magnitude (-0 below +0, NaN at the ends by its sign); the MAX reduce ignores math
//! fidelity, reads a zero datum as +0 and takes only a scaler of 1.0; `div_unary_tile` multiplies
//! by its scalar (the caller passes the divisor's reciprocal, as ttnn does).

pub mod buffer;
pub mod calibrate;
pub mod cmacro;
pub mod cost;
pub mod counters;
pub mod device;
pub mod error;
pub mod host;
pub mod install;
pub mod occupancy;
pub mod program;
pub mod selftest;
pub mod sys;
pub mod trace;
pub mod workload;

pub use buffer::Buffer;
pub use cost::{
    Arrivals, Bound, Contention, CoreEstimate, CoreTimeline, CostModel, KernelCycles, KernelWork,
    McastPoint, PhasedKernel, StartupBound, StepEstimate, TimelineModel, TimelineStep,
};
pub use counters::{
    noc_size_class, Counters, InitKind, SfpuOp, TileOp, INIT_KINDS, NOC_SIZE_CLASSES,
    NOC_SIZE_CLASS_LIMITS,
};
pub use device::{CoreCoord, CoreRange, Device, DeviceInfo, Dispatch, Opening, ProgramTime};
pub use error::{Error, Result};
pub use install::{EthDispatch, Installation};
pub use occupancy::{Axis, Link, Occupancy};
pub use program::{
    CbSpec, DataFormat, KernelId, KernelRole, KernelSpec, MathFidelity, Program, UnpackToDestMode,
};
pub use trace::Trace;
pub use workload::{GridMatmul, GridMatmulRun};
