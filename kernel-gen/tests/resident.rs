//! Weights resident in L1 across programs (`kernel_gen::plan::resident`) in the shipped
//! SuperPoint programs: which convs keep them, against hand-computed sizes and the L1 they leave,
//! and what their steps become (no senders, CBs in the copies, an even split).

use std::collections::BTreeSet;

use kernel_gen::{compile, variants, Compiled, Grid, Limits};

fn port(grid: Grid) -> Compiled {
    let variant = variants::main_program(640, 480, None, grid);
    compile(&variant.graph, &variant.params).expect("the port program compiles")
}

fn resident(c: &Compiled) -> BTreeSet<&str> {
    c.program
        .buffers
        .iter()
        .filter(|b| b.resident)
        .map(|b| b.name.as_str())
        .collect()
}

/// The step's CB bytes a core outside the copies (no alignment padding: every CB here is a
/// whole number of 2 KiB tiles or 16-byte pages).
fn own_cbs(c: &Compiled) -> u32 {
    c.program
        .steps
        .iter()
        .map(|s| {
            s.cbs
                .iter()
                .filter(|cb| cb.buffer.is_none())
                .map(|cb| cb.pages * cb.page_bytes)
                .sum::<u32>()
        })
        .max()
        .expect("steps")
}

/// Weight and bias bytes, in 2 KiB bf16 tiles: convPb (1×1, 256 → 65) 8 × 3 + 3 tiles = 55,296 B;
/// conv1b, conv2a, conv2b (3×3, 64 → 64) 18 × 2 + 2 = 77,824 B each; conv3a (64 → 128)
/// 18 × 4 + 4 = 155,648 B; conv3b, conv4a, conv4b (128 → 128) 36 × 4 + 4 = 303,104 B. Smallest
/// first, on both grids: convPb and the three 64-channel convs (288,768 B together) fit beside
/// the arena (400 KiB on 12×10, 438 KiB on 11×10: conv1a's output and pool1's over 110 banks)
/// and the largest step's CBs; conv3a would not (that sum plus 155,648 B is over the 1,461,248
/// usable bytes), nor would anything larger. conv1a reads the frame and convPa+convDa is a
/// sliced step of two convs: neither is a candidate.
#[test]
fn the_smallest_convs_keep_their_weights_in_l1_while_they_fit() {
    for grid in [Grid::ETH_DISPATCH, Grid::TENSIX_DISPATCH] {
        smallest_convs_keep_their_weights(grid);
    }
}

fn smallest_convs_keep_their_weights(grid: Grid) {
    let c = port(grid);
    let expected: BTreeSet<&str> = [
        "conv1b.weight",
        "conv1b.bias",
        "conv2a.weight",
        "conv2a.bias",
        "conv2b.weight",
        "conv2b.bias",
        "convPb.weight",
        "convPb.bias",
    ]
    .into();
    assert_eq!(resident(&c), expected);
    let copies: u32 = c
        .program
        .buffers
        .iter()
        .filter(|b| b.resident)
        .map(|b| b.pages * b.page_bytes)
        .sum();
    assert_eq!(copies, 55_296 + 3 * 77_824);
    let usable = Limits::BLACKHOLE.l1_usable();
    assert_eq!(usable, 1_461_248);
    let used = c.program.l1_arena + copies + own_cbs(&c);
    assert!(used <= usable, "{used} > {usable}");
    assert!(
        used + 155_648 > usable,
        "conv3a would fit: {used} + 155648 <= {usable}"
    );
}

/// A resident conv's step has no semaphores and no sender: its weights and bias CBs live in
/// the copies, its reader's `weights_in_l1` is 1 and every core takes an even share of the
/// blocks (9,600 blocks of conv1b on 120 cores: 80 each).
#[test]
fn resident_conv_steps_have_no_senders() {
    let c = port(Grid::ETH_DISPATCH);
    for node in ["conv1b", "conv2a", "conv2b", "convPb"] {
        let step = c.program.step(node).expect("step");
        assert_eq!(step.semaphores, 0, "{node}");
        for (cb, buffer) in [("cb_weights", "weight"), ("cb_bias", "bias")] {
            let found = step.cbs.iter().find(|c| c.name == cb).expect("cb");
            assert_eq!(
                found.buffer,
                Some(format!("{node}.{buffer}")),
                "{node} {cb}"
            );
        }
        let reader = step
            .kernels
            .iter()
            .find(|k| k.role == kernel_gen::Role::Reader)
            .expect("reader");
        let flag = reader
            .compile_args
            .iter()
            .find(|a| a.name == "weights_in_l1")
            .map(|a| a.value);
        assert_eq!(flag, Some(1), "{node}");
    }
    let conv1b = c.program.step("conv1b").expect("conv1b");
    let reader = &conv1b.kernels[0];
    let counts = reader.arg_index("block_count").expect("block_count");
    let per_core = reader.core_args().expect("expands");
    assert_eq!(per_core.len(), 120);
    assert!(per_core
        .iter()
        .all(|c| c.args[counts] == kernel_gen::Arg::Const(80)));
    // A conv that keeps multicasting: conv3b (no copy, and no slot it could be staged in)
    // still has its senders' semaphores.
    assert!(c.program.step("conv3b").expect("conv3b").semaphores > 0);
}
