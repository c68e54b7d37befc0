//! Allocations whose size comes from outside (an image header, a frame size) fail with
//! [`Error::OutOfMemory`] instead of aborting the process: Rust's infallible allocations abort
//! when the system refuses them, e.g. under an address-space limit (`ulimit -v`).

use crate::error::{Error, Result};

/// A zero-filled buffer of `len` bytes for `what`, or an error when it cannot be allocated.
pub fn zeroed(len: usize, what: &str, advice: &'static str) -> Result<Vec<u8>> {
    let mut buffer = Vec::new();
    buffer
        .try_reserve_exact(len)
        .map_err(|_| out_of_memory(len as u64, what, advice))?;
    buffer.resize(len, 0);
    Ok(buffer)
}

/// Checks that `bytes` could be allocated now (allocates them without touching the pages and
/// frees them): the guard before work that allocates about that much through code that cannot
/// fail gracefully.
pub fn check_available(bytes: u64, what: &str, advice: &'static str) -> Result<()> {
    let len = usize::try_from(bytes).map_err(|_| out_of_memory(bytes, what, advice))?;
    let mut probe: Vec<u8> = Vec::new();
    probe
        .try_reserve_exact(len)
        .map_err(|_| out_of_memory(bytes, what, advice))
}

fn out_of_memory(bytes: u64, what: &str, advice: &'static str) -> Error {
    Error::OutOfMemory {
        what: what.to_string(),
        mib: bytes.div_ceil(1 << 20),
        advice,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_sizes_are_errors_not_aborts() {
        // More than any address space: the allocator refuses it before touching memory.
        let e = check_available(u64::MAX / 2, "a test buffer", "use less").expect_err("too big");
        assert!(e.to_string().contains("a test buffer"), "{e}");
        assert!(zeroed(usize::MAX / 2, "a test buffer", "use less").is_err());
        assert_eq!(zeroed(5, "five bytes", "").expect("small"), vec![0; 5]);
        check_available(1 << 20, "one MiB", "").expect("small");
    }
}
