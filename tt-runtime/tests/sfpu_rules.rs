//! SFPU and max-pool rules the emulator takes from Tenstorrent's simulator (ttsim) and the pinned
//! LLK, each against hand-computed values (docs/ttsim.md, "Emulator audit"): div_unary_tile
//! multiplies by its scalar; binary_max/min and the MAX reduce order values by sign and magnitude;
//! an SFPU result stored into a bf16 DST keeps its top 16 bits unless the LLK rounds first; the MAX
//! reduce ignores math fidelity and reads a zero datum as +0; an op in `VectorMode::R` or `C`
//! works on two of the tile's four faces, as tt-llk's vector modes walk them, and counts as half
//! a tile; a row-wise MAX reduce is counted apart from the other reduces (it costs more on
//! Blackhole).

mod common;

use common::{expect_err, Pipeline};
use tt_runtime::host::{face_index, from_bf16_bytes, from_f32_bytes, to_bf16_bytes, to_f32_bytes};
use tt_runtime::{DataFormat, MathFidelity, SfpuOp, TileOp};

// Tile 0 of cb 0 (and tile 1 for the binary ops) goes through OP; the result is packed from DST 0.
const SFPU: &str = r#"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_unary/eltwise_unary.h"
#include "api/compute/eltwise_unary/sqrt.h"
#include "api/compute/eltwise_unary/binop_with_scalar.h"
#include "api/compute/binary_max_min.h"
#include "api/compute/eltwise_binary_sfpu.h"
void kernel_main() {
    init_sfpu(0, 16);
    cb_wait_front(0, 2);
    tile_regs_acquire();
    copy_tile(0, 0, 0);
    copy_tile(0, 1, 1);
    OP;
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(16, 1);
    pack_tile(0, 16);
    cb_push_back(16, 1);
    tile_regs_release();
    cb_pop_front(0, 2);
}
"#;

/// Runs `op` on tile x (and tile y), both Float32 with an fp32 DST, and returns the output bits.
fn sfpu_fp32(op: &str, x: &[f32], y: &[f32]) -> Vec<u32> {
    let mut input = vec![0.0f32; 2048];
    input[..x.len()].copy_from_slice(x);
    input[1024..1024 + y.len()].copy_from_slice(y);
    let bytes = to_f32_bytes(&input);
    let src = SFPU.replace("OP;", &format!("{op};"));
    let mut p = Pipeline::new(&bytes, DataFormat::Float32, &src);
    p.fp32_dest = true;
    p.out_format = DataFormat::Float32;
    let (out, _) = p.run().unwrap();
    from_f32_bytes(&out).iter().map(|v| v.to_bits()).collect()
}

/// Runs `op` on Float16_b tiles x and y with a bf16 DST and returns the output values.
fn sfpu_bf16(op: &str, x: &[f32], y: &[f32]) -> Vec<f32> {
    let mut input = vec![0.0f32; 2048];
    input[..x.len()].copy_from_slice(x);
    input[1024..1024 + y.len()].copy_from_slice(y);
    let bytes = to_bf16_bytes(&input);
    let src = SFPU.replace("OP;", &format!("{op};"));
    let p = Pipeline::new(&bytes, DataFormat::Float16B, &src);
    let (out, _) = p.run().unwrap();
    from_bf16_bytes(&out)
}

#[test]
fn div_unary_tile_multiplies_by_its_scalar() {
    // The LLK computes val * parameter: ttnn passes the divisor's reciprocal. 0.5 here halves.
    let op = format!(
        "binop_with_scalar_tile_init(); div_unary_tile(0, 0x{:08X}u)",
        0.5f32.to_bits()
    );
    let out = sfpu_fp32(&op, &[6.0, -3.0], &[]);
    assert_eq!(&out[..2], &[3.0f32.to_bits(), (-1.5f32).to_bits()]);
}

#[test]
fn binary_max_and_min_order_by_sign_and_magnitude() {
    let nan = f32::from_bits(0x7FC0_0000);
    let negative_nan = f32::from_bits(0xFFC0_0000);
    let x = [-0.0, 0.0, nan, negative_nan, -1.0];
    let y = [0.0, -0.0, 1.0, 1.0, -2.0];
    let max = sfpu_fp32("binary_max_tile_init(); binary_max_tile(0, 1, 0)", &x, &y);
    assert_eq!(
        &max[..5],
        &[
            0x0000_0000,
            0x0000_0000,
            0x7FC0_0000,
            1.0f32.to_bits(),
            (-1.0f32).to_bits()
        ],
        "max: +0 above -0 either way round, +NaN above everything, -NaN below everything"
    );
    let min = sfpu_fp32("binary_min_tile_init(); binary_min_tile(0, 1, 0)", &x, &y);
    assert_eq!(
        &min[..5],
        &[
            0x8000_0000,
            0x8000_0000,
            1.0f32.to_bits(),
            0xFFC0_0000,
            (-2.0f32).to_bits()
        ]
    );
}

#[test]
fn sfpu_results_in_a_bf16_dst_keep_their_top_16_bits() {
    // 1 + 2^-8 + 2^-9 is 0.75 of a bf16 ulp above 1.0: the store truncates it to 1.0 (rounding to
    // nearest would give 1.0078125), and -1.005859375 to -1.0.
    let p = (2f32.powi(-8) + 2f32.powi(-9)).to_bits();
    let out = sfpu_bf16(
        &format!("binop_with_scalar_tile_init(); add_unary_tile(0, 0x{p:08X}u)"),
        &[1.0],
        &[],
    );
    assert_eq!(out[0], 1.0);
    let out = sfpu_bf16(
        &format!("binop_with_scalar_tile_init(); sub_unary_tile(0, 0x{p:08X}u)"),
        &[-1.0],
        &[],
    );
    assert_eq!(out[0], -1.0);
}

#[test]
fn add_binary_tile_rounds_to_nearest_even_only_when_asked() {
    // 1.0078125 + 2^-8 and 1.0 + 2^-8 are both halfway between two bf16 values.
    let x = [1.0 + 2f32.powi(-7), 1.0];
    let y = [2f32.powi(-8), 2f32.powi(-8)];
    let default = sfpu_bf16("add_binary_tile_init(); add_binary_tile(0, 1, 0)", &x, &y);
    assert_eq!(&default[..2], &[1.0 + 2f32.powi(-7), 1.0], "truncated");
    let even = sfpu_bf16(
        "add_binary_tile_init(); add_binary_tile<DstRoundingMode::NearestEven>(0, 1, 0)",
        &x,
        &y,
    );
    assert_eq!(
        &even[..2],
        &[1.0 + 2f32.powi(-6), 1.0],
        "ties to the even neighbour"
    );
}

#[test]
fn sqrt_into_a_bf16_dst_rounds_zero_to_plus_zero() {
    // sqrt converts with RoundMode::Nearest before the store (SFP_STOCH_RND): -0 becomes +0.
    let out = sfpu_bf16("sqrt_tile_init(); sqrt_tile(0)", &[-0.0, 4.0], &[]);
    assert_eq!(out[0].to_bits(), 0);
    assert_eq!(out[1], 2.0);
}

const REDUCE_MAX: &str = r#"
#include "api/compute/reduce.h"
void kernel_main() {
    compute_kernel_hw_startup(0, 1, 16);
    reduce_init<PoolType::MAX, ReduceDim::REDUCE_ROW>(0, 1, 16);
    cb_wait_front(0, 1);
    cb_wait_front(1, 1);
    tile_regs_acquire();
    reduce_tile<PoolType::MAX, ReduceDim::REDUCE_ROW>(0, 1, 0, 0, 0);
    reduce_uninit();
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(16, 1);
    pack_tile(0, 16);
    cb_push_back(16, 1);
    tile_regs_release();
}
"#;

fn reduce_max(data: &[f32], scaler: f32) -> tt_runtime::Result<Vec<f32>> {
    Ok(reduce_counted(REDUCE_MAX, data, scaler)?.0)
}

/// Runs the reduce kernel `src` on tile `data` with every scaler element `scaler`; returns the
/// output and the counters.
fn reduce_counted(
    src: &str,
    data: &[f32],
    scaler: f32,
) -> tt_runtime::Result<(Vec<f32>, tt_runtime::Counters)> {
    let a = to_f32_bytes(data);
    let b = to_f32_bytes(&[scaler; 1024]);
    let mut p = Pipeline::new(&a, DataFormat::Float32, src);
    p.b = Some((&b[..], DataFormat::Float32));
    p.fp32_dest = true;
    p.out_format = DataFormat::Float32;
    p.fidelity = MathFidelity::LoFi;
    let (out, counters) = p.run()?;
    Ok((from_f32_bytes(&out), counters))
}

/// `reduce_tile<MAX, REDUCE_ROW>` counts as `TileOp::ReduceMaxRow`, the column MAX and the row
/// SUM as `TileOp::Reduce` (the timeline model charges the first its measured 97.94 cycles).
#[test]
fn a_row_max_reduce_is_counted_apart() {
    let count = |pool: &str, dim: &str| {
        let src = REDUCE_MAX
            .replace("PoolType::MAX", &format!("PoolType::{pool}"))
            .replace("ReduceDim::REDUCE_ROW", &format!("ReduceDim::{dim}"));
        let (_, c) = reduce_counted(&src, &[1.0; 1024], 1.0).unwrap();
        (c.tile_ops(TileOp::ReduceMaxRow), c.tile_ops(TileOp::Reduce))
    };
    assert_eq!(count("MAX", "REDUCE_ROW"), (1, 0));
    assert_eq!(count("MAX", "REDUCE_COL"), (0, 1));
    assert_eq!(count("SUM", "REDUCE_ROW"), (0, 1));
}

#[test]
fn max_reduce_ignores_fidelity_and_reads_zeros_as_plus_zero() {
    let mut data = vec![-1.0f32; 1024];
    // Row 0: one value with the 10th (last TF32) mantissa bit set, which LoFi's 4-bit SrcA
    // phase would drop. Row 1: only zeros of either sign.
    let fine = 1.0 + 2f32.powi(-10);
    data[face_index(0, 5)] = fine;
    for j in 0..32 {
        data[face_index(1, j)] = if j % 2 == 0 { -0.0 } else { 0.0 };
    }
    let out = reduce_max(&data, 1.0).unwrap();
    assert_eq!(out[face_index(0, 0)], fine);
    assert_eq!(out[face_index(1, 0)].to_bits(), 0, "+0, not -0");
    assert_eq!(out[face_index(2, 0)], -1.0);
}

#[test]
fn max_reduce_with_a_scaler_other_than_one_is_refused() {
    let err = expect_err(reduce_max(&[1.0; 1024], 2.0)).to_string();
    assert!(
        err.contains("MAX with a scaler of 2") && err.contains("GMPOOL"),
        "{err}"
    );
}

/// Runs `op` on Float32 tiles x and y (fp32 DST) and returns the output values and the SFPU work
/// counted, in faces.
fn sfpu_counted(op: &str, x: f32, y: f32) -> tt_runtime::Result<(Vec<f32>, u64)> {
    let (out, counters) = sfpu_run(op, x, y)?;
    Ok((out, counters.sfpu_faces.iter().sum()))
}

/// Runs `op` on Float32 tiles x and y (fp32 DST): the output values and the counters.
fn sfpu_run(op: &str, x: f32, y: f32) -> tt_runtime::Result<(Vec<f32>, tt_runtime::Counters)> {
    let input = [vec![x; 1024], vec![y; 1024]].concat();
    let bytes = to_f32_bytes(&input);
    let src = SFPU.replace("OP;", &format!("{op};"));
    let mut p = Pipeline::new(&bytes, DataFormat::Float32, &src);
    p.fp32_dest = true;
    p.out_format = DataFormat::Float32;
    let (out, counters) = p.run()?;
    Ok((from_f32_bytes(&out), counters))
}

/// Binary max and min count as `SfpuOp::Max` (the pinned LLK runs them through SFPLOADMACRO, 3
/// cycles a row), the other two-operand ops as `SfpuOp::Binary` (plain loops, 6 a row).
#[test]
fn binary_max_is_counted_apart_from_the_other_two_operand_ops() {
    let faces = |op: &str| {
        let (_, c) = sfpu_run(op, 1.0, 2.0).unwrap();
        (
            c.sfpu_faces[SfpuOp::Max as usize],
            c.sfpu_faces[SfpuOp::Binary as usize],
        )
    };
    assert_eq!(
        faces("binary_max_tile_init(); binary_max_tile(0, 1, 0)"),
        (4, 0)
    );
    assert_eq!(
        faces("binary_min_tile_init(); binary_min_tile(0, 1, 0)"),
        (4, 0)
    );
    assert_eq!(
        faces("add_binary_tile_init(); add_binary_tile(0, 1, 0)"),
        (0, 4)
    );
    assert_eq!(
        faces("sub_binary_tile_init(); sub_binary_tile(0, 1, 0)"),
        (0, 4)
    );
}

/// The faces (0 top-left, 1 top-right, 2 bottom-left, 3 bottom-right) whose every element of
/// `out` is `value`.
fn faces_equal_to(out: &[f32], value: f32) -> Vec<u32> {
    (0..4u32)
        .filter(|&f| {
            (0..256u32).all(|k| {
                let (i, j) = (f / 2 * 16 + k / 16, f % 2 * 16 + k % 16);
                out[face_index(i as usize, j as usize)] == value
            })
        })
        .collect()
}

/// tt-llk's `_llk_math_eltwise_sfpu_apply_vector_mode_` (Blackhole, pinned): RC walks the four
/// faces, R faces 0 and 1 (rows 0-15), C faces 0 and 2 (columns 0-15); the faces left out keep
/// their values. exp(0) = 1 where the op ran, 0 where it did not; max(-1, 3) = 3 likewise.
#[test]
fn vector_modes_work_on_their_faces_and_count_them() {
    let exp = |mode: &str| {
        sfpu_counted(
            &format!("exp_tile_init(); exp_tile(0, VectorMode::{mode})"),
            0.0,
            0.0,
        )
        .unwrap()
    };
    let (out, faces) = exp("RC");
    assert_eq!((faces_equal_to(&out, 1.0), faces), (vec![0, 1, 2, 3], 4));
    let (out, faces) = exp("R");
    assert_eq!((faces_equal_to(&out, 1.0), faces), (vec![0, 1], 2));
    assert_eq!(faces_equal_to(&out, 0.0), vec![2, 3]);
    let (out, faces) = exp("C");
    assert_eq!((faces_equal_to(&out, 1.0), faces), (vec![0, 2], 2));
    assert_eq!(faces_equal_to(&out, 0.0), vec![1, 3]);
    let (out, faces) = sfpu_counted(
        "binary_max_tile_init(); binary_max_tile(0, 1, 0, VectorMode::R)",
        -1.0,
        3.0,
    )
    .unwrap();
    assert_eq!((faces_equal_to(&out, 3.0), faces), (vec![0, 1], 2));
    assert_eq!(faces_equal_to(&out, -1.0), vec![2, 3]);
    let (out, faces) =
        sfpu_counted("recip_tile_init(); recip_tile(0, VectorMode::C)", 4.0, 0.0).unwrap();
    assert_eq!((faces_equal_to(&out, 0.25), faces), (vec![0, 2], 2));
    assert_eq!(faces_equal_to(&out, 4.0), vec![1, 3]);
}

/// The modes whose face walk is the op's own (None, RC_custom) are not emulated: refused.
#[test]
fn other_vector_modes_are_refused() {
    let err = expect_err(sfpu_counted(
        "exp_tile_init(); exp_tile(0, VectorMode::None)",
        0.0,
        0.0,
    ))
    .to_string();
    assert!(
        err.contains("exp_tile") && err.contains("vector mode"),
        "{err}"
    );
}
