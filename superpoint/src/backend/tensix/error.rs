//! What can go wrong on the Tensix backend, naming the program, buffer or size involved and what
//! to do.

use thiserror::Error;

/// Errors of the Tensix backend.
#[derive(Debug, Error)]
pub enum TensixError {
    #[error("the network frame {width}x{height} does not fit the device program: width and height must be multiples of 32 (e.g. 640x480); use --backend cpu for other sizes")]
    FrameSize { width: usize, height: usize },
    #[error("the input plane {width}x{height} is larger than the device resize takes ({max} per side); downscale the image first or use --backend cpu")]
    InputSize {
        width: usize,
        height: usize,
        max: u32,
    },
    #[error("the device opened with {dispatch} dispatch has a {width}x{height} compute grid, not the one the programs are compiled for (12x10 with eth dispatch, 11x10 with tensix); is it a p150a with 120 Tensix cores?")]
    Grid {
        dispatch: &'static str,
        width: u32,
        height: u32,
    },
    #[error("kernel-gen could not compile program {program}: {why}")]
    Compile { program: String, why: String },
    /// The runtime's error is the source, not part of the message: a chain prints it once.
    #[error("the device failed while {doing}")]
    Device {
        doing: String,
        #[source]
        source: kernel_gen::runner::RunError,
    },
    #[error("buffer `{buffer}` read back from the device is malformed: {why}")]
    Readback { buffer: String, why: String },
    #[error("devices `{set}`: {why}")]
    DeviceSet { set: String, why: String },
    #[error("devices `{set}` include device {id}, but the runtime has {available} device(s), with ids below {available}; on the emulator, set TTR_EMU_DEVICES to the number of devices to emulate")]
    MissingDevice {
        id: u32,
        available: u32,
        set: String,
    },
    #[error("no Tensix device is left to run on ({failures}); restart with working devices (`superpoint doctor --devices N,` checks device N)")]
    NoDevices { failures: String },
    #[error("the devices of a pool must have the same compute grid, so that every device gives the same outputs: device {first} has {first_grid}, device {other} has {other_grid}")]
    MixedGrids {
        first: u32,
        first_grid: &'static str,
        other: u32,
        other_grid: &'static str,
    },
}

impl TensixError {
    /// True when the device itself stopped working (the runtime's `DeviceLost`), which no input
    /// causes: the device pool takes it out and runs the frame on another device.
    pub fn is_device_lost(&self) -> bool {
        matches!(
            self,
            TensixError::Device {
                source: kernel_gen::runner::RunError::Runtime(tt_runtime::Error::DeviceLost(_)),
                ..
            }
        )
    }
}
