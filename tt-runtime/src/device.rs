//! [`Device`]: one opened p150a (or its emulation), its grid and coordinates, and execution.

use std::ptr::NonNull;

use crate::buffer::Buffer;
use crate::error::{check, Error, Result};
use crate::program::Program;
use crate::sys;
use crate::trace::Trace;

/// Where the dispatch firmware runs; it decides the compute grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dispatch {
    /// Dispatch on a Tensix column: an 11x10 compute grid.
    Tensix,
    /// Dispatch on Ethernet cores: the full 12x10 compute grid.
    Eth,
}

/// A core coordinate, logical or NoC depending on where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CoreCoord {
    /// Column.
    pub x: u32,
    /// Row.
    pub y: u32,
}

impl CoreCoord {
    /// A coordinate.
    pub const fn new(x: u32, y: u32) -> Self {
        CoreCoord { x, y }
    }
}

/// An inclusive rectangle of logical cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoreRange {
    /// Lowest corner.
    pub start: CoreCoord,
    /// Highest corner (inclusive).
    pub end: CoreCoord,
}

impl CoreRange {
    /// The rectangle from `start` to `end`, both included.
    pub const fn new(start: CoreCoord, end: CoreCoord) -> Self {
        CoreRange { start, end }
    }

    /// One core.
    pub const fn single(core: CoreCoord) -> Self {
        CoreRange {
            start: core,
            end: core,
        }
    }

    pub(crate) fn raw(&self) -> sys::ttr_core_range {
        sys::ttr_core_range {
            start: sys::ttr_core {
                x: self.start.x,
                y: self.start.y,
            },
            end: sys::ttr_core {
                x: self.end.x,
                y: self.end.y,
            },
        }
    }
}

/// Facts about an opened device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Compute grid width in logical cores.
    pub grid_x: u32,
    /// Compute grid height.
    pub grid_y: u32,
    /// Dispatch placement chosen at open.
    pub dispatch: Dispatch,
    /// L1 bytes per core.
    pub l1_size: u32,
    /// First L1 address programs may use.
    pub l1_unreserved_base: u32,
    /// NoC alignment of L1 addresses.
    pub l1_alignment: u32,
    /// NoC alignment of DRAM reads.
    pub dram_alignment: u32,
    /// DRAM banks.
    pub dram_banks: u32,
    /// L1 banks of L1-interleaved buffers ([`Device::l1_bank_core`]).
    pub l1_banks: u32,
    /// CBs per core.
    pub max_cbs: u32,
    /// Runtime args per kernel per core.
    pub max_runtime_args: u32,
    /// Whether this is the emulator.
    pub is_emulator: bool,
}

/// An opened device. Buffers, programs and traces keep the device alive on their own, so they
/// may outlive this handle.
#[derive(Debug)]
pub struct Device {
    raw: NonNull<sys::ttr_device>,
}

// SAFETY: the implementation serialises every device call on an internal mutex.
unsafe impl Send for Device {}
// SAFETY: as above; no method hands out interior references.
unsafe impl Sync for Device {}

impl Device {
    /// Opens device 0 with the given dispatch placement.
    pub fn open(dispatch: Dispatch) -> Result<Device> {
        let mut raw = std::ptr::null_mut();
        let d = match dispatch {
            Dispatch::Tensix => sys::TTR_DISPATCH_TENSIX,
            Dispatch::Eth => sys::TTR_DISPATCH_ETH,
        };
        // SAFETY: `raw` is a valid out-pointer.
        check(unsafe { sys::ttr_device_open(0, d, &mut raw) })?;
        NonNull::new(raw)
            .map(|raw| Device { raw })
            .ok_or_else(|| Error::Internal("ttr_device_open returned no device".into()))
    }

    /// The backend behind the C API: "emulator" or "tt-metal".
    pub fn backend_name() -> String {
        // SAFETY: returns a static NUL-terminated string.
        unsafe { std::ffi::CStr::from_ptr(sys::ttr_backend_name()) }
            .to_string_lossy()
            .into_owned()
    }

    pub(crate) fn raw(&self) -> *mut sys::ttr_device {
        self.raw.as_ptr()
    }

    /// Grid, memory map and limits.
    pub fn info(&self) -> Result<DeviceInfo> {
        let mut i = sys::ttr_device_info::default();
        // SAFETY: valid device and out-pointer.
        check(unsafe { sys::ttr_device_get_info(self.raw(), &mut i) })?;
        Ok(DeviceInfo {
            grid_x: i.grid_x,
            grid_y: i.grid_y,
            dispatch: if i.dispatch == sys::TTR_DISPATCH_ETH {
                Dispatch::Eth
            } else {
                Dispatch::Tensix
            },
            l1_size: i.l1_size,
            l1_unreserved_base: i.l1_unreserved_base,
            l1_alignment: i.l1_alignment,
            dram_alignment: i.dram_alignment,
            dram_banks: i.dram_banks,
            l1_banks: i.l1_banks,
            max_cbs: i.max_cbs,
            max_runtime_args: i.max_runtime_args,
            is_emulator: i.is_emulator != 0,
        })
    }

    /// NoC coordinates of the worker at a logical core (what kernels address it by).
    pub fn worker_core(&self, logical: CoreCoord) -> Result<CoreCoord> {
        let mut noc = sys::ttr_core::default();
        let l = sys::ttr_core {
            x: logical.x,
            y: logical.y,
        };
        // SAFETY: valid device and out-pointer.
        check(unsafe { sys::ttr_device_worker_core(self.raw(), l, &mut noc) })?;
        Ok(CoreCoord::new(noc.x, noc.y))
    }

    /// NoC coordinates of a DRAM bank.
    pub fn dram_core(&self, bank: u32) -> Result<CoreCoord> {
        let mut noc = sys::ttr_core::default();
        // SAFETY: valid device and out-pointer.
        check(unsafe { sys::ttr_device_dram_core(self.raw(), bank, &mut noc) })?;
        Ok(CoreCoord::new(noc.x, noc.y))
    }

    /// Logical core of L1 bank `bank`: page `p` of an L1-interleaved tensor
    /// (`InterleavedAddrGen<false>`) is in bank `p % l1_banks` at `base + (p / l1_banks) * page`
    /// (pages aligned to the L1 alignment); the emulator has one bank per worker core, and the
    /// tt-metal build checks that the card does too.
    pub fn l1_bank_core(&self, bank: u32) -> Result<CoreCoord> {
        let mut logical = sys::ttr_core::default();
        // SAFETY: valid device and out-pointer.
        check(unsafe { sys::ttr_device_l1_bank_core(self.raw(), bank, &mut logical) })?;
        Ok(CoreCoord::new(logical.x, logical.y))
    }

    /// A DRAM buffer of `size` bytes interleaved over the banks in pages of `page_size` bytes.
    pub fn dram_buffer(&self, size: u64, page_size: u32) -> Result<Buffer> {
        Buffer::dram(self, size, page_size)
    }

    /// An L1 buffer of `size` bytes at the same address on every worker core.
    pub fn l1_buffer(&self, size: u32) -> Result<Buffer> {
        Buffer::l1(self, size)
    }

    /// An empty program for this device.
    pub fn program(&self) -> Result<Program> {
        Program::new(self)
    }

    /// Runs a program (the emulator runs it to completion), or records it during trace capture.
    pub fn enqueue(&self, program: &Program) -> Result<()> {
        // SAFETY: valid device and program handles.
        check(unsafe { sys::ttr_enqueue_program(self.raw(), program.raw(), 0) })
    }

    /// Waits for enqueued work.
    pub fn finish(&self) -> Result<()> {
        // SAFETY: valid device handle.
        check(unsafe { sys::ttr_finish(self.raw()) })
    }

    /// Captures the programs `record` enqueues into a trace. Each must have run once before.
    /// The capture is closed whether `record` succeeds or not.
    pub fn capture_trace(&self, record: impl FnOnce(&Device) -> Result<()>) -> Result<Trace> {
        let trace = Trace::begin(self)?;
        let recorded = record(self);
        let ended = trace.end(self);
        recorded?;
        ended?;
        Ok(trace)
    }

    /// Re-runs a captured trace on the same buffers.
    pub fn replay(&self, trace: &Trace) -> Result<()> {
        // SAFETY: valid device and trace handles.
        check(unsafe { sys::ttr_trace_replay(self.raw(), trace.raw(), 0) })
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: the handle came from ttr_device_open and is closed once.
        unsafe { sys::ttr_device_close(self.raw()) }
    }
}
