//! Compute numerics on the emulator, each against hand-computed values: element-wise add, the
//! packer's rounding, bf16 vs fp32 DST accumulation, matmul math fidelity, SFPU ops, tilize,
//! untilize and transpose. (Float32 through SrcA and unpacked to DST: `src_registers.rs`.)

mod common;

use common::{bf16_values, Pipeline};
use tt_runtime::host::{
    face_index, from_bf16_bytes, from_f32_bytes, tilize, to_bf16_bytes, to_f32_bytes, untilize,
};
use tt_runtime::{DataFormat, MathFidelity, TileOp};

const ADD: &str = r#"
#include "api/compute/eltwise_binary.h"
#include "api/compute/tile_move_copy.h"
void kernel_main() {
    constexpr uint32_t n = get_compile_time_arg_val(0);
    compute_kernel_hw_startup(0, 1, 16);
    add_tiles_init(0, 1);
    cb_wait_front(0, n);
    cb_wait_front(1, n);
    for (uint32_t i = 0; i < n; ++i) {
        tile_regs_acquire();
        add_tiles(0, 1, i, i, 0);
        tile_regs_commit();
        tile_regs_wait();
        cb_reserve_back(16, 1);
        pack_tile(0, 16);
        cb_push_back(16, 1);
        tile_regs_release();
    }
    cb_pop_front(0, n);
    cb_pop_front(1, n);
}
"#;

#[test]
fn elementwise_add() {
    let a: Vec<f32> = (0..2048).map(|i| (i % 64) as f32 * 0.5).collect();
    let b: Vec<f32> = (0..2048).map(|i| -((i % 7) as f32)).collect();
    let (ab, bb) = (to_bf16_bytes(&a), to_bf16_bytes(&b));
    let mut p = Pipeline::new(&ab, DataFormat::Float16B, ADD);
    p.b = Some((&bb, DataFormat::Float16B));
    p.out_tiles = 2;
    p.compute_args = vec![2];
    let (out, counters) = p.run().unwrap();
    let out = from_bf16_bytes(&out);
    for (i, v) in out.iter().enumerate() {
        // Sums of halves in [-6, 31.5] are exact in bf16.
        assert_eq!(*v, (i % 64) as f32 * 0.5 - (i % 7) as f32, "element {i}");
    }
    assert_eq!(counters.tile_ops(TileOp::Add), 2);
    assert_eq!(counters.tile_ops(TileOp::Pack), 2);
}

const COPY: &str = r#"
#include "api/compute/tile_move_copy.h"
void kernel_main() {
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
fn packer_rounds_ties_away_from_zero_and_flushes_denormals() {
    let mut input = vec![0.0f32; 1024];
    input[0] = 1.0 + 1.0 / 256.0; // halfway between 0x3F80 and 0x3F81
    input[1] = -(1.0 + 1.0 / 256.0);
    input[2] = 1.0 + 3.0 / 256.0; // halfway between 0x3F81 and 0x3F82
    input[3] = 1.0e-40; // an fp32 denormal
    input[4] = 1.0 + 1.0 / 512.0; // below halfway
    input[5] = 2.5; // exact
    let bytes = to_f32_bytes(&input);
    let mut p = Pipeline::new(&bytes, DataFormat::Float32, COPY);
    p.fp32_dest = true;
    let (out, _) = p.run().unwrap();
    let bits: Vec<u16> = out
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    assert_eq!(
        bits[0], 0x3F81,
        "a tie rounds away from zero (not to even 0x3F80)"
    );
    assert_eq!(bits[1], 0xBF81);
    assert_eq!(bits[2], 0x3F82);
    assert_eq!(bits[3], 0x0000, "denormals flush to zero");
    assert_eq!(bits[4], 0x3F80);
    assert_eq!(bits[5], 0x4020);
}

const MATMUL: &str = r#"
#include "api/compute/matmul.h"
void kernel_main() {
    constexpr uint32_t kt = get_compile_time_arg_val(0);
    compute_kernel_hw_startup<SrcOrder::Reverse>(0, 1, 16);
    matmul_init(0, 1);
    cb_wait_front(0, kt);
    cb_wait_front(1, kt);
    tile_regs_acquire();
    for (uint32_t k = 0; k < kt; ++k) {
        matmul_tiles(0, 1, k, k, 0);
    }
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(16, 1);
    pack_tile(0, 16);
    cb_push_back(16, 1);
    tile_regs_release();
    cb_pop_front(0, kt);
    cb_pop_front(1, kt);
}
"#;

fn matmul(a: &[f32], b: &[f32], kt: u32, fidelity: MathFidelity, fp32_dest: bool) -> Vec<f32> {
    let (ab, bb) = (to_bf16_bytes(a), to_bf16_bytes(b));
    let mut p = Pipeline::new(&ab, DataFormat::Float16B, MATMUL);
    p.b = Some((&bb, DataFormat::Float16B));
    p.out_format = DataFormat::Float32;
    p.compute_args = vec![kt];
    p.fidelity = fidelity;
    p.fp32_dest = fp32_dest;
    let (out, counters) = p.run().unwrap();
    assert_eq!(
        counters.tile_ops_at(TileOp::Matmul, fidelity),
        u64::from(kt)
    );
    untilize(&from_f32_bytes(&out), 32, 32)
}

#[test]
fn matmul_fidelity_phases_hand_computed() {
    // in0 (SrcB) = 1 + 2^-7: its last mantissa bit is below SrcB's 1 + 6 MSBs.
    // in1 (SrcA) = 1 + 2^-5: its 5th mantissa bit is below SrcA's 1 + 4 MSBs.
    // Per product: LoFi 1; HiFi2 1 + 2^-5; HiFi3 adds 2^-7; HiFi4 adds 2^-12. Times K = 32.
    let a = tilize(&[1.0 + 1.0 / 128.0; 1024], 32, 32);
    let b = tilize(&[1.0 + 1.0 / 32.0; 1024], 32, 32);
    let expected = [32.0, 33.0, 33.25, 33.25 + 1.0 / 128.0];
    for (fidelity, want) in MathFidelity::ALL.into_iter().zip(expected) {
        let c = matmul(&a, &b, 1, fidelity, true);
        assert!(
            c.iter().all(|v| *v == want),
            "{fidelity:?}: got {} want {want}",
            c[0]
        );
    }
}

#[test]
fn matmul_fidelity_phases_of_float32_tiles_hand_computed() {
    // Float32 tiles unpack to tf32 (10 mantissa bits), but the phases see 2 x 5 significant bits
    // of SrcA and 2 x 7 of SrcB. in1 (SrcA) = 1 + 2^-5 + 2^-10: its 10th mantissa bit is beyond
    // SrcA's 9 and never multiplied. in0 (SrcB) = 1 + 2^-7 + 2^-10: high part 1, low part
    // 2^-7 + 2^-10, all within SrcB's 13 bits. Per product: LoFi 1; HiFi2 1 + 2^-5; HiFi3 adds
    // 2^-7 + 2^-10; HiFi4 adds (2^-7 + 2^-10)·2^-5. Times K = 32.
    let a = tilize(&[1.0 + 2f32.powi(-7) + 2f32.powi(-10); 1024], 32, 32);
    let b = tilize(&[1.0 + 2f32.powi(-5) + 2f32.powi(-10); 1024], 32, 32);
    let hifi3 = 33.0 + 0.25 + 2f32.powi(-5);
    let expected = [32.0, 33.0, hifi3, hifi3 + 2f32.powi(-7) + 2f32.powi(-10)];
    for (fidelity, want) in MathFidelity::ALL.into_iter().zip(expected) {
        let (ab, bb) = (to_f32_bytes(&a), to_f32_bytes(&b));
        let mut p = Pipeline::new(&ab, DataFormat::Float32, MATMUL);
        p.b = Some((&bb, DataFormat::Float32));
        p.out_format = DataFormat::Float32;
        p.compute_args = vec![1];
        p.fidelity = fidelity;
        p.fp32_dest = true;
        let (out, _) = p.run().unwrap();
        let c = from_f32_bytes(&out);
        assert!(
            c.iter().all(|v| *v == want),
            "{fidelity:?}: got {} want {want}",
            c[0]
        );
    }
}

#[test]
fn matmul_vs_f64_reference_per_fidelity() {
    let kt = 2u32;
    let (m, k, n) = (32usize, 64usize, 32usize);
    let a_rows = bf16_values(m * k, 1); // 32 x 64 row-major
    let b_rows = bf16_values(k * n, 2); // 64 x 32
                                        // Tiles of in0 are (0, kt) blocks of A; tiles of in1 are (kt, 0) blocks of B.
    let mut a_tiles = Vec::new();
    let mut b_tiles = Vec::new();
    for t in 0..kt as usize {
        let a_blk: Vec<f32> = (0..32 * 32)
            .map(|e| a_rows[(e / 32) * k + t * 32 + e % 32])
            .collect();
        let b_blk: Vec<f32> = (0..32 * 32)
            .map(|e| b_rows[(t * 32 + e / 32) * n + e % 32])
            .collect();
        a_tiles.extend(tilize(&a_blk, 32, 32));
        b_tiles.extend(tilize(&b_blk, 32, 32));
    }
    // Relative bounds from the truncated bits: SrcA (in1) keeps 1+4 bits in phase 0 (error < 2^-4),
    // SrcB (in0) 1+6 bits (< 2^-6); HiFi3 leaves only lo(A)*lo(B) (< 2^-10); HiFi4 only f32 sums.
    let bounds = [
        1.0 / 16.0 + 1.0 / 64.0 + 1.0 / 1024.0,
        1.0 / 64.0,
        1.0 / 1024.0,
        1.0e-6,
    ];
    let mut errors = Vec::new();
    for (fidelity, bound) in MathFidelity::ALL.into_iter().zip(bounds) {
        let c = matmul(&a_tiles, &b_tiles, kt, fidelity, true);
        let mut worst = 0.0f64;
        for i in 0..m {
            for j in 0..n {
                let mut exact = 0.0f64;
                let mut scale = 0.0f64;
                for p in 0..k {
                    let prod = f64::from(a_rows[i * k + p]) * f64::from(b_rows[p * n + j]);
                    exact += prod;
                    scale += prod.abs();
                }
                let err = (f64::from(c[i * n + j]) - exact).abs() / scale;
                worst = worst.max(err);
            }
        }
        assert!(
            worst <= bound,
            "{fidelity:?}: relative error {worst} above {bound}"
        );
        errors.push(worst);
    }
    // Fidelity is really applied: each step is more accurate than the one before.
    assert!(
        errors[0] > errors[1] && errors[1] > errors[2] && errors[2] > errors[3],
        "{errors:?}"
    );
}

#[test]
fn bf16_dest_rounds_every_accumulation() {
    // in0 = ones; in1 tile 0 = 1/32 (sums to 1), tile 1 = 2^-13 (sums to 2^-8, in two
    // 16-deep face steps of 2^-9 each). fp32 DST: 1 + 2^-8. bf16 DST: 1 + 2^-9 rounds back
    // to 1 both times.
    let ones = tilize(&[1.0; 1024], 32, 32);
    let a = [ones.clone(), ones].concat();
    let b = [vec![1.0 / 32.0; 1024], vec![1.0 / 8192.0; 1024]].concat();
    let fp32 = matmul(&a, &b, 2, MathFidelity::HiFi4, true);
    let bf16 = matmul(&a, &b, 2, MathFidelity::HiFi4, false);
    assert!(fp32.iter().all(|v| *v == 1.0 + 1.0 / 256.0), "{}", fp32[0]);
    assert!(bf16.iter().all(|v| *v == 1.0), "{}", bf16[0]);
}

const SFPU: &str = r#"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_unary/eltwise_unary.h"
#include "api/compute/eltwise_unary/relu.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/eltwise_unary/recip.h"
#include "api/compute/eltwise_unary/sqrt.h"
#include "api/compute/eltwise_unary/rsqrt.h"
#include "api/compute/binary_max_min.h"
#include "api/compute/eltwise_binary_sfpu.h"
// Tile 0 of cb 0 goes through op OP; OPs 5 to 7 combine tile 0 with tile 1.
void kernel_main() {
    init_sfpu(0, 16);
    cb_wait_front(0, 2);
    tile_regs_acquire();
    copy_tile(0, 0, 0);
    copy_tile(0, 1, 1);
#if OP == 0
    relu_tile_init(); relu_tile(0);
#elif OP == 1
    exp_tile_init(); exp_tile(0);
#elif OP == 2
    recip_tile_init(); recip_tile(0);
#elif OP == 3
    sqrt_tile_init(); sqrt_tile(0);
#elif OP == 4
    rsqrt_tile_init(); rsqrt_tile(0);
#elif OP == 5
    binary_max_tile_init(); binary_max_tile(0, 1, 0);
#elif OP == 6
    add_binary_tile_init(); add_binary_tile(0, 1, 0);
#else
    sub_binary_tile_init(); sub_binary_tile(0, 1, 0);
#endif
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(16, 1);
    pack_tile(0, 16);
    cb_push_back(16, 1);
    tile_regs_release();
    cb_pop_front(0, 2);
}
"#;

fn sfpu(op: u32, x: &[f32], y: &[f32]) -> Vec<f32> {
    let mut input = vec![0.0f32; 2048];
    input[..x.len()].copy_from_slice(x);
    input[1024..1024 + y.len()].copy_from_slice(y);
    let bytes = to_f32_bytes(&input);
    let src = SFPU.replace("#if OP == 0", &format!("#define OP {op}\n#if OP == 0"));
    let mut p = Pipeline::new(&bytes, DataFormat::Float32, &src);
    p.fp32_dest = true;
    p.out_format = DataFormat::Float32;
    // Unpacked straight to DST: through SrcA the inputs would be cut to TF32 first.
    p.unpack_to_dest_fp32 = vec![0];
    let (out, counters) = p.run().unwrap();
    assert_eq!(counters.tile_ops(TileOp::Sfpu), 1);
    from_f32_bytes(&out)
}

#[test]
fn sfpu_ops_in_f32() {
    assert_eq!(&sfpu(0, &[-3.0, 2.5, 0.0], &[])[..3], &[0.0, 2.5, 0.0]);
    let e = sfpu(1, &[0.0, 1.0, -1.0], &[]);
    assert_eq!(e[0], 1.0);
    assert!((e[1] - std::f32::consts::E).abs() < 1e-6, "{}", e[1]);
    assert!((e[2] - 1.0 / std::f32::consts::E).abs() < 1e-7, "{}", e[2]);
    assert_eq!(&sfpu(2, &[4.0, -0.5], &[])[..2], &[0.25, -2.0]);
    assert_eq!(&sfpu(3, &[4.0, 2.25], &[])[..2], &[2.0, 1.5]);
    assert_eq!(&sfpu(4, &[4.0, 0.25], &[])[..2], &[0.5, 2.0]);
    assert_eq!(&sfpu(5, &[-1.0, 3.0], &[2.0, -4.0])[..2], &[2.0, 3.0]);
}

/// add / sub of two DST tiles, exact in f32 with an fp32 DST: a sum that needs all 24 bits of
/// the significand survives (a bf16 DST would have rounded it).
#[test]
fn binary_add_sub_in_f32() {
    let fine = 1.0 + 2f32.powi(-23);
    assert_eq!(
        &sfpu(6, &[1.0, 200.0, -3.0], &[2f32.powi(-23), 0.5, 3.0])[..3],
        &[fine, 200.5, 0.0]
    );
    assert_eq!(
        &sfpu(7, &[fine, 200.5, -3.0], &[1.0, 0.5, 3.0])[..3],
        &[2f32.powi(-23), 200.0, -6.0]
    );
}

const EQ_WHERE: &str = r#"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/eltwise_unary/where.h"
// Tiles A, B, C of cb 0: output 0 is (A == B), output 1 is where(C, A, B).
void kernel_main() {
    init_sfpu(0, 16);
    cb_wait_front(0, 3);
    tile_regs_acquire();
    for (uint32_t t = 0; t < 3; ++t) {
        copy_tile(0, t, t);
    }
    eq_binary_tile_init();
    eq_binary_tile(0, 1, 3);
    where_tile_init();
    where_tile<DataFormat::Float32>(2, 0, 1, 2);
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(16, 2);
    pack_tile(3, 16);
    pack_tile(2, 16);
    cb_push_back(16, 2);
    tile_regs_release();
    cb_pop_front(0, 3);
}
"#;

/// `eq_binary_tile` is IEEE equality as the LLK computes it (identical bits without NaN, or both
/// zero), not a subtraction: the two smallest normals differ by a denormal, which a subtraction
/// in the SFPU would flush to zero. `where_tile` moves the 32-bit words of A or B, NaN payloads
/// included, on whether C's word is nonzero (so a -0.0 condition selects A).
#[test]
fn eq_binary_and_where_on_bit_patterns() {
    let min = f32::MIN_POSITIVE;
    let next = f32::from_bits(min.to_bits() + 1);
    let nan = f32::from_bits(0x7FC0_1234);
    let pairs: [(f32, f32, bool); 10] = [
        (1.0, 1.0, true),
        (0.5, 0.25, false),
        (0.0, -0.0, true),
        (nan, nan, false),
        (1.0, nan, false),
        (f32::INFINITY, f32::INFINITY, true),
        (min, next, false),
        (min, min, true),
        (-1.5, -1.5, true),
        (0.3, f32::from_bits(0.3f32.to_bits() + 1), false),
    ];
    let conditions = [
        1.0,
        0.0,
        -0.0,
        nan,
        0.0,
        2.0,
        0.0,
        1.0,
        f32::MIN_POSITIVE,
        0.0,
    ];
    let mut input = vec![0.0f32; 3 * 1024];
    for (i, ((a, b, _), c)) in pairs.iter().zip(conditions).enumerate() {
        input[i] = *a;
        input[1024 + i] = *b;
        input[2048 + i] = c;
    }
    let bytes = to_f32_bytes(&input);
    let mut p = Pipeline::new(&bytes, DataFormat::Float32, EQ_WHERE);
    p.fp32_dest = true;
    p.out_format = DataFormat::Float32;
    // Bit patterns reach DST only unpacked to it: through SrcA they would be cut to TF32.
    p.unpack_to_dest_fp32 = vec![0];
    p.out_tiles = 2;
    let (out, counters) = p.run().unwrap();
    assert_eq!(counters.tile_ops(TileOp::Sfpu), 2);
    let out = from_f32_bytes(&out);
    for (i, ((a, b, equal), c)) in pairs.iter().zip(conditions).enumerate() {
        assert_eq!(out[i], if *equal { 1.0 } else { 0.0 }, "eq of {a} and {b}");
        let picked = if c.to_bits() != 0 { a } else { b };
        assert_eq!(
            out[1024 + i].to_bits(),
            picked.to_bits(),
            "where {c}: {a} or {b}"
        );
    }
    // The rest of the tiles: 0 == 0, and where(0, 0, 0).
    assert!(out[pairs.len()..1024].iter().all(|v| *v == 1.0));
    assert!(out[1024 + pairs.len()..].iter().all(|v| v.to_bits() == 0));
}

const TILIZE: &str = r#"
#include "api/compute/tilize.h"
void kernel_main() {
    compute_kernel_hw_startup(0, 16);
    tilize_init(0, 2, 16);
    cb_wait_front(0, 2);
    cb_reserve_back(16, 2);
    tilize_block(0, 2, 16);
    cb_push_back(16, 2);
    cb_pop_front(0, 2);
    tilize_uninit(0, 16);
}
"#;

const UNTILIZE: &str = r#"
#include "api/compute/untilize.h"
void kernel_main() {
    compute_kernel_hw_startup(0, 16);
    untilize_init(0);
    cb_wait_front(0, 2);
    cb_reserve_back(16, 2);
    untilize_block(0, 2, 16);
    cb_push_back(16, 2);
    cb_pop_front(0, 2);
    untilize_uninit(0);
}
"#;

#[test]
fn tilize_block_makes_four_face_tiles() {
    // 32 rows x 64 columns, row-major: value (3i + j) % 97 at (i, j).
    let rows: Vec<f32> = (0..32 * 64)
        .map(|e| ((3 * (e / 64) + e % 64) % 97) as f32)
        .collect();
    let bytes = to_bf16_bytes(&rows);
    let mut p = Pipeline::new(&bytes, DataFormat::Float16B, TILIZE);
    p.out_tiles = 2;
    let (out, counters) = p.run().unwrap();
    let out = from_bf16_bytes(&out);
    for t in 0..2 {
        for i in 0..32 {
            for j in 0..32 {
                let col = t * 32 + j;
                assert_eq!(
                    out[t * 1024 + face_index(i, j)],
                    ((3 * i + col) % 97) as f32
                );
            }
        }
    }
    assert_eq!(counters.tile_ops(TileOp::Tilize), 2);
}

#[test]
fn untilize_block_makes_rows() {
    let rows: Vec<f32> = (0..32 * 64)
        .map(|e| ((5 * (e / 64) + 2 * (e % 64)) % 89) as f32)
        .collect();
    let tiles: Vec<f32> = (0..2)
        .flat_map(|t| {
            let blk: Vec<f32> = (0..1024)
                .map(|e| rows[(e / 32) * 64 + t * 32 + e % 32])
                .collect();
            tilize(&blk, 32, 32)
        })
        .collect();
    let bytes = to_bf16_bytes(&tiles);
    let mut p = Pipeline::new(&bytes, DataFormat::Float16B, UNTILIZE);
    p.out_tiles = 2;
    let (out, _) = p.run().unwrap();
    let out = from_bf16_bytes(&out);
    for i in 0..32 {
        for j in 0..64 {
            assert_eq!(out[i * 64 + j], ((5 * i + 2 * j) % 89) as f32, "({i}, {j})");
        }
    }
}

const TRANSPOSE: &str = r#"
#include "api/compute/transpose.h"
void kernel_main() {
    compute_kernel_hw_startup(0, 16);
    transpose_init(0);
    cb_wait_front(0, 1);
    tile_regs_acquire();
    transpose_tile(0, 0, 0);
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
fn transpose_tile_swaps_rows_and_columns() {
    let m: Vec<f32> = (0..1024)
        .map(|e| ((e / 32) * 100 + e % 32) as f32 / 8.0)
        .collect();
    let bytes = to_f32_bytes(&tilize(&m, 32, 32));
    let mut p = Pipeline::new(&bytes, DataFormat::Float32, TRANSPOSE);
    p.fp32_dest = true;
    p.out_format = DataFormat::Float32;
    // The values need 12 significant bits: exact only unpacked straight to DST.
    p.unpack_to_dest_fp32 = vec![0];
    let (out, _) = p.run().unwrap();
    let t = untilize(&from_f32_bytes(&out), 32, 32);
    for i in 0..32 {
        for j in 0..32 {
            assert_eq!(t[i * 32 + j], (j * 100 + i) as f32 / 8.0);
        }
    }
}
