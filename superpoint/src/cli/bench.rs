//! `superpoint bench --backend tensix`: one frame on the Tensix backend with every step
//! launched directly, and each node's modeled device time (`kernel_gen::model` over the
//! emulator's counters and the kernel IR, `tt_runtime::cost`; a model, never a measurement) on
//! the 12×10 and 11×10 grids at the chosen precision, by both cost models: v2, the timeline at
//! measured Blackhole rates (the estimate), and v1, the roofline (the floor), next to the port's
//! measured device time. Loops over run-time counts are charged with the frame's counts (read
//! back after the run); the v1 total at their bound, the worst case, is printed too. The last two
//! lines are the totals per grid. `--calibrate` instead prints v2 against published Blackhole
//! measurements ([`super::calibrate`]).

use anyhow::bail;
use clap::Args;
use kernel_gen::model::{
    Counts, GOAL_US, PORT_MEASURED_US, TIMELINE_TARGET_11X10_US, TIMELINE_TARGET_12X10_US,
};
use kernel_gen::{lower, model, staging};
use superpoint::backend::tensix::{
    checked_in_program, main_variant, TensixConfig, TensixGrid, TensixPrecision,
};
use superpoint::{Backend, DeviceSet, Options, SuperPoint, Warmup};
use superpoint_graph::Tensor;
use tt_runtime::{CostModel, TimelineModel};

use super::model_table::{self, ModeledProgram, ModeledRun};
use super::ModelArgs;

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// The network frame, WIDTHxHEIGHT (multiples of 32).
    #[arg(long, default_value = "640x480", value_name = "WxH")]
    frame: String,
    /// Also write each program's modeled time as JSON, for `superpoint doctor --model` on a card.
    #[arg(long, value_name = "PATH")]
    write_model: Option<std::path::PathBuf>,
    /// Instead, run the calibration programs and print the timeline model against the published
    /// Blackhole measurements they reproduce.
    #[arg(long)]
    calibrate: bool,
}

/// A deterministic textured plane (the modeled time barely depends on the values).
fn plane(width: usize, height: usize) -> anyhow::Result<Tensor<u8>> {
    let data = (0..width * height)
        .map(|i| ((i % width) * 7 + (i / width) * 13 + (i * i) % 251) as u8)
        .collect();
    Tensor::from_vec(1, height, width, data)
        .ok_or_else(|| anyhow::anyhow!("cannot make a {width}x{height} plane"))
}

/// Whether a modeled total meets a goal, for a report line.
fn verdict(us: f64, goal: f64) -> String {
    if us <= goal {
        "met".to_string()
    } else {
        format!("not met ({:.2}x the goal)", us / goal)
    }
}

pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    if args.calibrate {
        return super::calibrate::run();
    }
    if args.model.backend != Backend::Tensix {
        bail!("bench models device time; run it with --backend tensix");
    }
    let options = Options {
        frame: superpoint::options::parse_frame(&args.frame)?,
        ..Options::default()
    };
    options.validate()?;
    let (w, h) = options.frame;
    let plane = plane(w, h)?;
    let cost = CostModel::BLACKHOLE;
    let timeline = TimelineModel::BLACKHOLE;
    let mut totals = Vec::new();
    let precision = args.model.precision;
    let mut runs = Vec::new();
    for grid in [TensixGrid::Eth12x10, TensixGrid::Tensix11x10] {
        let mut builder = SuperPoint::builder()
            .backend(Backend::Tensix)
            .tensix(TensixConfig {
                grid: Some(grid),
                precision,
                ..TensixConfig::default()
            })
            .devices(DeviceSet::Count(1))
            .warmup(Warmup::None);
        if let Some(path) = &args.model.weights {
            builder = builder.weights(path);
        }
        let sp = builder.build()?;
        let Some(tensix) = sp.tensix() else {
            bail!("the Tensix backend did not open");
        };
        // The kernel IR of the same program, for the RISC-V work the emulator cannot count.
        let frame = (w as u32, h as u32);
        let variant = main_variant(frame, None, grid.grid(), precision);
        let planned = staging::plan(&variant.graph, &variant.params)?;
        let kir = lower::lower(&planned)?;
        // The session runs the checked-in program where there is one: its counters only fit
        // this kernel IR if it is what the code compiles now (a compiled one always is).
        if let Some(running) = checked_in_program(frame, frame, grid.grid(), precision) {
            if kernel_gen::compile_plan(&planned)?.program != running {
                bail!(
                    "the checked-in program for {w}x{h} on {} is stale (not what kernel-gen \
                     compiles now): run `cargo run -p kernel-gen` to regenerate it",
                    grid.name()
                );
            }
        }
        let profile = tensix.profile(&plane, &options, &model::count_buffers(&kir))?;
        let nodes = model::estimate(&kir, &profile.steps, Counts::Run(&profile.buffers), &cost)?;
        let bound = model::estimate(&kir, &profile.steps, Counts::Bound, &cost)?;
        let timed = model::timeline(
            &kir,
            &profile.steps,
            Counts::Run(&profile.buffers),
            &timeline,
        )?;
        println!(
            "== {w}x{h} on the {} grid at the {} precision: MODELED device time (v2: tt_runtime::TimelineModel BLACKHOLE, the estimate; v1: the roofline CostModel BLACKHOLE, the floor; dispatch and launch included) ==",
            grid.name(),
            precision.name()
        );
        println!(
            "{:<18} {:>5} {:>8} {:<10} {:>8} {:<13} {:>14}  v2: slowest core's timeline, busiest NoC link and DRAM bank, modeled µs | v1: slowest core and DRAM",
            "node", "cores", "v2 µs", "v2 bound", "v1 µs", "v1 bound", "v1 w/o scalar"
        );
        let (mut total, mut total_without, mut total_v2, mut stages) = (0.0, 0.0, 0.0, 0.0);
        for (n, t) in nodes.iter().zip(&timed) {
            let us = n.with_scalar.seconds() * 1e6;
            let without = n.without_scalar.seconds() * 1e6;
            let v2 = t.step.seconds() * 1e6;
            total += us;
            total_without += without;
            total_v2 += v2;
            stages += t.step.stage_bound_seconds(timeline.clock_hz) * 1e6;
            println!(
                "{:<18} {:>5} {:>8.1} {:<10} {:>8.1} {:<13} {:>14.1}  v2: {} | v1: {}",
                n.node,
                n.with_scalar.cores,
                v2,
                t.step.dominant(),
                us,
                n.with_scalar.bound(),
                without,
                model::why_timeline(&t.step, timeline.clock_hz),
                model::why(&n.with_scalar, cost.clock_hz)
            );
        }
        let target = match grid {
            TensixGrid::Eth12x10 => TIMELINE_TARGET_12X10_US,
            TensixGrid::Tensix11x10 => TIMELINE_TARGET_11X10_US,
        };
        let against = if precision == TensixPrecision::Port {
            verdict(total_v2, target)
        } else {
            "it is set for the port precision".to_string()
        };
        println!(
            "timeline (v2) total: {total_v2:.1} µs over {} programs (the estimate); issue 18's target on {} at the port precision is ≤ {target} µs by v2: {against}",
            timed.len(),
            grid.name(),
        );
        println!(
            "each step at its slowest stage alone (its slowest core's busiest kernel, DRAM or busiest link, plus dispatch; no start-up, no first block): {stages:.1} µs; the programs' own fill is the other {:.1} µs",
            total_v2 - stages
        );
        totals.push((grid.name(), total_v2, total));
        runs.push(ModeledRun {
            grid: grid.name().to_string(),
            precision: precision.name().to_string(),
            frame: [w, h],
            programs: nodes
                .iter()
                .zip(&timed)
                .map(|(n, t)| ModeledProgram {
                    node: n.node.clone(),
                    modeled_us: n.with_scalar.seconds() * 1e6,
                    timeline_us: t.step.seconds() * 1e6,
                })
                .collect(),
        });
        let worst: f64 = bound.iter().map(|n| n.with_scalar.seconds() * 1e6).sum();
        let goal = match (grid, precision) {
            (TensixGrid::Eth12x10, TensixPrecision::Port) => verdict(total, GOAL_US),
            _ => "it is set for 12x10 at the port precision".to_string(),
        };
        println!(
            "modeled total: {total:.1} µs with the scalar RISC-V work (a lower bound), {total_without:.1} µs without, over {} programs (v1, the roofline floor); \
             the port measured {PORT_MEASURED_US} µs on a p150a; DESIGN §6's goal as first set, by v1, is ≤ {GOAL_US} µs: {goal}",
            nodes.len(),
        );
        println!(
            "loops over run-time counts (the NMS writer's candidate records, descriptor sampling) are charged with this frame's counts; with their scalar work at the bound (every candidate region full, the static worst case) the total is {worst:.1} µs"
        );
    }
    if let Some(path) = &args.write_model {
        model_table::write(path, &runs)?;
        println!("wrote the modeled time per program to {}", path.display());
    }
    totals.sort_by_key(|(grid, _, _)| *grid != TensixGrid::Tensix11x10.name());
    for (grid, v2, v1) in totals {
        println!("total {grid}: v2 {v2:.1} µs, roofline {v1:.1} µs");
    }
    Ok(())
}
