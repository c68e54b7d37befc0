//! Data movement on the emulator: DRAM -> L1 -> DRAM copies through CBs, CB ring wrap-around,
//! semaphore handshakes between cores, and multicast.

mod common;

use common::{core0, device, READER};
use tt_runtime::host::{from_bf16_bytes, to_bf16_bytes};
use tt_runtime::{CbSpec, CoreCoord, CoreRange, DataFormat, KernelSpec};

/// Writer that drains cb 0 (not 16) into DRAM.
const DRAIN_CB0: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t out = get_arg_val<uint32_t>(0);
    const uint32_t n = get_arg_val<uint32_t>(1);
    const InterleavedAddrGen<true> g{out, get_tile_size(0)};
    for (uint32_t i = 0; i < n; ++i) {
        cb_wait_front(0, 1);
        noc_async_write_page(i, g, get_read_ptr(0));
        noc_async_write_barrier();
        cb_pop_front(0, 1);
    }
}
"#;

fn copy_through_cb(tiles: u32, cb_pages: u32) -> (Vec<f32>, Vec<f32>, tt_runtime::Counters) {
    let dev = device();
    let cores = [core0()];
    let n = (tiles * 1024) as usize;
    // Distinct small integers, exact in bf16.
    let input: Vec<f32> = (0..n).map(|i| (i % 251) as f32).collect();
    let src = dev.dram_buffer(u64::from(tiles * 2048), 2048).unwrap();
    let dst = dev.dram_buffer(u64::from(tiles * 2048), 2048).unwrap();
    src.write(&to_bf16_bytes(&input)).unwrap();
    let mut prog = dev.program().unwrap();
    prog.add_cb(&CbSpec::tiles(0, &cores, cb_pages, DataFormat::Float16B))
        .unwrap();
    let r = prog
        .add_kernel(&KernelSpec::reader("reader", READER, &cores))
        .unwrap();
    let w = prog
        .add_kernel(&KernelSpec::writer("drain", DRAIN_CB0, &cores))
        .unwrap();
    let at = CoreCoord::new(0, 0);
    prog.set_runtime_args(r, at, &[src.address(), 0, tiles, 0])
        .unwrap();
    prog.set_runtime_args(w, at, &[dst.address(), tiles])
        .unwrap();
    dev.enqueue(&prog).unwrap();
    dev.finish().unwrap();
    let out = from_bf16_bytes(&dst.read_vec().unwrap());
    (input, out, prog.counters(None).unwrap())
}

#[test]
fn dram_to_l1_to_dram_copy() {
    let (input, out, counters) = copy_through_cb(3, 2);
    assert_eq!(out, input);
    // 3 reads and 3 writes of 2048 bytes: size class 5 (<= 2 KiB).
    assert_eq!(counters.noc_reads[5], 3);
    assert_eq!(counters.noc_writes[5], 3);
    assert_eq!(counters.dram_read_bytes, 3 * 2048);
    assert_eq!(counters.dram_write_bytes, 3 * 2048);
    assert_eq!(counters.runs, 2);
}

#[test]
fn cb_ring_wraps_around() {
    // 10 tiles through a 4-page ring: the pointers wrap twice.
    let (input, out, counters) = copy_through_cb(10, 4);
    assert_eq!(out, input);
    // Reader: 10 reserves; writer: 10 waits.
    assert_eq!(counters.cb_waits, 20);
}

#[test]
fn cb_counters_wrap_at_16_bits() {
    // 70000 pages through a 2-page CB: the 16-bit received / acked counters wrap.
    const PRODUCER: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    for (uint32_t i = 0; i < 70000; ++i) { cb_reserve_back(0, 1); cb_push_back(0, 1); }
}
"#;
    const CONSUMER: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    for (uint32_t i = 0; i < 70000; ++i) { cb_wait_front(0, 1); cb_pop_front(0, 1); }
}
"#;
    let dev = device();
    let cores = [core0()];
    let mut prog = dev.program().unwrap();
    prog.add_cb(&CbSpec {
        id: 0,
        cores: cores.to_vec(),
        total_size: 64,
        page_size: 32,
        format: DataFormat::Float16B,
    })
    .unwrap();
    prog.add_kernel(&KernelSpec::reader("producer", PRODUCER, &cores))
        .unwrap();
    prog.add_kernel(&KernelSpec::writer("consumer", CONSUMER, &cores))
        .unwrap();
    dev.enqueue(&prog).unwrap();
    assert_eq!(prog.counters(None).unwrap().cb_waits, 140000);
}

/// Core A writes a word into core B's L1 and signals B; B adds one, writes it back and signals A.
#[test]
fn semaphore_handshake_between_cores() {
    const PING: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t buf = get_arg_val<uint32_t>(0);
    const uint32_t peer_x = get_arg_val<uint32_t>(1);
    const uint32_t peer_y = get_arg_val<uint32_t>(2);
    const uint32_t sem = get_semaphore(0);
    volatile uint32_t* word = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
    *word = 41;
    noc_async_write(get_write_ptr(0), get_noc_addr(peer_x, peer_y, buf), 16);
    noc_async_writes_flushed();
    noc_semaphore_inc(get_noc_addr(peer_x, peer_y, sem), 1);
    noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(sem), 1);
}
"#;
    const PONG: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t buf = get_arg_val<uint32_t>(0);
    const uint32_t peer_x = get_arg_val<uint32_t>(1);
    const uint32_t peer_y = get_arg_val<uint32_t>(2);
    const uint32_t sem = get_semaphore(0);
    noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(sem), 1);
    noc_async_read(get_noc_addr(buf), get_write_ptr(0), 16);
    noc_async_read_barrier();
    volatile uint32_t* word = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
    *word = *word + 1;
    noc_async_write(get_write_ptr(0), get_noc_addr(peer_x, peer_y, buf), 16);
    noc_async_write_barrier();
    noc_semaphore_inc(get_noc_addr(peer_x, peer_y, sem), 1);
}
"#;
    let dev = device();
    let a = CoreCoord::new(0, 0);
    let b = CoreCoord::new(5, 3);
    let both = [CoreRange::single(a), CoreRange::single(b)];
    let buf = dev.l1_buffer(16).unwrap();
    let mut prog = dev.program().unwrap();
    prog.add_cb(&CbSpec {
        id: 0,
        cores: both.to_vec(),
        total_size: 16,
        page_size: 16,
        format: DataFormat::UInt32,
    })
    .unwrap();
    prog.add_semaphore(&both, 0).unwrap();
    let ping = prog
        .add_kernel(&KernelSpec::reader("ping", PING, &[CoreRange::single(a)]))
        .unwrap();
    let pong = prog
        .add_kernel(&KernelSpec::reader("pong", PONG, &[CoreRange::single(b)]))
        .unwrap();
    let na = dev.worker_core(a).unwrap();
    let nb = dev.worker_core(b).unwrap();
    assert_ne!(nb, b, "NoC coordinates must differ from logical ones");
    prog.set_runtime_args(ping, a, &[buf.address(), nb.x, nb.y])
        .unwrap();
    prog.set_runtime_args(pong, b, &[buf.address(), na.x, na.y])
        .unwrap();
    dev.enqueue(&prog).unwrap();
    let mut word = [0u8; 4];
    buf.read_core(a, 0, &mut word).unwrap();
    assert_eq!(u32::from_le_bytes(word), 42);
    let c = prog.counters(None).unwrap();
    assert_eq!(c.noc_sem_ops, 2);
}

/// Pages of an L1-interleaved tensor (`InterleavedAddrGen<false>`) inside an L1 buffer: a kernel
/// on one core scatters `pages` pages of a DRAM source over the banks, one on another core
/// gathers them back into DRAM. The host finds page p in bank p % banks, at
/// base + (p / banks) * page, on the core `l1_bank_core` names; only the DRAM ends count as DRAM.
#[test]
fn l1_interleaved_pages_live_in_bank_order() {
    // Copies `n` 64-byte pages from one interleaved tensor to another; compile-time args say
    // which of the two is in DRAM.
    const COPY: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    constexpr bool from_dram = get_compile_time_arg_val(0) != 0;
    constexpr bool to_dram = get_compile_time_arg_val(1) != 0;
    const uint32_t src = get_arg_val<uint32_t>(0);
    const uint32_t dst = get_arg_val<uint32_t>(1);
    const uint32_t n = get_arg_val<uint32_t>(2);
    const InterleavedAddrGen<from_dram> from{src, 64};
    const InterleavedAddrGen<to_dram> to{dst, 64};
    for (uint32_t i = 0; i < n; ++i) {
        noc_async_read_page(i, from, get_write_ptr(0));
        noc_async_read_barrier();
        noc_async_write_page(i, to, get_write_ptr(0));
        noc_async_write_barrier();
    }
}
"#;
    let dev = device();
    let info = dev.info().unwrap();
    // The emulator has one L1 bank per worker core.
    let banks = info.l1_banks;
    assert_eq!(banks, info.grid_x * info.grid_y);
    let pages = 2 * banks + 5;
    let bytes: Vec<u8> = (0..pages * 64).map(|i| (i % 253) as u8).collect();
    let src = dev.dram_buffer(u64::from(pages * 64), 64).unwrap();
    let back = dev.dram_buffer(u64::from(pages * 64), 64).unwrap();
    src.write(&bytes).unwrap();
    let arena = dev.l1_buffer(3 * 64).unwrap();
    let (a, b) = (CoreCoord::new(0, 0), CoreCoord::new(3, 2));
    let run = |name: &str, dram: [u32; 2], at: CoreCoord, args: [u32; 3]| {
        let cores = [CoreRange::single(at)];
        let mut prog = dev.program().unwrap();
        prog.add_cb(&CbSpec {
            id: 0,
            cores: cores.to_vec(),
            total_size: 64,
            page_size: 64,
            format: DataFormat::UInt32,
        })
        .unwrap();
        let k = prog
            .add_kernel(&KernelSpec::reader(name, COPY, &cores).compile_args(&dram))
            .unwrap();
        prog.set_runtime_args(k, at, &args).unwrap();
        dev.enqueue(&prog).unwrap();
        prog.counters(None).unwrap()
    };
    let scatter = run(
        "scatter",
        [1, 0],
        a,
        [src.address(), arena.address(), pages],
    );
    for p in [0, 1, banks - 1, banks, 2 * banks + 4] {
        let core = dev.l1_bank_core(p % banks).unwrap();
        let mut page = [0u8; 64];
        arena.read_core(core, (p / banks) * 64, &mut page).unwrap();
        let at = (p * 64) as usize;
        assert_eq!(page[..], bytes[at..at + 64], "page {p} on {core:?}");
    }
    let gather = run(
        "gather",
        [0, 1],
        b,
        [arena.address(), back.address(), pages],
    );
    assert_eq!(back.read_vec().unwrap(), bytes);
    let dram = u64::from(pages * 64);
    assert_eq!(
        (scatter.dram_read_bytes, scatter.dram_write_bytes),
        (dram, 0)
    );
    assert_eq!((gather.dram_read_bytes, gather.dram_write_bytes), (0, dram));
}

/// A page past the end of its L1 buffer is a kernel error, not a silent write into another one.
#[test]
fn l1_interleaved_page_outside_its_buffer_is_an_error() {
    const WRITE: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const InterleavedAddrGen<false> to{get_arg_val<uint32_t>(0), 64};
    noc_async_write_page(get_arg_val<uint32_t>(1), to, get_write_ptr(0));
    noc_async_write_barrier();
}
"#;
    let dev = device();
    let banks = dev.info().unwrap().l1_banks;
    let arena = dev.l1_buffer(64).unwrap();
    let at = CoreCoord::new(0, 0);
    let cores = [CoreRange::single(at)];
    let mut prog = dev.program().unwrap();
    prog.add_cb(&CbSpec {
        id: 0,
        cores: cores.to_vec(),
        total_size: 64,
        page_size: 64,
        format: DataFormat::UInt32,
    })
    .unwrap();
    let k = prog
        .add_kernel(&KernelSpec::reader("write", WRITE, &cores))
        .unwrap();
    prog.set_runtime_args(k, at, &[arena.address(), banks])
        .unwrap();
    let err = dev.enqueue(&prog).unwrap_err().to_string();
    assert!(err.contains("outside every allocated L1 buffer"), "{err}");
}
