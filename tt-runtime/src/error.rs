//! The typed error of every runtime call, built from the C API's status code and message.

use std::ffi::CStr;

use crate::sys;

/// What went wrong in a runtime call; each variant carries the runtime's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A bad value from the caller (sizes, ids, core ranges, too many runtime args, ...).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// DRAM or L1 allocation failed, or a program's CBs do not fit in L1.
    #[error("out of device memory: {0}")]
    OutOfMemory(String),
    /// A kernel did not compile; the message holds the compiler output.
    #[error("kernel compilation failed: {0}")]
    Compile(String),
    /// A kernel broke a device rule (CB protocol, L1 bounds, NoC alignment, DST capacity, ...).
    #[error("kernel error: {0}")]
    Kernel(String),
    /// Every unfinished kernel was blocked; the message names each one and what it waits on.
    #[error("{0}")]
    Deadlock(String),
    /// Trace capture or replay misuse, including host buffer access during capture.
    #[error("trace error: {0}")]
    Trace(String),
    /// Valid on hardware but not implemented by this backend.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A host-side failure (files, the kernel compiler, memory mapping).
    #[error("runtime failure: {0}")]
    Internal(String),
    /// No Tenstorrent device was found at open, or none with the id asked for.
    #[error("no device: {0}")]
    NoDevice(String),
    /// The device stopped working (on the emulator: a fault injected for tests); every later run,
    /// finish or transfer on it fails with this error. The device must be closed.
    #[error("device lost: {0}")]
    DeviceLost(String),
    /// A string handed to the runtime contains a NUL byte.
    #[error("{0} contains a NUL byte")]
    Nul(&'static str),
    /// A size does not fit the C API's integer type.
    #[error("{0} is too large")]
    TooLarge(&'static str),
}

impl Error {
    /// The runtime's message without the variant's prefix.
    pub fn message(&self) -> &str {
        match self {
            Error::InvalidArgument(m)
            | Error::OutOfMemory(m)
            | Error::Compile(m)
            | Error::Kernel(m)
            | Error::Deadlock(m)
            | Error::Trace(m)
            | Error::Unsupported(m)
            | Error::Internal(m)
            | Error::NoDevice(m)
            | Error::DeviceLost(m) => m,
            Error::Nul(what) | Error::TooLarge(what) => what,
        }
    }
}

/// Result of a runtime call.
pub type Result<T> = std::result::Result<T, Error>;

fn last_error() -> String {
    // SAFETY: ttr_last_error returns a NUL-terminated thread-local string that stays valid until
    // this thread's next runtime call; it is copied out at once.
    unsafe { CStr::from_ptr(sys::ttr_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// Turns a status code into a `Result`, reading the thread's last-error message on failure.
pub(crate) fn check(status: sys::ttr_status) -> Result<()> {
    let code = u32::try_from(status).unwrap_or(sys::TTR_ERR_INTERNAL);
    if code == sys::TTR_OK {
        return Ok(());
    }
    let message = last_error();
    Err(match code {
        sys::TTR_ERR_INVALID_ARGUMENT => Error::InvalidArgument(message),
        sys::TTR_ERR_OUT_OF_MEMORY => Error::OutOfMemory(message),
        sys::TTR_ERR_COMPILE => Error::Compile(message),
        sys::TTR_ERR_KERNEL => Error::Kernel(message),
        sys::TTR_ERR_DEADLOCK => Error::Deadlock(message),
        sys::TTR_ERR_TRACE => Error::Trace(message),
        sys::TTR_ERR_UNSUPPORTED => Error::Unsupported(message),
        sys::TTR_ERR_NO_DEVICE => Error::NoDevice(message),
        sys::TTR_ERR_DEVICE_LOST => Error::DeviceLost(message),
        _ => Error::Internal(message),
    })
}
