//! Contention in cost model v2 on the emulator: eight cores reading the same DRAM bank are charged
//! that bank's bytes at one bank's rate (and the link out of its router carries them all), while
//! the same bytes spread over the eight banks are not; the expected figures are computed here by
//! hand from the emulator's documented layout (page `i` in bank `i % 8`, bank 0 at NoC (0,2),
//! logical row 0 at NoC y = 2).

mod common;

use common::device;
use tt_runtime::{
    Axis, CoreCoord, CoreRange, KernelRole, KernelSpec, PhasedKernel, TimelineModel, TimelineStep,
};

/// Reads `pages` pages of `page` bytes, page `first + i * stride` of an interleaved DRAM buffer,
/// into a ring of 16 pages in L1, with one barrier. Compile-time args: page. Args: dram_addr,
/// l1_addr, first, stride, pages.
const STRIDED_READER: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    constexpr uint32_t page = get_compile_time_arg_val(0);
    const uint32_t dram = get_arg_val<uint32_t>(0);
    const uint32_t l1 = get_arg_val<uint32_t>(1);
    const uint32_t first = get_arg_val<uint32_t>(2);
    const uint32_t stride = get_arg_val<uint32_t>(3);
    const uint32_t pages = get_arg_val<uint32_t>(4);
    const InterleavedAddrGen<true> gen{dram, page};
    for (uint32_t i = 0; i < pages; ++i) {
        noc_async_read_page(first + i * stride, gen, l1 + (i % 16) * page);
    }
    noc_async_read_barrier();
}
"#;

const CORES: u32 = 8;
const PAGES: u32 = 16;
const PAGE: u32 = 8192;
const MODEL: TimelineModel = TimelineModel::BLACKHOLE;

/// Every core of logical row 0, columns 0..8, reads 16 pages of 8 KiB; core `c` starts at page
/// `first(c)` and steps by `stride`. Returns the contended v2 step and the DRAM bytes read.
fn read(first: impl Fn(u32) -> u32, stride: u32) -> (TimelineStep, u64) {
    let dev = device();
    let dram = dev
        .dram_buffer(u64::from(CORES * PAGES * PAGE), PAGE)
        .expect("dram buffer");
    let l1 = dev.l1_buffer(16 * PAGE).expect("l1 buffer");
    let cores = [CoreRange::new(
        CoreCoord::new(0, 0),
        CoreCoord::new(CORES - 1, 0),
    )];
    let mut program = dev.program().expect("program");
    let kernel = program
        .add_kernel(&KernelSpec::reader("strided", STRIDED_READER, &cores).compile_args(&[PAGE]))
        .expect("kernel");
    for c in 0..CORES {
        program
            .set_runtime_args(
                kernel,
                CoreCoord::new(c, 0),
                &[dram.address(), l1.address(), first(c), stride, PAGES],
            )
            .expect("args");
    }
    dev.enqueue(&program).expect("run");
    dev.finish().expect("finish");
    let per_core: Vec<Vec<PhasedKernel>> = (0..CORES)
        .map(|c| {
            let counters = program
                .core_counters(kernel, CoreCoord::new(c, 0))
                .expect("counters");
            vec![PhasedKernel::flat(KernelRole::Reader, counters)]
        })
        .collect();
    let occupancy = program.occupancy().expect("occupancy");
    let read = program.counters(None).expect("counters").dram_read_bytes;
    (MODEL.contended_step(&per_core, &occupancy), read)
}

fn close(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs(),
        "got {got}, want {want}"
    );
}

#[test]
fn one_bank_read_by_every_core_is_charged_at_one_bank_s_rate() {
    // Pages 0, 8, 16, ...: all in bank 0. 8 cores × 16 pages × 8 KiB = 1 MiB from one bank.
    let (same, same_bytes) = read(|_| 0, 8);
    // Pages 16c .. 16c + 15: two of every bank per core, 8 × 2 × 8 KiB = 128 KiB per bank.
    let (spread, spread_bytes) = read(|c| c * PAGES, 1);
    assert_eq!(same_bytes, 1 << 20);
    assert_eq!(spread_bytes, same_bytes);

    // One bank moves 512 GB/s / 8 = 64 GB/s: 1 MiB takes 16.384 µs, 128 KiB 2.048 µs.
    assert_eq!(same.contention.bank, Some((0, 1 << 20)));
    close(same.contention.bank_seconds, 16.384e-6);
    assert_eq!(spread.contention.bank.map(|b| b.1), Some(128 << 10));
    close(spread.contention.bank_seconds, 2.048e-6);

    // Bank 0 is at NoC (0,2), the readers on row 2: every byte leaves its router along x (east
    // on NoC 0, west around the torus on NoC 1), 1 MiB at 64 B/cycle and 1.35 GHz.
    let (link, bytes) = same.contention.link.expect("a busiest link");
    assert_eq!(
        (link.x, link.y, link.axis, bytes),
        (0, 2, Axis::X, 1 << 20),
        "{link:?}"
    );
    close(same.contention.link_seconds, 16384.0 / 1.35e9);

    // The bank binds: its 16.384 µs plus 1 µs of dispatch, far above each core's own read
    // (128 KiB at 33 B/cycle, about 3 µs) and the aggregate 1 MiB at 512 GB/s (2.048 µs).
    assert_eq!(same.dominant(), "DRAM bank");
    close(same.seconds(), 16.384e-6 + 1e-6);
    assert!(
        spread.seconds() < 0.5 * same.seconds(),
        "spread {} s, one bank {} s",
        spread.seconds(),
        same.seconds()
    );
    assert_ne!(spread.dominant(), "DRAM bank");
    // Without contention the one-bank read would cost about what the spread one does: its cores
    // move the same bytes (only their hop counts differ), in under a quarter of the bank's time.
    assert!(same.core_seconds.max(same.dram_seconds) < 0.25 * same.contention.bank_seconds);
}
