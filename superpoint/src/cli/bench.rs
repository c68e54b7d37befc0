//! `superpoint bench --backend tensix`: one frame on the Tensix backend with every step
//! launched directly, and each node's modeled device time (`tt_runtime::cost`, a roofline over
//! the emulator's counters; scalar RISC-V loops are not counted, so the figures are lower
//! bounds) on the 12×10 and 11×10 grids, next to the port's measured device time.

use anyhow::bail;
use clap::Args;
use superpoint::backend::tensix::{modeled, TensixConfig, TensixGrid};
use superpoint::{Backend, Options, SuperPoint};
use superpoint_graph::Tensor;
use tt_runtime::CostModel;

use super::ModelArgs;

/// The port's device time per frame on a p150a (device profiler, one trace replay).
const PORT_MEASURED_US: f64 = 462.8;

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// The network frame, WIDTHxHEIGHT (multiples of 32).
    #[arg(long, default_value = "640x480", value_name = "WxH")]
    frame: String,
}

/// A deterministic textured plane (the modeled time does not depend on the values much).
fn plane(width: usize, height: usize) -> anyhow::Result<Tensor<u8>> {
    let data = (0..width * height)
        .map(|i| ((i % width) * 7 + (i / width) * 13 + (i * i) % 251) as u8)
        .collect();
    Tensor::from_vec(1, height, width, data)
        .ok_or_else(|| anyhow::anyhow!("cannot make a {width}x{height} plane"))
}

pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    if args.model.backend != Backend::Tensix {
        bail!("bench models device time; run it with --backend tensix");
    }
    let options = Options {
        frame: superpoint::options::parse_frame(&args.frame)?,
        ..Options::default()
    };
    options.validate()?;
    let plane = plane(options.frame.0, options.frame.1)?;
    let model = CostModel::BLACKHOLE;
    for grid in [TensixGrid::Eth12x10, TensixGrid::Tensix11x10] {
        let mut builder = SuperPoint::builder()
            .backend(Backend::Tensix)
            .tensix(TensixConfig {
                grid,
                ..TensixConfig::default()
            });
        if let Some(path) = &args.model.weights {
            builder = builder.weights(path);
        }
        let sp = builder.build()?;
        let Some(tensix) = sp.tensix() else {
            bail!("the Tensix backend did not open");
        };
        let steps = tensix.profile(&plane, &options)?;
        let nodes = modeled(&steps, &model);
        println!(
            "== {}x{} on the {} grid: MODELED device time (tt_runtime::cost, BLACKHOLE; without scalar RISC-V loops, a lower bound) ==",
            options.frame.0,
            options.frame.1,
            grid.name()
        );
        println!("{:<18} {:>5} {:>11}  bound", "node", "cores", "modeled µs");
        let mut total = 0.0;
        for n in &nodes {
            let us = n.seconds * 1e6;
            total += us;
            println!("{:<18} {:>5} {:>11.1}  {}", n.node, n.cores, us, n.bound);
        }
        println!(
            "modeled total: {total:.1} µs over {} programs; the port measured {PORT_MEASURED_US} µs on a p150a",
            nodes.len()
        );
    }
    Ok(())
}
