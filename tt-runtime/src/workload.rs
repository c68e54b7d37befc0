//! A reference workload: a grid-wide tile matmul with the in0 operand multicast along each row
//! of cores (kernels in `kernels/grid_matmul/`). The tests check it and the benchmark times it.

use crate::buffer::Buffer;
use crate::device::{CoreCoord, CoreRange, Device};
use crate::error::{Error, Result};
use crate::program::{CbSpec, DataFormat, KernelSpec, MathFidelity, Program};

const READER: &str = include_str!("../kernels/grid_matmul/reader.cpp");
const COMPUTE: &str = include_str!("../kernels/grid_matmul/compute.cpp");
const WRITER: &str = include_str!("../kernels/grid_matmul/writer.cpp");

/// Shape of the workload: `rows x cols` logical cores; core (x, y) computes output tiles
/// (y, x * ct .. x * ct + ct) of C = A B, with A of `rows x kt` tiles and B of `kt x cols * ct` tiles.
#[derive(Debug, Clone, Copy)]
pub struct GridMatmul {
    /// Core rows used (= output tile rows).
    pub rows: u32,
    /// Core columns used.
    pub cols: u32,
    /// Inner dimension in tiles.
    pub kt: u32,
    /// Output tiles per core (1..4 with fp32 DST, 1..8 with bf16).
    pub ct: u32,
    /// Math fidelity of the compute kernel.
    pub fidelity: MathFidelity,
    /// fp32 DST accumulation.
    pub fp32_dest: bool,
    /// Output CB / buffer format.
    pub out_format: DataFormat,
}

/// The program and its buffers, ready to enqueue.
#[derive(Debug)]
pub struct GridMatmulRun {
    /// The program.
    pub program: Program,
    /// A: `rows x kt` bf16 tiles, row-major tile order.
    pub a: Buffer,
    /// B: `kt x (cols * ct)` bf16 tiles.
    pub b: Buffer,
    /// C: `rows x (cols * ct)` tiles of `out_format`.
    pub c: Buffer,
}

impl GridMatmul {
    /// Output tile columns.
    pub fn nt(&self) -> u32 {
        self.cols * self.ct
    }

    /// Tile products per run.
    pub fn tile_matmuls(&self) -> u64 {
        u64::from(self.rows) * u64::from(self.nt()) * u64::from(self.kt)
    }

    /// Builds the program and allocates its buffers on `dev`.
    pub fn build(&self, dev: &Device) -> Result<GridMatmulRun> {
        if self.rows == 0 || self.cols == 0 || self.kt == 0 || self.ct == 0 {
            return Err(Error::InvalidArgument(format!(
                "empty grid matmul {self:?}"
            )));
        }
        let nt = self.nt();
        let grid = [CoreRange::new(
            CoreCoord::new(0, 0),
            CoreCoord::new(self.cols - 1, self.rows - 1),
        )];
        let a = dev.dram_buffer(u64::from(self.rows * self.kt) * 2048, 2048)?;
        let b = dev.dram_buffer(u64::from(self.kt * nt) * 2048, 2048)?;
        let out_tile = self.out_format.tile_size();
        let c = dev.dram_buffer(u64::from(self.rows * nt) * u64::from(out_tile), out_tile)?;
        let mut program = dev.program()?;
        program.add_cb(&CbSpec::tiles(0, &grid, 2, DataFormat::Float16B))?;
        program.add_cb(&CbSpec::tiles(1, &grid, 2 * self.ct, DataFormat::Float16B))?;
        program.add_cb(&CbSpec::tiles(16, &grid, self.ct, self.out_format))?;
        program.add_semaphore(&grid, 0)?;
        program.add_semaphore(&grid, 0)?;
        let reader = program.add_kernel(&KernelSpec::reader("mm_reader", READER, &grid))?;
        let compute = KernelSpec::compute("mm_compute", COMPUTE, &grid)
            .compile_args(&[self.kt, self.ct])
            .fidelity(self.fidelity)
            .fp32_dest_acc(self.fp32_dest);
        program.add_kernel(&compute)?;
        let writer = program.add_kernel(&KernelSpec::writer("mm_writer", WRITER, &grid))?;
        for y in 0..self.rows {
            let sender = dev.worker_core(CoreCoord::new(0, y))?;
            let (lo, hi) = if self.cols > 1 {
                (
                    dev.worker_core(CoreCoord::new(1, y))?,
                    dev.worker_core(CoreCoord::new(self.cols - 1, y))?,
                )
            } else {
                (sender, sender)
            };
            for x in 0..self.cols {
                let at = CoreCoord::new(x, y);
                let n0 = x * self.ct;
                let args = [
                    a.address(),
                    b.address(),
                    y,
                    n0,
                    self.kt,
                    nt,
                    self.ct,
                    u32::from(x == 0),
                    sender.x,
                    sender.y,
                    lo.x,
                    lo.y,
                    hi.x,
                    hi.y,
                    self.cols - 1,
                ];
                program.set_runtime_args(reader, at, &args)?;
                program.set_runtime_args(writer, at, &[c.address(), y, n0, nt, self.ct])?;
            }
        }
        Ok(GridMatmulRun { program, a, b, c })
    }
}
