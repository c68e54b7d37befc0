//! NMS and keypoint candidates executed on the tt-runtime emulator from a score map the host
//! uploads (the `scores` node is external): the device's NMS map must be bit-identical to the
//! reference `nms` of the same map, and its candidates identical — as a set per region, and as a
//! list after the host's ordering — to the reference selection on the device's NMS map.
//! Random maps are quantised to a few levels so that windows hold many ties.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{fixture_dense, run, Rng};
use kernel_gen::kir::Arg;
use kernel_gen::layout::host::{decode_candidates, pack_map, unpack_map};
use kernel_gen::layout::{DeviceTensor, Part};
use kernel_gen::ops::select_keypoints::merge;
use kernel_gen::plan::Content;
use kernel_gen::{compile, report, Compiled, Grid, PlanError, PlanParams};
use superpoint_graph::reference::{nms::nms, select::select_keypoints};
use superpoint_graph::{names, superpoint_with, Graph, Keypoint, SuperPointParams, Tensor};

/// The superpoint graph cut to `scores → nms → keypoints`, the scores uploaded by the host.
fn nms_graph(width: usize, height: usize, radius: usize, threshold: f32, border: usize) -> Graph {
    superpoint_with(&SuperPointParams {
        frame_width: width,
        frame_height: height,
        nms_radius: radius,
        keypoint_threshold: threshold,
        border,
        max_keypoints: -1,
    })
    .pruned(&[names::KEYPOINTS])
}

fn params(grid: Grid) -> PlanParams {
    external_params(grid, names::SCORES)
}

fn external_params(grid: Grid, external: &str) -> PlanParams {
    PlanParams {
        grid,
        external: BTreeSet::from([external.to_string()]),
        ..PlanParams::default()
    }
}

/// A random H×W map: each pixel is nonzero with probability `density`, then one of `levels`
/// equal steps in (0, 1]. A few levels make ties; a density of a few pixels per window keeps the
/// windows from all holding the top level, so the result depends on each window's exact extent.
fn quantised_map(width: usize, height: usize, levels: u64, density: f64, seed: u64) -> Tensor<f32> {
    let mut rng = Rng::new(seed);
    let data = (0..width * height)
        .map(|_| {
            let nonzero = ((rng.next_u64() % 1_000_000) as f64) < density * 1e6;
            let level = 1 + rng.next_u64() % levels;
            if nonzero {
                level as f32 / levels as f32
            } else {
                0.0
            }
        })
        .collect();
    Tensor::from_vec(1, height, width, data).expect("shape")
}

/// About three nonzero pixels per (2r+1)² window.
fn density(radius: usize) -> f64 {
    (3.0 / ((2 * radius + 1) * (2 * radius + 1)) as f64).min(1.0)
}

fn bits(t: &Tensor<f32>) -> Vec<u32> {
    t.data.iter().map(|v| v.to_bits()).collect()
}

fn candidates_layout(compiled: &Compiled) -> DeviceTensor {
    compiled
        .program
        .buffers
        .iter()
        .find_map(|b| match &b.content {
            Content::Output {
                tensor: t @ DeviceTensor::Candidates { .. },
                part: Part::Main,
            } => Some(*t),
            _ => None,
        })
        .expect("a candidates buffer")
}

/// What the device produced from `scores`.
struct DeviceResult {
    map: Tensor<f32>,
    records: Vec<u8>,
    counts: Vec<u8>,
    candidates: DeviceTensor,
    compiled: Compiled,
}

fn run_device(graph: &Graph, grid: Grid, scores: &Tensor<f32>) -> DeviceResult {
    run_from(graph, grid, names::SCORES, scores)
}

/// Runs the program that starts from node `external`'s output, uploaded as `map`.
fn run_from(graph: &Graph, grid: Grid, external: &str, map: &Tensor<f32>) -> DeviceResult {
    let compiled = compile(graph, &external_params(grid, external)).expect("compiles");
    let mut inputs = BTreeMap::new();
    inputs.insert(
        external.to_string(),
        pack_map(map).expect("a one-channel map of whole tiles"),
    );
    let dev = common::open(&compiled);
    let steps = [names::NMS, names::KEYPOINTS];
    let (buffers, times) = run(&dev, &compiled, &inputs, &steps);
    println!(
        "{}x{} grid {}x{}: {times:?}",
        map.width, map.height, grid.x, grid.y
    );
    DeviceResult {
        map: unpack_map(&buffers[names::NMS], map.height, map.width).expect("map size"),
        records: buffers[names::KEYPOINTS].clone(),
        counts: buffers[&format!("{}.counts", names::KEYPOINTS)].clone(),
        candidates: candidates_layout(&compiled),
        compiled,
    }
}

/// The per-core tile runs of the kernel writing the candidates, in region order.
fn region_tiles(compiled: &Compiled) -> Vec<(u32, u32)> {
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

/// The reference NMS as the device computes it: the device's window maximum (`binary_max_tile`,
/// SFPSWAP's sign-magnitude order: -NaN < -inf < ... < +inf < +NaN) is a +NaN wherever the window
/// holds one, and nothing equals a NaN, so every pixel within `radius` of a +NaN is suppressed;
/// the reference's `f32::max` skips NaN instead. Elsewhere the two agree.
fn device_nms(scores: &Tensor<f32>, radius: usize) -> Tensor<f32> {
    let mut out = nms(scores, radius);
    let (h, w) = (scores.height, scores.width);
    for (i, v) in scores.data.iter().enumerate() {
        if v.is_nan() && v.is_sign_positive() {
            let (y, x) = (i / w, i % w);
            for wy in y.saturating_sub(radius)..(y + radius + 1).min(h) {
                for wx in x.saturating_sub(radius)..(x + radius + 1).min(w) {
                    out.data[wy * w + wx] = 0.0;
                }
            }
        }
    }
    out
}

/// Checks the NMS map bit for bit against [`device_nms`], then the candidates against the
/// reference selection on the device's map: every record in its region's tiles, the set, and the
/// ordered (and cut) list.
fn check(
    device: &DeviceResult,
    scores: &Tensor<f32>,
    radius: usize,
    threshold: f32,
    border: usize,
) {
    let expected_map = device_nms(scores, radius);
    assert!(
        bits(&device.map) == bits(&expected_map),
        "NMS map differs from the reference at {} pixels",
        bits(&device.map)
            .iter()
            .zip(bits(&expected_map))
            .filter(|(a, b)| **a != *b)
            .count()
    );
    let DeviceTensor::Candidates {
        height,
        width,
        regions,
        capacity,
    } = device.candidates
    else {
        panic!("not candidates");
    };
    let decoded = decode_candidates(
        &device.records,
        &device.counts,
        regions,
        capacity,
        width,
        height,
    )
    .expect("valid candidate buffers");
    let runs = region_tiles(&device.compiled);
    assert_eq!(runs.len(), regions as usize);
    for (slot, k) in &decoded {
        let (start, count) = runs[(slot / capacity) as usize];
        let tile = (k.y / 32) * (width / 32) + k.x / 32;
        assert!(
            (start..start + count).contains(&tile),
            "record {slot} at ({}, {}) is outside its region's tiles",
            k.x,
            k.y
        );
    }
    let reference = select_keypoints(&device.map, threshold, border, -1);
    let key = |k: &Keypoint| (k.y, k.x, k.score.to_bits());
    let got: BTreeSet<_> = decoded.iter().map(|(_, k)| key(k)).collect();
    let want: BTreeSet<_> = reference.iter().map(key).collect();
    assert_eq!(got.len(), decoded.len(), "duplicate candidates");
    assert_eq!(got, want, "candidate sets differ");
    for max in [-1, 0, 7, reference.len() as i64 / 2] {
        let merged = merge(&device.records, &device.counts, &device.candidates, max)
            .expect("valid candidate buffers");
        let list: Vec<Keypoint> = merged.into_iter().map(|(_, k)| k).collect();
        assert_eq!(
            list,
            select_keypoints(&device.map, threshold, border, max),
            "ordered list, max_keypoints {max}"
        );
    }
    println!(
        "{} candidates in {regions} regions, {} kept pixels",
        decoded.len(),
        device.map.data.iter().filter(|v| **v != 0.0).count()
    );
}

fn random_case(width: usize, height: usize, radius: usize, grid: Grid, seed: u64) {
    // Threshold on a level: the strict comparison drops every pixel of that level.
    let (threshold, border) = (0.5, 4);
    let scores = quantised_map(width, height, 4, density(radius), seed);
    let graph = nms_graph(width, height, radius, threshold, border);
    let device = run_device(&graph, grid, &scores);
    check(&device, &scores, radius, threshold, border);
}

#[test]
fn radius_1_on_64x64_and_96x32() {
    random_case(64, 64, 1, Grid::ETH_DISPATCH, 1);
    random_case(96, 32, 1, Grid::TENSIX_DISPATCH, 2);
}

#[test]
fn radius_2_on_64x64_and_96x32() {
    random_case(64, 64, 2, Grid::TENSIX_DISPATCH, 3);
    random_case(96, 32, 2, Grid::ETH_DISPATCH, 4);
}

#[test]
fn radius_4_on_64x64_and_96x32() {
    random_case(64, 64, 4, Grid::ETH_DISPATCH, 5);
    random_case(96, 32, 4, Grid::TENSIX_DISPATCH, 6);
}

#[test]
fn radius_8_on_64x64_and_96x32() {
    random_case(64, 64, 8, Grid::TENSIX_DISPATCH, 7);
    random_case(96, 32, 8, Grid::ETH_DISPATCH, 8);
}

/// More tiles than cores (5×4 = 20 tiles on a 4×2 grid): cores own runs of several tiles that
/// wrap across tile rows, and regions hold several pages' worth of capacity. Two levels only, a
/// threshold below every positive score and no border.
#[test]
fn several_tiles_per_core_with_two_levels_and_no_border() {
    let (width, height, radius, threshold, border) = (160, 128, 3, 0.25, 0);
    let scores = quantised_map(width, height, 2, 1.0, 9);
    let graph = nms_graph(width, height, radius, threshold, border);
    let device = run_device(&graph, Grid { x: 4, y: 2 }, &scores);
    check(&device, &scores, radius, threshold, border);
}

/// A negative threshold and no border make every pixel a candidate (suppressed ones as +0):
/// each region fills its whole capacity with exactly one full page per tile.
#[test]
fn every_pixel_a_candidate_fills_the_regions_exactly() {
    let (width, height, radius, threshold, border) = (160, 128, 2, -0.25, 0);
    let scores = quantised_map(width, height, 3, density(radius), 10);
    let graph = nms_graph(width, height, radius, threshold, border);
    let device = run_device(&graph, Grid { x: 4, y: 2 }, &scores);
    check(&device, &scores, radius, threshold, border);
}

/// One tile column (the row pass has no neighbours) with the largest radius, and a border wider
/// than half the map, which selects nothing.
#[test]
fn one_tile_wide_map_and_a_border_wider_than_the_map() {
    for (radius, border) in [(8, 4), (3, 40)] {
        let scores = quantised_map(32, 96, 3, density(radius), 11);
        let graph = nms_graph(32, 96, radius, 0.1, border);
        let device = run_device(&graph, Grid::TENSIX_DISPATCH, &scores);
        check(&device, &scores, radius, 0.1, border);
    }
}

/// Scores a denormal apart: the levels are the smallest normals 2^-126 · (1 + k · 2^-23), so a
/// suppressed pixel and its window maximum differ by less than 2^-126 and a subtraction on the
/// SFPU would flush the difference and keep them. Plus +NaN pixels (suppressed; unlike the host's
/// maximum, the device's takes a +NaN as the largest value, so its whole window is suppressed:
/// [`device_nms`]) and +inf ones (kept where they are the maximum).
#[test]
fn scores_a_denormal_apart_nan_and_inf_compare_exactly() {
    let (width, height, radius, threshold, border) = (96, 64, 2, 0.0, 4);
    let mut scores = quantised_map(width, height, 4, density(radius), 14);
    for v in &mut scores.data {
        if *v != 0.0 {
            *v = f32::from_bits(f32::MIN_POSITIVE.to_bits() + (*v * 4.0) as u32 - 1);
        }
    }
    for (i, v) in scores.data.iter_mut().enumerate() {
        match i % 211 {
            0 => *v = f32::NAN,
            1 if i % 5 == 0 => *v = f32::INFINITY,
            _ => {}
        }
    }
    let expected = nms(&scores, radius);
    let close_calls = scores
        .data
        .iter()
        .zip(&expected.data)
        .filter(|(s, kept)| **s > 0.0 && s.is_finite() && **kept == 0.0)
        .count();
    assert!(
        close_calls > 50,
        "only {close_calls} suppressed tiny scores"
    );
    assert!(expected.data.contains(&f32::INFINITY));
    let graph = nms_graph(width, height, radius, threshold, border);
    let device = run_device(&graph, Grid::TENSIX_DISPATCH, &scores);
    check(&device, &scores, radius, threshold, border);
}

/// Scores that differ only below TF32's 10 mantissa bits: the levels are 0.5 · (1 + k · 2^-23),
/// k = 1..4. Through SrcA every level is cut to 0.5, equal to its window's maximum, and the mask
/// would keep every nonzero pixel; the dispatch program has the compute kernel unpack the tiles it
/// transposes and compares straight to the fp32 DST (UnpackToDestFp32), so NMS suppresses
/// exactly as the reference does.
#[test]
fn scores_that_differ_below_tf32_precision() {
    let (width, height, radius, threshold, border) = (96, 64, 2, 0.25, 4);
    let mut scores = quantised_map(width, height, 4, density(radius), 15);
    for v in &mut scores.data {
        if *v != 0.0 {
            *v = f32::from_bits(0.5f32.to_bits() + (*v * 4.0) as u32);
        }
    }
    let expected = nms(&scores, radius);
    let close_calls = scores
        .data
        .iter()
        .zip(&expected.data)
        .filter(|(s, kept)| **s > 0.0 && **kept == 0.0)
        .count();
    assert!(close_calls > 50, "only {close_calls} suppressed scores");
    let graph = nms_graph(width, height, radius, threshold, border);
    let device = run_device(&graph, Grid::ETH_DISPATCH, &scores);
    let step = device
        .compiled
        .program
        .step(names::NMS)
        .expect("an NMS step");
    let compute = step
        .kernels
        .iter()
        .find(|k| k.role == kernel_gen::Role::Compute)
        .expect("a compute kernel");
    let marked: BTreeSet<&str> = step
        .cbs
        .iter()
        .filter(|c| compute.unpack_to_dest_fp32.contains(&c.id))
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        marked,
        BTreeSet::from(["cb_shift", "cb_shift_y", "cb_scores", "cb_threshold"])
    );
    check(&device, &scores, radius, threshold, border);
}

/// The fixture's 640×480 dense score map (softmax and fold computed by the HF implementation)
/// with the case's radius, threshold and border, on both grids (300 tiles: runs of 3 and 2 that
/// end mid tile row, so cores exchange column maxima with one or both neighbours).
#[test]
fn fixture_scores_640x480() {
    let scores = fixture_dense("astronaut_default", "scores_dense");
    let (radius, threshold, border) = (4, 0.005, 4);
    let graph = nms_graph(scores.width, scores.height, radius, threshold, border);
    for grid in [Grid::ETH_DISPATCH, Grid::TENSIX_DISPATCH] {
        let device = run_device(&graph, grid, &scores);
        check(&device, &scores, radius, threshold, border);
    }
    let plan = kernel_gen::plan::plan(&graph, &params(Grid::ETH_DISPATCH)).expect("plans");
    let kir = kernel_gen::lower::lower(&plan).expect("lowers");
    print!("{}", report::table(&report::report(&kir)));
}

/// The selection fuses into the NMS writer when both are planned: one step. From an uploaded
/// NMS map (as an NMS-variant program or a host NMS leaves it) it is a program of its own.
#[test]
fn selection_fused_with_nms_or_alone_from_an_uploaded_map() {
    let (width, height, radius, threshold, border) = (96, 64, 2, 0.5, 4);
    let scores = quantised_map(width, height, 4, density(radius), 12);
    let graph = nms_graph(width, height, radius, threshold, border);
    let fused = compile(&graph, &params(Grid::ETH_DISPATCH)).expect("compiles");
    let steps: Vec<&str> = fused
        .program
        .steps
        .iter()
        .map(|s| s.node.as_str())
        .collect();
    assert_eq!(steps, vec![names::NMS]);
    let device = run_from(
        &graph,
        Grid::TENSIX_DISPATCH,
        names::NMS,
        &nms(&scores, radius),
    );
    let steps: Vec<&str> = device
        .compiled
        .program
        .steps
        .iter()
        .map(|s| s.node.as_str())
        .collect();
    assert_eq!(steps, vec![names::KEYPOINTS]);
    check(&device, &scores, radius, threshold, border);
}

/// NMS without a selection after it: the mask writer alone.
#[test]
fn nms_alone_with_the_plain_mask_writer() {
    let (width, height, radius) = (64, 96, 3);
    let scores = quantised_map(width, height, 3, density(radius), 13);
    let graph = nms_graph(width, height, radius, 0.5, 4).pruned(&[names::NMS]);
    let compiled = compile(&graph, &params(Grid::ETH_DISPATCH)).expect("compiles");
    let mut inputs = BTreeMap::new();
    inputs.insert(names::SCORES.to_string(), pack_map(&scores).expect("map"));
    let dev = common::open(&compiled);
    let (buffers, _) = run(&dev, &compiled, &inputs, &[names::NMS]);
    assert!(!buffers.contains_key(names::KEYPOINTS));
    let map = unpack_map(&buffers[names::NMS], height, width).expect("map size");
    assert_eq!(bits(&map), bits(&nms(&scores, radius)));
}

#[test]
fn radius_0_and_above_8_are_plan_errors() {
    for radius in [0, 9] {
        let graph = nms_graph(64, 64, radius, 0.5, 4);
        let err = kernel_gen::plan::plan(&graph, &params(Grid::ETH_DISPATCH)).err();
        assert_eq!(
            err,
            Some(PlanError::NmsRadius {
                node: names::NMS.to_string(),
                radius,
                max: 8
            })
        );
    }
}

/// A positive normal threshold makes the compute kernel hand the writer candidate bits
/// (`max(N, T) == T` on the SFPU). At the smallest normal, with scores 0 to 3 ulps above it, the
/// comparison must still be exact: the level equal to the threshold is dropped, the others kept,
/// +inf kept where it is the maximum, NaN suppressed. The NaNs have their sign bit set: the
/// device's maximum orders them below every number, so unlike a +NaN (see
/// `scores_a_denormal_apart_nan_and_inf_compare_exactly`) they leave their windows' maxima alone.
#[test]
fn candidate_bits_at_the_smallest_normal_threshold_are_exact() {
    let (width, height, radius, border) = (96, 64, 2, 4);
    let threshold = f32::MIN_POSITIVE;
    let mut scores = quantised_map(width, height, 4, density(radius), 15);
    for (i, v) in scores.data.iter_mut().enumerate() {
        if *v != 0.0 {
            *v = f32::from_bits(threshold.to_bits() + (*v * 4.0) as u32 - 1);
        }
        match i % 173 {
            0 => *v = -f32::NAN,
            1 if i % 3 == 0 => *v = f32::INFINITY,
            _ => {}
        }
    }
    let graph = nms_graph(width, height, radius, threshold, border);
    let device = run_device(&graph, Grid::TENSIX_DISPATCH, &scores);
    assert!(
        device
            .compiled
            .sources
            .iter()
            .any(|(f, text)| f.starts_with("nms/") && text.contains("candidates::scan_bits(")),
        "the NMS writer scans candidate bits"
    );
    let at_threshold = device
        .map
        .data
        .iter()
        .filter(|v| v.to_bits() == threshold.to_bits())
        .count();
    assert!(
        at_threshold > 10,
        "only {at_threshold} kept pixels equal the threshold"
    );
    check(&device, &scores, radius, threshold, border);
}

/// The writer's scalar work with candidate bits is charged per tile (the bit words of its rows)
/// and per record, the records being the run's counts: each core's charge must follow the
/// reference candidates of its tiles, and the bound must be every pixel a candidate.
#[test]
fn the_candidate_bit_scan_is_charged_with_the_run_counts() {
    use kernel_gen::kir::Kir;
    use kernel_gen::lower;
    use kernel_gen::model::{self, Counts};
    use kernel_gen::runner::Loaded;
    use tt_runtime::{CostModel, KernelRole};

    let (width, height, radius, threshold, border) = (160, 128, 2, 0.5, 4);
    // Denser on the left: the regions' counts differ.
    let mut rng = Rng::new(16);
    let data = (0..width * height)
        .map(|i| {
            let density = 0.3 * (1.0 - (i % width) as f64 / width as f64);
            let r = rng.next_u64();
            if ((r % 1_000_000) as f64) < density * 1e6 {
                (1 + (r >> 20) % 4) as f32 / 4.0
            } else {
                0.0
            }
        })
        .collect();
    let scores = Tensor::from_vec(1, height, width, data).expect("shape");
    let graph = nms_graph(width, height, radius, threshold, border);
    let grid = Grid { x: 4, y: 2 };
    let params = params(grid);
    let compiled = compile(&graph, &params).expect("compiles");
    let kir: Kir =
        lower::lower(&kernel_gen::plan::plan(&graph, &params).expect("plans")).expect("lowers");
    let dev = common::open(&compiled);
    let loaded = Loaded::load(&dev, &compiled).expect("loads");
    loaded
        .write(names::SCORES, &pack_map(&scores).expect("whole tiles"))
        .expect("scores");
    loaded.run(&dev).expect("runs");
    let steps = loaded.counters().expect("counters");
    let counts_buffer = format!("{}.counts", names::KEYPOINTS);
    assert_eq!(model::count_buffers(&kir), vec![counts_buffer.clone()]);
    let buffers = BTreeMap::from([(
        counts_buffer.clone(),
        loaded.read(&counts_buffer).expect("counts"),
    )]);

    // Independently: the reference candidates by region (region i = core i's tiles).
    let reference = select_keypoints(&nms(&scores, radius), threshold, border, -1);
    let runs = region_tiles(&compiled);
    let mut records = vec![0u64; runs.len()];
    for k in &reference {
        let tile = (k.y / 32) * (width as u32 / 32) + k.x / 32;
        let region = runs
            .iter()
            .position(|(s, n)| (*s..s + n).contains(&tile))
            .expect("every tile in a region");
        records[region] += 1;
    }
    println!("records per region {records:?}, tile runs {runs:?}");
    assert!(records.iter().any(|r| *r != records[0]));

    let node = kir
        .nodes
        .iter()
        .find(|n| n.node == names::NMS)
        .expect("the row pass");
    let cost = CostModel::BLACKHOLE;
    let charged = |counts: Counts| -> Vec<f64> {
        let nodes = model::estimate(&kir, &steps, counts, &cost).expect("models");
        let step = nodes
            .iter()
            .find(|n| n.node == names::NMS)
            .expect("the NMS step");
        node.blocks
            .iter()
            .map(|(core, _)| {
                let (_, ks) = step
                    .work
                    .iter()
                    .find(|(c, _)| c == core)
                    .expect("the core ran");
                ks.iter()
                    .find(|k| k.role == KernelRole::Writer)
                    .expect("a writer")
                    .scalar_cycles
            })
            .collect()
    };
    // The fills (threshold tile: 16 words; bit weights: 16 zero words and 32 weights), 4 bit
    // words for each of a tile's 32 rows, 3 words per record (score read, index and score
    // stored), at the model's cycles per word.
    let cycles = |tiles: u64, records: u64| {
        ((16 + 16 + 32) + tiles * 32 * 4 + records * 3) as f64 * cost.riscv_cycles_per_l1_word
    };
    let expected: Vec<f64> = runs
        .iter()
        .zip(&records)
        .map(|((_, n), r)| cycles(u64::from(*n), *r))
        .collect();
    assert_eq!(charged(Counts::Run(&buffers)), expected);
    let bound: Vec<f64> = runs
        .iter()
        .map(|(_, n)| cycles(u64::from(*n), u64::from(*n) * 1024))
        .collect();
    assert_eq!(charged(Counts::Bound), bound);
}

/// The NMS program of `scores` (160×128: 20 tiles on a 4×2 grid, so runs of 2 or 3 tiles that
/// end mid tile row and every core exchanges column maxima with a neighbour) with the reader's
/// `signals` compile-time arg set to `signals`, run after the intermediate buffer of column
/// maxima was filled with +inf. The NMS map, or the emulator's error.
fn run_poisoned(scores: &Tensor<f32>, signals: u32) -> Result<Tensor<f32>, String> {
    use kernel_gen::runner::Loaded;

    let graph = nms_graph(scores.width, scores.height, 2, 0.5, 4).pruned(&[names::NMS]);
    let mut compiled = compile(&graph, &params(Grid { x: 4, y: 2 })).expect("compiles");
    let step = compiled
        .program
        .steps
        .iter_mut()
        .find(|s| s.node == names::NMS)
        .expect("one NMS step");
    assert_eq!(step.semaphores, 1);
    let reader = step
        .kernels
        .iter_mut()
        .find(|k| k.role == kernel_gen::Role::Reader)
        .expect("a reader");
    let arg = reader
        .compile_args
        .iter_mut()
        .find(|a| a.name == "signals")
        .expect("the reader waits for `signals` increments");
    assert_eq!(arg.value, 3);
    arg.value = signals;
    let dev = common::open(&compiled);
    let loaded = Loaded::load(&dev, &compiled).expect("loads");
    loaded
        .write(names::SCORES, &pack_map(scores).expect("whole tiles"))
        .expect("scores");
    let vertical = format!("{}.vertical", names::NMS);
    let poison = f32::INFINITY.to_le_bytes().repeat(scores.data.len());
    loaded.write(&vertical, &poison).expect("poison");
    loaded
        .run_nodes(&dev, &[names::NMS])
        .map_err(|e| e.to_string())?;
    let bytes = loaded.read(names::NMS).expect("the map");
    Ok(unpack_map(&bytes, scores.height, scores.width).expect("map size"))
}

/// The row pass reads column maxima other cores store in the same program: with the
/// intermediate buffer poisoned (+inf, which would suppress every pixel it reaches), the map is
/// the reference's only because each reader waits for the three signals; without the wait
/// (`signals` 0) the same program reads poison.
#[test]
fn the_row_pass_reads_column_maxima_only_after_their_signals() {
    let scores = quantised_map(160, 128, 4, density(2), 17);
    let expected = bits(&nms(&scores, 2));
    let waited = run_poisoned(&scores, 3).expect("runs");
    assert!(
        bits(&waited) == expected,
        "NMS map differs from the reference"
    );
    let unsynchronised = run_poisoned(&scores, 0).expect("runs");
    let stale = bits(&unsynchronised)
        .iter()
        .zip(&expected)
        .filter(|(a, b)| a != b)
        .count();
    println!("{stale} pixels differ without the wait");
    assert!(stale > 0, "the poison was never read without the wait");
}

/// A signal that never comes (the reader waits for one more than the cores send) is a deadlock
/// the emulator reports, naming the semaphore wait, not a run that passes.
#[test]
fn a_missing_signal_deadlocks_visibly() {
    let scores = quantised_map(160, 128, 4, density(2), 18);
    let err = run_poisoned(&scores, 4).expect_err("deadlocks");
    assert!(
        err.contains("noc_semaphore_wait_min") && err.contains(">= 4): its value is 3"),
        "{err}"
    );
}
