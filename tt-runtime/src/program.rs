//! [`Program`]: kernels from source text, CBs (among the program's own, or in an L1 [`Buffer`] at
//! an offset), semaphores and runtime args.

use std::ffi::CString;
use std::ptr::NonNull;

use crate::buffer::Buffer;
use crate::counters::Counters;
use crate::device::{CoreCoord, CoreRange, Device};
use crate::error::{check, Error, Result};
use crate::occupancy::Occupancy;
use crate::sys;

/// The processor a kernel runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelRole {
    /// Data movement on BRISC.
    Reader,
    /// Data movement on NCRISC.
    Writer,
    /// Compute on TRISC0-2.
    Compute,
}

/// Matrix-unit math fidelity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MathFidelity {
    /// One phase: SrcA 1+4 bits x SrcB 1+6 bits.
    LoFi = 0,
    /// Adds SrcA's remaining bits.
    HiFi2 = 1,
    /// Adds SrcB's remaining bits.
    HiFi3 = 2,
    /// Exact products.
    #[default]
    HiFi4 = 3,
}

impl MathFidelity {
    /// All four, lowest first.
    pub const ALL: [MathFidelity; 4] = [
        MathFidelity::LoFi,
        MathFidelity::HiFi2,
        MathFidelity::HiFi3,
        MathFidelity::HiFi4,
    ];
}

/// CB data formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFormat {
    /// IEEE fp32.
    Float32,
    /// bfloat16.
    Float16B,
    /// Block float, 8-bit mantissas (data movement only in the emulator).
    Bfp8B,
    /// 32-bit unsigned integers (data movement only).
    UInt32,
}

impl DataFormat {
    fn raw(self) -> sys::ttr_data_format {
        match self {
            DataFormat::Float32 => sys::TTR_FORMAT_FLOAT32,
            DataFormat::Float16B => sys::TTR_FORMAT_FLOAT16_B,
            DataFormat::Bfp8B => sys::TTR_FORMAT_BFP8_B,
            DataFormat::UInt32 => sys::TTR_FORMAT_UINT32,
        }
    }

    /// Bytes of one 32x32 tile.
    pub fn tile_size(self) -> u32 {
        match self {
            DataFormat::Float32 | DataFormat::UInt32 => 4096,
            DataFormat::Float16B => 2048,
            DataFormat::Bfp8B => 1088,
        }
    }
}

/// How a compute kernel's unpacker reads a CB (tt-metal's `UnpackToDestMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnpackToDestMode {
    /// Through SrcA/SrcB: a Float32 value is cut to TF32 (bf16 without fp32 DST accumulation).
    #[default]
    Default,
    /// A Float32 CB's datacopies (`copy_tile`, `transpose_tile`, `tilize_block`,
    /// `pack_untilize_block`) unpack straight into the fp32 DST, exactly; the matrix unit can then
    /// not read the CB. Needs fp32 DST accumulation.
    UnpackToDestFp32,
}

impl UnpackToDestMode {
    fn raw(self) -> sys::ttr_unpack_to_dest_mode {
        // The enum constants are `u32` in the bindings; both values fit the `u8` field.
        match self {
            UnpackToDestMode::Default => sys::TTR_UNPACK_TO_DEST_DEFAULT as u8,
            UnpackToDestMode::UnpackToDestFp32 => sys::TTR_UNPACK_TO_DEST_FP32 as u8,
        }
    }
}

/// A kernel to add to a program.
#[derive(Debug, Clone)]
pub struct KernelSpec {
    /// Shown in errors and deadlock reports.
    pub name: String,
    /// C++ source with `void kernel_main()`.
    pub source: String,
    /// Processor.
    pub role: KernelRole,
    /// Cores it runs on.
    pub cores: Vec<CoreRange>,
    /// `get_compile_time_arg_val(i)` values.
    pub compile_args: Vec<u32>,
    /// Preprocessor defines.
    pub defines: Vec<(String, String)>,
    /// Compute only.
    pub fidelity: MathFidelity,
    /// Compute only: fp32 accumulation in DST.
    pub fp32_dest_acc: bool,
    /// Compute only.
    pub math_approx: bool,
    /// Data movement only: NoC 0 or 1.
    pub noc: u32,
    /// Compute only: the unpack-to-dest mode of each CB, indexed by CB id (as tt-metal's
    /// `ComputeConfig::unpack_to_dest_mode`); CBs past the end are [`UnpackToDestMode::Default`].
    pub unpack_to_dest: Vec<UnpackToDestMode>,
}

impl KernelSpec {
    fn new(role: KernelRole, name: &str, source: &str, cores: &[CoreRange]) -> Self {
        KernelSpec {
            name: name.to_owned(),
            source: source.to_owned(),
            role,
            cores: cores.to_vec(),
            compile_args: Vec::new(),
            defines: Vec::new(),
            fidelity: MathFidelity::HiFi4,
            fp32_dest_acc: false,
            math_approx: false,
            noc: u32::from(role == KernelRole::Writer),
            unpack_to_dest: Vec::new(),
        }
    }

    /// A reader (BRISC, NoC 0) kernel.
    pub fn reader(name: &str, source: &str, cores: &[CoreRange]) -> Self {
        Self::new(KernelRole::Reader, name, source, cores)
    }

    /// A writer (NCRISC, NoC 1) kernel.
    pub fn writer(name: &str, source: &str, cores: &[CoreRange]) -> Self {
        Self::new(KernelRole::Writer, name, source, cores)
    }

    /// A compute kernel (HiFi4, bf16 DST unless changed).
    pub fn compute(name: &str, source: &str, cores: &[CoreRange]) -> Self {
        Self::new(KernelRole::Compute, name, source, cores)
    }

    /// Sets the compile-time args.
    pub fn compile_args(mut self, args: &[u32]) -> Self {
        self.compile_args = args.to_vec();
        self
    }

    /// Adds a define.
    pub fn define(mut self, name: &str, value: &str) -> Self {
        self.defines.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sets the math fidelity.
    pub fn fidelity(mut self, fidelity: MathFidelity) -> Self {
        self.fidelity = fidelity;
        self
    }

    /// Enables or disables fp32 DST accumulation.
    pub fn fp32_dest_acc(mut self, on: bool) -> Self {
        self.fp32_dest_acc = on;
        self
    }

    /// Marks CB `cb` [`UnpackToDestMode::UnpackToDestFp32`].
    pub fn unpack_to_dest_fp32(mut self, cb: u32) -> Self {
        let at = cb as usize;
        if self.unpack_to_dest.len() <= at {
            self.unpack_to_dest
                .resize(at + 1, UnpackToDestMode::Default);
        }
        self.unpack_to_dest[at] = UnpackToDestMode::UnpackToDestFp32;
        self
    }
}

/// A circular buffer to add to a program.
#[derive(Debug, Clone)]
pub struct CbSpec {
    /// CB id, 0..63.
    pub id: u32,
    /// Cores it exists on.
    pub cores: Vec<CoreRange>,
    /// Total bytes.
    pub total_size: u32,
    /// Bytes per page.
    pub page_size: u32,
    /// Data format of its tiles.
    pub format: DataFormat,
}

impl CbSpec {
    /// A CB of `pages` tiles of `format`.
    pub fn tiles(id: u32, cores: &[CoreRange], pages: u32, format: DataFormat) -> Self {
        let tile = format.tile_size();
        CbSpec {
            id,
            cores: cores.to_vec(),
            total_size: pages.saturating_mul(tile),
            page_size: tile,
            format,
        }
    }
}

/// A kernel's index in its program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelId(pub u32);

/// A program under construction or ready to enqueue.
#[derive(Debug)]
pub struct Program {
    raw: NonNull<sys::ttr_program>,
}

// SAFETY: mutation takes `&mut self`; the implementation locks the device mutex for shared reads.
unsafe impl Send for Program {}
// SAFETY: `&self` methods only read under the device mutex.
unsafe impl Sync for Program {}

fn cstring(s: &str, what: &'static str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::Nul(what))
}

impl Program {
    pub(crate) fn new(device: &Device) -> Result<Program> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid device and out-pointer.
        check(unsafe { sys::ttr_program_create(device.raw(), &mut raw) })?;
        NonNull::new(raw)
            .map(|raw| Program { raw })
            .ok_or_else(|| Error::Internal("ttr_program_create returned no program".into()))
    }

    pub(crate) fn raw(&self) -> *mut sys::ttr_program {
        self.raw.as_ptr()
    }

    /// Compiles (or finds in the cache) and adds a kernel.
    pub fn add_kernel(&mut self, spec: &KernelSpec) -> Result<KernelId> {
        let name = cstring(&spec.name, "kernel name")?;
        let source = cstring(&spec.source, "kernel source")?;
        let mut define_strings = Vec::with_capacity(spec.defines.len());
        for (n, v) in &spec.defines {
            define_strings.push((cstring(n, "define name")?, cstring(v, "define value")?));
        }
        let defines: Vec<sys::ttr_define> = define_strings
            .iter()
            .map(|(n, v)| sys::ttr_define {
                name: n.as_ptr(),
                value: v.as_ptr(),
            })
            .collect();
        let ranges: Vec<sys::ttr_core_range> = spec.cores.iter().map(CoreRange::raw).collect();
        let modes: Vec<sys::ttr_unpack_to_dest_mode> =
            spec.unpack_to_dest.iter().map(|m| m.raw()).collect();
        let config = sys::ttr_kernel_config {
            name: name.as_ptr(),
            source: source.as_ptr(),
            role: match spec.role {
                KernelRole::Reader => sys::TTR_ROLE_READER,
                KernelRole::Writer => sys::TTR_ROLE_WRITER,
                KernelRole::Compute => sys::TTR_ROLE_COMPUTE,
            },
            ranges: ranges.as_ptr(),
            num_ranges: ranges.len(),
            compile_args: spec.compile_args.as_ptr(),
            num_compile_args: spec.compile_args.len(),
            defines: defines.as_ptr(),
            num_defines: defines.len(),
            math_fidelity: spec.fidelity as u32,
            fp32_dest_acc: u32::from(spec.fp32_dest_acc),
            math_approx: u32::from(spec.math_approx),
            noc: spec.noc,
            unpack_to_dest_mode: modes.as_ptr(),
            num_unpack_to_dest_mode: modes.len(),
        };
        let mut id = 0u32;
        // SAFETY: every pointer in `config` outlives the call.
        check(unsafe { sys::ttr_program_add_kernel(self.raw(), &config, &mut id) })?;
        Ok(KernelId(id))
    }

    /// Adds a circular buffer among the program's own CBs.
    pub fn add_cb(&mut self, spec: &CbSpec) -> Result<()> {
        self.add_cb_raw(spec, std::ptr::null(), 0)
    }

    /// Adds a circular buffer that lives in the L1 buffer `buffer` (tt-metal's
    /// `CircularBufferConfig::set_globally_allocated_address`): at the buffer's address on every
    /// core of `spec.cores`, taking no room among the program's own CBs, its pages holding what is
    /// in the buffer there (what [`Buffer::write_core`] wrote, or earlier programs left). A kernel
    /// makes pages visible without writing them with `cb_reserve_back(cb, n); cb_push_back(cb, n);`.
    /// The program keeps the buffer allocated, so `buffer` may be dropped first.
    ///
    /// [`Error::InvalidArgument`] when `buffer` is a DRAM buffer, belongs to another device, or is
    /// smaller per core than `spec.total_size`. [`Program::add_cb_in_at`] at offset 0.
    pub fn add_cb_in(&mut self, spec: &CbSpec, buffer: &Buffer) -> Result<()> {
        self.add_cb_in_at(spec, buffer, 0)
    }

    /// [`Program::add_cb_in`] with the CB `offset` bytes into `buffer` (tt-metal's
    /// `CircularBufferConfig::set_address_offset`): at the buffer's address plus `offset` on every
    /// core of `spec.cores`, so that one buffer (an arena of tensors) may hold CBs at different
    /// offsets, each seeing its own bytes.
    ///
    /// [`Error::InvalidArgument`] as for [`Program::add_cb_in`], and when `offset` is not a
    /// multiple of the L1 alignment ([`crate::DeviceInfo::l1_alignment`]) or `offset +
    /// spec.total_size` exceeds the buffer's size per core.
    pub fn add_cb_in_at(&mut self, spec: &CbSpec, buffer: &Buffer, offset: u32) -> Result<()> {
        self.add_cb_raw(spec, buffer.raw(), offset)
    }

    fn add_cb_raw(
        &mut self,
        spec: &CbSpec,
        buffer: *const sys::ttr_buffer,
        buffer_offset: u32,
    ) -> Result<()> {
        let ranges: Vec<sys::ttr_core_range> = spec.cores.iter().map(CoreRange::raw).collect();
        let config = sys::ttr_cb_config {
            id: spec.id,
            ranges: ranges.as_ptr(),
            num_ranges: ranges.len(),
            total_size: spec.total_size,
            page_size: spec.page_size,
            format: spec.format.raw(),
            buffer,
            buffer_offset,
        };
        // SAFETY: `ranges` outlives the call; `buffer` is null or a live buffer handle.
        check(unsafe { sys::ttr_program_add_cb(self.raw(), &config) })
    }

    /// Adds a semaphore on every core of `cores`, returning its id.
    pub fn add_semaphore(&mut self, cores: &[CoreRange], initial: u32) -> Result<u32> {
        let ranges: Vec<sys::ttr_core_range> = cores.iter().map(CoreRange::raw).collect();
        let mut id = 0u32;
        // SAFETY: `ranges` outlives the call; valid out-pointer.
        check(unsafe {
            sys::ttr_program_add_semaphore(
                self.raw(),
                ranges.as_ptr(),
                ranges.len(),
                initial,
                &mut id,
            )
        })?;
        Ok(id)
    }

    /// Sets a kernel's runtime args on one core (at most 341).
    pub fn set_runtime_args(
        &mut self,
        kernel: KernelId,
        core: CoreCoord,
        args: &[u32],
    ) -> Result<()> {
        let c = sys::ttr_core {
            x: core.x,
            y: core.y,
        };
        // SAFETY: `args` is valid for `args.len()` reads.
        check(unsafe {
            sys::ttr_program_set_runtime_args(self.raw(), kernel.0, c, args.as_ptr(), args.len())
        })
    }

    /// Sets a kernel's common runtime args (the same on every core).
    pub fn set_common_runtime_args(&mut self, kernel: KernelId, args: &[u32]) -> Result<()> {
        // SAFETY: `args` is valid for `args.len()` reads.
        check(unsafe {
            sys::ttr_program_set_common_runtime_args(
                self.raw(),
                kernel.0,
                args.as_ptr(),
                args.len(),
            )
        })
    }

    /// Counters of one kernel, or of all kernels with `None`, over every core and run.
    pub fn counters(&self, kernel: Option<KernelId>) -> Result<Counters> {
        let k = match kernel {
            Some(KernelId(id)) => i32::try_from(id).map_err(|_| Error::TooLarge("kernel id"))?,
            None => -1,
        };
        let mut c = sys::ttr_counters::default();
        // SAFETY: valid program and out-pointer.
        check(unsafe { sys::ttr_program_counters(self.raw(), k, &mut c) })?;
        Ok(Counters::from_raw(&c))
    }

    /// Counters of one kernel on one logical core.
    pub fn core_counters(&self, kernel: KernelId, core: CoreCoord) -> Result<Counters> {
        let mut c = sys::ttr_counters::default();
        let at = sys::ttr_core {
            x: core.x,
            y: core.y,
        };
        // SAFETY: valid program and out-pointer.
        check(unsafe { sys::ttr_program_core_counters(self.raw(), kernel.0, at, &mut c) })?;
        Ok(Counters::from_raw(&c))
    }

    /// NoC link and DRAM bank occupancy of every run since creation or the last
    /// [`Program::reset_counters`].
    pub fn occupancy(&self) -> Result<Occupancy> {
        let mut raw = Box::<sys::ttr_occupancy>::default();
        // SAFETY: valid program and out-pointer.
        check(unsafe { sys::ttr_program_occupancy(self.raw(), &mut *raw) })?;
        Ok(Occupancy::from_raw(raw))
    }

    /// Zeroes the counters and the occupancy.
    pub fn reset_counters(&mut self) -> Result<()> {
        // SAFETY: valid program.
        check(unsafe { sys::ttr_program_reset_counters(self.raw()) })
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the handle came from ttr_program_create and is freed once.
        unsafe { sys::ttr_program_free(self.raw()) }
    }
}
