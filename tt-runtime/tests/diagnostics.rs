//! Every diagnostic of the emulator has a kernel that triggers it. The table [`CASES`] holds, for
//! each `kfail` call in `src/emu/*.cpp`, its format string as the source spells it, a minimal
//! kernel and the message the kernel must get; `every_diagnostic_has_a_case` reads the sources, so
//! a new diagnostic without an entry (or an entry whose diagnostic is gone) fails the build, and
//! `every_case_gets_its_diagnostic` runs each kernel and checks the message against both the
//! format and the values the kernel implies.
//!
//! Adding a diagnostic: add one entry to [`CASES`] with the format string exactly as the
//! `kfail` call spells it (adjacent literals joined), a kernel ([`Setup`]) and the message.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use common::{core0, device};
use tt_runtime::{CbSpec, CoreCoord, DataFormat, Error, KernelSpec, Result};

/// The program a case runs on core (0,0) (see [`run`]).
#[derive(Clone, Copy)]
enum Setup {
    /// `body` in the reader `probe`, after the locals [`READER_PRELUDE`] declares.
    Reader(&'static str),
    /// A whole reader source (for kernels the prelude does not fit).
    ReaderSource(&'static str),
    /// `body` in the compute kernel `probe` (bf16 DST), after [`COMPUTE_PRELUDE`]'s includes.
    Compute(&'static str),
    /// The same with an fp32 DST.
    ComputeFp32(&'static str),
    /// A compute kernel whose cb 0 holds one page of `bytes` bytes in `format`.
    ComputeOnCb0(DataFormat, u32, &'static str),
    /// A compute kernel (fp32 DST) whose cb 0 holds two Float32 tiles in `UnpackToDestFp32` mode.
    ComputeUnpackToDest(&'static str),
    /// A writer `sender` and a reader `receiver` on cores (0,0) and (1,0)
    /// ([`common::writer_and_reader`]; the receiver on (0,0) when the flag is set), the bodies
    /// after [`PEER_PRELUDE`].
    WriterAndReader(&'static str, &'static str, bool),
}

/// One diagnostic: its `kfail` format, a kernel that triggers it, and (a part of) the message.
struct Case {
    format: &'static str,
    setup: Setup,
    message: &'static str,
}

const fn case(format: &'static str, setup: Setup, message: &'static str) -> Case {
    Case {
        format,
        setup,
        message,
    }
}

use Setup::{
    Compute, ComputeFp32, ComputeOnCb0, ComputeUnpackToDest, Reader, ReaderSource, WriterAndReader,
};

/// The reader's runtime args: an L1 buffer and a DRAM buffer (two 2 KiB pages) on every core, and
/// the NoC coordinates of logical cores (0,0) (NoC (1,2)) and (1,0) (NoC (2,2)).
const READER_PRELUDE: &str = r#"#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t l1_buf = get_arg_val<uint32_t>(0);
    const uint32_t dram_buf = get_arg_val<uint32_t>(1);
    const uint32_t x0 = get_arg_val<uint32_t>(2), y0 = get_arg_val<uint32_t>(3);
    const uint32_t x1 = get_arg_val<uint32_t>(4), y1 = get_arg_val<uint32_t>(5);
    (void)l1_buf; (void)dram_buf; (void)x0; (void)y0; (void)x1; (void)y1;
"#;

/// The two kernels of [`WriterAndReader`]: `x`, `y` the other core's NoC coordinates and `sem` its
/// semaphore 0, `own` this core's.
const PEER_PRELUDE: &str = r#"#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t x = get_arg_val<uint32_t>(0), y = get_arg_val<uint32_t>(1);
    const uint64_t sem = get_noc_addr(x, y, get_semaphore(0));
    volatile uint32_t* const own = reinterpret_cast<volatile uint32_t*>(get_semaphore(0));
    (void)sem; (void)own;
"#;

const COMPUTE_PRELUDE: &str = r#"#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/eltwise_unary/where.h"
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
#include "api/compute/pack_untilize.h"
#include "api/compute/reduce.h"
#include "api/compute/reg_api.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/tilize.h"
#include "api/compute/untilize.h"
void kernel_main() {
"#;

/// Every `kfail` diagnostic of `src/emu/*.cpp`, one entry per call.
const CASES: &[Case] = &[
    // ---- run.cpp: L1 and NoC addresses ----
    case(
        "%s: 0x%x is not an L1 address (L1 is 0x%x bytes) on %s",
        Reader("noc_async_read(get_noc_addr(l1_buf), 0x180000, 64);"),
        "noc_async_read: 0x180000 is not an L1 address (L1 is 0x180000 bytes) on core (0,0) reader 'probe'",
    ),
    case(
        "%s: %s L1 range 0x%x..0x%llx is out of bounds (L1 is 0x%x bytes) on %s",
        Reader("noc_async_read(get_noc_addr(l1_buf), 0x180000 - 16, 64);"),
        "noc_async_read: destination L1 range 0x17fff0..0x180030 is out of bounds (L1 is 0x180000 bytes)",
    ),
    case(
        "%s: %s L1 address 0x%x is below 0x%x, in the firmware or kernel-config region (only the \
         semaphores there may be accessed) on %s",
        Reader("noc_async_read(get_noc_addr(l1_buf), 0x100, 64);"),
        "noc_async_read: destination L1 address 0x100 is below 0x1b400, in the firmware or \
         kernel-config region",
    ),
    case(
        "%s: %s L1 address 0x%x is not %u-byte aligned (NoC L1 alignment) on %s",
        Reader("noc_async_read(get_noc_addr(l1_buf), l1_buf + 8, 16);"),
        "is not 16-byte aligned (NoC L1 alignment) on core (0,0) reader 'probe'",
    ),
    case(
        "%s: a multicast NoC address was given to a unicast transfer on %s",
        Reader("noc_async_write(get_write_ptr(0), get_noc_multicast_addr(x0, y0, x1, y1, l1_buf), 16);"),
        "noc_async_write: a multicast NoC address was given to a unicast transfer",
    ),
    case(
        "%s: %s L1 address 0x%llx on NoC (%u,%u) is out of bounds (L1 is 0x%x bytes) on %s",
        Reader("noc_async_read(get_noc_addr(x1, y1, 0x180000), get_write_ptr(0), 64);"),
        "noc_async_read: source L1 address 0x180000 on NoC (2,2) is out of bounds",
    ),
    case(
        "%s: DRAM %s address 0x%llx (bank %d) is not %u-byte aligned (NoC DRAM %s alignment) on %s",
        Reader("const InterleavedAddrGen<true> g{dram_buf, 2048};\n\
                noc_async_read(g.get_noc_addr(0, 32), get_write_ptr(0), 32);"),
        "(bank 0) is not 64-byte aligned (NoC DRAM read alignment)",
    ),
    case(
        "%s: DRAM range 0x%llx..0x%llx of bank %d is outside every allocated buffer on %s",
        Reader("const InterleavedAddrGen<true> g{dram_buf, 2048};\n\
                noc_async_read(g.get_noc_addr(64), get_write_ptr(0), 64);"),
        "of bank 0 is outside every allocated buffer",
    ),
    case(
        "%s: no core or DRAM bank at NoC (%u,%u) on %s; NoC coordinates come from the host \
         (worker_core_from_logical_core), not from logical ones",
        Reader("noc_async_read(get_noc_addr(0, 0, l1_buf), get_write_ptr(0), 64);"),
        "noc_async_read: no core or DRAM bank at NoC (0,0)",
    ),
    case(
        "%s on %s while a linked multicast transaction to NoC (%u,%u)-(%u,%u) opened by kernel '%s' is open on \
         NoC %u of this core: a request after a linked one must be a multicast to the same rectangle; end the \
         transaction first with an unlinked multicast to it (NOC_CMD_VC_LINKED)",
        Reader("noc_async_write_multicast(get_write_ptr(0), get_noc_multicast_addr(x0, y0, x1, y1, l1_buf), 16, 1, true);\n\
                noc_async_read(get_noc_addr(x1, y1, l1_buf), get_write_ptr(0), 16);"),
        "noc_async_read on core (0,0) reader 'probe' while a linked multicast transaction to NoC (1,2)-(2,2) opened by \
         kernel 'probe' is open on NoC 0 of this core",
    ),
    case(
        "%s ended with a linked multicast transaction open on NoC %u: its last multicast must be issued with \
         linked = false (NOC_CMD_VC_LINKED)",
        Reader("noc_async_write_multicast(get_write_ptr(0), get_noc_multicast_addr(x0, y0, x1, y1, l1_buf), 16, 1, true);\n\
                noc_async_write_barrier();"),
        "core (0,0) reader 'probe' ended with a linked multicast transaction open on NoC 0",
    ),
    case(
        "%s: the destination is not a multicast address (use get_noc_multicast_addr) on %s",
        Reader("noc_async_write_multicast(get_write_ptr(0), get_noc_addr(x1, y1, l1_buf), 16, 1);"),
        "noc_async_write_multicast: the destination is not a multicast address",
    ),
    case(
        "%s: the loopback variant needs the sender inside the rectangle NoC (%u,%u)-(%u,%u) on %s",
        Reader("noc_async_write_multicast_loopback_src(get_write_ptr(0),\n\
                    get_noc_multicast_addr(x1, y1, x1, y1, l1_buf), 16, 1);"),
        "noc_async_write_multicast_loopback_src: the loopback variant needs the sender inside the rectangle NoC (2,2)-(2,2)",
    ),
    case(
        "%s: num_dests is %u but the rectangle NoC (%u,%u)-(%u,%u) holds %zu destination core(s)%s on %s",
        Reader("noc_async_write_multicast(get_write_ptr(0), get_noc_multicast_addr(x0, y0, x1, y1, l1_buf), 16, 2);"),
        "noc_async_write_multicast: num_dests is 2 but the rectangle NoC (1,2)-(2,2) holds 1 destination core(s) excluding the sender",
    ),
    case(
        "%s while %zu NoC write(s) are not flushed on %s: call noc_async_writes_flushed() or \
         noc_async_write_barrier() before signalling a semaphore",
        Reader("noc_async_write(get_write_ptr(0), get_noc_addr(x1, y1, l1_buf), 64);\n\
                noc_semaphore_inc(get_noc_addr(get_semaphore(0)), 1);"),
        "noc_semaphore_inc while 1 NoC write(s) are not flushed on core (0,0) reader 'probe'",
    ),
    // ---- run.cpp: CB page counts, args ----
    case(
        "%s(cb %d, %d): the page count must be positive on %s",
        Reader("cb_reserve_back(0, 0);"),
        "cb_reserve_back(cb 0, 0): the page count must be positive",
    ),
    case(
        "%s(cb %d, %d): more pages than the CB holds (%u) on %s",
        Reader("cb_wait_front(0, 5);"),
        "cb_wait_front(cb 0, 5): more pages than the CB holds (4)",
    ),
    case(
        "%s(cb %d, %d): %d page(s) do not divide the CB capacity of %u pages on %s",
        Reader("cb_reserve_back(0, 3);"),
        "cb_reserve_back(cb 0, 3): 3 page(s) do not divide the CB capacity of 4 pages",
    ),
    case(
        "get_arg_val(%u): only %u runtime arg(s) are set for %s",
        Reader("volatile uint32_t v = get_arg_val<uint32_t>(6); (void)v;"),
        "get_arg_val(6): only 6 runtime arg(s) are set for core (0,0) reader 'probe'",
    ),
    case(
        "get_common_arg_val(%u): only %u common runtime arg(s) are set for %s",
        Reader("volatile uint32_t v = get_common_arg_val<uint32_t>(0); (void)v;"),
        "get_common_arg_val(0): only 0 common runtime arg(s) are set",
    ),
    case(
        "get_compile_time_arg_val(%u): %s has %u compile-time arg(s)",
        Reader("volatile uint32_t v = get_compile_time_arg_val(2); (void)v;"),
        "get_compile_time_arg_val(2): core (0,0) reader 'probe' has 0 compile-time arg(s)",
    ),
    // ---- run.cpp: CB protocol ----
    case(
        "cb_push_back(cb %d, %d): push more than reserved (%u page(s) reserved) on %s",
        Reader("cb_reserve_back(0, 1); cb_push_back(0, 2);"),
        "cb_push_back(cb 0, 2): push more than reserved (1 page(s) reserved)",
    ),
    case(
        "cb_push_back(cb %d, %d): the pages wrap past the end of the ring (write page %u of %u); pushes \
         within one wrap must add up to the CB size on %s",
        Reader("cb_reserve_back(0, 1); cb_push_back(0, 1);\n\
                cb_reserve_back(0, 2); cb_push_back(0, 2);\n\
                cb_wait_front(0, 1); cb_pop_front(0, 1);\n\
                cb_reserve_back(0, 2); cb_push_back(0, 2);"),
        "cb_push_back(cb 0, 2): the pages wrap past the end of the ring (write page 3 of 4)",
    ),
    case(
        "cb_push_back(cb %d, %d): a NoC read into these pages has not been waited for \
         (noc_async_read_barrier missing) on %s",
        Reader("cb_reserve_back(0, 1);\n\
                noc_async_read(get_noc_addr(l1_buf), get_write_ptr(0), 64);\n\
                cb_push_back(0, 1);"),
        "cb_push_back(cb 0, 1): a NoC read into these pages has not been waited for",
    ),
    case(
        "cb_pop_front(cb %d, %d): pop more than waited (%u page(s) waited for) on %s",
        Reader("cb_reserve_back(0, 2); cb_push_back(0, 2); cb_wait_front(0, 1); cb_pop_front(0, 2);"),
        "cb_pop_front(cb 0, 2): pop more than waited (1 page(s) waited for)",
    ),
    case(
        "cb_pop_front(cb %d, %d): the pages wrap past the end of the ring (read page %u of %u); pops \
         within one wrap must add up to the CB size on %s",
        Reader("cb_reserve_back(0, 4); cb_push_back(0, 4);\n\
                cb_wait_front(0, 1); cb_pop_front(0, 1);\n\
                cb_wait_front(0, 2); cb_pop_front(0, 2);\n\
                cb_reserve_back(0, 2); cb_push_back(0, 2);\n\
                cb_wait_front(0, 2); cb_pop_front(0, 2);"),
        "cb_pop_front(cb 0, 2): the pages wrap past the end of the ring (read page 3 of 4)",
    ),
    case(
        "cb_pop_front(cb %d, %d): a NoC write from these pages has not completed \
         (noc_async_write_barrier missing) on %s",
        Reader("cb_reserve_back(0, 1); cb_push_back(0, 1); cb_wait_front(0, 1);\n\
                noc_async_write(get_read_ptr(0), get_noc_addr(l1_buf), 64);\n\
                cb_pop_front(0, 1);"),
        "cb_pop_front(cb 0, 1): a NoC write from these pages has not completed",
    ),
    // ---- run.cpp: addresses, semaphores ----
    case(
        "get_noc_addr(%u, %u, ...): NoC coordinates out of range on %s",
        Reader("volatile uint64_t a = get_noc_addr(64, 2, l1_buf); (void)a;"),
        "get_noc_addr(64, 2, ...): NoC coordinates out of range",
    ),
    case(
        "get_noc_multicast_addr: NoC coordinates out of range on %s",
        Reader("volatile uint64_t a = get_noc_multicast_addr(1, 2, 64, 2, l1_buf); (void)a;"),
        "get_noc_multicast_addr: NoC coordinates out of range on core (0,0) reader 'probe'",
    ),
    case(
        "InterleavedAddrGen: page size 0 on %s",
        Reader("const InterleavedAddrGen<true> g{dram_buf, 0};\n\
                volatile uint64_t a = g.get_noc_addr(0); (void)a;"),
        "InterleavedAddrGen: page size 0 on core (0,0) reader 'probe'",
    ),
    case(
        "InterleavedAddrGen<false>: page %u (L1 0x%llx..0x%llx of bank %u) is outside every allocated L1 \
         buffer on %s",
        Reader("const InterleavedAddrGen<false> g{l1_buf, 4096};\n\
                volatile uint64_t a = g.get_noc_addr(240); (void)a;"),
        "InterleavedAddrGen<false>: page 240 (L1 0x",
    ),
    case(
        "get_semaphore(%u): no semaphore %u on %s",
        Reader("volatile uint32_t s = get_semaphore(5); (void)s;"),
        "get_semaphore(5): no semaphore 5 on core (0,0) reader 'probe'",
    ),
    case(
        "%s: %p is not an aligned word of this core's L1 on %s",
        Reader("noc_semaphore_set(reinterpret_cast<volatile uint32_t*>(get_semaphore(0) + 2), 1);"),
        "is not an aligned word of this core's L1 on core (0,0) reader 'probe'",
    ),
    case(
        "%s: the target is not a worker core's L1 on %s",
        Reader("const InterleavedAddrGen<true> g{dram_buf, 2048};\n\
                noc_semaphore_inc(g.get_noc_addr(0), 1);"),
        "noc_semaphore_inc: the target is not a worker core's L1",
    ),
    case(
        "%s: the semaphore address is not 4-byte aligned on %s",
        Reader("noc_semaphore_inc(get_noc_addr(get_semaphore(0)) + 2, 1);"),
        "noc_semaphore_inc: the semaphore address is not 4-byte aligned",
    ),
    // The stand-in's own failures (ttr_emu/entry.h), through the API table.
    case(
        "%s: %s",
        ReaderSource("#include \"api/dataflow/dataflow_api.h\"\nvoid not_the_entry_point() {}\n"),
        "core (0,0) reader 'probe': the kernel defines neither `void kernel_main()` nor \
         `namespace NAMESPACE { void MAIN }`",
    ),
    // ---- run.cpp: kernel end ----
    case(
        "%s ended with %zu NoC read(s) not waited for (noc_async_read_barrier missing)",
        Reader("noc_async_read(get_noc_addr(l1_buf), get_write_ptr(0), 64);"),
        "core (0,0) reader 'probe' ended with 1 NoC read(s) not waited for",
    ),
    case(
        "%s ended with %zu NoC write(s) not completed (noc_async_write_barrier missing)",
        Reader("noc_async_write(get_write_ptr(0), get_noc_addr(l1_buf), 64);"),
        "core (0,0) reader 'probe' ended with 1 NoC write(s) not completed",
    ),
    case(
        "%s ended holding the DST registers (tile_regs_release missing)",
        Compute("tile_regs_acquire();"),
        "core (0,0) compute 'probe' ended holding the DST registers",
    ),
    // ---- run.cpp: CB ids and compute tile access ----
    case(
        "%s: cb %d is out of range (0..%u) on %s",
        Reader("cb_wait_front(64, 1);"),
        "cb_wait_front: cb 64 is out of range (0..63)",
    ),
    case(
        "%s: cb %d is not configured on %s",
        Reader("cb_wait_front(5, 1);"),
        "cb_wait_front: cb 5 is not configured on core (0,0) reader 'probe'",
    ),
    case(
        "%s: reads tile %u of cb %u but only %u page(s) were waited for on %s",
        Compute("cb_reserve_back(0, 1); cb_push_back(0, 1);\n\
                 compute_kernel_hw_startup(0, 16); copy_tile_init(0);\n\
                 cb_wait_front(0, 1); tile_regs_acquire(); copy_tile(0, 1, 0);"),
        "copy_tile: reads tile 1 of cb 0 but only 1 page(s) were waited for",
    ),
    case(
        "%s: tile %u of cb %u runs past the end of the ring (read page %u of %u) on %s",
        Compute("cb_reserve_back(0, 4); cb_push_back(0, 4);\n\
                 compute_kernel_hw_startup(0, 16); copy_tile_init(0);\n\
                 cb_wait_front(0, 2); cb_pop_front(0, 2);\n\
                 cb_reserve_back(0, 2); cb_push_back(0, 2);\n\
                 cb_wait_front(0, 4); tile_regs_acquire(); copy_tile(0, 2, 0);"),
        "copy_tile: tile 2 of cb 0 runs past the end of the ring (read page 2 of 4)",
    ),
    case(
        "%s: writes tile %u of cb %u but only %u page(s) were reserved on %s",
        Compute("compute_kernel_hw_startup(0, 16);\n\
                 tile_regs_acquire(); tile_regs_commit(); tile_regs_wait(); pack_tile(0, 16);"),
        "pack_tile: writes tile 0 of cb 16 but only 0 page(s) were reserved",
    ),
    case(
        "%s: tile %u of cb %u runs past the end of the ring (write page %u of %u) on %s",
        Compute("compute_kernel_hw_startup(0, 16);\n\
                 cb_reserve_back(16, 1); cb_push_back(16, 1); cb_wait_front(16, 1); cb_pop_front(16, 1);\n\
                 cb_reserve_back(16, 2);\n\
                 tile_regs_acquire(); tile_regs_commit(); tile_regs_wait();\n\
                 pack_tile(0, 16); pack_tile(0, 16);"),
        "pack_tile: tile 1 of cb 16 runs past the end of the ring (write page 1 of 2)",
    ),
    // ---- compute.cpp ----
    case(
        "%s: compute API called from %s",
        ReaderSource("#include \"api/dataflow/dataflow_api.h\"\n\
                      #include \"api/compute/reg_api.h\"\n\
                      void kernel_main() { tile_regs_acquire(); }\n"),
        "tile_regs: compute API called from core (0,0) reader 'probe'",
    ),
    case(
        "%s: DST tile %u is beyond the %u tiles one tile_regs_acquire gets in half-sync mode with %s DST on %s",
        ComputeFp32("cb_reserve_back(0, 1); cb_push_back(0, 1);\n\
                     compute_kernel_hw_startup(0, 16); copy_tile_init(0);\n\
                     cb_wait_front(0, 1); tile_regs_acquire(); copy_tile(0, 0, 4);"),
        "copy_tile: DST tile 4 is beyond the 4 tiles one tile_regs_acquire gets in half-sync mode with fp32 DST",
    ),
    case(
        "%s: DST is not held by math (call tile_regs_acquire first, and before tile_regs_commit) on %s",
        Compute("cb_reserve_back(0, 1); cb_push_back(0, 1);\n\
                 compute_kernel_hw_startup(0, 16); copy_tile_init(0);\n\
                 cb_wait_front(0, 1); copy_tile(0, 0, 0);"),
        "copy_tile: DST is not held by math",
    ),
    case(
        "%s: DST is not held by pack (call tile_regs_commit then tile_regs_wait first) on %s",
        Compute("compute_kernel_hw_startup(0, 16); cb_reserve_back(16, 1);\n\
                 tile_regs_acquire(); pack_tile(0, 16);"),
        "pack_tile: DST is not held by pack",
    ),
    case(
        "%s: uses DST internally and must be called outside tile_regs_acquire..tile_regs_release on %s",
        Compute("compute_kernel_hw_startup(0, 16); tilize_init(0, 1, 16);\n\
                 tile_regs_acquire(); tilize_block(0, 1, 16);"),
        "tilize_block: uses DST internally and must be called outside tile_regs_acquire..tile_regs_release",
    ),
    case(
        "%s: cb %u is UnpackToDestFp32 (its Float32 tiles unpack straight into DST), but %s reads it \
         through SrcA/SrcB, which cannot take a Float32 destination format; give the CB the Default \
         mode (its values are then cut to TF32) or copy it into DST and use an SFPU op on %s",
        ComputeUnpackToDest(
            "cb_reserve_back(0, 2); cb_push_back(0, 2);\n\
             compute_kernel_hw_startup(0, 0, 16); matmul_init(0, 0);\n\
             cb_wait_front(0, 2); tile_regs_acquire(); matmul_tiles(0, 0, 0, 1, 0);",
        ),
        "matmul_tiles: cb 0 is UnpackToDestFp32 (its Float32 tiles unpack straight into DST), but \
         matmul_tiles reads it through SrcA/SrcB",
    ),
    case(
        "reduce_tile: MAX with a scaler of %g; the max pool (GMPOOL) is modelled for a scaler of 1.0 on %s",
        Compute(
            "cb_reserve_back(0, 2); cb_push_back(0, 2);\n\
             compute_kernel_hw_startup(0, 0, 16);\n\
             reduce_init<PoolType::MAX, ReduceDim::REDUCE_ROW>(0, 0, 16);\n\
             cb_wait_front(0, 2); tile_regs_acquire();\n\
             reduce_tile<PoolType::MAX, ReduceDim::REDUCE_ROW>(0, 0, 0, 1, 0);",
        ),
        // Nothing wrote the scaler tile: the emulator's L1 starts as NaN.
        "reduce_tile: MAX with a scaler of -nan; the max pool (GMPOOL) is modelled for a scaler of 1.0",
    ),
    case(
        "%s before compute_kernel_hw_startup on %s",
        Compute("copy_tile(0, 0, 0);"),
        "copy_tile before compute_kernel_hw_startup on core (0,0) compute 'probe'",
    ),
    case(
        "%s: needs %s, but the last init was %s on %s",
        Compute("cb_reserve_back(0, 1); cb_push_back(0, 1);\n\
                 compute_kernel_hw_startup(0, 16); matmul_init(0, 0);\n\
                 cb_wait_front(0, 1); tile_regs_acquire(); copy_tile(0, 0, 0);"),
        "copy_tile: needs copy_tile_init, but the last init was matmul_init",
    ),
    case(
        "%s: cb %u holds %s; the emulator's compute supports Float16_b and Float32 on %s",
        ComputeOnCb0(
            DataFormat::UInt32,
            4096,
            "cb_reserve_back(0, 1); cb_push_back(0, 1);\n\
             compute_kernel_hw_startup(0, 16); copy_tile_init(0);\n\
             cb_wait_front(0, 1); tile_regs_acquire(); copy_tile(0, 0, 0);",
        ),
        "copy_tile: cb 0 holds UInt32; the emulator's compute supports Float16_b and Float32",
    ),
    case(
        "%s: cb %u has %u-byte pages; compute needs tile-sized pages (%u bytes of %s) on %s",
        ComputeOnCb0(
            DataFormat::Float16B,
            1024,
            "cb_reserve_back(0, 1); cb_push_back(0, 1);\n\
             compute_kernel_hw_startup(0, 16); copy_tile_init(0);\n\
             cb_wait_front(0, 1); tile_regs_acquire(); copy_tile(0, 0, 0);",
        ),
        "copy_tile: cb 0 has 1024-byte pages; compute needs tile-sized pages (2048 bytes of Float16_b)",
    ),
    case(
        "%s before compute_kernel_hw_startup on %s",
        Compute("copy_tile_init(0);"),
        "copy_tile_init before compute_kernel_hw_startup",
    ),
    case(
        "tile_regs_acquire: DST is already acquired (tile_regs_release missing) on %s",
        Compute("tile_regs_acquire(); tile_regs_acquire();"),
        "tile_regs_acquire: DST is already acquired (tile_regs_release missing) on core (0,0) compute 'probe'",
    ),
    case(
        "tile_regs_commit without a matching tile_regs_acquire on %s",
        Compute("tile_regs_commit();"),
        "tile_regs_commit without a matching tile_regs_acquire",
    ),
    case(
        "tile_regs_wait without a preceding tile_regs_commit on %s",
        Compute("tile_regs_acquire(); tile_regs_wait();"),
        "tile_regs_wait without a preceding tile_regs_commit",
    ),
    case(
        "tile_regs_release without a preceding tile_regs_wait on %s",
        Compute("tile_regs_acquire(); tile_regs_commit(); tile_regs_release();"),
        "tile_regs_release without a preceding tile_regs_wait",
    ),
    case(
        "acquire_dst: DST is already acquired on %s",
        Compute("acquire_dst(); acquire_dst();"),
        "acquire_dst: DST is already acquired on core (0,0) compute 'probe'",
    ),
    case(
        "release_dst without a matching acquire_dst on %s",
        Compute("release_dst();"),
        "release_dst without a matching acquire_dst on core (0,0) compute 'probe'",
    ),
    case(
        "%s: block %u x %u tiles is out of range on %s",
        Compute("compute_kernel_hw_startup(0, 16); matmul_block_init(0, 0);\n\
                 tile_regs_acquire(); matmul_block(0, 0, 0, 0, 0, false, 17, 1, 1);"),
        "matmul_block: block 1 x 17 tiles is out of range",
    ),
    case(
        "where_tile: a 32-bit format needs an fp32 DST on %s",
        Compute("compute_kernel_hw_startup(0, 16); where_tile_init();\n\
                 tile_regs_acquire(); where_tile<DataFormat::Float32>(0, 1, 2, 0);"),
        "where_tile: a 32-bit format needs an fp32 DST on core (0,0) compute 'probe'",
    ),
    case(
        "%s called without its _init() on %s",
        Compute("compute_kernel_hw_startup(0, 16); tile_regs_acquire(); exp_tile(0);"),
        "exp_tile called without its _init() on core (0,0) compute 'probe'",
    ),
    case(
        "%s: a vector mode other than RC, R or C (faces 0x%x) is not emulated on %s",
        Compute(
            "compute_kernel_hw_startup(0, 16); tile_regs_acquire(); exp_tile_init(); exp_tile(0, VectorMode::RC_custom);",
        ),
        "exp_tile: a vector mode other than RC, R or C (faces 0x0) is not emulated on core (0,0) compute 'probe'",
    ),
    case(
        "%s: block of 0 tiles on %s",
        Compute("compute_kernel_hw_startup(0, 16); tilize_init(0, 1, 16); tilize_block(0, 0, 16);"),
        "tilize_block: block of 0 tiles",
    ),
    case(
        "%s: block of 0 tiles on %s",
        Compute("compute_kernel_hw_startup(0, 16); untilize_init(0); untilize_block(0, 0, 16);"),
        "untilize_block: block of 0 tiles",
    ),
    case(
        "%s: block %u of %u tiles does not fit a row of %u tiles on %s",
        Compute("compute_kernel_hw_startup(0, 16); pack_untilize_init<2, 2>(0, 16);\n\
                 pack_untilize_block<2, 2>(0, 1, 16, 1);"),
        "pack_untilize_block: block 1 of 2 tiles does not fit a row of 2 tiles",
    ),
    case(
        "%s: block %u of %u tiles does not fit a row of %u tiles on %s",
        Compute("compute_kernel_hw_startup(0, 16); pack_untilize_dest_init<2, 2>(16);\n\
                 tile_regs_acquire(); tile_regs_commit(); tile_regs_wait();\n\
                 pack_untilize_dest<2, 2>(16, 1, 1);"),
        "pack_untilize_dest: block 1 of 2 tiles does not fit a row of 2 tiles",
    ),
    case(
        "%s: word %u is beyond the %u-byte pages of cb %u on %s",
        Compute("volatile uint32_t v = read_tile_value(0, 0, 512); (void)v;"),
        "read_tile_value: word 512 is beyond the 2048-byte pages of cb 0",
    ),
    case(
        "pack_relu_config: threshold 0x%04x (bf16) is negative; the packer's threshold ReLU is undefined \
         for a threshold <= -0 (use a threshold >= +0) on %s",
        Compute("compute_kernel_hw_startup(0, 16);\n\
                 pack_relu_config(ReluConfig::min_threshold(0xBF80));"),
        "pack_relu_config: threshold 0xbf80 (bf16) is negative",
    ),
    // ---- run.cpp: happens-before between a NoC writer and the core it writes (order.hpp) ----
    case(
        "cb_push_back(cb %d, %d): %u byte(s) at L1 0x%x of these pages were written over the NoC by %s, and \
         this kernel waited for no semaphore that %s signalled after that write (push a remote writer's pages \
         only once its semaphore says they landed) on %s",
        WriterAndReader(
            "noc_async_write(get_write_ptr(0), get_noc_addr(x, y, get_write_ptr(0)), 16);\n\
             noc_async_write_barrier();\n\
             noc_semaphore_inc(sem, 1);",
            "cb_reserve_back(0, 1); cb_push_back(0, 1);",
            false,
        ),
        "cb_push_back(cb 0, 1): 16 byte(s) at L1 0x1b400 of these pages were written over the NoC by core (0,0) \
         writer 'sender', and this kernel waited for no semaphore that core (0,0) writer 'sender' signalled after \
         that write",
    ),
    case(
        "a NoC write from %s landed in page %u of CB %u on core (%u,%u), which its kernels have pushed and not \
         popped: that core pushed the pages before this write landed (wait for the writer's semaphore before \
         cb_push_back)",
        // The reader says it pushed (not popped) the page; the writer writes it again.
        WriterAndReader(
            "for (uint32_t r = 0; r < 2; ++r) {\n\
                 if (r > 0) noc_semaphore_wait(own, 1);\n\
                 noc_async_write(get_write_ptr(0), get_noc_addr(x, y, get_write_ptr(0)), 16);\n\
                 noc_async_write_barrier();\n\
                 noc_semaphore_inc(sem, 1);\n\
             }",
            "cb_reserve_back(0, 1); noc_semaphore_wait(own, 1); cb_push_back(0, 1);\n\
             noc_semaphore_inc(sem, 1); cb_wait_front(0, 1); noc_semaphore_wait(own, 2); cb_pop_front(0, 1);",
            false,
        ),
        "a NoC write from core (0,0) writer 'sender' landed in page 0 of CB 0 on core (1,0), which its kernels \
         have pushed and not popped",
    ),
    case(
        "a NoC write from %s landed in page %u of CB %u on core (%u,%u) after %s pushed that page, and nothing \
         ordered the write after the push: the pages were pushed before this write landed (wait for the writer's \
         semaphore before cb_push_back)",
        // The reader runs first and pushes without waiting.
        WriterAndReader(
            "noc_async_write(get_write_ptr(0), get_noc_addr(x, y, get_write_ptr(0)), 16);\n\
             noc_async_write_barrier();",
            "cb_reserve_back(0, 1); cb_push_back(0, 1); cb_wait_front(0, 1); cb_pop_front(0, 1);",
            true,
        ),
        "a NoC write from core (1,0) writer 'sender' landed in page 0 of CB 0 on core (0,0) after core (0,0) \
         reader 'receiver' pushed that page",
    ),
];

/// The format strings of every `kfail` call in `src` (C source), adjacent literals joined, with
/// the line of each call.
fn kfail_formats(src: &str) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    let mut rest = src;
    let mut offset = 0;
    while let Some(at) = rest.find("kfail(") {
        let start = offset + at;
        let line = src[..start].lines().count().max(1);
        let mut chars = src[start + "kfail(".len()..].chars().peekable();
        let mut format = String::new();
        let mut literals = 0;
        loop {
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            if chars.peek() != Some(&'"') {
                break;
            }
            chars.next();
            literals += 1;
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => format.extend(chars.next()),
                    _ => format.push(c),
                }
            }
        }
        // The declaration and the definition take `const char *format`, not a literal.
        if literals > 0 {
            found.push((format, line));
        }
        offset = start + "kfail(".len();
        rest = &src[offset..];
    }
    found
}

/// Every diagnostic of the emulator's sources: format → the calls (`file:line`) that raise it.
fn source_diagnostics() -> BTreeMap<String, Vec<String>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/emu");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("src/emu")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
        .collect();
    files.sort();
    let mut all: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in files {
        let src = std::fs::read_to_string(&path).expect("a readable source");
        let name = path
            .file_name()
            .expect("a file")
            .to_string_lossy()
            .into_owned();
        for (format, line) in kfail_formats(&src) {
            all.entry(format)
                .or_default()
                .push(format!("{name}:{line}"));
        }
    }
    all
}

#[test]
fn every_diagnostic_has_a_case() {
    let sources = source_diagnostics();
    let calls: usize = sources.values().map(Vec::len).sum();
    assert!(
        calls >= 60,
        "found only {calls} kfail calls: is the scan broken?"
    );
    let mut table: BTreeMap<&str, usize> = BTreeMap::new();
    for c in CASES {
        *table.entry(c.format).or_default() += 1;
    }
    let mut problems = Vec::new();
    for (format, at) in &sources {
        let cases = table.get(format.as_str()).copied().unwrap_or(0);
        if cases != at.len() {
            problems.push(format!(
                "{} ({} call(s)) has {cases} case(s) in CASES; add one entry per call:\n    {format:?}",
                at.join(", "),
                at.len()
            ));
        }
    }
    for (format, count) in &table {
        if !sources.contains_key(*format) {
            problems.push(format!(
                "{count} case(s) for a diagnostic no longer in src/emu: {format:?}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A regular expression matching every message `format` can produce.
fn format_regex(format: &str) -> regex::Regex {
    let conversion = regex::Regex::new(r"%[0-9]*(?:ll|z)?[sduxpg]").expect("a valid pattern");
    let mut pattern = String::from("^");
    let mut last = 0;
    for m in conversion.find_iter(format) {
        pattern.push_str(&regex::escape(&format[last..m.start()]));
        pattern.push_str(".*");
        last = m.end();
    }
    pattern.push_str(&regex::escape(&format[last..]));
    pattern.push('$');
    regex::Regex::new(&pattern).expect("an escaped format")
}

/// Runs `source` as the reader `probe` on core (0,0) of a fresh emulator, with cb 0 (four bf16
/// tiles), semaphore 0 and the runtime args [`READER_PRELUDE`] reads.
fn run_reader(source: &str) -> Result<()> {
    let dev = device();
    let cores = [core0()];
    let l1 = dev.l1_buffer(4096)?;
    let dram = dev.dram_buffer(4096, 2048)?;
    let mut prog = dev.program()?;
    prog.add_cb(&CbSpec::tiles(0, &cores, 4, DataFormat::Float16B))?;
    prog.add_semaphore(&cores, 0)?;
    let k = prog.add_kernel(&KernelSpec::reader("probe", source, &cores))?;
    let at = CoreCoord::new(0, 0);
    let (n0, n1) = (dev.worker_core(at)?, dev.worker_core(CoreCoord::new(1, 0))?);
    let args = [l1.address(), dram.address(), n0.x, n0.y, n1.x, n1.y];
    prog.set_runtime_args(k, at, &args)?;
    dev.enqueue(&prog)
}

/// Runs `body` as the compute kernel `probe` on core (0,0) of a fresh emulator, with `cb0` and
/// cb 16 (two bf16 tiles).
fn run_compute(cb0: &CbSpec, body: &str, fp32_dest: bool, cb0_to_dest: bool) -> Result<()> {
    let dev = device();
    let cores = [core0()];
    let mut prog = dev.program()?;
    prog.add_cb(cb0)?;
    prog.add_cb(&CbSpec::tiles(16, &cores, 2, DataFormat::Float16B))?;
    let source = format!("{COMPUTE_PRELUDE}{body}\n}}\n");
    let mut spec = KernelSpec::compute("probe", &source, &cores).fp32_dest_acc(fp32_dest);
    if cb0_to_dest {
        spec = spec.unpack_to_dest_fp32(0);
    }
    prog.add_kernel(&spec)?;
    dev.enqueue(&prog)
}

/// Runs a case's program; see [`Setup`].
fn run(setup: Setup) -> Result<()> {
    let tiles = CbSpec::tiles(0, &[core0()], 4, DataFormat::Float16B);
    match setup {
        Reader(body) => run_reader(&format!("{READER_PRELUDE}{body}\n}}\n")),
        ReaderSource(source) => run_reader(source),
        Compute(body) => run_compute(&tiles, body, false, false),
        ComputeFp32(body) => run_compute(&tiles, body, true, false),
        ComputeOnCb0(format, bytes, body) => {
            let cb0 = CbSpec {
                id: 0,
                cores: vec![core0()],
                total_size: bytes,
                page_size: bytes,
                format,
            };
            run_compute(&cb0, body, false, false)
        }
        ComputeUnpackToDest(body) => run_compute(
            &CbSpec::tiles(0, &[core0()], 2, DataFormat::Float32),
            body,
            true,
            true,
        ),
        WriterAndReader(writer, reader, receiver_first) => common::writer_and_reader(
            &format!("{PEER_PRELUDE}{writer}\n}}\n"),
            &format!("{PEER_PRELUDE}{reader}\n}}\n"),
            receiver_first,
        ),
    }
}

/// What is wrong with one case's outcome, if anything.
fn check(case: &Case) -> Option<String> {
    let message = match run(case.setup) {
        Err(Error::Kernel(message)) => message,
        other => return Some(format!("expected a kernel error, got {other:?}")),
    };
    if !format_regex(case.format).is_match(&message) {
        return Some(format!("the message {message:?} is not of this diagnostic"));
    }
    if !message.contains(case.message) {
        return Some(format!("the message {message:?} lacks {:?}", case.message));
    }
    None
}

#[test]
fn every_case_gets_its_diagnostic() {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(case) = CASES.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Some(problem) = check(case) {
                        failures
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(format!("{:?}: {problem}", case.format));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
