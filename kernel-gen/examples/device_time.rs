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

use std::collections::BTreeMap;
use std::error::Error;

use kernel_gen::kir::{self, Arg, Call, Kir, Role};
use kernel_gen::plan::Content;
use kernel_gen::{check, plan, program, variants, Compiled, Fidelity, Format, Grid};
use superpoint_graph::{ConvWeights, Op, Tensor, WeightSet};
use tt_runtime::{
    CbSpec, CoreCoord, CoreRange, CostModel, DataFormat, Device, Dispatch, KernelRole, KernelSpec,
    KernelWork, MathFidelity, StepEstimate,
};

/// The port's device time per trace replay on a p150a (device profiler, 23 ops).
const PORT_MEASURED_US: f64 = 462.8;
/// DESIGN §6 goal for the modeled device program.
const GOAL_US: f64 = 250.0;

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

/// Host bytes of every buffer the host writes: the plane, the weights, the resize filters.
fn inputs(
    compiled: &Compiled,
    weights: &WeightSet,
    plane: &Tensor<u8>,
) -> Result<BTreeMap<String, Vec<u8>>, Box<dyn Error>> {
    let mut out = BTreeMap::new();
    for b in &compiled.program.buffers {
        let bytes = match &b.content {
            Content::Input { .. } => Some(kernel_gen::ops::resize::pack_plane(plane)),
            Content::ConvWeights { entry } | Content::ConvBias { entry } => {
                let w = weights
                    .get(entry)
                    .ok_or_else(|| format!("no weights for `{entry}`"))?;
                Some(match b.content {
                    Content::ConvWeights { .. } => kernel_gen::layout::pack_conv_weights(w),
                    _ => kernel_gen::layout::pack_conv_bias(w),
                })
            }
            other => kernel_gen::ops::resize::filter_bytes(other),
        };
        if let Some(bytes) = bytes {
            out.insert(b.name.clone(), bytes);
        }
    }
    Ok(out)
}

fn range(r: &kernel_gen::CoreRange) -> CoreRange {
    CoreRange::new(
        CoreCoord::new(r.start.x, r.start.y),
        CoreCoord::new(r.end.x, r.end.y),
    )
}

fn fidelity(f: Fidelity) -> MathFidelity {
    match f {
        Fidelity::LoFi => MathFidelity::LoFi,
        Fidelity::HiFi2 => MathFidelity::HiFi2,
        Fidelity::HiFi3 => MathFidelity::HiFi3,
        Fidelity::HiFi4 => MathFidelity::HiFi4,
    }
}

/// L1 bytes a kernel rearranges on its RISC-V on a core with `blocks` output blocks.
fn gather_bytes(body: &[Call], blocks: u32) -> u64 {
    let mut bytes = 0;
    kir::walk(body, blocks, 1, &mut |call, times| {
        if let Call::L1Gather { bytes: b } = call {
            bytes += times * u64::from(*b);
        }
    });
    bytes
}

/// One row of the table: a step's estimate with and without the scalar work.
struct Row {
    node: String,
    /// DRAM bytes the kernel IR's static report expects (worst case: no cache hits).
    static_dram_bytes: u64,
    with_scalar: StepEstimate,
    without_scalar: StepEstimate,
}

/// Runs every step of `compiled` once and models it.
fn run(
    dev: &Device,
    compiled: &Compiled,
    kir: &Kir,
    inputs: &BTreeMap<String, Vec<u8>>,
    model: &CostModel,
) -> Result<Vec<Row>, Box<dyn Error>> {
    let program = &compiled.program;
    let mut buffers = BTreeMap::new();
    for b in &program.buffers {
        let buf = dev.dram_buffer(u64::from(b.pages) * u64::from(b.page_bytes), b.page_bytes)?;
        if let Some(bytes) = inputs.get(&b.name) {
            buf.write(bytes)?;
        }
        buffers.insert(b.name.clone(), buf);
    }
    let static_dram: BTreeMap<String, u64> = kernel_gen::report::report(kir)
        .into_iter()
        .map(|r| (r.node, r.dram_read_bytes + r.dram_write_bytes))
        .collect();
    let mut rows = Vec::new();
    for (step, node) in program.steps.iter().zip(&kir.nodes) {
        let ranges: Vec<CoreRange> = step.ranges.iter().map(range).collect();
        let mut prog = dev.program()?;
        for cb in &step.cbs {
            prog.add_cb(&CbSpec {
                id: cb.id,
                cores: ranges.clone(),
                total_size: cb.pages * cb.page_bytes,
                page_size: cb.page_bytes,
                format: match cb.format {
                    Format::Bf16 => DataFormat::Float16B,
                    Format::Fp32 => DataFormat::Float32,
                },
            })?;
        }
        let mut ids = Vec::new();
        for (k, kk) in step.kernels.iter().zip(&node.kernels) {
            let source = compiled
                .sources
                .get(&k.source)
                .ok_or_else(|| format!("no source `{}`", k.source))?;
            let kr: Vec<CoreRange> = k.ranges.iter().map(range).collect();
            let ct: Vec<u32> = k.compile_args.iter().map(|a| a.value).collect();
            let (spec, role) = match k.role {
                Role::Reader => (KernelSpec::reader(&k.name, source, &kr), KernelRole::Reader),
                Role::Writer => (KernelSpec::writer(&k.name, source, &kr), KernelRole::Writer),
                Role::Compute => {
                    let missing = || format!("compute kernel `{}` has no precision", k.name);
                    (
                        KernelSpec::compute(&k.name, source, &kr)
                            .fidelity(fidelity(k.fidelity.ok_or_else(missing)?))
                            .fp32_dest_acc(k.fp32_dest_acc.ok_or_else(missing)?),
                        KernelRole::Compute,
                    )
                }
            };
            let id = prog.add_kernel(&spec.compile_args(&ct))?;
            for core in &k.runtime_args {
                let mut args = Vec::with_capacity(core.args.len());
                for a in &core.args {
                    args.push(match a {
                        Arg::Const(v) => *v,
                        Arg::BufferAddress(name) => buffers
                            .get(name)
                            .ok_or_else(|| format!("no buffer `{name}`"))?
                            .address(),
                    });
                }
                prog.set_runtime_args(id, CoreCoord::new(core.core.x, core.core.y), &args)?;
            }
            ids.push((id, role, kk, &k.ranges));
        }
        dev.enqueue(&prog)
            .map_err(|e| format!("step `{}` failed on the emulator: {e}", step.node))?;

        let mut cores: BTreeMap<(u32, u32), Vec<KernelWork>> = BTreeMap::new();
        for (id, role, kk, kranges) in ids {
            for r in kranges.iter() {
                for y in r.start.y..=r.end.y {
                    for x in r.start.x..=r.end.x {
                        let counters = prog.core_counters(id, CoreCoord::new(x, y))?;
                        let blocks = node
                            .blocks
                            .iter()
                            .find(|(c, _)| c.x == x && c.y == y)
                            .map_or(0, |(_, b)| *b);
                        let scalar = model.l1_rearrange_cycles(gather_bytes(&kk.body, blocks));
                        cores.entry((x, y)).or_default().push(KernelWork {
                            role,
                            counters,
                            scalar_cycles: scalar,
                        });
                    }
                }
            }
        }
        let with: Vec<Vec<KernelWork>> = cores.into_values().collect();
        let without: Vec<Vec<KernelWork>> = with
            .iter()
            .map(|ks| {
                ks.iter()
                    .map(|k| KernelWork {
                        scalar_cycles: 0.0,
                        ..*k
                    })
                    .collect()
            })
            .collect();
        rows.push(Row {
            node: step.node.clone(),
            static_dram_bytes: static_dram
                .get(&step.node)
                .copied()
                .ok_or_else(|| format!("no static report for `{}`", step.node))?,
            with_scalar: model.step(&with),
            without_scalar: model.step(&without),
        });
    }
    Ok(rows)
}

fn why(e: &StepEstimate, clock: f64) -> String {
    let s = &e.slowest;
    let us = |cycles: f64| cycles / clock * 1e6;
    format!(
        "fpu {:.1} sfpu {:.1} pack {:.1} | rd noc {:.1} scalar {:.1} | wr noc {:.1} scalar {:.1} | dram {:.1}",
        us(s.fpu),
        us(s.sfpu),
        us(s.pack),
        us(s.reader_noc),
        us(s.reader_scalar),
        us(s.writer_noc),
        us(s.writer_scalar),
        e.dram_seconds * 1e6
    )
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
    let inputs = inputs(&compiled, &weights, &plane)?;

    let dispatch = if grid == Grid::ETH_DISPATCH {
        Dispatch::Eth
    } else {
        Dispatch::Tensix
    };
    let dev = Device::open(dispatch)?;
    let rows = run(&dev, &compiled, &kir, &inputs, model)?;

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
