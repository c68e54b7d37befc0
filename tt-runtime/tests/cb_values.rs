//! `read_tile_value`: a compute kernel reads u32 values of the pages it waited for (the way a
//! compute kernel learns a count that only a data-movement kernel can read), and the emulator
//! rejects reads outside the waited front or beyond a page.

mod common;

use common::{core0, device, expect_err};
use tt_runtime::{CbSpec, CoreCoord, DataFormat, KernelSpec, TileOp};

/// Writes 3 into word 0 of page 0 and 7 into word 5 of page 1 of cb 0 (64-byte pages), pushes both.
const READER: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    cb_reserve_back(0, 2);
    volatile uint32_t* p = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
    p[0] = 3;
    p[16 + 5] = 7;
    cb_push_back(0, 2);
}
"#;

/// Pushes read_tile_value(0, PAGE, WORD) + read_tile_value(0, 0, 0) empty tiles into cb 16.
const COMPUTE: &str = r#"
#include "api/compute/cb_api.h"
#include "api/compute/pack.h"
void kernel_main() {
    compute_kernel_hw_startup(0, 16);
    cb_wait_front(0, 2);
    const uint32_t n = read_tile_value(0, PAGE, WORD) + read_tile_value(0, 0, 0);
    cb_pop_front(0, 2);
    for (uint32_t i = 0; i < n; ++i) {
        tile_regs_acquire();
        tile_regs_commit();
        cb_reserve_back(16, 1);
        tile_regs_wait();
        pack_tile(0, 16);
        tile_regs_release();
        cb_push_back(16, 1);
    }
}
"#;

/// Pops `n` (arg 0) tiles of cb 16.
const WRITER: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t n = get_arg_val<uint32_t>(0);
    for (uint32_t i = 0; i < n; ++i) {
        cb_wait_front(16, 1);
        cb_pop_front(16, 1);
    }
}
"#;

fn run(page: u32, word: u32, expected: u32) -> tt_runtime::Result<u64> {
    let dev = device();
    let cores = [core0()];
    let mut prog = dev.program()?;
    prog.add_cb(&CbSpec {
        id: 0,
        cores: cores.to_vec(),
        total_size: 128,
        page_size: 64,
        format: DataFormat::Float16B,
    })?;
    prog.add_cb(&CbSpec::tiles(16, &cores, 2, DataFormat::Float16B))?;
    prog.add_kernel(&KernelSpec::reader("reader", READER, &cores))?;
    let c = prog.add_kernel(
        &KernelSpec::compute("compute", COMPUTE, &cores)
            .define("PAGE", &page.to_string())
            .define("WORD", &word.to_string()),
    )?;
    let w = prog.add_kernel(&KernelSpec::writer("writer", WRITER, &cores))?;
    prog.set_runtime_args(w, CoreCoord::new(0, 0), &[expected])?;
    dev.enqueue(&prog)?;
    dev.finish()?;
    Ok(prog.counters(Some(c))?.tile_ops(TileOp::Pack))
}

#[test]
fn compute_reads_values_of_waited_pages() {
    assert_eq!(run(1, 5, 10).unwrap(), 10);
}

#[test]
fn reads_outside_the_waited_front_or_a_page_fail() {
    let m = expect_err(run(2, 0, 3)).to_string();
    assert!(
        m.contains("read_tile_value: reads tile 2 of cb 0 but only 2 page(s) were waited for"),
        "{m}"
    );
    let m = expect_err(run(0, 16, 6)).to_string();
    assert!(
        m.contains("read_tile_value: word 16 is beyond the 64-byte pages of cb 0"),
        "{m}"
    );
}
