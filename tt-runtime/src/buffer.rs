//! [`Buffer`]: DRAM (interleaved) and L1 buffers and host transfers.

use std::ptr::NonNull;

use crate::device::{CoreCoord, Device};
use crate::error::{check, Error, Result};
use crate::sys;

/// A device buffer. DRAM buffers are interleaved over the banks page by page; L1 buffers sit at
/// the same address on every worker core.
#[derive(Debug)]
pub struct Buffer {
    raw: NonNull<sys::ttr_buffer>,
}

// SAFETY: the implementation serialises buffer access on the device mutex.
unsafe impl Send for Buffer {}
// SAFETY: as above.
unsafe impl Sync for Buffer {}

impl Buffer {
    fn wrap(raw: *mut sys::ttr_buffer) -> Result<Buffer> {
        NonNull::new(raw)
            .map(|raw| Buffer { raw })
            .ok_or_else(|| Error::Internal("the runtime returned no buffer".into()))
    }

    pub(crate) fn dram(device: &Device, size: u64, page_size: u32) -> Result<Buffer> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid device and out-pointer.
        check(unsafe { sys::ttr_buffer_create_dram(device.raw(), size, page_size, &mut raw) })?;
        Buffer::wrap(raw)
    }

    pub(crate) fn l1(device: &Device, size: u32) -> Result<Buffer> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid device and out-pointer.
        check(unsafe { sys::ttr_buffer_create_l1(device.raw(), size, &mut raw) })?;
        Buffer::wrap(raw)
    }

    pub(crate) fn raw(&self) -> *mut sys::ttr_buffer {
        self.raw.as_ptr()
    }

    /// Device address: the bank offset of a DRAM buffer, the L1 address of an L1 buffer.
    pub fn address(&self) -> u32 {
        // SAFETY: valid buffer handle.
        unsafe { sys::ttr_buffer_address(self.raw.as_ptr()) }
    }

    /// Size in bytes (per core for L1 buffers).
    pub fn size(&self) -> u64 {
        // SAFETY: valid buffer handle.
        unsafe { sys::ttr_buffer_size(self.raw.as_ptr()) }
    }

    /// Writes a whole DRAM buffer (`data.len()` must equal its size).
    pub fn write(&self, data: &[u8]) -> Result<()> {
        let len = u64::try_from(data.len()).map_err(|_| Error::TooLarge("data"))?;
        // SAFETY: `data` is valid for `len` bytes of reads.
        check(unsafe { sys::ttr_buffer_write(self.raw.as_ptr(), data.as_ptr().cast(), len) })
    }

    /// Reads a whole DRAM buffer into `data` (`data.len()` must equal its size).
    pub fn read(&self, data: &mut [u8]) -> Result<()> {
        let len = u64::try_from(data.len()).map_err(|_| Error::TooLarge("data"))?;
        // SAFETY: `data` is valid for `len` bytes of writes.
        check(unsafe { sys::ttr_buffer_read(self.raw.as_ptr(), data.as_mut_ptr().cast(), len) })
    }

    /// Reads pages `first..first + pages` of a DRAM buffer into `data` (`data.len()` must be
    /// `pages` times the page size).
    pub fn read_pages(&self, first: u64, pages: u64, data: &mut [u8]) -> Result<()> {
        let len = u64::try_from(data.len()).map_err(|_| Error::TooLarge("data"))?;
        // SAFETY: `data` is valid for `len` bytes of writes.
        check(unsafe {
            sys::ttr_buffer_read_pages(
                self.raw.as_ptr(),
                first,
                pages,
                data.as_mut_ptr().cast(),
                len,
            )
        })
    }

    /// Reads a whole DRAM buffer into a new vector.
    pub fn read_vec(&self) -> Result<Vec<u8>> {
        let len = usize::try_from(self.size()).map_err(|_| Error::TooLarge("buffer"))?;
        let mut v = vec![0u8; len];
        self.read(&mut v)?;
        Ok(v)
    }

    /// Writes bytes at `offset` into one core's copy of an L1 buffer.
    pub fn write_core(&self, core: CoreCoord, offset: u32, data: &[u8]) -> Result<()> {
        let len = u64::try_from(data.len()).map_err(|_| Error::TooLarge("data"))?;
        let c = sys::ttr_core {
            x: core.x,
            y: core.y,
        };
        // SAFETY: `data` is valid for `len` bytes of reads.
        check(unsafe {
            sys::ttr_buffer_write_core(self.raw.as_ptr(), c, offset, data.as_ptr().cast(), len)
        })
    }

    /// Reads bytes at `offset` from one core's copy of an L1 buffer.
    pub fn read_core(&self, core: CoreCoord, offset: u32, data: &mut [u8]) -> Result<()> {
        let len = u64::try_from(data.len()).map_err(|_| Error::TooLarge("data"))?;
        let c = sys::ttr_core {
            x: core.x,
            y: core.y,
        };
        // SAFETY: `data` is valid for `len` bytes of writes.
        check(unsafe {
            sys::ttr_buffer_read_core(self.raw.as_ptr(), c, offset, data.as_mut_ptr().cast(), len)
        })
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the handle came from a create call and is freed once.
        unsafe { sys::ttr_buffer_free(self.raw.as_ptr()) }
    }
}
