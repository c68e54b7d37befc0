//! [`Device`]: one opened p150a (or its emulation), its grid and coordinates, and execution.

use std::ptr::NonNull;

use crate::buffer::Buffer;
use crate::error::{check, Error, Result};
use crate::install::Installation;
use crate::program::Program;
use crate::sys;
use crate::trace::Trace;

/// Where the dispatch firmware runs; it decides the compute grid.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Dispatch {
    /// Ethernet dispatch when the installation can open it (a tt-metal with the ETH-dispatch
    /// patch, or the emulator), else Tensix dispatch with a warning ([`Installation`]); decided
    /// before opening, since tt-metal fixes the placement once per process.
    #[default]
    Auto,
    /// Dispatch on a Tensix column: an 11x10 compute grid.
    Tensix,
    /// Dispatch on Ethernet cores: the full 12x10 compute grid.
    Eth,
}

impl Dispatch {
    /// "auto", "tensix" or "eth".
    pub fn name(self) -> &'static str {
        match self {
            Dispatch::Auto => "auto",
            Dispatch::Tensix => "tensix",
            Dispatch::Eth => "eth",
        }
    }

    /// The compute grid (columns, rows) this placement leaves on a p150a; `None` for `Auto`.
    pub fn grid(self) -> Option<(u32, u32)> {
        match self {
            Dispatch::Auto => None,
            Dispatch::Tensix => Some((11, 10)),
            Dispatch::Eth => Some((12, 10)),
        }
    }
}

/// How a device was opened: the placement asked for, what the installation supports, and the
/// warning when `Auto` fell back to Tensix dispatch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    pub requested: Dispatch,
    pub installation: Installation,
    pub warning: Option<String>,
}

/// Measured device time of one program run, from tt-metal's device profiler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgramTime {
    /// tt-metal's runtime id of the program.
    pub runtime_id: u64,
    /// First kernel start to last kernel end, in nanoseconds.
    pub device_ns: u64,
}

/// The most program times one profiler read returns.
const MAX_PROGRAM_TIMES: usize = 1 << 16;

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
    /// Dispatch placement obtained at open (`Tensix` or `Eth`, never `Auto`).
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
    id: u32,
    opening: Opening,
}

// SAFETY: the implementation serialises every device call on an internal mutex.
unsafe impl Send for Device {}
// SAFETY: as above; no method hands out interior references.
unsafe impl Sync for Device {}

impl Device {
    /// Opens device 0 with the given dispatch placement; `Auto` asks the installation this build
    /// drives ([`Installation::of_this_build`]).
    pub fn open(dispatch: Dispatch) -> Result<Device> {
        Device::open_id(0, dispatch)
    }

    /// Opens device `id` (0..[`Device::count`]) with the given dispatch placement, `Auto` as in
    /// [`Device::open`]; an id without a device is `Error::NoDevice`.
    pub fn open_id(id: u32, dispatch: Dispatch) -> Result<Device> {
        Device::open_id_with(id, dispatch, Installation::of_this_build()?)
    }

    /// Opens device 0 with `dispatch`, `Auto` resolved by what `installation` supports. The
    /// emulator standing in for a stock tt-metal refuses ETH dispatch as stock tt-metal would.
    pub fn open_with(dispatch: Dispatch, installation: Installation) -> Result<Device> {
        Device::open_id_with(0, dispatch, installation)
    }

    /// Opens device `id` as [`Device::open_with`] opens device 0.
    pub fn open_id_with(id: u32, dispatch: Dispatch, installation: Installation) -> Result<Device> {
        let (placement, warning) = match dispatch {
            Dispatch::Auto => installation.auto_dispatch(),
            fixed => (fixed, None),
        };
        if placement == Dispatch::Eth && installation.emulates_stock() {
            return Err(Error::Unsupported(format!(
                "{} cannot open a p150 with dispatch on the Ethernet cores: {}; use Tensix dispatch (the 11x10 grid) or Auto",
                installation.describe_source(),
                installation.eth_dispatch
            )));
        }
        let mut raw = std::ptr::null_mut();
        let d = if placement == Dispatch::Eth {
            sys::TTR_DISPATCH_ETH
        } else {
            sys::TTR_DISPATCH_TENSIX
        };
        // SAFETY: `raw` is a valid out-pointer.
        check(unsafe { sys::ttr_device_open(id, d, &mut raw) })?;
        let raw = NonNull::new(raw)
            .ok_or_else(|| Error::Internal("ttr_device_open returned no device".into()))?;
        Ok(Device {
            raw,
            id,
            opening: Opening {
                requested: dispatch,
                installation,
                warning,
            },
        })
    }

    /// How many devices [`Device::open_id`] accepts (ids 0..count): on tt-metal the cards it
    /// finds; the emulator presents the count [`Device::emulate_devices`] set, else
    /// `$TTR_EMU_DEVICES` (1 to 64), else 1.
    pub fn count() -> Result<u32> {
        let mut count = 0u32;
        // SAFETY: `count` is a valid out-pointer.
        check(unsafe { sys::ttr_device_count(&mut count) })?;
        Ok(count)
    }

    /// Makes the emulator present `count` devices (1 to 64) from now on, in place of
    /// `$TTR_EMU_DEVICES`; `Error::Unsupported` on tt-metal, which drives the cards it finds.
    pub fn emulate_devices(count: u32) -> Result<()> {
        // SAFETY: plain value argument.
        check(unsafe { sys::ttr_emu_set_device_count(count) })
    }

    /// For tests of device failure, on the emulator (`Error::Unsupported` on tt-metal): once
    /// `launches` more programs have run on this device (an enqueue, or one program of a replayed
    /// trace), the next fails with `Error::DeviceLost`, and so does every later run, finish and
    /// buffer transfer on it.
    #[cfg(feature = "fault-injection")]
    pub fn fail_after(&self, launches: u64) -> Result<()> {
        // SAFETY: valid device handle.
        check(unsafe { sys::ttr_emu_fail_after(self.raw(), launches) })
    }

    /// The id it was opened with.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// How this device was opened.
    pub fn opening(&self) -> &Opening {
        &self.opening
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

    /// The device profiler's times of the programs run since the previous read, in the order
    /// they started. `Error::Unsupported` without a profiler: always on the emulator, and on
    /// tt-metal unless it is built with the device profiler and `TT_METAL_DEVICE_PROFILER=1`.
    pub fn profiler_times(&self) -> Result<Vec<ProgramTime>> {
        let mut raw = vec![sys::ttr_program_time::default(); MAX_PROGRAM_TIMES];
        let mut count = 0usize;
        // SAFETY: `raw` holds `raw.len()` entries and `count` is a valid out-pointer.
        check(unsafe {
            sys::ttr_device_profiler_read(self.raw(), raw.as_mut_ptr(), raw.len(), &mut count)
        })?;
        if count > raw.len() {
            return Err(Error::TooLarge("the profiler's program count"));
        }
        Ok(raw[..count]
            .iter()
            .map(|t| ProgramTime {
                runtime_id: t.runtime_id,
                device_ns: t.device_ns,
            })
            .collect())
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
