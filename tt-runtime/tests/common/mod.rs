//! Shared helpers of the emulator tests: a DRAM -> CB -> compute -> CB -> DRAM pipeline on one
//! core, with small hand-written reader and writer kernels.

#![allow(dead_code)]

use tt_runtime::{
    CbSpec, CoreCoord, CoreRange, Counters, DataFormat, Device, Dispatch, KernelSpec, MathFidelity,
    Result,
};

/// Reads `na` tiles of buffer A into cb 0, then `nb` tiles of buffer B into cb 1.
/// Args: a_addr, b_addr, na, nb.
pub const READER: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t a = get_arg_val<uint32_t>(0);
    const uint32_t b = get_arg_val<uint32_t>(1);
    const uint32_t na = get_arg_val<uint32_t>(2);
    const uint32_t nb = get_arg_val<uint32_t>(3);
    const InterleavedAddrGen<true> ga{a, get_tile_size(0)};
    for (uint32_t i = 0; i < na; ++i) {
        cb_reserve_back(0, 1);
        noc_async_read_page(i, ga, get_write_ptr(0));
        noc_async_read_barrier();
        cb_push_back(0, 1);
    }
    if (nb > 0) {
        const InterleavedAddrGen<true> gb{b, get_tile_size(1)};
        for (uint32_t i = 0; i < nb; ++i) {
            cb_reserve_back(1, 1);
            noc_async_read_page(i, gb, get_write_ptr(1));
            noc_async_read_barrier();
            cb_push_back(1, 1);
        }
    }
}
"#;

/// Writes `n` tiles of cb 16 to a DRAM buffer. Args: out_addr, n.
pub const WRITER: &str = r#"
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t out = get_arg_val<uint32_t>(0);
    const uint32_t n = get_arg_val<uint32_t>(1);
    const InterleavedAddrGenFast<true> g{out, get_tile_size(16), DataFormat::Float16_b};
    for (uint32_t i = 0; i < n; ++i) {
        cb_wait_front(16, 1);
        noc_async_write_page(i, g, get_read_ptr(16));
        noc_async_write_barrier();
        cb_pop_front(16, 1);
    }
}
"#;

pub fn device() -> Device {
    match Device::open(Dispatch::Eth) {
        Ok(d) => d,
        Err(e) => panic!("cannot open the emulator: {e}"),
    }
}

pub fn core0() -> CoreRange {
    CoreRange::single(CoreCoord::new(0, 0))
}

/// A one-core pipeline: reader -> compute -> writer.
pub struct Pipeline<'a> {
    pub a: &'a [u8],
    pub a_format: DataFormat,
    pub b: Option<(&'a [u8], DataFormat)>,
    pub out_tiles: u32,
    pub out_format: DataFormat,
    pub compute: &'a str,
    pub compute_args: Vec<u32>,
    pub fidelity: MathFidelity,
    pub fp32_dest: bool,
    /// CB ids the compute kernel unpacks straight into DST (UnpackToDestFp32).
    pub unpack_to_dest_fp32: Vec<u32>,
}

impl<'a> Pipeline<'a> {
    pub fn new(a: &'a [u8], a_format: DataFormat, compute: &'a str) -> Self {
        Pipeline {
            a,
            a_format,
            b: None,
            out_tiles: 1,
            out_format: DataFormat::Float16B,
            compute,
            compute_args: Vec::new(),
            fidelity: MathFidelity::HiFi4,
            fp32_dest: false,
            unpack_to_dest_fp32: Vec::new(),
        }
    }

    /// Runs it; returns the output bytes and the compute kernel's counters.
    pub fn run(&self) -> Result<(Vec<u8>, Counters)> {
        let dev = device();
        let cores = [core0()];
        let ta = self.a_format.tile_size();
        let na = (self.a.len() as u32) / ta;
        let a = dev.dram_buffer(self.a.len() as u64, ta)?;
        a.write(self.a)?;
        let mut prog = dev.program()?;
        prog.add_cb(&CbSpec::tiles(0, &cores, na, self.a_format))?;
        let (b_addr, nb, _b_buf) = match self.b {
            Some((bytes, format)) => {
                let tb = format.tile_size();
                let buf = dev.dram_buffer(bytes.len() as u64, tb)?;
                buf.write(bytes)?;
                let nb = (bytes.len() as u32) / tb;
                prog.add_cb(&CbSpec::tiles(1, &cores, nb, format))?;
                (buf.address(), nb, Some(buf))
            }
            None => (0, 0, None),
        };
        prog.add_cb(&CbSpec::tiles(16, &cores, 2, self.out_format))?;
        let tout = self.out_format.tile_size();
        let out = dev.dram_buffer(u64::from(self.out_tiles * tout), tout)?;
        let r = prog.add_kernel(&KernelSpec::reader("reader", READER, &cores))?;
        let compute = KernelSpec::compute("compute", self.compute, &cores)
            .compile_args(&self.compute_args)
            .fidelity(self.fidelity)
            .fp32_dest_acc(self.fp32_dest);
        let c = prog.add_kernel(
            &self
                .unpack_to_dest_fp32
                .iter()
                .fold(compute, |spec, &cb| spec.unpack_to_dest_fp32(cb)),
        )?;
        let w = prog.add_kernel(&KernelSpec::writer("writer", WRITER, &cores))?;
        let at = CoreCoord::new(0, 0);
        prog.set_runtime_args(r, at, &[a.address(), b_addr, na, nb])?;
        prog.set_runtime_args(w, at, &[out.address(), self.out_tiles])?;
        dev.enqueue(&prog)?;
        dev.finish()?;
        Ok((out.read_vec()?, prog.counters(Some(c))?))
    }
}

/// Deterministic pseudo-random values in [-1, 1), exactly representable in bf16.
pub fn bf16_values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = ((s >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0;
            tt_runtime::host::bf16_to_f32(tt_runtime::host::f32_to_bf16(v as f32))
        })
        .collect()
}

/// Unwraps an expected error and returns its message.
pub fn expect_err<T: std::fmt::Debug>(r: Result<T>) -> tt_runtime::Error {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e,
    }
}

/// A writer kernel and a reader kernel (whole sources) on two cores with a 16-byte one-page CB 0
/// and semaphore 0 each, args 0 and 1 the other core's NoC coordinates. The scheduler runs core
/// (0,0) first: the writer there unless `receiver_first`.
pub fn writer_and_reader(writer: &str, reader: &str, receiver_first: bool) -> Result<()> {
    writer_and_reader_in(writer, reader, receiver_first, Cb0::Own)
}

/// Where [`writer_and_reader_in`] places its 16-byte CB 0.
#[derive(Clone, Copy, Debug)]
pub enum Cb0 {
    /// Among the program's own CBs.
    Own,
    /// `offset` bytes into an L1 buffer of `offset + 16` bytes (`Program::add_cb_in_at`).
    InBuffer { offset: u32 },
}

/// [`writer_and_reader`], with CB 0 placed as `cb0` says.
pub fn writer_and_reader_in(
    writer: &str,
    reader: &str,
    receiver_first: bool,
    cb0: Cb0,
) -> Result<()> {
    let dev = device();
    let (from, to) = if receiver_first { (1, 0) } else { (0, 1) };
    let both = [CoreRange::new(CoreCoord::new(0, 0), CoreCoord::new(1, 0))];
    let mut prog = dev.program()?;
    let spec = CbSpec {
        id: 0,
        cores: both.to_vec(),
        total_size: 16,
        page_size: 16,
        format: DataFormat::UInt32,
    };
    match cb0 {
        Cb0::Own => prog.add_cb(&spec)?,
        Cb0::InBuffer { offset } => {
            prog.add_cb_in_at(&spec, &dev.l1_buffer(offset + 16)?, offset)?
        }
    }
    prog.add_semaphore(&both, 0)?;
    let sender = [CoreRange::single(CoreCoord::new(from, 0))];
    let receiver = [CoreRange::single(CoreCoord::new(to, 0))];
    let w = prog.add_kernel(&KernelSpec::writer("sender", writer, &sender))?;
    let r = prog.add_kernel(&KernelSpec::reader("receiver", reader, &receiver))?;
    let (a, b) = (
        dev.worker_core(CoreCoord::new(from, 0))?,
        dev.worker_core(CoreCoord::new(to, 0))?,
    );
    prog.set_runtime_args(w, CoreCoord::new(from, 0), &[b.x, b.y])?;
    prog.set_runtime_args(r, CoreCoord::new(to, 0), &[a.x, a.y])?;
    dev.enqueue(&prog)
}

/// The writer writes 16 bytes into the reader's CB 0 and increments the reader's semaphore 0,
/// `rounds` times; the reader waits for it and pushes the page each time, reserving it again
/// and, from the second round on, telling the writer by the writer's semaphore 0 that it popped
/// the last ([`writer_and_reader_in`], CB 0 placed as `cb0` says). `diagnostics.rs` has the same
/// protocol with a wait or a signal left out.
pub fn remote_push(receiver_first: bool, rounds: u32, cb0: Cb0) -> Result<()> {
    let writer = format!(
        "const uint32_t x = get_arg_val<uint32_t>(0), y = get_arg_val<uint32_t>(1);\n\
         for (uint32_t r = 0; r < {rounds}; ++r) {{\n\
             if (r > 0) noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(get_semaphore(0)), r);\n\
             noc_async_write(get_write_ptr(0), get_noc_addr(x, y, get_write_ptr(0)), 16);\n\
             noc_async_write_barrier();\n\
             noc_semaphore_inc(get_noc_addr(x, y, get_semaphore(0)), 1);\n\
         }}"
    );
    let reader = format!(
        "const uint32_t x = get_arg_val<uint32_t>(0), y = get_arg_val<uint32_t>(1);\n\
         for (uint32_t r = 0; r < {rounds}; ++r) {{\n\
             cb_reserve_back(0, 1);\n\
             if (r > 0) noc_semaphore_inc(get_noc_addr(x, y, get_semaphore(0)), 1);\n\
             noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(get_semaphore(0)), r + 1);\n\
             cb_push_back(0, 1);\n\
             cb_wait_front(0, 1);\n\
             cb_pop_front(0, 1);\n\
         }}"
    );
    writer_and_reader_in(
        &data_movement(&writer),
        &data_movement(&reader),
        receiver_first,
        cb0,
    )
}

/// A data-movement kernel source with `body` as its `kernel_main`.
pub fn data_movement(body: &str) -> String {
    format!("#include \"api/dataflow/dataflow_api.h\"\nvoid kernel_main() {{\n{body}\n}}\n")
}
