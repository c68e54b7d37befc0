//! Float32 tiles on their way into the compute engine, against hand-computed bit patterns. Through
//! SrcA/SrcB (the `UnpackToDestMode::Default`) the unpacker keeps TF32's sign, exponent and top 10
//! mantissa bits with an fp32 DST, and bf16's top 7 without one (truncation both; denormals read
//! as signed zero). A CB marked `UnpackToDestFp32` is unpacked straight into the fp32 DST by the
//! datacopies (copy, transpose, tilize), bit for bit, and may not feed the FPU. The packer then
//! rounds to bf16 turning -0 into +0 and NaN into infinity, and keeps every bit for a Float32
//! output from an fp32 DST.

mod common;

use common::{expect_err, Pipeline};
use tt_runtime::host::{from_f32_bytes, tilize, to_f32_bytes, untilize};
use tt_runtime::{DataFormat, Error, KernelSpec};

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

/// Bit patterns and what SrcA makes of them: (input, TF32 with an fp32 DST, bf16 without one).
const CUTS: [(u32, u32, u32); 8] = [
    (0xBF9B_0C07, 0xBF9B_0000, 0xBF9B_0000),
    (0x3F21_5F2E, 0x3F21_4000, 0x3F21_0000),
    (0x3F80_0100, 0x3F80_0000, 0x3F80_0000), // 1 + 2^-15: below TF32's last bit
    (0x3F80_2000, 0x3F80_2000, 0x3F80_0000), // 1 + 2^-10: TF32's last bit, below bf16's
    (0x7F7F_FFFF, 0x7F7F_E000, 0x7F7F_0000), // the largest normal: truncated, never rounded up
    (0x0000_0123, 0x0000_0000, 0x0000_0000), // a denormal reads as zero
    (0x8000_0123, 0x8000_0000, 0x0000_0000), // a negative one as -0; the bf16 pack makes it +0
    (0x8000_0000, 0x8000_0000, 0x0000_0000), // -0 (a 16-bit DST packs it as +0)
];

/// Copies tile 0 (its first datums `bits`) into DST and packs it as Float32.
fn copy_f32(bits: &[u32], fp32_dest: bool, to_dest: bool, kernel: &str) -> Vec<u32> {
    let mut input = vec![0.0f32; 1024];
    for (v, b) in input.iter_mut().zip(bits) {
        *v = f32::from_bits(*b);
    }
    let bytes = to_f32_bytes(&input);
    let mut p = Pipeline::new(&bytes, DataFormat::Float32, kernel);
    p.fp32_dest = fp32_dest;
    p.out_format = DataFormat::Float32;
    if to_dest {
        p.unpack_to_dest_fp32 = vec![0];
    }
    let (out, _) = p.run().unwrap();
    from_f32_bytes(&out)[..bits.len()]
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

#[test]
fn copy_through_srca_cuts_float32_to_tf32() {
    let input: Vec<u32> = CUTS.iter().map(|c| c.0).collect();
    let tf32: Vec<u32> = CUTS.iter().map(|c| c.1).collect();
    assert_eq!(copy_f32(&input, true, false, COPY), tf32);
}

#[test]
fn copy_through_srca_cuts_float32_to_bf16_without_fp32_dest() {
    let input: Vec<u32> = CUTS.iter().map(|c| c.0).collect();
    let bf16: Vec<u32> = CUTS.iter().map(|c| c.2).collect();
    assert_eq!(copy_f32(&input, false, false, COPY), bf16);
}

#[test]
fn unpack_to_dest_copies_every_bit() {
    let input: Vec<u32> = CUTS.iter().map(|c| c.0).collect();
    assert_eq!(copy_f32(&input, true, true, COPY), input);
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
fn transpose_cuts_through_srca_and_is_exact_to_dest() {
    // Element (i, j): 1 with its index 32 i + j in the TF32 mantissa bits and 0x155 below them.
    let bits = |i: usize, j: usize| 0x3F80_0155 | ((32 * i + j) << 13) as u32;
    let m: Vec<f32> = (0..1024)
        .map(|e| f32::from_bits(bits(e / 32, e % 32)))
        .collect();
    let bytes = to_f32_bytes(&tilize(&m, 32, 32));
    for to_dest in [false, true] {
        let mut p = Pipeline::new(&bytes, DataFormat::Float32, TRANSPOSE);
        p.fp32_dest = true;
        p.out_format = DataFormat::Float32;
        if to_dest {
            p.unpack_to_dest_fp32 = vec![0];
        }
        let (out, _) = p.run().unwrap();
        let t = untilize(&from_f32_bytes(&out), 32, 32);
        for i in 0..32 {
            for j in 0..32 {
                let want = if to_dest {
                    bits(j, i)
                } else {
                    bits(j, i) & 0xFFFF_E000
                };
                assert_eq!(
                    t[i * 32 + j].to_bits(),
                    want,
                    "({i}, {j}) to_dest {to_dest}"
                );
            }
        }
    }
}

const TILIZE: &str = r#"
#include "api/compute/tilize.h"
void kernel_main() {
    compute_kernel_hw_startup(0, 16);
    tilize_init(0, 1, 16);
    cb_wait_front(0, 1);
    cb_reserve_back(16, 1);
    tilize_block(0, 1, 16);
    cb_push_back(16, 1);
    cb_pop_front(0, 1);
    tilize_uninit(0, 16);
}
"#;

#[test]
fn tilize_cuts_through_srca_and_is_exact_to_dest() {
    // Row-major 32 × 32: element (i, j) = 0x3F21_5F2E + 32 i + j.
    let rows: Vec<f32> = (0..1024u32)
        .map(|e| f32::from_bits(0x3F21_5F2E + e))
        .collect();
    let bytes = to_f32_bytes(&rows);
    for to_dest in [false, true] {
        let mut p = Pipeline::new(&bytes, DataFormat::Float32, TILIZE);
        p.fp32_dest = true;
        p.out_format = DataFormat::Float32;
        if to_dest {
            p.unpack_to_dest_fp32 = vec![0];
        }
        let (out, _) = p.run().unwrap();
        let t = untilize(&from_f32_bytes(&out), 32, 32);
        for (e, v) in t.iter().enumerate() {
            let input = 0x3F21_5F2E + e as u32;
            let want = if to_dest { input } else { input & 0xFFFF_E000 };
            assert_eq!(v.to_bits(), want, "element {e} to_dest {to_dest}");
        }
    }
}

const EQUAL: &str = r#"
#include "api/compute/tile_move_copy.h"
#include "api/compute/eltwise_binary_sfpu.h"
// Tiles A and B of cb 0 copied into DST 0 and 1; the output is (A == B), as the NMS mask.
void kernel_main() {
    compute_kernel_hw_startup(0, 16);
    copy_tile_init(0);
    cb_wait_front(0, 2);
    tile_regs_acquire();
    copy_tile(0, 0, 0);
    copy_tile(0, 1, 1);
    eq_binary_tile_init();
    eq_binary_tile(0, 1, 0);
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(16, 1);
    pack_tile(0, 16);
    cb_push_back(16, 1);
    tile_regs_release();
    cb_pop_front(0, 2);
}
"#;

/// Scores one fp32 ulp apart, where TF32 keeps neither's difference: through SrcA they compare
/// equal (the NMS mask would keep both), unpacked to DST they do not.
#[test]
fn equality_below_tf32_precision_needs_unpack_to_dest() {
    let a = [0.5f32, 0.75, 0.3];
    let b: Vec<f32> = a.iter().map(|v| f32::from_bits(v.to_bits() + 1)).collect();
    let mut input = vec![0.0f32; 2048];
    input[..3].copy_from_slice(&a);
    input[1024..1027].copy_from_slice(&b);
    let bytes = to_f32_bytes(&input);
    for (to_dest, equal) in [(false, 1.0), (true, 0.0)] {
        let mut p = Pipeline::new(&bytes, DataFormat::Float32, EQUAL);
        p.fp32_dest = true;
        p.out_format = DataFormat::Float32;
        if to_dest {
            p.unpack_to_dest_fp32 = vec![0];
        }
        let (out, _) = p.run().unwrap();
        assert_eq!(&from_f32_bytes(&out)[..3], &[equal; 3], "to_dest {to_dest}");
    }
}

/// The packer's conversions of special values from an fp32 DST (reached exactly by unpacking
/// to DST): to bf16 by rounding (-0 and denormals become +0, NaN becomes infinity of its sign);
/// to Float32 as the identity.
#[test]
fn packer_minus_zero_nan_and_denormals() {
    let input = [
        0x8000_0000u32, // -0
        0x7FC0_1234,    // NaN with a payload
        0xFFC0_0001,    // -NaN
        0x7F80_0001,    // a signalling NaN
        0x0000_0123,    // a denormal
        0x8000_0123,    // a negative one
        0x7F80_0000,    // inf
        0xFF80_0000,    // -inf
        0x3F80_0000,    // 1
    ];
    let mut values = vec![0.0f32; 1024];
    for (v, b) in values.iter_mut().zip(input) {
        *v = f32::from_bits(b);
    }
    let bytes = to_f32_bytes(&values);
    let mut p = Pipeline::new(&bytes, DataFormat::Float32, COPY);
    p.fp32_dest = true;
    p.unpack_to_dest_fp32 = vec![0];
    let (out, _) = p.run().unwrap();
    let bf16: Vec<u16> = out
        .chunks_exact(2)
        .take(input.len())
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    assert_eq!(
        bf16,
        [0x0000, 0x7F80, 0xFF80, 0x7F80, 0x0000, 0x0000, 0x7F80, 0xFF80, 0x3F80]
    );
    assert_eq!(copy_f32(&input, true, true, COPY), input);
}

/// From a 16-bit DST the early conversion stays at bf16 whatever the output: a Float32 output
/// gets the bf16 rounding's -0 → +0 and NaN → infinity too.
#[test]
fn packer_from_bf16_dest_to_float32_rounds_at_bf16() {
    let input = [0x8000_0000u32, 0x7FC0_1234, 0xFFC0_0001, 0x3F80_8000];
    // Through SrcA as bf16 (truncated), into the 16-bit DST, packed: 1 + 2^-8 is cut to 1.
    assert_eq!(
        copy_f32(&input, false, false, COPY),
        [0x0000_0000, 0x7F80_0000, 0xFF80_0000, 0x3F80_0000]
    );
}

const MATMUL: &str = r#"
#include "api/compute/matmul.h"
void kernel_main() {
    compute_kernel_hw_startup<SrcOrder::Reverse>(0, 1, 16);
    matmul_init(0, 1);
    cb_wait_front(0, 1);
    cb_wait_front(1, 1);
    tile_regs_acquire();
    matmul_tiles(0, 1, 0, 0, 0);
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(16, 1);
    pack_tile(0, 16);
    cb_push_back(16, 1);
    tile_regs_release();
    cb_pop_front(0, 1);
    cb_pop_front(1, 1);
}
"#;

const ADD: &str = r#"
#include "api/compute/eltwise_binary.h"
void kernel_main() {
    compute_kernel_hw_startup(0, 1, 16);
    add_tiles_init(0, 1);
    cb_wait_front(0, 1);
    cb_wait_front(1, 1);
    tile_regs_acquire();
    add_tiles(0, 1, 0, 0, 0);
    tile_regs_commit();
    tile_regs_wait();
    cb_reserve_back(16, 1);
    pack_tile(0, 16);
    cb_push_back(16, 1);
    tile_regs_release();
    cb_pop_front(0, 1);
    cb_pop_front(1, 1);
}
"#;

/// The FPU cannot read a CB unpacked to DST: matmul and element-wise ops on cb 1 fail.
#[test]
fn fpu_ops_refuse_an_unpack_to_dest_cb() {
    let bytes = to_f32_bytes(&[0.5f32; 1024]);
    for (kernel, op) in [(MATMUL, "matmul_tiles"), (ADD, "add_tiles")] {
        let mut p = Pipeline::new(&bytes, DataFormat::Float32, kernel);
        p.b = Some((&bytes, DataFormat::Float32));
        p.fp32_dest = true;
        p.out_format = DataFormat::Float32;
        p.unpack_to_dest_fp32 = vec![1];
        let Err(Error::Kernel(m)) = p.run() else {
            panic!("{op}: expected a kernel error")
        };
        assert!(
            m.contains(&format!(
                "{op}: cb 1 is UnpackToDestFp32 (its Float32 tiles unpack straight into DST), but \
                 {op} reads it through SrcA/SrcB"
            )),
            "{m}"
        );
    }
}

fn add_kernel_error(spec: KernelSpec) -> String {
    let dev = common::device();
    let mut prog = dev.program().unwrap();
    match expect_err(prog.add_kernel(&spec)) {
        Error::InvalidArgument(m) => m,
        e => panic!("expected an invalid argument, got {e:?}"),
    }
}

#[test]
fn unpack_to_dest_needs_an_fp32_dest_compute_kernel() {
    let cores = [common::core0()];
    let m = add_kernel_error(KernelSpec::compute("c", COPY, &cores).unpack_to_dest_fp32(2));
    assert!(
        m.contains("kernel 'c': cb 2 is UnpackToDestFp32, which unpacks 32-bit datums into DST; enable fp32_dest_acc"),
        "{m}"
    );
    let m = add_kernel_error(KernelSpec::reader("r", COPY, &cores).unpack_to_dest_fp32(0));
    assert!(
        m.contains("kernel 'r': unpack_to_dest_mode is a compute kernel setting, but this is a reader kernel"),
        "{m}"
    );
    let m = add_kernel_error(
        KernelSpec::compute("c", COPY, &cores)
            .fp32_dest_acc(true)
            .unpack_to_dest_fp32(64),
    );
    assert!(
        m.contains(
            "kernel 'c': 65 unpack_to_dest_mode entries; there is one per CB id, at most 64"
        ),
        "{m}"
    );
}

/// A C caller may pass any byte as a mode; only Default (0) and UnpackToDestFp32 (1) exist.
#[test]
fn unknown_unpack_to_dest_mode_is_refused() {
    use std::ffi::{CStr, CString};
    use std::ptr::null_mut;
    use tt_runtime::sys;
    let name = CString::new("c").unwrap();
    let source = CString::new(COPY).unwrap();
    let range = sys::ttr_core_range::default();
    let modes: [sys::ttr_unpack_to_dest_mode; 1] = [7];
    let config = sys::ttr_kernel_config {
        name: name.as_ptr(),
        source: source.as_ptr(),
        role: sys::TTR_ROLE_COMPUTE,
        ranges: &range,
        num_ranges: 1,
        fp32_dest_acc: 1,
        unpack_to_dest_mode: modes.as_ptr(),
        num_unpack_to_dest_mode: modes.len(),
        ..Default::default()
    };
    // SAFETY: every pointer outlives the calls; the handles are freed once.
    let (status, message) = unsafe {
        let mut dev = null_mut();
        assert_eq!(
            sys::ttr_device_open(0, sys::TTR_DISPATCH_ETH, &mut dev),
            sys::TTR_OK as sys::ttr_status
        );
        let mut prog = null_mut();
        assert_eq!(
            sys::ttr_program_create(dev, &mut prog),
            sys::TTR_OK as sys::ttr_status
        );
        let mut id = 0;
        let status = sys::ttr_program_add_kernel(prog, &config, &mut id);
        let message = CStr::from_ptr(sys::ttr_last_error())
            .to_string_lossy()
            .into_owned();
        sys::ttr_program_free(prog);
        sys::ttr_device_close(dev);
        (status, message)
    };
    assert_eq!(status, sys::TTR_ERR_INVALID_ARGUMENT as sys::ttr_status);
    assert!(
        message.contains("kernel 'c': unknown unpack_to_dest_mode 7 for cb 0"),
        "{message}"
    );
}
