//! Several devices in one process: the emulator presents as many as asked (`emulate_devices`,
//! `$TTR_EMU_DEVICES`), refuses other ids with `Error::NoDevice`, and each device is a p150a of
//! its own that runs programs independently of, and in parallel with, the others.

mod common;

use common::expect_err;
use tt_runtime::host::{from_f32_bytes, tilize, to_bf16_bytes, untilize};
use tt_runtime::{DataFormat, Device, Dispatch, Error, GridMatmul, MathFidelity};

/// Every test of this binary sees three emulated devices.
fn three_devices() {
    Device::emulate_devices(3).unwrap();
}

const SHAPE: GridMatmul = GridMatmul {
    rows: 2,
    cols: 2,
    kt: 2,
    ct: 1,
    fidelity: MathFidelity::HiFi4,
    fp32_dest: true,
    out_format: DataFormat::Float32,
};

/// Small integers in -2..=2 (exact in bf16; sums exact in f32).
fn ints(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) % 5) as f32 - 2.0
        })
        .collect()
}

/// The grid matmul of seeded operands on device `id`, and the exact product it must give.
fn matmul_on(id: u32, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let dev = Device::open_id(id, Dispatch::Eth).unwrap();
    assert_eq!(dev.id(), id);
    let run = SHAPE.build(&dev).unwrap();
    let (m, k, n) = (
        (SHAPE.rows * 32) as usize,
        (SHAPE.kt * 32) as usize,
        (SHAPE.nt() * 32) as usize,
    );
    let (a, b) = (ints(m * k, seed), ints(k * n, seed + 1));
    run.a.write(&to_bf16_bytes(&tilize(&a, m, k))).unwrap();
    run.b.write(&to_bf16_bytes(&tilize(&b, k, n))).unwrap();
    dev.enqueue(&run.program).unwrap();
    let got = untilize(&from_f32_bytes(&run.c.read_vec().unwrap()), m, n);
    let mut want = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
        }
    }
    (got, want)
}

#[test]
fn the_emulator_presents_the_devices_asked_for_and_refuses_other_ids() {
    three_devices();
    assert_eq!(Device::count().unwrap(), 3);
    for id in 0..3 {
        let dev = Device::open_id(id, Dispatch::Eth).unwrap();
        assert_eq!(dev.id(), id);
        assert_eq!(dev.info().unwrap().grid_x, 12);
    }
    let e = expect_err(Device::open_id(3, Dispatch::Eth));
    assert!(matches!(e, Error::NoDevice(_)), "{e:?}");
    assert!(
        e.message().contains("no device 3") && e.message().contains("TTR_EMU_DEVICES=4"),
        "{e}"
    );
    for bad in [0, 65] {
        let e = expect_err(Device::emulate_devices(bad));
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    }
    assert_eq!(Device::count().unwrap(), 3);
}

#[test]
fn devices_run_in_parallel_threads_each_on_its_own_memory() {
    three_devices();
    let results: Vec<_> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..3u32)
            .map(|id| s.spawn(move || matmul_on(id, 10 + u64::from(id))))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for (id, (got, want)) in results.iter().enumerate() {
        assert_eq!(got, want, "device {id}");
    }
    // Different operands on each device: a device reading another's memory would not match.
    assert_ne!(results[0].1, results[1].1);
}
