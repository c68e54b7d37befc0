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
}
