//! Runs the SuperPoint main program on whichever tt-runtime backend this build drives — the
//! emulator by default, tt-metal (a card, or Tenstorrent's simulator ttsim) with
//! `--features tt-runtime/metal` — up to and including one node, and writes every buffer of the
//! program but the weights and the input to a folder as `<buffer>.bin`. The input plane is a fixed
//! pattern, the weights come from a file and every other buffer starts zeroed (fresh memory
//! differs between backends), so two builds' folders compare byte for byte
//! (`scripts/ttsim-run.sh` does that).
//!
//! `cargo run -p superpoint --example dump_steps -- WEIGHTS OUT_DIR [--until NODE]
//! [--frame WxH] [--grid 12x10|11x10]` (default: every node of the 640x480 program on 12x10).
//! `--list` prints the program's nodes in run order instead.

use std::path::PathBuf;

use anyhow::{bail, Context};
use kernel_gen::ops::resize::pack_plane;
use kernel_gen::runner::{weight_bytes, Loaded};
use kernel_gen::{variants, Grid};
use superpoint_graph::{names, Tensor};
use tt_runtime::{Device, Dispatch};

struct Args {
    weights: PathBuf,
    out: PathBuf,
    until: Option<String>,
    frame: (u32, u32),
    grid: Grid,
    list: bool,
}

fn parse() -> anyhow::Result<Args> {
    let mut positional = Vec::new();
    let mut args = Args {
        weights: PathBuf::new(),
        out: PathBuf::new(),
        until: None,
        frame: (640, 480),
        grid: Grid::ETH_DISPATCH,
        list: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |flag: &str| it.next().with_context(|| format!("{flag} needs a value"));
        match a.as_str() {
            "--until" => args.until = Some(value("--until")?),
            "--frame" => {
                let v = value("--frame")?;
                let (w, h) = v
                    .split_once('x')
                    .with_context(|| format!("--frame {v}: expected WxH"))?;
                args.frame = (w.parse()?, h.parse()?);
            }
            "--grid" => {
                args.grid = match value("--grid")?.as_str() {
                    "12x10" => Grid::ETH_DISPATCH,
                    "11x10" => Grid::TENSIX_DISPATCH,
                    other => bail!("--grid {other}: expected 12x10 or 11x10"),
                }
            }
            "--list" => args.list = true,
            _ => positional.push(a),
        }
    }
    match positional.as_slice() {
        [w, o] => {
            args.weights = w.into();
            args.out = o.into();
        }
        _ if args.list => {}
        _ => bail!("usage: dump_steps WEIGHTS OUT_DIR [--until NODE] [--frame WxH] [--grid 12x10|11x10] | --list"),
    }
    Ok(args)
}

/// A deterministic u8 plane: diagonal stripes with a few edges, so every stage has structure.
fn pattern(width: usize, height: usize) -> Tensor<u8> {
    let mut plane = Tensor::zeros(1, height, width);
    for y in 0..height {
        for x in 0..width {
            let stripe = (x * 7 + y * 3) % 251;
            let edge = ((x / 40 + y / 30) % 2) * 128;
            plane.data[y * width + x] = (stripe ^ edge) as u8;
        }
    }
    plane
}

fn main() -> anyhow::Result<()> {
    let args = parse()?;
    let variant = variants::main_program(args.frame.0, args.frame.1, None, args.grid);
    let compiled = kernel_gen::compile(&variant.graph, &variant.params)?;
    let mut nodes: Vec<&str> = Vec::new();
    for step in &compiled.program.steps {
        if !nodes.contains(&step.node.as_str()) {
            nodes.push(step.node.as_str());
        }
    }
    if args.list {
        println!("{}", nodes.join("\n"));
        return Ok(());
    }
    let last = match &args.until {
        Some(node) => nodes
            .iter()
            .position(|n| n == node)
            .with_context(|| format!("--until {node}: no such node (--list shows them)"))?,
        None => nodes.len() - 1,
    };
    let weights = superpoint::weights::load_safetensors(&args.weights)?;
    let dispatch = if args.grid == Grid::ETH_DISPATCH {
        Dispatch::Eth
    } else {
        Dispatch::Tensix
    };
    println!("backend: {}", Device::backend_name());
    let dev = Device::open(dispatch)?;
    let loaded = Loaded::load(&dev, &compiled)?;
    let fixed = weight_bytes(&compiled.program, &weights)?;
    for (name, bytes) in &fixed {
        loaded.write(name, bytes)?;
    }
    let plane = pattern(args.frame.0 as usize, args.frame.1 as usize);
    loaded.write(names::INPUT, &pack_plane(&plane))?;
    let results: Vec<&str> = compiled
        .program
        .buffers
        .iter()
        .map(|b| b.name.as_str())
        .filter(|name| *name != names::INPUT && !fixed.contains_key(*name))
        .collect();
    for name in &results {
        let zeros = vec![0u8; loaded.read(name)?.len()];
        loaded.write(name, &zeros)?;
    }
    for node in &nodes[..=last] {
        loaded.run_nodes(&dev, &[*node])?;
        println!("ran {node}");
    }
    std::fs::create_dir_all(&args.out)?;
    for name in &results {
        let path = args.out.join(format!("{name}.bin"));
        std::fs::write(&path, loaded.read(name)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    println!("wrote {} buffers to {}", results.len(), args.out.display());
    Ok(())
}
