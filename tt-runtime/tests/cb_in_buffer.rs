//! CBs placed in an L1 buffer (`Program::add_cb_in`, tt-metal's globally allocated CBs), at its
//! address or at an offset into it (`Program::add_cb_in_at`): their pages hold what the host wrote
//! into each core's copy of the buffer at that offset, across runs, programs and trace replays,
//! and two CBs at different offsets of one buffer each see their own bytes; misuse is refused with
//! what to do; ordinary CBs may still not reach an L1 buffer; and the emulator's happens-before
//! rules still hold for NoC writes into such a CB.

mod common;

use std::ffi::CStr;

use common::{bf16_values, core0, device, expect_err, remote_push, writer_and_reader_in, Cb0};
use tt_runtime::host::to_bf16_bytes;
use tt_runtime::{
    sys, Buffer, CbSpec, CoreCoord, CoreRange, DataFormat, Device, Dispatch, Error, KernelSpec,
    Program, Result,
};

/// Tiles of the resident CB on each core.
const TILES: u32 = 2;
const TILE: u32 = 2048;

/// Makes the `n` pages of each resident CB 0..`cbs` visible without writing them, as ttnn's
/// sharded ops do. Args: n, cbs.
const PUSH_RESIDENT: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t n = get_arg_val<uint32_t>(0);
    const uint32_t cbs = get_arg_val<uint32_t>(1);
    for (uint32_t cb = 0; cb < cbs; ++cb) {
        cb_reserve_back(cb, n);
        cb_push_back(cb, n);
    }
}
"#;

/// Copies `n` tiles of each of cbs 0..`cbs`, in that order, to cb 16 through DST. Compile args:
/// n, cbs.
const COPY: &str = r#"
#include "api/compute/tile_move_copy.h"
void kernel_main() {
    constexpr uint32_t n = get_compile_time_arg_val(0);
    constexpr uint32_t cbs = get_compile_time_arg_val(1);
    compute_kernel_hw_startup(0, 16);
    for (uint32_t cb = 0; cb < cbs; ++cb) {
        copy_tile_init(cb);
        for (uint32_t i = 0; i < n; ++i) {
            cb_wait_front(cb, 1);
            tile_regs_acquire();
            copy_tile(cb, 0, 0);
            tile_regs_commit();
            tile_regs_wait();
            cb_reserve_back(16, 1);
            pack_tile(0, 16);
            cb_push_back(16, 1);
            tile_regs_release();
            cb_pop_front(cb, 1);
        }
    }
}
"#;

/// Writes `n` tiles of cb 16 to pages `first..first + n` of a DRAM buffer. Args: out, first, n.
const WRITER: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t out = get_arg_val<uint32_t>(0);
    const uint32_t first = get_arg_val<uint32_t>(1);
    const uint32_t n = get_arg_val<uint32_t>(2);
    const InterleavedAddrGenFast<true> g{out, get_tile_size(16), DataFormat::Float16_b};
    for (uint32_t i = 0; i < n; ++i) {
        cb_wait_front(16, 1);
        noc_async_write_page(first + i, g, get_read_ptr(16));
        noc_async_write_barrier();
        cb_pop_front(16, 1);
    }
}
"#;

/// The 2x2 block of cores the resident program runs on.
fn block() -> CoreRange {
    CoreRange::new(CoreCoord::new(0, 0), CoreCoord::new(1, 1))
}

/// Its cores in the order their tiles go to the output.
fn block_cores() -> Vec<CoreCoord> {
    (0..2)
        .flat_map(|y| (0..2).map(move |x| CoreCoord::new(x, y)))
        .collect()
}

/// A program on [`block`] whose cbs 0, 1, .. live in `resident` at `offsets` (added first, so the
/// ordinary cb 16 after them must still go to the bottom of L1, or the run fails for reaching the
/// buffer): the reader pushes their pages unwritten, compute copies them to cb 16 (cb 0's first),
/// the writer puts core k's tiles at pages `k * TILES * offsets.len()..` of `out`.
fn resident_program(
    dev: &Device,
    resident: &Buffer,
    offsets: &[u32],
    out: &Buffer,
) -> Result<Program> {
    let cores = [block()];
    let cbs = u32::try_from(offsets.len()).unwrap();
    let mut prog = dev.program()?;
    for (id, &offset) in (0u32..).zip(offsets) {
        prog.add_cb_in_at(
            &CbSpec::tiles(id, &cores, TILES, DataFormat::Float16B),
            resident,
            offset,
        )?;
    }
    prog.add_cb(&CbSpec::tiles(16, &cores, 2, DataFormat::Float16B))?;
    let r = prog.add_kernel(&KernelSpec::reader("push_resident", PUSH_RESIDENT, &cores))?;
    prog.add_kernel(&KernelSpec::compute("copy", COPY, &cores).compile_args(&[TILES, cbs]))?;
    let w = prog.add_kernel(&KernelSpec::writer("writer", WRITER, &cores))?;
    for (k, at) in (0u32..).zip(block_cores()) {
        prog.set_runtime_args(r, at, &[TILES, cbs])?;
        prog.set_runtime_args(w, at, &[out.address(), k * TILES * cbs, TILES * cbs])?;
    }
    Ok(prog)
}

/// Clears `out`, runs `prog` and returns `out`.
fn run(dev: &Device, prog: &Program, out: &Buffer) -> Vec<u8> {
    let len = usize::try_from(out.size()).unwrap();
    out.write(&vec![0u8; len]).unwrap();
    dev.enqueue(prog).unwrap();
    dev.finish().unwrap();
    out.read_vec().unwrap()
}

/// `TILES` tiles of bf16 values from `seed` (copy and pack keep bf16 values bit for bit).
fn tiles_of(seed: u64) -> Vec<u8> {
    to_bf16_bytes(&bf16_values((TILES * 1024) as usize, seed))
}

/// An L1 buffer of `size` bytes per core, each core's copy filled with bf16 values of its own:
/// bytes no CB is meant to read, which a CB placed at the wrong offset would.
fn buffer_of_other_data(dev: &Device, size: u32) -> Buffer {
    let buffer = dev.l1_buffer(size).unwrap();
    for (k, at) in (0u64..).zip(block_cores()) {
        let other = to_bf16_bytes(&bf16_values(size as usize / 2, 900 + k));
        buffer.write_core(at, 0, &other).unwrap();
    }
    buffer
}

/// The resident CB at `offset` of a buffer with other data before and after it: the output holds
/// each core's data on two runs, on a second program (one core rewritten in between, the Buffer
/// handle dropped and a new L1 buffer written meanwhile) and replayed from a trace.
fn holds_each_cores_data(offset: u32) {
    let dev = device();
    let cores = block_cores();
    let resident = buffer_of_other_data(&dev, offset + TILES * TILE + 64);
    let out = dev.dram_buffer(u64::from(4 * TILES * TILE), TILE).unwrap();
    let mut data: Vec<Vec<u8>> = (0..4).map(|k| tiles_of(100 + k)).collect();
    assert!(data.windows(2).all(|w| w[0] != w[1]));
    for (at, bytes) in cores.iter().zip(&data) {
        resident.write_core(*at, offset, bytes).unwrap();
    }
    let prog = resident_program(&dev, &resident, &[offset], &out).unwrap();
    assert_eq!(run(&dev, &prog, &out), data.concat(), "first run");
    assert_eq!(run(&dev, &prog, &out), data.concat(), "second run");

    // A second program on the same buffer: the pages are still there, except those the host
    // rewrote in between. The program keeps the buffer allocated after its handle is dropped: a
    // buffer allocated then goes elsewhere, and what is written into it does not reach the CB.
    data[3] = tiles_of(7);
    resident.write_core(cores[3], offset, &data[3]).unwrap();
    let second = resident_program(&dev, &resident, &[offset], &out).unwrap();
    let (address, size) = (resident.address(), u32::try_from(resident.size()).unwrap());
    drop(resident);
    let later = dev.l1_buffer(size).unwrap();
    assert_ne!(later.address(), address);
    for at in &cores {
        later
            .write_core(*at, 0, &vec![0x55; size as usize])
            .unwrap();
    }
    assert_eq!(run(&dev, &second, &out), data.concat(), "second program");

    // Replayed from a trace, as frames are.
    let trace = dev.capture_trace(|d| d.enqueue(&second)).unwrap();
    out.write(&vec![0u8; data.concat().len()]).unwrap();
    dev.replay(&trace).unwrap();
    dev.finish().unwrap();
    assert_eq!(out.read_vec().unwrap(), data.concat(), "trace replay");
}

#[test]
fn a_cb_in_an_l1_buffer_holds_each_cores_data_across_runs_and_programs() {
    holds_each_cores_data(0);
}

#[test]
fn a_cb_at_an_offset_in_an_l1_buffer_holds_each_cores_data_across_runs_and_programs() {
    // Past a tile and a half, 16-byte aligned but not a tile multiple.
    holds_each_cores_data(TILE + TILE / 2 + 48);
}

#[test]
fn two_cbs_at_different_offsets_of_one_buffer_each_see_their_own_bytes() {
    let dev = device();
    // cb 1 low in the buffer, cb 0 above it past a gap; other data around both.
    let offsets = [TILES * TILE + 96, 16];
    let resident = buffer_of_other_data(&dev, offsets[0] + TILES * TILE + 32);
    let out = dev.dram_buffer(u64::from(8 * TILES * TILE), TILE).unwrap();
    let mut expected = Vec::new();
    for (k, at) in (0u64..).zip(block_cores()) {
        for (cb, &offset) in (0u64..).zip(&offsets) {
            let bytes = tiles_of(200 + 10 * k + cb);
            resident.write_core(at, offset, &bytes).unwrap();
            expected.extend(bytes);
        }
    }
    let prog = resident_program(&dev, &resident, &offsets, &out).unwrap();
    assert_eq!(run(&dev, &prog, &out), expected);
}

/// The message of an expected [`Error::InvalidArgument`].
fn refusal(r: Result<()>) -> String {
    match expect_err(r) {
        Error::InvalidArgument(m) => m,
        e => panic!("expected an invalid argument, got {e:?}"),
    }
}

#[test]
fn a_cb_needs_an_l1_buffer_of_its_device_at_least_its_size() {
    let dev = device();
    let cb = CbSpec::tiles(0, &[core0()], TILES, DataFormat::Float16B);
    let mut prog = dev.program().unwrap();

    let dram = dev.dram_buffer(u64::from(TILES * TILE), TILE).unwrap();
    let m = refusal(prog.add_cb_in(&cb, &dram));
    assert!(
        m.contains(
            "cb 0: its buffer is a DRAM buffer; a CB can live only in an L1 buffer \
             (ttr_buffer_create_l1)"
        ),
        "{m}"
    );

    let small = dev.l1_buffer(TILES * TILE - 16).unwrap();
    let m = refusal(prog.add_cb_in(&cb, &small));
    assert!(
        m.contains(
            "cb 0: 4096 bytes at offset 0 do not fit in its L1 buffer of 4080 bytes per core; make \
             the buffer at least as large as the offset plus the CB"
        ),
        "{m}"
    );

    let other = Device::open(Dispatch::Eth).unwrap();
    let elsewhere = other.l1_buffer(TILES * TILE).unwrap();
    let m = refusal(prog.add_cb_in(&cb, &elsewhere));
    assert!(
        m.contains(
            "cb 0: its L1 buffer belongs to another device; create the buffer on the program's \
             device"
        ),
        "{m}"
    );

    // None of the refusals configured the CB: a buffer that fits takes its id.
    let fits = dev.l1_buffer(TILES * TILE).unwrap();
    prog.add_cb_in(&cb, &fits).unwrap();
}

#[test]
fn a_cb_at_an_offset_needs_it_aligned_and_the_cb_inside_the_buffer() {
    let dev = device();
    let align = dev.info().unwrap().l1_alignment;
    assert_eq!(align, 16);
    let cb = CbSpec::tiles(0, &[core0()], TILES, DataFormat::Float16B);
    let mut prog = dev.program().unwrap();
    // Room for the CB at two alignment units.
    let buffer = dev.l1_buffer(TILES * TILE + 2 * align).unwrap();

    for offset in [align / 2, align + 4, 1] {
        let m = refusal(prog.add_cb_in_at(&cb, &buffer, offset));
        assert!(
            m.contains(&format!(
                "cb 0: offset {offset} in its L1 buffer is not a multiple of the L1 alignment \
                 (16 bytes); place the CB at an aligned offset"
            )),
            "{m}"
        );
    }

    // One alignment unit past the last offset that fits, and an offset whose sum with the size
    // wraps a u32.
    let m = refusal(prog.add_cb_in_at(&cb, &buffer, 3 * align));
    assert!(
        m.contains(
            "cb 0: 4096 bytes at offset 48 do not fit in its L1 buffer of 4128 bytes per core; \
             make the buffer at least as large as the offset plus the CB"
        ),
        "{m}"
    );
    let wraps = u32::MAX / align * align;
    let m = refusal(prog.add_cb_in_at(&cb, &buffer, wraps));
    assert!(
        m.contains(&format!("cb 0: 4096 bytes at offset {wraps} do not fit")),
        "{m}"
    );

    // None of the refusals configured the CB: the last offset that fits takes its id.
    prog.add_cb_in_at(&cb, &buffer, 2 * align).unwrap();
}

#[test]
fn an_offset_without_a_buffer_is_refused_through_the_c_api() {
    // The Rust API cannot express it (add_cb passes offset 0): the C call itself.
    let range = sys::ttr_core_range::default();
    let config = sys::ttr_cb_config {
        id: 0,
        ranges: &range,
        num_ranges: 1,
        total_size: 2048,
        page_size: 2048,
        format: sys::TTR_FORMAT_FLOAT16_B,
        buffer: std::ptr::null(),
        buffer_offset: 16,
    };
    // SAFETY: out-pointers are valid; the handles are used only after a successful create and
    // freed once; `config` points at `range`, which outlives the calls.
    unsafe {
        let mut dev = std::ptr::null_mut();
        assert_eq!(
            sys::ttr_device_open(0, sys::TTR_DISPATCH_ETH, &mut dev),
            sys::TTR_OK as sys::ttr_status
        );
        let mut prog = std::ptr::null_mut();
        assert_eq!(
            sys::ttr_program_create(dev, &mut prog),
            sys::TTR_OK as sys::ttr_status
        );
        let status = sys::ttr_program_add_cb(prog, &config);
        let message = CStr::from_ptr(sys::ttr_last_error())
            .to_string_lossy()
            .into_owned();
        let ok = sys::ttr_program_add_cb(
            prog,
            &sys::ttr_cb_config {
                buffer_offset: 0,
                ..config
            },
        );
        sys::ttr_program_free(prog);
        sys::ttr_device_close(dev);
        assert_eq!(status, sys::TTR_ERR_INVALID_ARGUMENT as sys::ttr_status);
        assert!(
            message.contains(
                "cb 0: buffer offset 16 without a buffer; an offset places a CB inside an L1 \
                 buffer (set buffer, or leave buffer_offset 0)"
            ),
            "{message}"
        );
        // The refusal configured nothing: the same CB at offset 0 is accepted.
        assert_eq!(ok, sys::TTR_OK as sys::ttr_status);
    }
}

/// A program on core (0,0) with a CB in a 64 KiB L1 buffer and an ordinary CB of `ordinary`
/// bytes, and a kernel that does nothing; the result of running it.
fn with_ordinary_cb(ordinary: impl FnOnce(u32) -> u32) -> Result<()> {
    let dev = device();
    let cores = [core0()];
    let resident = dev.l1_buffer(64 * 1024)?;
    let base = dev.info()?.l1_unreserved_base;
    let mut prog = dev.program()?;
    prog.add_cb_in(
        &CbSpec::tiles(0, &cores, 32, DataFormat::Float16B),
        &resident,
    )?;
    prog.add_cb(&CbSpec {
        id: 1,
        cores: cores.to_vec(),
        total_size: ordinary(resident.address() - base),
        page_size: 16,
        format: DataFormat::UInt32,
    })?;
    prog.add_kernel(&KernelSpec::reader("idle", "void kernel_main() {}", &cores))?;
    dev.enqueue(&prog)
}

#[test]
fn ordinary_cbs_may_fill_l1_up_to_an_l1_buffer_and_not_reach_it() {
    // The CB in the buffer takes no room among the program's CBs: an ordinary CB may fill all of
    // L1 below the buffer.
    with_ordinary_cb(|room| room).unwrap();
    // One page more reaches the buffer, as without the CB in it.
    let e = expect_err(with_ordinary_cb(|room| room + 16));
    let Error::OutOfMemory(m) = e else {
        panic!("expected the CBs to be refused for reaching the L1 buffer, got {e:?}")
    };
    // The buffer sits at the top of L1: 0x180000 - 64 KiB.
    assert!(
        m.contains("the program's CBs on core (0,0) end at 0x170010, above the lowest L1 buffer at 0x170000"),
        "{m}"
    );
}

/// The writer writes 16 bytes into the receiver's CB 0 (`offset` bytes into an L1 buffer of
/// `offset + 16` bytes at the top of L1, so at 0x180000 - 16 = 0x17fff0 whatever the offset) and
/// signals; the receiver pushes the page without waiting.
fn unordered_push(receiver_first: bool, offset: u32) -> String {
    let writer = common::data_movement(
        "const uint32_t x = get_arg_val<uint32_t>(0), y = get_arg_val<uint32_t>(1);\n\
         noc_async_write(get_write_ptr(0), get_noc_addr(x, y, get_write_ptr(0)), 16);\n\
         noc_async_write_barrier();\n\
         noc_semaphore_inc(get_noc_addr(x, y, get_semaphore(0)), 1);",
    );
    let reader = common::data_movement("cb_reserve_back(0, 1); cb_push_back(0, 1);");
    match writer_and_reader_in(&writer, &reader, receiver_first, Cb0::InBuffer { offset }) {
        Err(Error::Kernel(m)) => m,
        other => panic!("expected a kernel error, got {other:?}"),
    }
}

#[test]
fn noc_writes_into_a_cb_in_an_l1_buffer_follow_the_happens_before_rules() {
    // At the buffer's address and at an offset into it (where the CB is not the buffer's start).
    for offset in [0, 48] {
        // The write lands first: the push is not ordered after it.
        let m = unordered_push(false, offset);
        assert!(
            m.contains(
                "cb_push_back(cb 0, 1): 16 byte(s) at L1 0x17fff0 of these pages were written over \
                 the NoC by core (0,0) writer 'sender', and this kernel waited for no semaphore"
            ),
            "offset {offset}: {m}"
        );
        // The push comes first: the write lands in a pushed page.
        let m = unordered_push(true, offset);
        assert!(
            m.contains(
                "a NoC write from core (1,0) writer 'sender' landed in page 0 of CB 0 on core \
                 (0,0), which its kernels have pushed and not popped"
            ),
            "offset {offset}: {m}"
        );
        // The same exchange ordered by the semaphores is allowed, in either scheduling order.
        for receiver_first in [false, true] {
            for rounds in [1, 3] {
                remote_push(receiver_first, rounds, Cb0::InBuffer { offset }).unwrap();
            }
        }
    }
}
