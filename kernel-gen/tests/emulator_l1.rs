//! Activations in the L1 arena (`PlanParams::l1_activations`, kernel_gen::arena): the packing by
//! lifetime against a hand-computed layout, the kernels' placement compile-time args, and a
//! conv/pool chain run on the emulator with its intermediates in L1 giving the same bytes as with
//! every activation in DRAM, while the steps that only touch L1 tensors move no DRAM bytes.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{bf16_rounded, chain, random_tensor, weight_inputs, weights, Layer};
use kernel_gen::kir::Role;
use kernel_gen::runner::{L1Arena, Loaded};
use kernel_gen::{compile, Compiled, Format, Grid, Limits, PlanParams};

const LAYERS: &[Layer] = &[
    ("c1", 1, 32, 3, true),
    ("pool1", 0, 0, 0, false),
    ("c2", 32, 64, 3, true),
    ("pool2", 0, 0, 0, false),
    ("c3", 64, 33, 3, false),
];

fn compiled(l1: bool, keep: &[&str], limits: Limits) -> Compiled {
    compiled_chain(LAYERS, l1, keep, limits)
}

fn compiled_chain(layers: &[Layer], l1: bool, keep: &[&str], limits: Limits) -> Compiled {
    let graph = chain(64, 64, layers);
    let params = PlanParams {
        l1_activations: l1,
        keep_in_dram: keep.iter().map(|s| s.to_string()).collect(),
        limits,
        ..PlanParams::default()
    };
    compile(&graph, &params).expect("compiles")
}

fn offsets(c: &Compiled) -> BTreeMap<&str, u32> {
    c.program
        .buffers
        .iter()
        .filter_map(|b| b.l1_offset.map(|o| (b.name.as_str(), o)))
        .collect()
}

/// 64×64 frame on 120 banks. Bytes per bank: c1 (128 pages of 2 KiB) 4096; pool1 (32 pages), c2
/// (64) and pool2 (16) 2048; frame (64 row pages of 3·64 bf16) 384. Lifetimes (steps resize 0, c1
/// 1, pool1 2, c2 3, pool2 4, c3 5): frame 0–1, c1 1–2, pool1 2–3, c2 3–4, pool2 4–5. Largest
/// first, then by name: c1 at 0; c2 overlaps neither → 0; pool1 overlaps c1 and c2 → 4096; pool2
/// overlaps c2 → 2048; frame overlaps c1 → 4096. c3 is the graph's output and stays in DRAM.
#[test]
fn buffers_are_packed_by_lifetime_largest_first() {
    let c = compiled(true, &[], Limits::BLACKHOLE);
    let expected = BTreeMap::from([
        ("c1", 0),
        ("frame", 4096),
        ("c2", 0),
        ("pool1", 4096),
        ("pool2", 2048),
    ]);
    assert_eq!(offsets(&c), expected);
    assert_eq!(c.program.l1_arena, 6144);
}

#[test]
fn kept_buffers_and_programs_without_l1_stay_in_dram() {
    let kept = compiled(true, &["pool1"], Limits::BLACKHOLE);
    assert!(!offsets(&kept).contains_key("pool1"));
    assert!(offsets(&kept).contains_key("c1"));
    let dram = compiled(false, &[], Limits::BLACKHOLE);
    assert!(offsets(&dram).is_empty());
    assert_eq!(dram.program.l1_arena, 0);
}

/// With the usable L1 cut to the largest step's CBs plus 5 KiB: c1 (first) takes 0..4096; c2
/// takes 0..2048; pool1 (alive with c1 and c2) would need 4096..6144 and stays in DRAM; pool2
/// takes 2048..4096; frame (alive with c1) fits in 4096..4480. The planner itself
/// shrinks CBs when L1 is short (single-buffered conv streams), so the limit is iterated until the
/// largest step's CBs are those of the program compiled at that limit.
#[test]
fn buffers_that_do_not_fit_stay_in_dram() {
    let largest = |c: &Compiled| {
        c.program
            .steps
            .iter()
            .map(|s| s.cbs.iter().map(|c| c.pages * c.page_bytes).sum::<u32>())
            .max()
            .expect("steps")
    };
    let limits = |cbs: u32| Limits {
        l1_size: Limits::BLACKHOLE.l1_base + cbs + 5120,
        ..Limits::BLACKHOLE
    };
    let mut cbs = largest(&compiled(true, &[], Limits::BLACKHOLE));
    let mut c = compiled(true, &[], limits(cbs));
    for _ in 0..4 {
        if largest(&c) == cbs {
            break;
        }
        cbs = largest(&c);
        c = compiled(true, &[], limits(cbs));
    }
    assert_eq!(largest(&c), cbs, "the CBs settle");
    let expected = BTreeMap::from([("c1", 0), ("c2", 0), ("frame", 4096), ("pool2", 2048)]);
    assert_eq!(offsets(&c), expected);
}

/// Every kernel names the placement of each activation it addresses: `<arg>_dram` is 1 for a
/// DRAM buffer and 0 for an L1 one.
#[test]
fn kernels_get_the_placement_of_each_activation_they_address() {
    let c = compiled(true, &[], Limits::BLACKHOLE);
    let arg = |node: &str, role: Role, name: &str| -> Option<u32> {
        let step = c.program.step(node)?;
        let kernel = step.kernels.iter().find(|k| k.role == role)?;
        kernel
            .compile_args
            .iter()
            .find(|a| a.name == name)
            .map(|a| a.value)
    };
    assert_eq!(arg("c2", Role::Reader, "input_dram"), Some(0));
    assert_eq!(arg("c2", Role::Writer, "output_dram"), Some(0));
    assert_eq!(arg("c3", Role::Writer, "output_dram"), Some(1));
    assert_eq!(arg("frame", Role::Reader, "plane_dram"), Some(1));
    // Weights are not activations: no placement arg.
    assert_eq!(arg("c2", Role::Reader, "weight_dram"), None);
}

/// Runs c1..c3 from a random frame; returns every node's output bytes and each step's DRAM bytes
/// (read + written, all cores).
fn run(c: &Compiled) -> (BTreeMap<String, Vec<u8>>, BTreeMap<String, u64>) {
    run_chain(c, LAYERS)
}

/// [`run`] for the chain of `layers`.
fn run_chain(c: &Compiled, layers: &[Layer]) -> (BTreeMap<String, Vec<u8>>, BTreeMap<String, u64>) {
    let ws = weights(layers, 5);
    let frame = bf16_rounded(&random_tensor(1, 64, 64, 17));
    let dev = common::open(c);
    let loaded = Loaded::load(&dev, c).expect("loads");
    for (name, bytes) in weight_inputs(c, &ws) {
        loaded.write(&name, &bytes).expect("weights");
    }
    loaded
        .write("frame", &common::pack_input("frame", &frame, Format::Bf16))
        .expect("frame");
    // An L1 buffer holds its tensor until a later tensor reuses its bytes: read each output
    // right after its step.
    let outputs = layers
        .iter()
        .map(|l| {
            loaded.run_nodes(&dev, &[l.0]).expect("runs");
            (l.0.to_string(), loaded.read(l.0).expect("read"))
        })
        .collect();
    let dram = loaded
        .counters()
        .expect("counters")
        .into_iter()
        .map(|s| {
            let bytes = s
                .kernels
                .iter()
                .flat_map(|k| &k.cores)
                .map(|(_, c)| c.dram_read_bytes + c.dram_write_bytes)
                .sum();
            (s.node, bytes)
        })
        .collect();
    (outputs, dram)
}

/// The same kernels on the same data give the same bytes whether the intermediates are in L1 or
/// DRAM. In L1, pool1 and pool2 (L1 → L1) move no DRAM bytes, c2 only its weights and bias
/// (9 × 2 weight tiles and 2 bias tiles of 2 KiB, read once by the multicast sender), and c3
/// its weights and bias (18 × 2 and 2 tiles) plus its DRAM output (16 × 16 pixels = 8 blocks ×
/// 2 channel tiles of 2 KiB).
#[test]
fn a_chain_with_its_activations_in_l1_matches_the_chain_in_dram() {
    let (in_dram, dram_bytes) = run(&compiled(false, &[], Limits::BLACKHOLE));
    let (in_l1, l1_bytes) = run(&compiled(true, &[], Limits::BLACKHOLE));
    for (name, bytes) in &in_dram {
        assert!(bytes == &in_l1[name], "{name}: L1 run differs");
    }
    let tile = 2048;
    assert_eq!(l1_bytes["pool1"], 0);
    assert_eq!(l1_bytes["pool2"], 0);
    assert_eq!(l1_bytes["c2"], (9 * 2 + 2) * tile);
    assert_eq!(l1_bytes["c3"], (18 * 2 + 2) * tile + 8 * 2 * tile);
    let moved: BTreeSet<&str> = ["c1", "pool1", "c2", "pool2"].into();
    for node in moved {
        assert!(
            l1_bytes[node] < dram_bytes[node],
            "{node}: {} DRAM bytes in L1 vs {} in DRAM",
            l1_bytes[node],
            dram_bytes[node]
        );
    }
}

/// A chain whose middle conv computes all its output channels on every core (128 blocks of a
/// 64×64 frame on 120 cores) keeps that conv's weights and bias in L1 copies
/// (`plan::resident`), written once at load: its step has no semaphores (no sender multicasts
/// them), its weights and bias CBs live in the copies, and it moves no DRAM bytes at all (its
/// input and output are in the arena, and no weight page is read); every output is the bytes of
/// the same chain with its activations and weights in DRAM. A second run reads the same copies
/// again.
#[test]
fn resident_weights_give_the_same_bytes_and_move_no_dram_bytes() {
    const RESIDENT: &[Layer] = &[
        ("c1", 1, 32, 3, true),
        ("c2", 32, 32, 3, true),
        ("c3", 32, 33, 1, false),
    ];
    let l1 = compiled_chain(RESIDENT, true, &[], Limits::BLACKHOLE);
    let c2 = l1.program.step("c2").expect("c2's step");
    assert_eq!(c2.semaphores, 0);
    let in_buffer = |cb: &str| {
        c2.cbs
            .iter()
            .find(|c| c.name == cb)
            .and_then(|c| c.buffer.clone())
    };
    assert_eq!(in_buffer("cb_weights").as_deref(), Some("c2.weight"));
    assert_eq!(in_buffer("cb_bias").as_deref(), Some("c2.bias"));
    let resident: BTreeSet<&str> = l1
        .program
        .buffers
        .iter()
        .filter(|b| b.resident)
        .map(|b| b.name.as_str())
        .collect();
    assert!(
        resident.contains("c2.weight") && resident.contains("c2.bias"),
        "{resident:?}"
    );
    let dram = compiled_chain(RESIDENT, false, &[], Limits::BLACKHOLE);
    assert!(dram.program.buffers.iter().all(|b| !b.resident));
    let (in_dram, dram_bytes) = run_chain(&dram, RESIDENT);
    let (in_l1, l1_bytes) = run_chain(&l1, RESIDENT);
    for (name, bytes) in &in_dram {
        assert!(
            bytes == &in_l1[name],
            "{name}: the run with resident weights differs"
        );
    }
    assert_eq!(l1_bytes["c2"], 0);
    assert!(dram_bytes["c2"] > 0);
    let (again, _) = run_chain(&l1, RESIDENT);
    assert!(again == in_l1, "a second load and run");
}

/// The plan of the chain of `layers` on a 64×64 frame with its activations in L1.
fn planned_in_l1(layers: &[Layer]) -> kernel_gen::plan::Plan {
    let params = PlanParams {
        l1_activations: true,
        ..PlanParams::default()
    };
    kernel_gen::plan::plan(&chain(64, 64, layers), &params).expect("plans")
}

/// Staged weights (`plan::staged`): the chain of four convs planned with its activations in
/// L1 keeps c2's, c3's and c4's weights in resident copies; made again by hand with c3's
/// weights and bias staged by c2 instead (the conv's kernels are the same either way,
/// `ConvPlan::weights_in_l1`; `plan::staged::add_stage_cbs` gives c2 its CBs in the slots), the
/// arena gives them slots, c3's CBs live in them (tt-runtime's `add_cb_in_at`), c2's writers
/// fill them from DRAM (`ops::stage`), every output is the bytes of the chain in DRAM and c3
/// moves no DRAM bytes; with c2 not staging (no CBs in the slots), c3's output differs.
#[test]
fn staged_weights_give_the_same_bytes() {
    const STAGED: &[Layer] = &[
        ("c1", 1, 32, 3, true),
        ("c2", 32, 32, 3, true),
        ("c3", 32, 64, 3, true),
        ("c4", 64, 33, 1, false),
    ];
    let mut plan = planned_in_l1(STAGED);
    for b in plan.buffers.iter_mut() {
        if b.name == "c3.weight" || b.name == "c3.bias" {
            assert!(b.resident, "{}", b.name);
            b.resident = false;
            b.staged_by = Some("c2".to_string());
        }
    }
    let not_staging = kernel_gen::compile_plan(&plan).expect("compiles");
    kernel_gen::plan::staged::add_stage_cbs(&mut plan.nodes, &plan.buffers).expect("stages");
    let staged = kernel_gen::compile_plan(&plan).expect("compiles");
    // Bytes per bank on 120 banks (steps resize 0, c1 1, c2 2, c3 3, c4 4): c3's output (256
    // pages of 2 KiB: 3 a bank) 6144, alive 3–4, at 0; c1's and c2's (128 pages) 4096, alive
    // 1–2 and 2–3: c1 at 0, c2 above c3's at 6144. The slots, alive 2–3 (c2 to c3), meet c1,
    // c2 and c3: above c2's, at 10,240, c3's weights (9 k tiles by 2 output tiles of 2 KiB:
    // 36,864 B), then its bias (2 tiles) at 47,104; the arena ends at 51,200.
    let offset = |name: &str| {
        let b = staged.program.buffers.iter().find(|b| b.name == name);
        b.and_then(|b| b.l1_offset)
    };
    assert_eq!(offset("c2"), Some(6144));
    assert_eq!(offset("c3.weight"), Some(10_240));
    assert_eq!(offset("c3.bias"), Some(10_240 + 36_864));
    assert_eq!(staged.program.l1_arena, 51_200);
    let c3 = staged.program.step("c3").expect("c3's step");
    assert_eq!(c3.semaphores, 0);
    let in_buffer = |step: &str, cb: &str| {
        let step = staged.program.step(step).expect("step");
        let cb = step.cbs.iter().find(|c| c.name == cb);
        cb.and_then(|c| c.buffer.clone())
    };
    assert_eq!(in_buffer("c3", "cb_weights").as_deref(), Some("c3.weight"));
    assert_eq!(in_buffer("c3", "cb_bias").as_deref(), Some("c3.bias"));
    assert_eq!(
        in_buffer("c2", "cb_stage_weights").as_deref(),
        Some("c3.weight")
    );
    assert_eq!(in_buffer("c2", "cb_stage_bias").as_deref(), Some("c3.bias"));
    // The embedded form (the checked-in program.rs) keeps each slot's stager, without which the
    // runner cannot place the slot: the emitted call rebuilds the buffer whole.
    let module: String = kernel_gen::emit::rust_module(&staged)
        .expect("emits")
        .split_whitespace()
        .collect();
    for b in staged
        .program
        .buffers
        .iter()
        .filter(|b| b.staged_by.is_some())
    {
        let call = format!("staged(\"c2\",buffer(\"{}\"", b.name);
        assert!(module.contains(&call), "{call} not in the emitted module");
        let rebuilt = kernel_gen::emit::staged(
            "c2",
            kernel_gen::emit::buffer(
                &b.name,
                b.pages,
                b.page_bytes,
                b.content.clone(),
                b.l1_offset,
            ),
        );
        assert_eq!(&rebuilt, b);
    }
    let dram = compiled_chain(STAGED, false, &[], Limits::BLACKHOLE);
    let (in_dram, _) = run_chain(&dram, STAGED);
    let (in_l1, l1_bytes) = run_chain(&staged, STAGED);
    for (name, bytes) in &in_dram {
        assert!(
            bytes == &in_l1[name],
            "{name}: the run with staged weights differs"
        );
    }
    assert_eq!(l1_bytes["c3"], 0);
    let (unfilled, _) = run_chain(&not_staging, STAGED);
    assert!(
        unfilled["c3"] != in_dram["c3"],
        "c3 computes from the slots c2 fills"
    );
}

/// A stager that multicasts its own weights (SuperPoint's conv3b, which stages conv4a on 12×10):
/// the chain planned with c2's weights in a resident copy, made again by hand with c2's weights
/// multicast from DRAM (its plan as without a copy: its CBs in no buffer) and c3's weights and
/// bias (128 → 128 channels, 3×3: 294,912 B, as conv4a's) staged by c2. c2 still multicasts
/// its own weights though its stage CBs live in buffers (the slots): every output is the bytes
/// of the chain in DRAM. (Before the fix, `Multicast::of` took any CB in a buffer for resident
/// weights, so c2's cores neither read nor received theirs and computed with stale L1.)
#[test]
fn a_stager_that_multicasts_its_own_weights_computes_with_them() {
    const STAGED: &[Layer] = &[
        ("c1", 1, 32, 3, true),
        ("c2", 32, 128, 3, true),
        ("c3", 128, 128, 3, true),
        ("c4", 128, 33, 1, false),
    ];
    let mut plan = planned_in_l1(STAGED);
    for b in plan.buffers.iter_mut() {
        match b.name.as_str() {
            "c2.weight" | "c2.bias" => b.resident = false,
            "c3.weight" | "c3.bias" => {
                b.resident = false;
                b.staged_by = Some("c2".to_string());
            }
            _ => {}
        }
    }
    for node in plan.nodes.iter_mut().filter(|n| n.name == "c2") {
        let kernel_gen::plan::OpPlan::Conv2d(c) = &mut node.op else {
            panic!("c2 is a conv");
        };
        c.weights_in_l1 = false;
        for cb in node.cbs.iter_mut() {
            cb.buffer = None;
        }
    }
    kernel_gen::plan::staged::add_stage_cbs(&mut plan.nodes, &plan.buffers).expect("stages");
    let staged = kernel_gen::compile_plan(&plan).expect("compiles");
    let dram = compiled_chain(STAGED, false, &[], Limits::BLACKHOLE);
    let (in_dram, _) = run_chain(&dram, STAGED);
    let (in_l1, _) = run_chain(&staged, STAGED);
    for (name, bytes) in &in_dram {
        assert!(
            bytes == &in_l1[name],
            "{name}: the run with a multicasting stager differs"
        );
    }
    let c2 = staged.program.step("c2").expect("c2's step");
    assert!(c2.semaphores > 0, "c2 multicasts its weights");
    assert!(c2.cbs.iter().any(|c| c.name == "cb_stage_weights"));
}

/// Programs on one device share its resident copies by name: a second program of the same chain
/// loads on the first one's arena and copies, but uploading other weights into them is refused
/// (the first program would compute with them); a program that needs a copy the first did not
/// make is refused for want of room (the arena reserved room for the first program's copies
/// only), naming what it needs.
#[test]
fn resident_copies_are_shared_only_with_the_same_weights_and_room() {
    const ONE: &[Layer] = &[
        ("c1", 1, 32, 3, true),
        ("c2", 32, 32, 3, true),
        ("c3", 32, 33, 1, false),
    ];
    const TWO: &[Layer] = &[
        ("c1", 1, 32, 3, true),
        ("c2", 32, 32, 3, true),
        ("c4", 32, 32, 3, true),
        ("c3", 32, 33, 1, false),
    ];
    let one = compiled_chain(ONE, true, &[], Limits::BLACKHOLE);
    let two = compiled_chain(TWO, true, &[], Limits::BLACKHOLE);
    assert!(two
        .program
        .buffers
        .iter()
        .any(|b| b.resident && b.name == "c4.weight"));
    let dev = common::open(&one);
    let arena = L1Arena::new();
    let first = Loaded::load_in(&dev, &one, &arena, None).expect("loads");
    first.upload_weights(&weights(ONE, 5)).expect("weights");
    let second = Loaded::load_in(&dev, &one, &arena, None).expect("shares the copies");
    second
        .upload_weights(&weights(ONE, 5))
        .expect("the same weights again");
    let err = second
        .upload_weights(&weights(ONE, 6))
        .expect_err("other weights are refused")
        .to_string();
    assert!(err.contains("already holds other bytes"), "{err}");
    let err = Loaded::load_in(&dev, &two, &arena, None)
        .err()
        .expect("no room for c4's copies")
        .to_string();
    assert!(err.contains("left room for"), "{err}");
}

/// Two programs on one device share one arena (they run one at a time and keep nothing in L1
/// between runs): runs interleaved on the shared arena give the bytes of a program alone. The
/// frame is an L1 buffer too, so each run writes it first. An arena takes all the L1 its first
/// program's CBs leave, so a device has one.
#[test]
fn programs_of_one_device_share_its_arena() {
    let c = compiled(true, &[], Limits::BLACKHOLE);
    let ws = weights(LAYERS, 5);
    let dev = common::open(&c);
    let names: Vec<&str> = LAYERS.iter().map(|l| l.0).collect();
    let load = |arena: &L1Arena| {
        let loaded = Loaded::load_in(&dev, &c, arena, None).expect("loads");
        for (name, bytes) in weight_inputs(&c, &ws) {
            loaded.write(&name, &bytes).expect("weights");
        }
        loaded
    };
    let run = |loaded: &Loaded, seed| {
        let frame = bf16_rounded(&random_tensor(1, 64, 64, seed));
        loaded
            .write("frame", &common::pack_input("frame", &frame, Format::Bf16))
            .expect("frame");
        loaded.run_nodes(&dev, &names).expect("runs");
        loaded.read("c3").expect("output")
    };
    let shared = L1Arena::new();
    let (a, b) = (load(&shared), load(&shared));
    let a_first = run(&a, 1);
    let b_out = run(&b, 2);
    assert!(run(&a, 1) == a_first, "a after b");
    // The shared arena takes all the L1 its first program leaves; free it for a second one.
    drop((a, b, shared));
    let alone = load(&L1Arena::new());
    assert!(run(&alone, 2) == b_out, "b on the shared arena vs alone");
    assert!(a_first != b_out, "different frames give different outputs");
}

/// An arena sized by a program with small CBs leaves too little room below it for a program
/// with larger ones: loading that one is an error naming the step, not a clash at run time.
#[test]
fn a_program_whose_cbs_reach_the_shared_arena_is_refused() {
    let small = compile(
        &chain(64, 64, &[("c1", 1, 8, 3, true), ("c2", 8, 8, 1, false)]),
        &PlanParams {
            l1_activations: true,
            ..PlanParams::default()
        },
    )
    .expect("compiles");
    let large = compiled(true, &[], Limits::BLACKHOLE);
    let dev = common::open(&small);
    let arena = L1Arena::new();
    Loaded::load_in(&dev, &small, &arena, None).expect("the first program sizes the arena");
    let err = Loaded::load_in(&dev, &large, &arena, None)
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("L1 arena and resident weights leave"), "{err}");
}

/// The planner leaves the arena the L1 the largest pair of live activations needs: the two
/// 64-channel 640×480 activations (conv1a and conv1b outputs, 175 pages of 2 KiB per bank each on
/// 11×10, 160 on 12×10). On 11×10 they used to fit only if convPa and convDa streamed their
/// im2col tiles single-buffered; sliced in two over output channels (`plan::Split::sliced`) they
/// hold half their weights, and both grids fit double-buffered streams beside the arena (now
/// one step, `convPa+convDa`, in four slices: a core holds as many weights as before). conv1b
/// runs with pool1 on both grids (`kernel_gen::ops::conv_pool`) and has no output of its own: the
/// largest live pair is conv1a's output and pool1's (a quarter of the bytes), in L1 too.
#[test]
fn the_planner_leaves_the_arena_room_for_the_largest_live_pair() {
    for grid in [Grid::TENSIX_DISPATCH, Grid::ETH_DISPATCH] {
        let v = kernel_gen::variants::main_program(640, 480, None, grid);
        let c = compile(&v.graph, &v.params).expect("compiles");
        let per_bank = 19200u32.div_ceil(grid.cores()) * 2048;
        let held = offsets(&c);
        assert!(
            held.contains_key("conv1a") && held.contains_key("pool1"),
            "{grid:?}: {held:?}"
        );
        assert!(c.program.l1_arena >= per_bank + per_bank / 4);
        let step = c.program.step("convPa+convDa").expect("step");
        let im2col = step
            .cbs
            .iter()
            .find(|cb| cb.name == "cb_im2col")
            .expect("cb");
        assert_eq!(im2col.pages, 2 * 36, "{grid:?}");
    }
}

/// The chain with c1's output outliving the program (`outlive`), and a second program from c1 on
/// (`external`) reading it in place at that offset (`external_l1`), its own activations in L1 too.
fn outliving_c1() -> (Compiled, Compiled) {
    let graph = chain(64, 64, LAYERS);
    let first = compile(
        &graph,
        &PlanParams {
            l1_activations: true,
            outlive: BTreeSet::from(["c1".to_string()]),
            ..PlanParams::default()
        },
    )
    .expect("compiles");
    let shared = BTreeMap::from([("c1".to_string(), offsets(&first)["c1"])]);
    let second = compile(
        &graph,
        &PlanParams {
            l1_activations: true,
            external: BTreeSet::from(["c1".to_string()]),
            external_l1: shared,
            ..PlanParams::default()
        },
    )
    .expect("compiles");
    (first, second)
}

/// c1 (4096 bytes per bank) alive from its step to the last (1–5): c1 at 0; frame (0–1) overlaps
/// it → 4096; c2 (3–4) overlaps c1 → 4096; pool1 (2–3) overlaps c1 and c2 → 6144; pool2 (4–5)
/// overlaps c1 and c2 → 6144. The second program's own buffers (pool1 2–3, c2 3–4, pool2 4–5 of
/// its steps pool1 0 … c3 3) keep clear of c1's 0..4096 for its whole run: c2 at 4096, pool1 and
/// pool2 at 6144.
#[test]
fn outliving_outputs_keep_their_bytes_to_the_end_and_the_next_program_avoids_them() {
    let (first, second) = outliving_c1();
    let expected = BTreeMap::from([
        ("c1", 0),
        ("frame", 4096),
        ("c2", 4096),
        ("pool1", 6144),
        ("pool2", 6144),
    ]);
    assert_eq!(offsets(&first), expected);
    let expected = BTreeMap::from([("c1", 0), ("c2", 4096), ("pool1", 6144), ("pool2", 6144)]);
    assert_eq!(offsets(&second), expected);
    // The reader of the second program's first step addresses c1 as L1 pages.
    let pool1 = &second.program.steps[0];
    let placement: Vec<u32> = pool1
        .kernels
        .iter()
        .flat_map(|k| &k.compile_args)
        .filter(|a| a.name == "input_dram")
        .map(|a| a.value)
        .collect();
    assert_eq!(placement, [0]);
}

/// The second program, loaded in the first's arena and sharing its c1, computes from c1 in
/// place: its c3 equals the first program's. A second program compiled to read c1 from DRAM
/// is refused when loaded against the first, which left it in L1.
#[test]
fn a_later_program_reads_an_outliving_output_in_place() {
    let (first, second) = outliving_c1();
    let ws = weights(LAYERS, 5);
    let dev = common::open(&first);
    let arena = L1Arena::new();
    let a = Loaded::load_in(&dev, &first, &arena, None).expect("loads");
    let b = Loaded::load_in(&dev, &second, &arena, Some(&a)).expect("loads sharing c1");
    for (loaded, compiled) in [(&a, &first), (&b, &second)] {
        for (name, bytes) in weight_inputs(compiled, &ws) {
            loaded.write(&name, &bytes).expect("weights");
        }
    }
    let frame = bf16_rounded(&random_tensor(1, 64, 64, 23));
    a.write("frame", &common::pack_input("frame", &frame, Format::Bf16))
        .expect("frame");
    let names: Vec<&str> = LAYERS.iter().map(|l| l.0).collect();
    a.run_nodes(&dev, &names).expect("runs the first");
    let expected = a.read("c3").expect("first c3");
    b.run_nodes(&dev, &names[1..]).expect("runs the second");
    assert!(b.read("c3").expect("second c3") == expected);

    let in_dram = compile(
        &chain(64, 64, LAYERS),
        &PlanParams {
            l1_activations: true,
            external: BTreeSet::from(["c1".to_string()]),
            ..PlanParams::default()
        },
    )
    .expect("compiles");
    let err = Loaded::load_in(&dev, &in_dram, &arena, Some(&a))
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("`c1` was compiled to be in DRAM"), "{err}");
}

#[test]
fn only_external_inputs_take_an_l1_offset() {
    let err = compile(
        &chain(64, 64, LAYERS),
        &PlanParams {
            external_l1: BTreeMap::from([("c2".to_string(), 0)]),
            ..PlanParams::default()
        },
    )
    .expect_err("refused")
    .to_string();
    assert!(err.contains("`c2` is given an L1 offset"), "{err}");
}

/// An address arg is one compile-time placement for every core, so the buffers it names on
/// different cores (a fused conv step's outputs) move to L1 together or not at all: c2's reader
/// naming c3 (the graph's output, kept in DRAM) on its last core instead of pool1 leaves pool1
/// in DRAM too (it is in L1 otherwise), and the arg's `input_dram` says so.
#[test]
fn the_buffers_an_address_arg_names_are_placed_together() {
    let params = PlanParams {
        l1_activations: true,
        ..PlanParams::default()
    };
    let plan = kernel_gen::plan::plan(&chain(64, 64, LAYERS), &params).expect("plans");
    let placed = kernel_gen::lower::lower(&plan).expect("lowers");
    assert!(placed.arena.holds("pool1"));
    let mut kir = placed.clone();
    kir.arena = Default::default();
    let reader = kir
        .nodes
        .iter_mut()
        .find(|n| n.node == "c2")
        .and_then(|n| n.kernels.iter_mut().find(|k| k.role == Role::Reader))
        .expect("c2's reader");
    reader.compile_args.retain(|a| !a.name.ends_with("_dram"));
    let last = reader.runtime_args.len() - 1;
    let arg = reader.runtime_args[last]
        .args
        .iter_mut()
        .find(|a| matches!(a, kernel_gen::Arg::BufferAddress(b) if b == "pool1"))
        .expect("the input address");
    *arg = kernel_gen::Arg::BufferAddress("c3".to_string());
    kernel_gen::arena::place(&mut kir, &plan).expect("places");
    assert!(!kir.arena.holds("pool1") && !kir.arena.holds("c3"));
    let reader = kir
        .nodes
        .iter()
        .find(|n| n.node == "c2")
        .and_then(|n| n.kernels.iter().find(|k| k.role == Role::Reader))
        .expect("c2's reader");
    assert!(reader
        .compile_args
        .iter()
        .any(|a| a.name == "input_dram" && a.value == 1));
}
