//! The emulator's strictness: rule violations triggered by small kernels, with the error kind and
//! message checked, deadlock reports, and what a rule still allows (`diagnostics.rs` has a kernel
//! for every diagnostic of the emulator).

mod common;

use common::{core0, data_movement as dm, device, expect_err, remote_push, Cb0};
use tt_runtime::{CbSpec, CoreCoord, DataFormat, Device, Error, KernelSpec, Program};

/// Runs one reader kernel on core (0, 0) with a 4-page bf16 tile CB 0, a semaphore, and an
/// L1 buffer whose address is arg 0; `extra` may add kernels.
fn run_reader(src: &str, extra: impl FnOnce(&mut Program) -> tt_runtime::Result<()>) -> Error {
    let dev = device();
    let cores = [core0()];
    let buf = dev.l1_buffer(4096).unwrap();
    let dram = dev.dram_buffer(4096, 2048).unwrap();
    let mut prog = dev.program().unwrap();
    prog.add_cb(&CbSpec::tiles(0, &cores, 4, DataFormat::Float16B))
        .unwrap();
    prog.add_semaphore(&cores, 0).unwrap();
    let r = prog
        .add_kernel(&KernelSpec::reader("bad_reader", src, &cores))
        .unwrap();
    prog.set_runtime_args(r, CoreCoord::new(0, 0), &[buf.address(), dram.address()])
        .unwrap();
    extra(&mut prog).unwrap();
    expect_err(dev.enqueue(&prog))
}

fn kernel_error(src: &str) -> String {
    match run_reader(src, |_| Ok(())) {
        Error::Kernel(m) => m,
        e => panic!("expected a kernel error, got {e:?}"),
    }
}

#[test]
fn push_more_than_reserved() {
    let m = kernel_error(&dm("cb_reserve_back(0, 1); cb_push_back(0, 2);"));
    assert!(
        m.contains("cb_push_back(cb 0, 2): push more than reserved (1 page(s) reserved)"),
        "{m}"
    );
    assert!(m.contains("core (0,0) reader 'bad_reader'"), "{m}");
}

#[test]
fn pop_more_than_waited() {
    let m = kernel_error(&dm(
        "cb_reserve_back(0, 2); cb_push_back(0, 2); cb_wait_front(0, 1); cb_pop_front(0, 2);",
    ));
    assert!(
        m.contains("cb_pop_front(cb 0, 2): pop more than waited (1 page(s) waited for)"),
        "{m}"
    );
}

#[test]
fn page_counts_must_divide_capacity() {
    let m = kernel_error(&dm("cb_reserve_back(0, 3);"));
    assert!(
        m.contains("3 page(s) do not divide the CB capacity of 4 pages"),
        "{m}"
    );
}

#[test]
fn cb_overflow_waits_beyond_capacity() {
    let m = kernel_error(&dm("cb_wait_front(0, 5);"));
    assert!(
        m.contains("cb_wait_front(cb 0, 5): more pages than the CB holds (4)"),
        "{m}"
    );
}

#[test]
fn push_before_read_barrier() {
    let m = kernel_error(&dm("const uint32_t buf = get_arg_val<uint32_t>(0);\n\
         cb_reserve_back(0, 1);\n\
         noc_async_read(get_noc_addr(buf), get_write_ptr(0), 64);\n\
         cb_push_back(0, 1);"));
    assert!(m.contains("noc_async_read_barrier missing"), "{m}");
}

#[test]
fn l1_out_of_bounds() {
    let m = kernel_error(&dm(
        "noc_async_read(get_noc_addr(get_write_ptr(0)), 0x180000 - 16, 64);\nnoc_async_read_barrier();",
    ));
    assert!(
        m.contains("destination L1 range 0x17fff0..0x180030 is out of bounds"),
        "{m}"
    );
}

#[test]
fn l1_firmware_region_is_off_limits() {
    let m = kernel_error(&dm(
        "noc_async_read(get_noc_addr(get_write_ptr(0)), 0x100, 64);",
    ));
    assert!(
        m.contains("is below 0x1b400, in the firmware or kernel-config region"),
        "{m}"
    );
}

#[test]
fn l1_kernel_config_region_is_off_limits() {
    // 0xa800 is inside the kernel-config region (40 KiB .. 109 KiB), past this program's args
    // and semaphore.
    let m = kernel_error(&dm(
        "noc_async_read(get_noc_addr(get_write_ptr(0)), 0xa800, 64);",
    ));
    assert!(
        m.contains("L1 address 0xa800 is below 0x1b400, in the firmware or kernel-config region"),
        "{m}"
    );
}

#[test]
fn cbs_beyond_l1_name_the_core() {
    // 1427 KiB fit above the kernel-config region; one 16-byte page more does not.
    let dev = device();
    let at = CoreCoord::new(3, 2);
    let cores = [tt_runtime::CoreRange::single(at)];
    let mut prog = dev.program().unwrap();
    let fits = 1427 * 1024;
    prog.add_cb(&CbSpec {
        id: 0,
        cores: cores.to_vec(),
        total_size: fits,
        page_size: 1024,
        format: DataFormat::Float16B,
    })
    .unwrap();
    let e = prog.add_cb(&CbSpec {
        id: 1,
        cores: cores.to_vec(),
        total_size: 16,
        page_size: 16,
        format: DataFormat::Float16B,
    });
    let Err(Error::OutOfMemory(m)) = e else {
        panic!("expected an L1 overflow, got {e:?}")
    };
    assert!(
        m.contains(
            "cb 1 of 16 bytes does not fit in the L1 of core (3,2): it would end at 0x180010"
        ),
        "{m}"
    );
}

#[test]
fn noc_l1_alignment_is_16_bytes() {
    let m = kernel_error(&dm(
        "noc_async_read(get_noc_addr(get_write_ptr(0)), get_write_ptr(0) + 2056, 16);",
    ));
    assert!(
        m.contains("is not 16-byte aligned (NoC L1 alignment)"),
        "{m}"
    );
}

#[test]
fn noc_dram_read_alignment_is_64_bytes() {
    let m = kernel_error(&dm(
        "const InterleavedAddrGen<true> g{get_arg_val<uint32_t>(1), 2048};\n\
         noc_async_read(g.get_noc_addr(0, 32), get_write_ptr(0), 32);",
    ));
    assert!(
        m.contains("is not 64-byte aligned (NoC DRAM read alignment)"),
        "{m}"
    );
}

#[test]
fn logical_coordinates_are_not_noc_coordinates() {
    let m = kernel_error(&dm(
        "noc_async_read(get_noc_addr(0, 0, get_arg_val<uint32_t>(0)), get_write_ptr(0), 64);",
    ));
    assert!(m.contains("no core or DRAM bank at NoC (0,0)"), "{m}");
}

#[test]
fn runtime_arg_beyond_those_set() {
    let m = kernel_error(&dm(
        "volatile uint32_t x = get_arg_val<uint32_t>(2); (void)x;",
    ));
    assert!(
        m.contains("get_arg_val(2): only 2 runtime arg(s) are set"),
        "{m}"
    );
}

#[test]
fn semaphore_wait_needs_equality() {
    // The semaphore jumps from 0 to 2; waiting for == 1 never completes.
    let e = run_reader(
        &dm("const uint32_t sem = get_semaphore(0);\n\
             noc_semaphore_inc(get_noc_addr(sem), 2);\n\
             noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(sem), 1);"),
        |_| Ok(()),
    );
    let Error::Deadlock(m) = e else {
        panic!("expected a deadlock, got {e:?}")
    };
    // Semaphores follow the runtime args in the kernel-config region at 40 KiB (0xa000): the
    // reader's two args take 8 B, aligned to 16, so semaphore 0 is at 0xa010.
    assert!(
        m.contains("noc_semaphore_wait(semaphore at L1 0xa010 == 1): its value is 2"),
        "{m}"
    );
}

#[test]
fn semaphore_wait_min_accepts_larger_values() {
    let dev = device();
    let cores = [core0()];
    let mut prog = dev.program().unwrap();
    prog.add_semaphore(&cores, 0).unwrap();
    prog.add_kernel(&KernelSpec::reader(
        "wait_min",
        &dm("const uint32_t sem = get_semaphore(0);\n\
             noc_semaphore_inc(get_noc_addr(sem), 2);\n\
             noc_semaphore_wait_min(reinterpret_cast<volatile uint32_t*>(sem), 1);"),
        &cores,
    ))
    .unwrap();
    dev.enqueue(&prog).unwrap();
}

#[test]
fn deadlock_names_every_blocked_kernel() {
    let e = run_reader(&dm("cb_wait_front(0, 1);"), |prog| {
        prog.add_kernel(&KernelSpec::writer(
            "stuck_writer",
            &dm("noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(get_semaphore(0)), 1);"),
            &[core0()],
        ))
        .map(|_| ())
    });
    let Error::Deadlock(m) = e else {
        panic!("expected a deadlock, got {e:?}")
    };
    assert!(
        m.contains(
            "core (0,0) reader 'bad_reader' waits in cb_wait_front(cb 0, 1): 0 page(s) available"
        ),
        "{m}"
    );
    assert!(
        m.contains("core (0,0) writer 'stuck_writer' waits in noc_semaphore_wait"),
        "{m}"
    );
}

const COMPUTE_DST: &str = r#"
#include "api/compute/tile_move_copy.h"
void kernel_main() {
    compute_kernel_hw_startup(0, 0);
    copy_tile_init(0);
    cb_wait_front(0, 1);
    tile_regs_acquire();
    copy_tile(0, 0, DST_INDEX);
    tile_regs_commit();
    tile_regs_wait();
    tile_regs_release();
    cb_pop_front(0, 1);
}
"#;

fn dst_capacity_error(fp32: bool, index: u32) -> tt_runtime::Result<()> {
    let dev = device();
    let cores = [core0()];
    let mut prog = dev.program().unwrap();
    prog.add_cb(&CbSpec::tiles(0, &cores, 1, DataFormat::Float16B))
        .unwrap();
    prog.add_kernel(&KernelSpec::reader(
        "fill",
        &dm("cb_reserve_back(0, 1); cb_push_back(0, 1);"),
        &cores,
    ))
    .unwrap();
    prog.add_kernel(
        &KernelSpec::compute("copy", COMPUTE_DST, &cores)
            .define("DST_INDEX", &index.to_string())
            .fp32_dest_acc(fp32),
    )
    .unwrap();
    dev.enqueue(&prog)
}

#[test]
fn dst_half_sync_capacity() {
    dst_capacity_error(false, 7).unwrap();
    dst_capacity_error(true, 3).unwrap();
    let m = expect_err(dst_capacity_error(false, 8)).to_string();
    assert!(m.contains("DST tile 8 is beyond the 8 tiles one tile_regs_acquire gets in half-sync mode with bf16 DST"), "{m}");
    let m = expect_err(dst_capacity_error(true, 4)).to_string();
    assert!(m.contains("DST tile 4 is beyond the 4 tiles one tile_regs_acquire gets in half-sync mode with fp32 DST"), "{m}");
}

#[test]
fn compute_op_needs_its_init() {
    let dev = device();
    let cores = [core0()];
    let mut prog = dev.program().unwrap();
    prog.add_cb(&CbSpec::tiles(0, &cores, 1, DataFormat::Float16B))
        .unwrap();
    prog.add_kernel(&KernelSpec::reader(
        "fill",
        &dm("cb_reserve_back(0, 1); cb_push_back(0, 1);"),
        &cores,
    ))
    .unwrap();
    let src = COMPUTE_DST
        .replace("copy_tile_init(0);", "matmul_init(0, 0);")
        .replace("tile_move_copy", "matmul");
    let src = format!("#include \"api/compute/tile_move_copy.h\"\n{src}");
    prog.add_kernel(&KernelSpec::compute("copy", &src, &cores).define("DST_INDEX", "0"))
        .unwrap();
    let m = expect_err(dev.enqueue(&prog)).to_string();
    assert!(
        m.contains("copy_tile: needs copy_tile_init, but the last init was matmul_init"),
        "{m}"
    );
}

/// Multicast from (0,0) over logical (0,0)-(1,0); returns the error or the two cores' words.
fn multicast(variant: &str, num_dests: u32) -> tt_runtime::Result<(u32, u32)> {
    sender_run(
        &format!("{variant}(get_write_ptr(0), dst, 16, {num_dests});\nnoc_async_write_barrier();"),
        None,
    )
}

#[test]
fn multicast_excludes_the_sender_unless_loopback() {
    // The rectangle holds the sender and one receiver.
    assert_eq!(multicast("noc_async_write_multicast", 1).unwrap(), (0, 7));
    assert_eq!(
        multicast("noc_async_write_multicast_loopback_src", 2).unwrap(),
        (7, 7)
    );
    let m = expect_err(multicast("noc_async_write_multicast", 2)).to_string();
    assert!(m.contains("num_dests is 2 but the rectangle"), "{m}");
    assert!(
        m.contains("holds 1 destination core(s) excluding the sender"),
        "{m}"
    );
}

/// A writer on (0,0) (NoC 1) whose `body` multicasts over logical (0,0)-(1,0) (args 1-4: the
/// rectangle's NoC corners, `dst` the L1 buffer there) plus, when `reader` is given, a reader on
/// the same core running the given body on the given NoC; returns the run's error or the two
/// cores' first words.
fn sender_run(body: &str, reader: Option<(&str, u32)>) -> tt_runtime::Result<(u32, u32)> {
    let dev: Device = device();
    let buf = dev.l1_buffer(32).unwrap();
    for x in 0..2 {
        buf.write_core(CoreCoord::new(x, 0), 0, &[0u8; 32]).unwrap();
    }
    let mut prog = dev.program().unwrap();
    prog.add_cb(&CbSpec {
        id: 0,
        cores: vec![core0()],
        total_size: 16,
        page_size: 16,
        format: DataFormat::UInt32,
    })
    .unwrap();
    for _ in 0..2 {
        prog.add_semaphore(&[core0()], 0).unwrap();
    }
    let src = dm(&format!(
        "const uint32_t buf = get_arg_val<uint32_t>(0);\n\
         volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));\n\
         *w = 7;\n\
         uint64_t dst = get_noc_multicast_addr(get_arg_val<uint32_t>(1), get_arg_val<uint32_t>(2),\n\
                                               get_arg_val<uint32_t>(3), get_arg_val<uint32_t>(4), buf);\n\
         {body}"
    ));
    let k = prog
        .add_kernel(&KernelSpec::writer("sender", &src, &[core0()]))
        .unwrap();
    let lo = dev.worker_core(CoreCoord::new(0, 0)).unwrap();
    let hi = dev.worker_core(CoreCoord::new(1, 0)).unwrap();
    let args = [buf.address(), lo.x, lo.y, hi.x, hi.y];
    prog.set_runtime_args(k, CoreCoord::new(0, 0), &args)
        .unwrap();
    if let Some((reader_body, noc)) = reader {
        let mut spec = KernelSpec::reader("other", &dm(reader_body), &[core0()]);
        spec.noc = noc;
        let r = prog.add_kernel(&spec).unwrap();
        prog.set_runtime_args(r, CoreCoord::new(0, 0), &args)
            .unwrap();
    }
    dev.enqueue(&prog)?;
    let mut words = [0u32; 2];
    for (x, w) in words.iter_mut().enumerate() {
        let mut b = [0u8; 4];
        buf.read_core(CoreCoord::new(x as u32, 0), 0, &mut b)
            .unwrap();
        *w = u32::from_le_bytes(b);
    }
    Ok((words[0], words[1]))
}

#[test]
fn a_linked_transaction_stays_on_its_rectangle_and_is_closed() {
    // Allowed: two linked multicasts, then the unlinked semaphore multicast to the same
    // rectangle that ends the transaction (ordered after the data: no barrier before it).
    let ok = "noc_async_write_multicast(get_write_ptr(0), dst, 16, 1, true);\n\
              noc_async_write_multicast(get_write_ptr(0), dst, 16, 1, true);\n\
              const uint32_t sem = get_semaphore(0);\n\
              noc_semaphore_set(reinterpret_cast<volatile uint32_t*>(sem), 1);\n\
              noc_semaphore_set_multicast(sem, get_noc_multicast_addr(get_arg_val<uint32_t>(1),\n\
                  get_arg_val<uint32_t>(2), get_arg_val<uint32_t>(3), get_arg_val<uint32_t>(4), sem), 1);\n\
              noc_async_write_barrier();";
    assert_eq!(sender_run(ok, None).unwrap(), (0, 7));
    // A unicast write while the transaction is open.
    let m = expect_err(sender_run(
        "noc_async_write_multicast(get_write_ptr(0), dst, 16, 1, true);\n\
         noc_async_write(get_write_ptr(0), get_noc_addr(get_arg_val<uint32_t>(3), get_arg_val<uint32_t>(4), buf + 16), 16);\n\
         noc_async_write_barrier();",
        None,
    ))
    .to_string();
    assert!(
        m.contains("noc_async_write on core (0,0) writer 'sender' while a linked multicast transaction to NoC"),
        "{m}"
    );
    assert!(
        m.contains("opened by kernel 'sender' is open on NoC 1"),
        "{m}"
    );
    // A multicast to another rectangle (the receiver alone) while it is open.
    let m = expect_err(sender_run(
        "noc_async_write_multicast(get_write_ptr(0), dst, 16, 1, true);\n\
         noc_async_write_multicast(get_write_ptr(0), get_noc_multicast_addr(get_arg_val<uint32_t>(3),\n\
             get_arg_val<uint32_t>(4), get_arg_val<uint32_t>(3), get_arg_val<uint32_t>(4), buf), 16, 1);\n\
         noc_async_write_barrier();",
        None,
    ))
    .to_string();
    assert!(
        m.contains("must be a multicast to the same rectangle"),
        "{m}"
    );
    // The kernel ends with the transaction open.
    let m = expect_err(sender_run(
        "noc_async_write_multicast(get_write_ptr(0), dst, 16, 1, true);\n\
         noc_async_write_barrier();",
        None,
    ))
    .to_string();
    assert!(
        m.contains("writer 'sender' ended with a linked multicast transaction open on NoC 1"),
        "{m}"
    );
}

#[test]
fn a_linked_transaction_holds_the_cores_niu_for_every_kernel_on_its_noc() {
    // The writer (NoC 1) opens a transaction, tells the reader (semaphore 0) and waits for it
    // (semaphore 1) before ending it; the reader's read, on NoC 1 too, is a request of that
    // NIU mid-transaction.
    let writer = "noc_async_write_multicast(get_write_ptr(0), dst, 16, 1, true);\n\
                  noc_semaphore_set(reinterpret_cast<volatile uint32_t*>(get_semaphore(0)), 1);\n\
                  noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(get_semaphore(1)), 1);\n\
                  noc_async_write_multicast(get_write_ptr(0), dst, 16, 1);\n\
                  noc_async_write_barrier();";
    let reader = "noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(get_semaphore(0)), 1);\n\
                  noc_async_read(get_noc_addr(get_arg_val<uint32_t>(3), get_arg_val<uint32_t>(4),\n\
                      get_arg_val<uint32_t>(0)), get_arg_val<uint32_t>(0) + 16, 16);\n\
                  noc_async_read_barrier();\n\
                  noc_semaphore_set(reinterpret_cast<volatile uint32_t*>(get_semaphore(1)), 1);";
    let m = expect_err(sender_run(writer, Some((reader, 1)))).to_string();
    assert!(
        m.contains(
            "noc_async_read on core (0,0) reader 'other' while a linked multicast transaction"
        ),
        "{m}"
    );
    // On the other NoC the reader has its own NIU: allowed.
    assert_eq!(sender_run(writer, Some((reader, 0))).unwrap().1, 7);
}

#[test]
fn more_than_341_runtime_args() {
    let dev = device();
    let cores = [core0()];
    let mut prog = dev.program().unwrap();
    let k = prog
        .add_kernel(&KernelSpec::reader("args", &dm(""), &cores))
        .unwrap();
    let args = vec![0u32; 342];
    let e = expect_err(prog.set_runtime_args(k, CoreCoord::new(0, 0), &args));
    assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    assert!(
        e.message()
            .contains("342 runtime args for kernel 'args' on core (0,0); the limit is 341"),
        "{e}"
    );
    // Unique and common args share the budget.
    prog.set_runtime_args(k, CoreCoord::new(0, 0), &args[..200])
        .unwrap();
    prog.set_common_runtime_args(k, &args[..142]).unwrap();
    let e = expect_err(dev.enqueue(&prog));
    assert!(
        e.message()
            .contains("has 342 runtime args (unique + common); the limit is 341"),
        "{e}"
    );
    prog.set_common_runtime_args(k, &args[..141]).unwrap();
    dev.enqueue(&prog).unwrap();
}

#[test]
fn compile_errors_carry_the_compiler_output() {
    let dev = device();
    let mut prog = dev.program().unwrap();
    let e = expect_err(prog.add_kernel(&KernelSpec::reader(
        "broken",
        &dm("this is not C++;"),
        &[core0()],
    )));
    assert!(matches!(e, Error::Compile(_)), "{e:?}");
    assert!(
        e.message()
            .contains("kernel 'broken' (reader) failed to compile"),
        "{e}"
    );
    assert!(e.message().contains("broken.cpp"), "{e}");
}

#[test]
fn remote_writes_ordered_by_semaphores_are_allowed() {
    // Every push after the writer's signal, every later write after the reader freed the page
    // and said so: allowed in either scheduling order (the race checks order them by the
    // semaphores, not by when the scheduler ran them).
    for receiver_first in [false, true] {
        for rounds in [1, 3] {
            remote_push(receiver_first, rounds, Cb0::Own).unwrap();
        }
    }
}
