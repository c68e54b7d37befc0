//! The packer's ReLU (`pack_relu_config`) on the emulator, against hand-computed bit patterns:
//! the stage runs on the packed value (after the early conversion: the rounding to bf16, which
//! makes NaN an infinity, or the Float32 identity), turns every datum at or below 0 — negatives,
//! -0, -inf, negative denormals — into +0, lets a Float32 NaN through (it compares false), and
//! costs no SFPU work. The threshold modes compare the packed value with a bf16 threshold.

mod common;

use common::Pipeline;
use tt_runtime::host::{from_f32_bytes, to_f32_bytes};
use tt_runtime::{Counters, DataFormat, Error, TileOp};

/// Tile 0 of cb 0 is copied to DST and packed with the ReLU config of compile args 0 (0 none,
/// 1 zero, 2 min threshold, 3 max threshold) and 1 (the bf16 threshold); tile 1 after
/// `ReluConfig::none()`.
const COPY_RELU: &str = r#"
#include "api/compute/tile_move_copy.h"
#include "api/compute/pack.h"
void kernel_main() {
    constexpr uint32_t mode = get_compile_time_arg_val(0);
    constexpr uint32_t threshold = get_compile_time_arg_val(1);
    constexpr ReluConfig config = mode == 0   ? ReluConfig::none()
                                  : mode == 1 ? ReluConfig::zero()
                                  : mode == 2 ? ReluConfig::min_threshold(threshold)
                                              : ReluConfig::max_threshold(threshold);
    compute_kernel_hw_startup(0, 16);
    copy_tile_init(0);
    cb_wait_front(0, 2);
    pack_relu_config(config);
    for (uint32_t t = 0; t < 2; ++t) {
        tile_regs_acquire();
        copy_tile(0, t, 0);
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(16, 1);
        pack_tile(0, 16);
        cb_push_back(16, 1);
        tile_regs_release();
        pack_relu_config(ReluConfig::none());
    }
    cb_pop_front(0, 2);
}
"#;

const NAN: u32 = 0x7FC0_0000;
const NEG_NAN: u32 = 0xFFC0_0000;
const TIE: f32 = 1.0 + 1.0 / 256.0; // halfway between bf16 0x3F80 and 0x3F81: rounds to 0x3F81

/// Runs `x` (the first datums of tile 0, tile 1 a copy) through COPY_RELU from an fp32 DST,
/// unpacked straight into it (through SrcA they would be cut to TF32).
fn run(
    mode: u32,
    threshold: u16,
    x: &[f32],
    out: DataFormat,
) -> Result<(Vec<u8>, Counters), Error> {
    let mut input = vec![0.0f32; 2048];
    input[..x.len()].copy_from_slice(x);
    input[1024..1024 + x.len()].copy_from_slice(x);
    let bytes = to_f32_bytes(&input);
    let mut p = Pipeline::new(&bytes, DataFormat::Float32, COPY_RELU);
    p.fp32_dest = true;
    p.unpack_to_dest_fp32 = vec![0];
    p.out_format = out;
    p.out_tiles = 2;
    p.compute_args = vec![mode, u32::from(threshold)];
    p.run()
}

/// The bf16 bit patterns of tile 0's and tile 1's first `x.len()` datums.
fn bf16_bits(mode: u32, threshold: u16, x: &[f32]) -> (Vec<u16>, Vec<u16>) {
    let (out, _) = run(mode, threshold, x, DataFormat::Float16B).unwrap();
    let bits: Vec<u16> = out
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    (
        bits[..x.len()].to_vec(),
        bits[1024..1024 + x.len()].to_vec(),
    )
}

fn f32_bits(mode: u32, threshold: u16, x: &[f32]) -> Vec<u32> {
    let (out, _) = run(mode, threshold, x, DataFormat::Float32).unwrap();
    from_f32_bytes(&out)[..x.len()]
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

fn special_inputs() -> Vec<f32> {
    vec![
        -3.0,
        -0.0,
        0.0,
        1.0e-40,  // a positive fp32 denormal
        -1.0e-40, // a negative one
        2.5,
        TIE,
        -TIE,
        3.0e38, // 0x7F61B1E6
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::from_bits(NAN),
        f32::from_bits(NEG_NAN),
        f32::MIN_POSITIVE, // 0x00800000, the smallest normal
    ]
}

#[test]
fn zero_relu_to_bf16_zeroes_everything_at_or_below_zero() {
    let (relu, plain) = bf16_bits(1, 0, &special_inputs());
    assert_eq!(
        relu,
        vec![
            0x0000, 0x0000, 0x0000, 0x0000, 0x0000, 0x4020, 0x3F81, 0x0000, 0x7F62, 0x7F80, 0x0000,
            0x7F80, 0x0000, 0x0080
        ],
        "-3, -0, +0, +denormal, -denormal, 2.5, tie, -tie, 3e38, inf, -inf, NaN (+inf), -NaN \
         (-inf), min normal"
    );
    // The same datums packed after ReluConfig::none(): the packer's plain rounding, where -0
    // and denormals become +0 and NaN the infinity of its sign.
    assert_eq!(
        plain,
        vec![
            0xC040, 0x0000, 0x0000, 0x0000, 0x0000, 0x4020, 0x3F81, 0xBF81, 0x7F62, 0x7F80, 0xFF80,
            0x7F80, 0xFF80, 0x0080
        ]
    );
}

#[test]
fn zero_relu_to_float32_keeps_every_bit_of_positives() {
    let fine = 1.0 + 2f32.powi(-23);
    let x = [
        -3.0,
        -0.0,
        1.0e-40,
        -1.0e-40,
        fine,
        -fine,
        f32::from_bits(NAN),
        f32::from_bits(NEG_NAN),
    ];
    // The Float32 pack from an fp32 DST is the identity, so the positive denormal stays (it is
    // above 0) and NaN compares false and passes.
    assert_eq!(
        f32_bits(1, 0, &x),
        vec![0, 0, 0x0001_16C2, 0, fine.to_bits(), 0, NAN, NEG_NAN]
    );
}

#[test]
fn packer_relu_is_no_sfpu_work() {
    let (_, counters) = run(1, 0, &[-1.0, 1.0], DataFormat::Float16B).unwrap();
    assert_eq!(counters.tile_ops(TileOp::Sfpu), 0);
    assert_eq!(counters.tile_ops(TileOp::Pack), 2);
}

#[test]
fn min_threshold_compares_the_packed_value() {
    // Threshold 1.0 (0x3F80). 1 + 2^-9 is above 1.0 in fp32 but packs to 1.0, so it is zeroed;
    // the tie packs to 0x3F81, above the threshold, and passes.
    let x = [0.5, 1.0, 1.0 + 1.0 / 512.0, TIE, 2.0, -5.0, f32::INFINITY];
    let (relu, _) = bf16_bits(2, 0x3F80, &x);
    assert_eq!(relu, vec![0, 0, 0, 0x3F81, 0x4000, 0, 0x7F80]);
}

#[test]
fn max_threshold_clamps_to_zero_and_the_threshold() {
    // Threshold 2.0 (0x4000); 2 + 2^-7 packs to 0x4001, above it.
    let x = [-1.0, -0.0, 1.5, 2.0, 2.0 + 1.0 / 128.0, 3.0, f32::INFINITY];
    let (relu, _) = bf16_bits(3, 0x4000, &x);
    assert_eq!(relu, vec![0, 0, 0x3FC0, 0x4000, 0x4000, 0x4000, 0x4000]);
}

#[test]
fn negative_threshold_is_refused() {
    match run(2, 0x8000, &[1.0], DataFormat::Float16B) {
        Err(Error::Kernel(m)) => {
            assert!(
                m.contains("pack_relu_config: threshold 0x8000 (bf16) is negative"),
                "{m}"
            );
        }
        other => panic!("expected a kernel error, got {:?}", other.map(|_| ())),
    }
}

/// compute_kernel_hw_startup configures the packer afresh: no ReLU until pack_relu_config again.
const RELU_THEN_STARTUP: &str = r#"
#include "api/compute/tile_move_copy.h"
#include "api/compute/pack.h"
void kernel_main() {
    compute_kernel_hw_startup(0, 16);
    pack_relu_config(ReluConfig::zero());
    compute_kernel_hw_startup(0, 16);
    copy_tile_init(0);
    cb_wait_front(0, 1);
    tile_regs_acquire();
    copy_tile(0, 0, 0);
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(16, 1);
    pack_tile(0, 16);
    cb_push_back(16, 1);
    tile_regs_release();
    cb_pop_front(0, 1);
}
"#;

#[test]
fn hw_startup_clears_the_relu() {
    let mut input = vec![0.0f32; 1024];
    input[0] = -3.0;
    let bytes = to_f32_bytes(&input);
    let mut p = Pipeline::new(&bytes, DataFormat::Float32, RELU_THEN_STARTUP);
    p.fp32_dest = true;
    let (out, _) = p.run().unwrap();
    assert_eq!(
        u16::from_le_bytes([out[0], out[1]]),
        0xC040,
        "-3 packs as -3"
    );
}
