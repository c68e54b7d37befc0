//! Grid-wide matmul with the in0 operand multicast along rows of cores, and trace capture with
//! replays on new inputs.

mod common;

use common::{device, expect_err};
use tt_runtime::host::{from_f32_bytes, tilize, to_bf16_bytes, untilize};
use tt_runtime::{
    CoreCoord, DataFormat, Device, Error, GridMatmul, GridMatmulRun, MathFidelity, TileOp,
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

fn reference(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut s = 0.0f64;
            for p in 0..k {
                s += f64::from(a[i * k + p]) * f64::from(b[p * n + j]);
            }
            c[i * n + j] = s as f32;
        }
    }
    c
}

const SHAPE: GridMatmul = GridMatmul {
    rows: 4,
    cols: 3,
    kt: 3,
    ct: 2,
    fidelity: MathFidelity::HiFi4,
    fp32_dest: true,
    out_format: DataFormat::Float32,
};

fn write_inputs(run: &GridMatmulRun, seed: u64) -> Vec<f32> {
    let (m, k, n) = (
        (SHAPE.rows * 32) as usize,
        (SHAPE.kt * 32) as usize,
        (SHAPE.nt() * 32) as usize,
    );
    let a = ints(m * k, seed);
    let b = ints(k * n, seed + 100);
    run.a.write(&to_bf16_bytes(&tilize(&a, m, k))).unwrap();
    run.b.write(&to_bf16_bytes(&tilize(&b, k, n))).unwrap();
    reference(&a, &b, m, k, n)
}

fn read_output(run: &GridMatmulRun) -> Vec<f32> {
    let (m, n) = ((SHAPE.rows * 32) as usize, (SHAPE.nt() * 32) as usize);
    untilize(&from_f32_bytes(&run.c.read_vec().unwrap()), m, n)
}

#[test]
fn grid_matmul_with_multicast() {
    let dev = device();
    let run = SHAPE.build(&dev).unwrap();
    let want = write_inputs(&run, 7);
    dev.enqueue(&run.program).unwrap();
    assert_eq!(read_output(&run), want);
    let c = run.program.counters(None).unwrap();
    assert_eq!(
        c.tile_ops_at(TileOp::Matmul, MathFidelity::HiFi4),
        SHAPE.tile_matmuls()
    );
    // One multicast per row and k step, each reaching the other cols - 1 cores of the row.
    assert_eq!(c.noc_mcasts, u64::from(SHAPE.rows * SHAPE.kt));
    assert_eq!(
        c.noc_mcast_dests,
        u64::from(SHAPE.rows * SHAPE.kt * (SHAPE.cols - 1))
    );
    assert_eq!(c.noc_mcast_bytes, u64::from(SHAPE.rows * SHAPE.kt) * 2048);
    // Senders read A (rows x kt tiles); every core reads its kt x ct tiles of B.
    let b_reads = SHAPE.rows * SHAPE.cols * SHAPE.kt * SHAPE.ct;
    assert_eq!(
        c.dram_read_bytes,
        u64::from(SHAPE.rows * SHAPE.kt + b_reads) * 2048
    );
    assert_eq!(c.runs, u64::from(SHAPE.rows * SHAPE.cols * 3));
    // Per core: the row's sender multicasts kt times; a receiver signals readiness kt times.
    let reader = tt_runtime::KernelId(0);
    let sender = run
        .program
        .core_counters(reader, CoreCoord::new(0, 2))
        .unwrap();
    let receiver = run
        .program
        .core_counters(reader, CoreCoord::new(2, 2))
        .unwrap();
    assert_eq!(
        (sender.noc_mcasts, sender.noc_sem_ops),
        (u64::from(SHAPE.kt), u64::from(SHAPE.kt))
    );
    assert_eq!(
        (receiver.noc_mcasts, receiver.noc_sem_ops),
        (0, u64::from(SHAPE.kt))
    );
}

#[test]
fn trace_capture_and_three_replays_with_new_inputs() {
    let dev = device();
    let run = SHAPE.build(&dev).unwrap();
    write_inputs(&run, 1);
    dev.enqueue(&run.program).unwrap();
    let trace = dev.capture_trace(|d| d.enqueue(&run.program)).unwrap();
    for seed in [11, 12, 13] {
        let want = write_inputs(&run, seed);
        dev.replay(&trace).unwrap();
        assert_eq!(read_output(&run), want, "replay with inputs {seed}");
    }
    // The first run and three replays; the capture itself ran nothing.
    let c = run.program.counters(None).unwrap();
    assert_eq!(c.tile_ops(TileOp::Matmul), 4 * SHAPE.tile_matmuls());
    drop(trace);
}

#[test]
fn host_writes_during_trace_capture_fail() {
    let dev: Device = device();
    let run = SHAPE.build(&dev).unwrap();
    write_inputs(&run, 1);
    dev.enqueue(&run.program).unwrap();
    let e = expect_err(dev.capture_trace(|d| {
        d.enqueue(&run.program)?;
        run.a.write(&vec![0u8; run.a.size() as usize])
    }));
    assert!(matches!(e, Error::Trace(_)), "{e:?}");
    assert!(
        e.message()
            .contains("ttr_buffer_write during trace capture"),
        "{e}"
    );
    // The failed capture was closed: host writes work again.
    run.a.write(&vec![0u8; run.a.size() as usize]).unwrap();
}

#[test]
fn programs_must_run_before_capture() {
    let dev = device();
    let run = SHAPE.build(&dev).unwrap();
    let e = expect_err(dev.capture_trace(|d| d.enqueue(&run.program)));
    assert!(
        e.message()
            .contains("must have run once before the capture"),
        "{e}"
    );
}
