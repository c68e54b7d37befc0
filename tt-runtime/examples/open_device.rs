//! Opens device 0 and prints what was obtained: the backend, the dispatch placement and the
//! compute grid. On the emulator it always opens; with `--features metal` it is the smallest
//! program that exercises tt-metal end to end (scripts/metal-check.sh runs it on a machine without
//! a card and expects the "no device" outcome).
//!
//! `cargo run -p tt-runtime --example open_device [tensix|eth]` (default: tensix, which stock
//! tt-metal supports; eth needs the ETH-dispatch patch on a card).
//!
//! Exit status: 0 opened, 2 no device was found, 1 any other failure.

use std::process::ExitCode;

use tt_runtime::{Device, Dispatch, Error};

fn main() -> ExitCode {
    let dispatch = match std::env::args().nth(1).as_deref() {
        None | Some("tensix") => Dispatch::Tensix,
        Some("eth") => Dispatch::Eth,
        Some(other) => {
            eprintln!("open_device: unknown dispatch '{other}' (tensix or eth)");
            return ExitCode::from(1);
        }
    };
    println!("backend: {}", Device::backend_name());
    match Device::open(dispatch).and_then(|dev| dev.info()) {
        Ok(info) => {
            println!(
                "opened device 0: {:?} dispatch, {}x{} compute grid, {} KiB L1 per core",
                info.dispatch,
                info.grid_x,
                info.grid_y,
                info.l1_size / 1024
            );
            ExitCode::SUCCESS
        }
        Err(Error::NoDevice(message)) => {
            eprintln!("open_device: no device: {message}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("open_device: {e}");
            ExitCode::from(1)
        }
    }
}
