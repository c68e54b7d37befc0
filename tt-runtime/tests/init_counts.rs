//! The emulator counts op inits and format reconfigs by kind (`Counters::inits`), and the timeline
//! model charges each one: a copy kernel with its init and reconfig inside the tile loop against
//! the same kernel with them hoisted, against hand-counted calls.

mod common;

use common::{bf16_values, Pipeline};
use tt_runtime::host::{f32_to_bf16, to_f32_bytes};
use tt_runtime::{Counters, DataFormat, InitKind, KernelRole, PhasedKernel, TimelineModel};

/// Copies the 4 bf16 tiles of cb 0 to cb 16, one DST tile each. Compile args: `in_loop` (1: the
/// copy init before every copy, 0: once before the loop) and `reconfig` before every copy
/// (0: none, 1: `reconfig_data_format_srca(0)`, 2: `(0, 0)`, same format, 3: `(1, 0)`, from
/// cb 1's Float32 to cb 0's bf16, 4: `pack_reconfig_data_format(1, 16)`, Float32 to bf16).
const COPY: &str = r#"
#include "api/compute/tile_move_copy.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/pack.h"
void kernel_main() {
    constexpr uint32_t in_loop = get_compile_time_arg_val(0);
    constexpr uint32_t reconfig = get_compile_time_arg_val(1);
    compute_kernel_hw_startup(0, 16);
    cb_wait_front(0, 4);
    cb_wait_front(1, 1);
    if constexpr (in_loop == 0) {
        copy_tile_init(0);
    }
    for (uint32_t t = 0; t < 4; ++t) {
        if constexpr (reconfig == 1) {
            reconfig_data_format_srca(0);
        } else if constexpr (reconfig == 2) {
            reconfig_data_format_srca(0, 0);
        } else if constexpr (reconfig == 3) {
            reconfig_data_format_srca(1, 0);
        } else if constexpr (reconfig == 4) {
            pack_reconfig_data_format(1, 16);
        }
        if constexpr (in_loop != 0) {
            copy_tile_init(0);
        }
        tile_regs_acquire();
        copy_tile(0, t, 0);
        tile_regs_commit();
        cb_reserve_back(16, 1);
        tile_regs_wait();
        pack_tile(0, 16);
        tile_regs_release();
        cb_push_back(16, 1);
    }
    cb_pop_front(1, 1);
    cb_pop_front(0, 4);
}
"#;

/// Runs COPY; returns the output and the compute kernel's counters.
fn run(in_loop: u32, reconfig: u32) -> (Vec<u8>, Counters) {
    let a: Vec<u8> = bf16_values(4096, 7)
        .iter()
        .flat_map(|&v| f32_to_bf16(v).to_le_bytes())
        .collect();
    let b = to_f32_bytes(&[0.5f32; 1024]);
    let mut p = Pipeline::new(&a, DataFormat::Float16B, COPY);
    p.b = Some((&b, DataFormat::Float32));
    p.out_tiles = 4;
    p.compute_args = vec![in_loop, reconfig];
    match p.run() {
        Ok(r) => r,
        Err(e) => panic!("copy kernel (in_loop {in_loop}, reconfig {reconfig}): {e}"),
    }
}

fn compute_cycles(c: Counters) -> f64 {
    TimelineModel::BLACKHOLE
        .kernel_cycles(&PhasedKernel::flat(KernelRole::Compute, c))
        .total()
}

#[test]
fn an_init_in_the_loop_is_counted_and_charged_once_per_call() {
    let (hoisted_out, hoisted) = run(0, 0);
    let (looped_out, looped) = run(1, 0);
    assert_eq!(hoisted_out, looped_out);
    // compute_kernel_hw_startup is no op init: one copy init against four.
    assert_eq!(hoisted.inits(InitKind::Copy), 1);
    assert_eq!(looped.inits(InitKind::Copy), 4);
    assert_eq!(looped.inits.iter().sum::<u64>(), 4);
    // The model: 3 more copy inits at 40 cycles each, nothing else.
    let more = compute_cycles(looped) - compute_cycles(hoisted);
    assert!((more - 3.0 * 40.0).abs() < 1e-9, "{more}");
}

#[test]
fn a_conditional_reconfig_counts_only_across_formats() {
    let unconditional = run(0, 1).1;
    let same = run(0, 2).1;
    let across = run(0, 3).1;
    let pack = run(0, 4).1;
    assert_eq!(unconditional.inits(InitKind::UnpackReconfig), 4);
    assert_eq!(same.inits(InitKind::UnpackReconfig), 0);
    assert_eq!(across.inits(InitKind::UnpackReconfig), 4);
    assert_eq!(pack.inits(InitKind::PackReconfig), 4);
    assert_eq!(pack.inits(InitKind::UnpackReconfig), 0);
    let base = compute_cycles(run(0, 0).1);
    assert!((compute_cycles(same) - base).abs() < 1e-9);
    let more = compute_cycles(unconditional) - base;
    assert!((more - 4.0 * 35.0).abs() < 1e-9, "{more}");
}
