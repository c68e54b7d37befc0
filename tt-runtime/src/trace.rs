//! [`Trace`]: a captured sequence of program launches, replayed on the same buffers.

use std::ptr::NonNull;

use crate::device::Device;
use crate::error::{check, Error, Result};
use crate::sys;

/// A captured trace; made by [`Device::capture_trace`], run by [`Device::replay`], released on drop.
#[derive(Debug)]
pub struct Trace {
    raw: NonNull<sys::ttr_trace>,
}

// SAFETY: the implementation serialises trace use on the device mutex.
unsafe impl Send for Trace {}
// SAFETY: as above.
unsafe impl Sync for Trace {}

impl Trace {
    pub(crate) fn begin(device: &Device) -> Result<Trace> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid device and out-pointer.
        check(unsafe { sys::ttr_trace_begin(device.raw(), &mut raw) })?;
        NonNull::new(raw)
            .map(|raw| Trace { raw })
            .ok_or_else(|| Error::Internal("ttr_trace_begin returned no trace".into()))
    }

    pub(crate) fn end(&self, device: &Device) -> Result<()> {
        // SAFETY: valid device and trace handles.
        check(unsafe { sys::ttr_trace_end(device.raw(), self.raw()) })
    }

    pub(crate) fn raw(&self) -> *mut sys::ttr_trace {
        self.raw.as_ptr()
    }
}

impl Drop for Trace {
    fn drop(&mut self) {
        // SAFETY: the handle came from ttr_trace_begin and is released once.
        unsafe { sys::ttr_trace_release(self.raw()) }
    }
}
