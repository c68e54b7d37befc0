//! Fault injection (feature `fault-injection`, for tests of what uses the runtime): a device
//! armed with `fail_after(n)` runs n more programs, then is lost: the next run fails with
//! `Error::DeviceLost` naming it, and every later run, finish and transfer on it fails too,
//! while other devices keep working.

mod common;

use tt_runtime::host::to_bf16_bytes;
use tt_runtime::{DataFormat, Device, Dispatch, Error, GridMatmul, MathFidelity};

const SHAPE: GridMatmul = GridMatmul {
    rows: 1,
    cols: 2,
    kt: 1,
    ct: 1,
    fidelity: MathFidelity::HiFi2,
    fp32_dest: false,
    out_format: DataFormat::Float16B,
};

#[test]
fn a_device_armed_to_fail_is_lost_after_its_runs_and_the_others_are_not() {
    Device::emulate_devices(2).unwrap();
    let lost = Device::open_id(1, Dispatch::Eth).unwrap();
    let other = Device::open_id(0, Dispatch::Eth).unwrap();
    let run = SHAPE.build(&lost).unwrap();
    let healthy = SHAPE.build(&other).unwrap();
    let ones = to_bf16_bytes(&vec![1.0; 1024 * 2]);
    run.a.write(&ones[..run.a.size() as usize]).unwrap();
    run.b.write(&ones[..run.b.size() as usize]).unwrap();
    lost.enqueue(&run.program).unwrap();
    // Two more programs: one direct run and one replayed, then the device is lost.
    lost.fail_after(2).unwrap();
    lost.enqueue(&run.program).unwrap();
    let trace = lost.capture_trace(|d| d.enqueue(&run.program)).unwrap();
    lost.replay(&trace).unwrap();
    let e = common::expect_err(lost.replay(&trace));
    assert!(matches!(e, Error::DeviceLost(_)), "{e:?}");
    assert!(e.message().contains("device 1"), "{e}");
    for later in [
        lost.enqueue(&run.program).err(),
        lost.finish().err(),
        run.c.read_vec().err(),
        run.a.write(&ones[..run.a.size() as usize]).err(),
    ] {
        assert!(matches!(later, Some(Error::DeviceLost(_))), "{later:?}");
    }
    other.enqueue(&healthy.program).unwrap();
    other.finish().unwrap();
    healthy.c.read_vec().unwrap();
}
