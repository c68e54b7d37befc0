//! `superpoint info`: version, weights source and backends.

use superpoint::backend::cpu::{Isa, ISA_ENV};
use superpoint::Backend;

use super::ModelArgs;

pub fn run(args: &ModelArgs) -> anyhow::Result<()> {
    println!("superpoint {}", env!("CARGO_PKG_VERSION"));
    println!("backends available: {}", Backend::available().join(", "));
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    println!("cpu threads: {threads}");
    println!(
        "cpu instruction set: {} (best on this CPU: {}; {ISA_ENV} forces a lower one)",
        Isa::from_env()?,
        Isa::detected()
    );
    match args.load() {
        Ok(model) => {
            println!("weights: {}", model.weights_source());
            println!("backend: {}", model.backend().name());
            if let Some(t) = model.tensix() {
                let i = t.info();
                println!(
                    "tensix: {} runtime, grid {}, {} dispatch, precision {}, traces {}",
                    i.runtime,
                    i.grid.name(),
                    i.dispatch,
                    i.precision.name(),
                    if i.trace { "on" } else { "off" }
                );
                println!(
                    "tensix dispatch: {} asked, {} obtained; tt-metal ETH-dispatch patch {}: {}",
                    i.selection.requested,
                    i.selection.dispatch,
                    i.selection.eth_patch,
                    i.selection.detection
                );
                println!(
                    "tensix device: {} KiB L1 per core, {} DRAM banks",
                    i.l1_bytes / 1024,
                    i.dram_banks
                );
                for d in &i.devices {
                    println!(
                        "tensix pool device {}: {} grid, {} dispatch, {}",
                        d.stats.id,
                        d.grid.name(),
                        d.dispatch,
                        match &d.stats.failed {
                            Some(why) => format!("failed: {why}"),
                            None => "in the pool".to_string(),
                        }
                    );
                }
                println!(
                    "tensix variants: NMS radius {:?} on the device (others on the host); the default 640x480 trace replays {} programs",
                    i.device_radii, i.default_trace_steps
                );
                for p in &i.programs {
                    println!(
                        "tensix program {} {}x{} from {}x{}: {} programs per trace, trace {}, {} frames",
                        p.kind,
                        p.frame[0],
                        p.frame[1],
                        p.input[0],
                        p.input[1],
                        p.steps,
                        if p.trace_captured { "captured" } else { "not captured yet" },
                        p.frames
                    );
                }
            }
        }
        // Weights asked for by path must load; the default ones may be absent (offline).
        Err(e) if args.weights.is_some() => return Err(e.context("cannot load --weights")),
        Err(e) => println!("weights: not loaded: {e:#}"),
    }
    Ok(())
}
