//! `Precision::ACCURATE` compiles the whole SuperPoint graph (640×480) on both grids into
//! programs that pass every check: Float32 activations (4096-byte pages) end to end, conv weight
//! buffers twice the K rows of the port's (bf16 high and low matrices), Float32 bias tiles, and
//! the port's program unchanged in those respects.

mod common;

use common::{chain, Layer};
use kernel_gen::check::CheckError;
use kernel_gen::plan::{plan, Content};
use kernel_gen::{
    compile, variants, CompileError, Compiled, DeviceTensor, Format, Grid, Limits, PlanError,
    PlanParams, Precision,
};

fn accurate(grid: Grid) -> Compiled {
    let mut variant = variants::main_program(640, 480, None, grid);
    variant.params.precision = Precision::ACCURATE;
    compile(&variant.graph, &variant.params).expect("the accurate program compiles and checks")
}

fn port(grid: Grid) -> Compiled {
    let variant = variants::main_program(640, 480, None, grid);
    compile(&variant.graph, &variant.params).expect("the port program compiles")
}

/// Every activation buffer's (name, format, page bytes).
fn activations(c: &Compiled) -> Vec<(String, Format, u32)> {
    c.program
        .buffers
        .iter()
        .filter_map(|b| match &b.content {
            Content::Output {
                tensor: DeviceTensor::Activation { format, .. },
                ..
            } => Some((b.name.clone(), *format, b.page_bytes)),
            _ => None,
        })
        .collect()
}

fn pages(c: &Compiled, name: &str) -> (u32, u32) {
    let b = c
        .program
        .buffers
        .iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("no buffer {name}"));
    (b.pages, b.page_bytes)
}

#[test]
fn the_whole_graph_compiles_at_accurate_on_both_grids() {
    for grid in [Grid::ETH_DISPATCH, Grid::TENSIX_DISPATCH] {
        let acc = accurate(grid);
        let acts = activations(&acc);
        // 8 backbone convs, 3 pools, 2 + 2 head convs.
        assert_eq!(acts.len(), 15, "{acts:?}");
        // The frame is image rows, three copies each: 640 values of 4 or 2 bytes.
        assert_eq!(pages(&acc, "resize"), (480, 3 * 640 * 4));
        assert_eq!(pages(&port(grid), "resize"), (480, 3 * 640 * 2));
        // The dense descriptors are pixel rows: 60×80 pixels = 150 pages of 32 rows of 256
        // values (Float32: 1 KiB a row; bf16: 512 B).
        assert_eq!(pages(&acc, "descriptors_dense"), (150, 32 * 1024));
        assert_eq!(pages(&port(grid), "descriptors_dense"), (150, 16 * 1024));
        for (name, format, page_bytes) in &acts {
            assert_eq!((*format, *page_bytes), (Format::Fp32, 4096), "{name}");
        }
        for (name, format, page_bytes) in activations(&port(grid)) {
            assert_eq!((format, page_bytes), (Format::Bf16, 2048), "{name}");
        }
        // convPa: 128 → 256, 3×3: K = 1152 = 36 tiles, 8 output tiles; hi + lo doubles K. Its
        // output channels are sliced (plan::Split::sliced), at the accurate precision in 4 on
        // 12×10 (groups of 3 columns) and 2 on 11×10 (where groups of 27 cores take 6 blocks),
        // at the port's in 2, so the DRAM pages hold a slice's run in one weight row.
        let slice_tiles = if grid == Grid::ETH_DISPATCH { 2 } else { 4 };
        assert_eq!(
            pages(&acc, "convPa.weight"),
            (2 * 36 * 8 / slice_tiles, slice_tiles * 2048)
        );
        assert_eq!(pages(&port(grid), "convPa.weight"), (36 * 8 / 4, 4 * 2048));
        assert_eq!(pages(&acc, "convPa.bias"), (8, 4096));
        assert_eq!(pages(&port(grid), "convPa.bias"), (8, 2048));
        // Every compute kernel of a conv runs at HiFi4 with an fp32 DST.
        for step in acc.program.steps.iter().filter(|s| s.op == "conv2d") {
            for k in step.kernels.iter().filter(|k| k.fidelity.is_some()) {
                assert_eq!(
                    (k.fidelity, k.fp32_dest_acc),
                    (Some(kernel_gen::Fidelity::HiFi4), Some(true)),
                    "{}",
                    k.name
                );
            }
        }
    }
}

#[test]
fn the_sliced_convs_hold_their_slice_of_the_weights_and_double_buffer() {
    let acc = accurate(Grid::ETH_DISPATCH);
    let cb_pages = |node: &str, cb: &str| {
        acc.program
            .steps
            .iter()
            .find(|s| s.node == node)
            .and_then(|s| s.cbs.iter().find(|c| c.name == cb))
            .map(|c| (c.pages, c.page_bytes))
            .unwrap_or_else(|| panic!("{node}: no {cb}"))
    };
    // convPa in 4 slices of 2 output tiles: 295 KB of resident hi + lo weights (a quarter of
    // the matrix) leave room for two im2col stages (unsliced, 1.18 MB left room for one).
    assert_eq!(cb_pages("convPa", "cb_weights"), (2 * 36 * 2, 2048));
    assert_eq!(cb_pages("convPa", "cb_bias"), (2, 4096));
    assert_eq!(cb_pages("convPa", "cb_im2col"), (2 * 36, 4096));
    assert_eq!(cb_pages("convPa", "cb_out"), (2 * 2, 4096));
    // conv4a (128 → 128) at the accurate precision: 2 slices of 2 output tiles.
    assert_eq!(cb_pages("conv4a", "cb_weights"), (2 * 36 * 2, 2048));
    assert_eq!(cb_pages("conv4a", "cb_im2col"), (2 * 36, 4096));
}

#[test]
fn a_node_reading_another_format_is_refused_by_name() {
    // conv_b at ACCURATE would read conv_a's bf16 output as Float32.
    let layers: &[Layer] = &[("conv_a", 1, 3, 3, true), ("conv_b", 3, 5, 3, true)];
    let params = PlanParams {
        overrides: [("conv_b".to_string(), Precision::ACCURATE)].into(),
        ..PlanParams::default()
    };
    assert_eq!(
        plan(&chain(64, 32, layers), &params).err(),
        Some(PlanError::FormatMismatch {
            node: "conv_b".into(),
            input: "conv_a".into(),
            input_format: Format::Bf16,
            format: Format::Fp32,
        })
    );
}

#[test]
fn l1_overflow_at_accurate_names_the_node_and_its_bytes() {
    let mut variant = variants::main_program(640, 480, None, Grid::ETH_DISPATCH);
    variant.params.precision = Precision::ACCURATE;
    // 900 000 bytes usable instead of 1497 KiB: conv3b (128 → 128 at 160×120, unsliced) is the
    // first node that no longer fits, even single-buffered with row runs.
    variant.params.limits = Limits {
        l1_base: Limits::BLACKHOLE.l1_size - 900_000,
        ..Limits::BLACKHOLE
    };
    match compile(&variant.graph, &variant.params) {
        Err(CompileError::Check(CheckError::L1Overflow {
            node,
            used,
            available,
            ..
        })) => {
            assert_eq!(node, "conv3b");
            // hi + lo weights 2·36·4 bf16 tiles; bias 4, im2col 36, ring 13·4 (161 pixels
            // either side of a block at 160 wide: 6 blocks behind, 6 ahead), zero 1, out 4
            // Float32.
            assert_eq!(used, 2 * 36 * 4 * 2048 + (4 + 36 + 13 * 4 + 1 + 4) * 4096);
            assert_eq!(available, 900_000);
        }
        other => panic!("expected an L1 overflow at conv3b, got {other:?}"),
    }
}

#[test]
fn the_accurate_program_round_trips_through_json_and_emits_a_module() {
    let acc = accurate(Grid::TENSIX_DISPATCH);
    let json = acc.program.to_json().expect("json");
    assert!(
        json.contains("\"format\": \"Fp32\""),
        "activations say Float32"
    );
    let parsed: kernel_gen::DeviceProgram = serde_json::from_str(&json).expect("parses");
    assert_eq!(parsed, acc.program);
    let text = kernel_gen::emit::rust_module(&acc).expect("emits");
    assert!(text.contains("format: Fp32"));
    assert!(text.contains("ConvWeightsHiLo { entry: \"conv1a\".into() }"));
}
