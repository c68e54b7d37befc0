//! The writer's views of the row above (`plan::writer_views`, `conv2d/views_above.cpp.tera`) on
//! the emulator: a shifted-view conv whose writer builds the views above each core's first block
//! writes the same bytes as the same conv whose reader builds them all
//! (`PlanParams::views_on_reader`), plain and with its pool fused, over runs longer than an
//! image row that start mid-row, runs of one or two blocks (shorter than the row the writer
//! builds views for), cores whose row above is outside the image, and the two full grids; and
//! it meets the PCC gate against the reference. The emulator fails a kernel that waits for a
//! page no one pushes or pushes pages no one takes, so the two kernels' signals are checked too.

mod common;

use common::{bf16_rounded, chain, pcc, random_tensor, run, weight_inputs, weights, Layer};
use kernel_gen::layout::{unpack_activation, ActivationShape};
use kernel_gen::plan::writer_views::ABOVE_CB;
use kernel_gen::{compile, Format, Grid, PlanParams};
use superpoint_graph::reference::{conv::conv2d, pool::max_pool2};

/// Runs the chain `layers` on a `width`×`height` input of its second layer (64 channels) with
/// the views above on the writer or, with `views_on_reader`, all on the reader: whether the plan
/// gave the writer the views of `step`, and the bytes of `output`.
fn run_views(
    (width, height): (usize, usize),
    layers: &[Layer],
    grid: Grid,
    views_on_reader: bool,
    (step, output): (&str, &str),
) -> (bool, Vec<u8>) {
    let graph = chain(width, height, layers);
    // Activations in L1, as the shipped programs: the conv keeps its weights there (no
    // multicast on its writer).
    let params = PlanParams {
        grid,
        l1_activations: true,
        views_on_reader,
        ..PlanParams::default()
    };
    let compiled = compile(&graph, &params).expect("compiles");
    let on_writer = compiled
        .program
        .step(step)
        .is_some_and(|s| s.cbs.iter().any(|cb| cb.name == ABOVE_CB.1));
    let ws = weights(layers, 5);
    let x = bf16_rounded(&random_tensor(64, height, width, 6));
    let mut inputs = weight_inputs(&compiled, &ws);
    inputs.insert(
        layers[0].0.to_string(),
        common::pack_input(layers[0].0, &x, Format::Bf16),
    );
    let dev = common::open(&compiled);
    // A fused pool's step is its conv's.
    assert!(compiled.program.step(output).is_none() || output == step);
    let (buffers, _) = run(&dev, &compiled, &inputs, &[step]);
    (on_writer, buffers[output].clone())
}

/// Asserts that `step` of `layers` at `size` on `grid` gives the writer the views above, that
/// its output equals the reader-only one bit for bit and that it meets the PCC gate against
/// the reference conv (and pool, for a fused pool `output`).
fn assert_same_views(size: (usize, usize), layers: &[Layer], grid: Grid, step: (&str, &str)) {
    let (on_writer, got) = run_views(size, layers, grid, false, step);
    let (on_reader, reader_only) = run_views(size, layers, grid, true, step);
    assert!(
        on_writer && !on_reader,
        "{step:?}: the writer builds the views above"
    );
    assert_eq!(got, reader_only, "{step:?} on {}x{}", grid.x, grid.y);
    let ws = weights(layers, 5);
    let x = bf16_rounded(&random_tensor(64, size.1, size.0, 6));
    let (_, _, out, kernel, relu) = layers[1];
    let mut expected = conv2d(&x, &ws[layers[1].0], kernel / 2, relu);
    if step.1 != step.0 {
        expected = max_pool2(&expected);
    }
    let shape = ActivationShape {
        channels: out,
        height: expected.height,
        width: expected.width,
        format: Format::Bf16,
    };
    let unpacked = unpack_activation(&got, shape).expect("output size");
    let r = pcc(&unpacked.data, &expected.data);
    println!(
        "{step:?} {}x{} on {}x{}: PCC {r:.12} ({} values)",
        size.0,
        size.1,
        grid.x,
        grid.y,
        expected.data.len()
    );
    assert!(r >= 0.9999, "{step:?}: PCC {r}");
}

const PLAIN: &[Layer] = &[("input64", 1, 64, 3, true), ("conv", 64, 64, 3, true)];
const POOLED: &[Layer] = &[
    ("input64", 1, 64, 3, true),
    ("conv", 64, 64, 3, true),
    ("pool", 0, 0, 0, false),
];

/// 160×256 (5 blocks an image row, 1280 blocks) on 12×10: 10 or 11 blocks a core, runs longer
/// than a row that start mid-row (the first cores' rows above are outside the image); 640×32
/// (20 blocks a row) on 11×10: 5 or 6 blocks a core, runs shorter than the row.
#[test]
fn writer_views_equal_reader_views_for_a_plain_conv() {
    assert_same_views((160, 256), PLAIN, Grid::ETH_DISPATCH, ("conv", "conv"));
    assert_same_views((640, 32), PLAIN, Grid { x: 11, y: 10 }, ("conv", "conv"));
}

/// The same with the 2×2 pool fused (the writer builds every view above before its first pooled
/// tile): 256×128 (8 blocks a row) on 11×10, units that start mid pooled row, spans of two or
/// three image rows; 640×32 on 12×10, one or two units a core, spans shorter than a row.
#[test]
fn writer_views_equal_reader_views_with_the_pool_fused() {
    assert_same_views((256, 128), POOLED, Grid { x: 11, y: 10 }, ("conv", "pool"));
    assert_same_views((640, 32), POOLED, Grid::ETH_DISPATCH, ("conv", "pool"));
}
