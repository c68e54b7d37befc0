//! The convs' fused ReLU is the packer's (`pack_relu_config`), checked on the emulator: a conv
//! with ReLU packs, bit for bit, max(+0, the packed output of the same conv without ReLU) — every
//! value at or below zero (-0 too) becomes +0 and every other value keeps all its bits — for the
//! frame conv (whose tilize and transpose packs must not see the ReLU) and the generic conv, at
//! both precisions; and no compute kernel of the chain does SFPU work.

mod common;

use std::collections::BTreeMap;

use common::{bf16_rounded, chain, random_tensor, weight_inputs, weights, Layer};
use kernel_gen::kir::Role;
use kernel_gen::runner::Loaded;
use kernel_gen::{compile, Format, Grid, PlanParams, Precision};
use tt_runtime::TileOp;

/// The output bytes of every conv of `layers` (64×32 on a 3×1 grid; the same weights and input
/// whatever the ReLU flags) and the SFPU tile ops of all their compute kernels.
fn outputs(layers: &[Layer], precision: Precision) -> (BTreeMap<String, Vec<u8>>, u64) {
    let graph = chain(64, 32, layers);
    let params = PlanParams {
        grid: Grid { x: 3, y: 1 },
        precision,
        ..PlanParams::default()
    };
    let compiled = compile(&graph, &params).expect("compiles");
    let dev = common::open(&compiled);
    let loaded = Loaded::load(&dev, &compiled).expect("program loads");
    for (name, bytes) in weight_inputs(&compiled, &weights(layers, 31)) {
        loaded.write(&name, &bytes).expect("weights");
    }
    let x = bf16_rounded(&random_tensor(1, 32, 64, 37));
    loaded
        .write("frame", &common::pack_input("frame", &x, precision.format))
        .expect("input");
    let mut convs = BTreeMap::new();
    for (name, ..) in layers {
        loaded
            .run_nodes(&dev, &[name])
            .expect("runs on the emulator");
        convs.insert(name.to_string(), loaded.read(name).expect("read"));
    }
    let sfpu = loaded
        .counters()
        .expect("counters")
        .iter()
        .flat_map(|s| s.kernels.iter())
        .filter(|k| k.role == Role::Compute)
        .flat_map(|k| k.cores.iter())
        .map(|(_, c)| c.tile_ops(TileOp::Sfpu))
        .sum();
    (convs, sfpu)
}

/// The words (bf16 or f32 bit patterns) of an output.
fn words(bytes: &[u8], format: Format) -> Vec<u32> {
    match format {
        Format::Bf16 => bytes
            .chunks_exact(2)
            .map(|b| u32::from(u16::from_le_bytes([b[0], b[1]])))
            .collect(),
        Format::Fp32 => bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
    }
}

/// ReLU of a packed word: +0 where the value is at or below zero (sign bit set, or ±0), the word
/// itself elsewhere.
fn relu_word(w: u32, format: Format) -> u32 {
    let (sign, magnitude) = match format {
        Format::Bf16 => (0x8000, 0x7FFF),
        Format::Fp32 => (0x8000_0000, 0x7FFF_FFFF),
    };
    if w & sign != 0 || w & magnitude == 0 {
        0
    } else {
        w
    }
}

#[test]
fn fused_relu_is_max_of_zero_and_the_packed_output_without_sfpu_work() {
    let fused: &[Layer] = &[("conv_a", 1, 32, 3, true), ("conv_b", 32, 32, 3, true)];
    let plain_a: &[Layer] = &[("conv_a", 1, 32, 3, false)];
    let plain_b: &[Layer] = &[("conv_a", 1, 32, 3, true), ("conv_b", 32, 32, 3, false)];
    for precision in [Precision::PORT, Precision::ACCURATE] {
        let format = precision.format;
        let (with_relu, sfpu) = outputs(fused, precision);
        assert_eq!(
            sfpu, 0,
            "{format:?}: the fused ReLU is the packer's, no SFPU work"
        );
        for (plain, node) in [(plain_a, "conv_a"), (plain_b, "conv_b")] {
            let (without, _) = outputs(plain, precision);
            let pre = words(&without[node], format);
            let got = words(&with_relu[node], format);
            assert_eq!(got.len(), pre.len());
            let negatives = pre.iter().filter(|w| relu_word(**w, format) == 0).count();
            assert!(
                negatives > pre.len() / 8 && negatives < pre.len() - pre.len() / 8,
                "{node} {format:?}: {negatives} of {} outputs at or below zero: not a test of ReLU",
                pre.len()
            );
            for (i, (g, p)) in got.iter().zip(&pre).enumerate() {
                assert_eq!(
                    *g,
                    relu_word(*p, format),
                    "{node} {format:?} word {i}: without ReLU {p:#x}"
                );
            }
        }
    }
}
