//! The per-core runtime args a dispatch program states by rule ([`kernel_gen::program::rules`])
//! expand, at load, to exactly the per-core tables the lowering made: for the checked-in
//! programs (the 640×480 main program and its NMS variants), the accurate precision's main
//! program and the main program on the 11×10 grid. Nothing is lost by checking in the rules
//! instead of the tables.

use std::collections::BTreeMap;

use kernel_gen::variants::{self, Variant};
use kernel_gen::{lower, plan, program, Core, CoreArgs, Grid, Precision};

/// Every kernel's per-core args by (step, role) and core: as lowered, and as the program states
/// them.
fn tables(variant: &Variant) -> (usize, usize) {
    let planned = plan::plan(&variant.graph, &variant.params).expect("plans");
    let kir = lower::lower(&planned).expect("lowers");
    let compiled = program::assemble(planned.grid, &planned.buffers, &kir).expect("assembles");
    let by_core = |list: Vec<CoreArgs>| -> BTreeMap<Core, Vec<kernel_gen::Arg>> {
        list.into_iter().map(|c| (c.core, c.args)).collect()
    };
    let (mut kernels, mut cores) = (0, 0);
    for (node, step) in kir.nodes.iter().zip(&compiled.program.steps) {
        assert_eq!(node.node, step.node);
        for (lowered, stated) in node.kernels.iter().zip(&step.kernels) {
            let expanded = stated.core_args().expect("the rules expand");
            let names: Vec<&str> = stated
                .runtime_args
                .iter()
                .map(|a| a.name.as_str())
                .collect();
            assert_eq!(names, lowered.runtime_arg_names, "{}", stated.name);
            assert_eq!(
                by_core(expanded),
                by_core(lowered.runtime_args.clone()),
                "{}: the expanded rules differ from the lowered table",
                stated.name
            );
            kernels += 1;
            cores += lowered.runtime_args.len();
        }
    }
    (kernels, cores)
}

#[test]
fn the_checked_in_programs_expand_to_the_lowered_tables() {
    let (main, nms_variants) = variants::checked_in();
    // 16 steps of 3 kernels (convPa and convDa one step, `convPa+convDa`; pool1, pool2 and pool3
    // fused with their convs) but the identity resize's 2 (no compute kernel).
    assert_eq!(tables(&main), (47, 47 * 120));
    let compiled = kernel_gen::compile(&main.graph, &main.params).expect("compiles");
    for variant in nms_variants(&compiled.program) {
        assert_eq!(tables(&variant), (6, 6 * 120), "{}", variant.name);
    }
}

#[test]
fn other_precisions_and_grids_expand_to_the_lowered_tables() {
    let mut accurate = variants::main_program(640, 480, None, Grid::ETH_DISPATCH);
    accurate.params.precision = Precision::ACCURATE;
    // 20 steps of 3 kernels (Float32 convs are not fused); on 11×10 17 (pool1 and pool2 fused,
    // pool3 not: conv3b's runs of units cross rows there; convPa and convDa one step); the
    // identity resize's step has 2.
    assert_eq!(tables(&accurate).0, 59);
    let eleven = variants::main_program(640, 480, None, Grid::TENSIX_DISPATCH);
    assert_eq!(tables(&eleven).0, 50);
}
