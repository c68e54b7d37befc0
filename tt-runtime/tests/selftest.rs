//! The device self-checks on the emulator: the known-answer program reproduces the checked-in
//! golden byte for byte, the golden is the exact integer product computed here on the host, a
//! replayed trace equals the direct launch, and the DRAM and L1 round trips pass on every core;
//! a corrupted golden is caught.

mod common;

use common::device;
use tt_runtime::host::{from_bf16_bytes, untilize};
use tt_runtime::selftest::{self, Comparison, GOLDEN, KNOWN_ANSWER_SEED};

#[test]
fn the_emulator_reproduces_the_golden_and_replay_equals_direct() {
    let dev = device();
    let run = selftest::run_known_answer(&dev).unwrap();
    assert_eq!(
        Comparison::of(&run.direct, GOLDEN).differing,
        0,
        "the emulator no longer reproduces tt-runtime/selftest/known_answer.bin; if the change is intended, \
         rerun `cargo run -p tt-runtime --example selftest_golden`"
    );
    assert_eq!(run.replay, run.direct);
}

#[test]
fn the_golden_is_the_exact_integer_product() {
    let (a, b) = selftest::known_answer_operands(KNOWN_ANSWER_SEED);
    let (m, k, n) = selftest::known_answer_dims();
    assert_eq!(GOLDEN.len(), m * n * 2, "bf16 C");
    let c = untilize(&from_bf16_bytes(GOLDEN), m, n);
    for i in 0..m {
        for j in 0..n {
            let want: f32 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            assert_eq!(c[i * n + j], want, "C[{i}][{j}]");
        }
    }
    // Not a trivial product: many distinct values, both signs.
    let distinct: std::collections::BTreeSet<i32> = c.iter().map(|v| *v as i32).collect();
    assert!(distinct.len() > 20 && c.iter().any(|v| *v < 0.0) && c.iter().any(|v| *v > 0.0));
}

#[test]
fn a_corrupted_golden_is_caught() {
    let mut corrupted = GOLDEN.to_vec();
    corrupted[1000] ^= 0x01;
    let c = Comparison::of(&corrupted, GOLDEN);
    assert_eq!((c.differing, c.first), (1, Some(1000)));
    assert!(!Comparison::of(&GOLDEN[..GOLDEN.len() - 2], GOLDEN).equal());
}

#[test]
fn dram_and_l1_round_trips_pass_on_every_core() {
    let dev = device();
    let dram = selftest::dram_round_trip(&dev, 1 << 20, 2048, 3).unwrap();
    assert_eq!((dram.bytes, dram.differing), (2 << 20, 0));
    let l1 = selftest::l1_round_trip(&dev, 4096, 3).unwrap();
    assert_eq!(l1.cores, 120);
    assert_eq!(
        (l1.comparison.bytes, l1.comparison.differing),
        (2 * 120 * 4096, 0)
    );
    assert_eq!(l1.first_bad_core, None);
}
