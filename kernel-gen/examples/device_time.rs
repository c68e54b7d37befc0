//! Modeled device time of the shipped 640×480 program (issue 5 item 4, DESIGN §6): compiles
//! `variants::main_program` for the 12×10 and 11×10 grids, runs every step once on the
//! tt-runtime emulator with random weights and a random plane, collects each kernel's counters on
//! each core, and prints per node the cores, the modeled µs, what bounds it and why, next to the
//! port's measured 462.8 µs and the §6 goal of ≤ 250 µs. Every figure printed is modeled
//! ([`tt_runtime::cost`]), not measured.
//!
//! Scalar RISC-V work (the kir `L1Gather` bytes: im2col, taps, NMS shifts, table lookups) is
//! read off the kernel IR per core and charged at the model's lower-bound store rate; the
//! table shows the total with it and without it.
//!
//! `cargo run -p kernel-gen --example device_time` (about 1.5 min for both grids on 2 cores; the
//! dev profile is optimised).

use std::error::Error;

use kernel_gen::model::{estimate, why, GOAL_US, PORT_MEASURED_US};
use kernel_gen::runner::Loaded;
use kernel_gen::{check, kir, plan, program, variants, Grid};
use superpoint_graph::{ConvWeights, Op, Tensor, WeightSet};
use tt_runtime::{CostModel, Device, Dispatch};

/// SplitMix64, for reproducible random weights and planes.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn uniform(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

fn random_weights(graph: &superpoint_graph::Graph, rng: &mut Rng) -> WeightSet {
    let mut set = WeightSet::new();
    for node in &graph.nodes {
        if let Op::Conv2d {
            weights,
            in_channels,
            out_channels,
            kernel,
            ..
        } = &node.op
        {
            let scale = 1.0 / ((in_channels * kernel * kernel) as f32).sqrt();
            let count = out_channels * in_channels * kernel * kernel;
            set.insert(
                weights.clone(),
                ConvWeights {
                    out_channels: *out_channels,
                    in_channels: *in_channels,
                    kernel: *kernel,
                    weight: (0..count).map(|_| rng.uniform() * scale).collect(),
                    bias: (0..*out_channels).map(|_| rng.uniform() * 0.2).collect(),
                },
            );
        }
    }
    set
}

fn report(grid: Grid, model: &CostModel) -> Result<(), Box<dyn Error>> {
    let variant = variants::main_program(640, 480, None, grid);
    let planned = plan::plan(&variant.graph, &variant.params)?;
    let kir = kir::lower(&planned)?;
    check::check(&kir, &planned.limits)?;
    let compiled = program::assemble(planned.grid, &planned.buffers, &kir)?;

    let mut rng = Rng(0x5EED);
    let weights = random_weights(&variant.graph, &mut rng);
    let plane_data = (0..640 * 480)
        .map(|_| (rng.next_u64() >> 56) as u8)
        .collect();
    let plane =
        Tensor::from_vec(1, 480, 640, plane_data).ok_or("a 640×480 plane needs 640·480 bytes")?;

    let dispatch = if grid == Grid::ETH_DISPATCH {
        Dispatch::Eth
    } else {
        Dispatch::Tensix
    };
    let dev = Device::open(dispatch)?;
    let loaded = Loaded::load(&dev, &compiled)?;
    loaded.upload_weights(&weights)?;
    loaded.write("input", &kernel_gen::ops::resize::pack_plane(&plane))?;
    loaded.run(&dev)?;
    let rows = estimate(&kir, &loaded.counters()?, model)?;

    println!(
        "\n== {} on {}x{} (MODELED device time, CostModel::BLACKHOLE; launch {:.1} µs per step included) ==",
        variant.name,
        grid.x,
        grid.y,
        model.launch_seconds * 1e6
    );
    println!(
        "{:<18} {:>5} {:>10} {:<13} {:>13} {:<6} {:>14}  slowest core and DRAM, modeled µs (with scalar)",
        "node", "cores", "modeled µs", "bound", "w/o scalar µs", "bound", "DRAM MB (kir)"
    );
    println!(
        "(scalar = RISC-V loops over L1 from the kir L1Gather bytes at {} cycles per 32-bit store, a lower bound; \
         DRAM MB = counted on the emulator, (kir) = the static report's worst case)",
        model.riscv_cycles_per_l1_word
    );
    let (mut total, mut total_without, mut launch) = (0.0, 0.0, 0.0);
    for r in &rows {
        let us = r.with_scalar.seconds() * 1e6;
        let us_without = r.without_scalar.seconds() * 1e6;
        total += us;
        total_without += us_without;
        launch += r.with_scalar.launch_seconds * 1e6;
        println!(
            "{:<18} {:>5} {:>10.1} {:<13} {:>13.1} {:<6} {:>6.1} ({:>5.1})  {}",
            r.node,
            r.with_scalar.cores,
            us,
            r.with_scalar.bound(),
            us_without,
            r.without_scalar.bound(),
            r.with_scalar.dram_bytes as f64 / 1e6,
            r.static_dram_bytes as f64 / 1e6,
            why(&r.with_scalar, model.clock_hz)
        );
    }
    println!(
        "modeled total: {total:.1} µs with scalar RISC-V work (lower bound), {total_without:.1} µs without; \
         {launch:.1} µs of it launch overhead ({} steps)",
        rows.len()
    );
    println!(
        "port measured on silicon: {PORT_MEASURED_US} µs; DESIGN §6 goal: ≤ {GOAL_US} µs modeled"
    );
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let model = CostModel::BLACKHOLE;
    for grid in [Grid::ETH_DISPATCH, Grid::TENSIX_DISPATCH] {
        report(grid, &model)?;
    }
    Ok(())
}
