//! Writes the known-answer program's output on the emulator to the golden file the self-checks
//! compare a card against (`tt_runtime::selftest::GOLDEN`). Run it after changing the program
//! or its operands, and commit the file with the change:
//!
//! `cargo run -p tt-runtime --example selftest_golden [PATH]` (default
//! `tt-runtime/selftest/known_answer.bin`).

use tt_runtime::{selftest, Device, Dispatch};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/selftest/known_answer.bin").to_string()
    });
    if Device::backend_name() != "emulator" {
        return Err(
            "the golden comes from the emulator: run this on a default (non-metal) build".into(),
        );
    }
    let dev = Device::open(Dispatch::Eth)?;
    let run = selftest::run_known_answer(&dev)?;
    if run.replay != run.direct {
        return Err(
            "the replayed trace differs from the direct launch; not writing a golden".into(),
        );
    }
    std::fs::write(&path, &run.direct)?;
    println!("wrote {} bytes to {path}", run.direct.len());
    Ok(())
}
