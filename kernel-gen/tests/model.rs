//! The modeled time charges the descriptor sampler's counted loops with the counts the run
//! produced: an NMS-variant program (NMS, candidates, sampling from an uploaded score map and
//! dense descriptor map) runs on the emulator, and each core's reader scalar charge must be the
//! reader's fixed gathers plus one per-tile gather per tile of 32 of its region's candidates,
//! the candidates counted independently from the reference NMS and selection of the same map.

mod common;

use std::collections::BTreeMap;

use common::{random_tensor, Rng};
use kernel_gen::kir::{Arg, Call, Role, Trips};
use kernel_gen::layout::host::pack_map;
use kernel_gen::layout::{pack_pixel_rows, DeviceTensor};
use kernel_gen::model::{self, Counts};
use kernel_gen::plan::Content;
use kernel_gen::runner::Loaded;
use kernel_gen::{compile, kir, lower, plan, variants, Grid};
use superpoint_graph::reference::{nms::nms, select::select_keypoints};
use superpoint_graph::{names, SuperPointParams, Tensor};
use tt_runtime::CostModel;

const WIDTH: usize = 128;
const HEIGHT: usize = 96;
const RADIUS: usize = 2;

/// A map whose nonzero pixels thin out from left to right, so the regions' counts differ.
fn scores(seed: u64) -> Tensor<f32> {
    let mut rng = Rng::new(seed);
    let data = (0..WIDTH * HEIGHT)
        .map(|i| {
            let density = 0.4 * (1.0 - (i % WIDTH) as f64 / WIDTH as f64);
            let r = rng.next_u64();
            if ((r % 1_000_000) as f64) < density * 1e6 {
                (1 + (r >> 20) % 4) as f32 / 4.0
            } else {
                0.0
            }
        })
        .collect();
    Tensor::from_vec(1, HEIGHT, WIDTH, data).expect("shape")
}

/// The map tiles (start, count) of each region: the runtime args of the kernel writing the
/// candidates, in region order.
fn region_tiles(compiled: &kernel_gen::Compiled) -> Vec<(u32, u32)> {
    let kernel = compiled
        .program
        .steps
        .iter()
        .flat_map(|s| &s.kernels)
        .find(|k| k.arg_index("region").is_some())
        .expect("a kernel writing candidates");
    let at = |name: &str| kernel.arg_index(name).expect("named arg");
    let (start, count) = (at("tile_start"), at("tile_count"));
    kernel
        .core_args()
        .expect("the rules expand")
        .iter()
        .map(|c| match (&c.args[start], &c.args[count]) {
            (Arg::Const(s), Arg::Const(n)) => (*s, *n),
            other => panic!("tile run args {other:?}"),
        })
        .collect()
}

/// Gather bytes of the sampler's reader: (outside its counted loop, per counted trip).
fn reader_gathers(kir: &kir::Kir) -> (u64, u64) {
    let node = kir
        .nodes
        .iter()
        .find(|n| n.node == names::DESCRIPTORS)
        .expect("a sampling node");
    let reader = node
        .kernels
        .iter()
        .find(|k| k.role == Role::Reader)
        .expect("a reader");
    let gathers = |calls: &[Call]| -> u64 {
        calls
            .iter()
            .map(|c| match c {
                Call::L1Gather { bytes } => u64::from(*bytes),
                _ => 0,
            })
            .sum()
    };
    let per_trip = reader
        .body
        .iter()
        .map(|c| match c {
            Call::Loop {
                trips: Trips::Counted,
                body,
            } => gathers(body),
            _ => 0,
        })
        .sum();
    (gathers(&reader.body), per_trip)
}

#[test]
fn the_sampler_reader_is_charged_with_the_run_counts() {
    // Its inputs in DRAM: the test writes them itself.
    let variant = variants::nms_program(
        WIDTH as u32,
        HEIGHT as u32,
        RADIUS,
        Grid::ETH_DISPATCH,
        BTreeMap::new(),
    );
    let compiled = compile(&variant.graph, &variant.params).expect("compiles");
    let kir =
        lower::lower(&plan::plan(&variant.graph, &variant.params).expect("plans")).expect("lowers");
    let (regions, capacity, dense_format) = {
        let tensor = |name: &str| {
            compiled
                .program
                .buffers
                .iter()
                .find_map(|b| match &b.content {
                    Content::External { tensor, .. } | Content::Output { tensor, .. }
                        if b.name == name =>
                    {
                        Some(*tensor)
                    }
                    _ => None,
                })
                .expect("buffer")
        };
        let DeviceTensor::Candidates {
            regions, capacity, ..
        } = tensor(names::KEYPOINTS)
        else {
            panic!("candidates");
        };
        let DeviceTensor::PixelRows { format, .. } = tensor(names::DESCRIPTORS_DENSE) else {
            panic!("pixel rows");
        };
        (regions, capacity, format)
    };

    let scores = scores(5);
    let dense = random_tensor(256, HEIGHT / 8, WIDTH / 8, 6);
    let dev = common::open(&compiled);
    let loaded = Loaded::load(&dev, &compiled).expect("loads");
    loaded
        .write(names::SCORES, &pack_map(&scores).expect("whole tiles"))
        .expect("scores");
    loaded
        .write(
            names::DESCRIPTORS_DENSE,
            &pack_pixel_rows(&dense, dense_format),
        )
        .expect("dense map");
    loaded.run(&dev).expect("runs");
    let steps = loaded.counters().expect("counters");
    let wanted = model::count_buffers(&kir);
    let buffers: BTreeMap<String, Vec<u8>> = wanted
        .iter()
        .map(|name| (name.clone(), loaded.read(name).expect("count buffer")))
        .collect();
    assert_eq!(wanted, vec![format!("{}.counts", names::KEYPOINTS)]);

    // Independently: the reference candidates of the map, by region.
    let defaults = SuperPointParams::default();
    let reference = select_keypoints(
        &nms(&scores, RADIUS),
        defaults.keypoint_threshold,
        defaults.border,
        -1,
    );
    let runs = region_tiles(&compiled);
    assert_eq!(runs.len(), regions as usize);
    let mut counts = vec![0u64; regions as usize];
    for k in &reference {
        let tile = (k.y / 32) * (WIDTH as u32 / 32) + k.x / 32;
        let region = runs
            .iter()
            .position(|(s, n)| (*s..s + n).contains(&tile))
            .expect("every tile in a region");
        counts[region] += 1;
    }
    let bound = u64::from(capacity / 32);
    let trips: Vec<u64> = counts.iter().map(|n| n.div_ceil(32).min(bound)).collect();
    println!("candidates per region {counts:?}, tiles of 32 {trips:?}, bound {bound}");
    assert!(
        trips.iter().any(|t| *t > 1) && trips.iter().any(|t| *t != trips[0]),
        "the regions should differ and some hold several tiles: {trips:?}"
    );
    assert!(trips.iter().all(|t| *t < bound), "below the bound");

    let cost = CostModel::BLACKHOLE;
    let (fixed, per_trip) = reader_gathers(&kir);
    let region_cores: Vec<_> = kir
        .nodes
        .iter()
        .find(|n| n.node == names::DESCRIPTORS)
        .expect("a sampling node")
        .blocks
        .iter()
        .map(|(core, _)| *core)
        .collect();
    assert!(per_trip > 0, "the counted loop gathers");
    let charged = |counts: Counts| -> Vec<f64> {
        let nodes = model::estimate(&kir, &steps, counts, &cost).expect("models");
        let node = nodes
            .iter()
            .find(|n| n.node == names::DESCRIPTORS)
            .expect("the sampling step");
        // Region i runs on core i of the split.
        region_cores
            .iter()
            .map(|core| {
                let (_, ks) = node
                    .work
                    .iter()
                    .find(|(c, _)| c == core)
                    .expect("the core ran");
                ks.iter()
                    .find(|k| k.role == tt_runtime::KernelRole::Reader)
                    .expect("a reader")
                    .scalar_cycles
            })
            .collect()
    };
    let cycles =
        |trips: u64| (fixed + trips * per_trip).div_ceil(4) as f64 * cost.riscv_cycles_per_l1_word;
    let expected: Vec<f64> = trips.iter().map(|t| cycles(*t)).collect();
    assert_eq!(charged(Counts::Run(&buffers)), expected);
    assert_eq!(
        charged(Counts::Bound),
        vec![cycles(bound); regions as usize]
    );
}
