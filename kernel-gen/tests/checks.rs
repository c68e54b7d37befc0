//! Negative tests of every check: a valid program's kernel IR (or its limits) is broken in one
//! place and the check must name the node and the numbers. [`BROKEN`] holds one broken program
//! per [`CheckError`] variant, and `every_check_error_variant_has_a_broken_program` reads the
//! enum from `src/check.rs`, so a new variant without an entry fails the build.

mod common;

use std::collections::BTreeSet;

use common::{chain, Layer};
use kernel_gen::check::{check, CheckError};
use kernel_gen::kir::{Arg, Call, Kir, Role};
use kernel_gen::lower::lower;
use kernel_gen::plan::{plan, PlanError};
use kernel_gen::{compile, CompileError, Core, Grid, Limits, PlanParams, Precision};

const LAYERS: &[Layer] = &[
    ("conv_a", 1, 3, 3, true),
    ("conv_b", 3, 5, 3, true),
    ("pool", 0, 0, 0, false),
];

/// [`LAYERS`] planned with the pool a step of its own (conv_b's output kept in DRAM, so not
/// fused: `kernel_gen::plan::conv_pool`), so the checks below can break either.
fn apart() -> PlanParams {
    PlanParams {
        keep_in_dram: BTreeSet::from(["conv_b".to_string()]),
        ..PlanParams::default()
    }
}

fn kir() -> Kir {
    let p = plan(&chain(64, 32, LAYERS), &apart()).expect("plans");
    let kir = lower(&p).expect("lowers");
    check(&kir, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect("the unmodified program passes");
    kir
}

fn node_mut<'a>(kir: &'a mut Kir, name: &str) -> &'a mut kernel_gen::kir::NodeKir {
    kir.nodes.iter_mut().find(|n| n.node == name).expect("node")
}

/// 3×3 512→512: 144 × 16 weight tiles alone are 4.5 MiB.
const OVERSIZED: &[Layer] = &[("c1", 1, 512, 3, true), ("big", 512, 512, 3, true)];

/// The kernel IR of [`OVERSIZED`], which the planner lays out but cannot fit in L1.
fn oversized_conv() -> Kir {
    lower(&plan(&chain(32, 32, OVERSIZED), &PlanParams::default()).expect("plans")).expect("lowers")
}

/// The resident weights' copies (`Arena::resident`) live beside the arena for the whole
/// program: with them, the largest step's CBs and the arena exactly filling the usable L1 the
/// program passes; one byte more and that step overflows, the copies counted in its bytes.
#[test]
fn l1_overflow_counts_the_resident_copies() {
    let mut k = kir();
    let limits = Limits::BLACKHOLE;
    let (largest, cbs) = k
        .nodes
        .iter()
        .map(|n| {
            let bytes = kernel_gen::plan::cbs_l1_bytes(&n.cbs, limits.l1_alignment);
            (n.node.clone(), bytes)
        })
        .max_by_key(|(_, bytes)| *bytes)
        .expect("nodes");
    let room = u64::from(limits.l1_usable()) - cbs - u64::from(k.arena.bytes);
    k.arena.resident = u32::try_from(room).expect("fits");
    check(&k, &limits, Grid::ETH_DISPATCH).expect("exactly full");
    k.arena.resident += 1;
    match check(&k, &limits, Grid::ETH_DISPATCH) {
        Err(CheckError::L1Overflow { node, used, .. }) => {
            assert_eq!(node, largest);
            assert_eq!(used, u64::from(limits.l1_usable()) + 1);
        }
        other => panic!("expected L1Overflow, got {other:?}"),
    }
}

#[test]
fn l1_overflow_names_the_node_and_bytes() {
    let err = compile(&chain(32, 32, OVERSIZED), &PlanParams::default()).expect_err("too big");
    match err {
        CompileError::Check(CheckError::L1Overflow {
            node,
            used,
            available,
            ..
        }) => {
            assert_eq!(node, "big");
            // 32 blocks on 120 cores: the output channels are sliced in 4 (plan::Split::sliced),
            // each core holding 4 of the 16 output tiles' weights. Double buffering does not fit,
            // so the planner single-buffers the streams: im2col 144 + weights 144·4 + bias 4 +
            // ring 5·16 (33 pixels either side of a block at 32 wide: 2 blocks behind, 2 ahead)
            // + zero 1 + the identity tile the bias enters DST by (bf16 at HiFi2) 1 + out 4
            // tiles of 2 KiB.
            assert_eq!(used, (144 + 144 * 4 + 4 + 5 * 16 + 1 + 1 + 4) * 2048);
            assert_eq!(available, 1427 * 1024);
        }
        other => panic!("expected L1Overflow, got {other:?}"),
    }
}

/// conv_b's compute kernel with DST blocks of 5 tiles (fp32 DST at the default precision).
fn five_dst_tiles() -> Kir {
    let mut k = kir();
    fn widen(calls: &mut [Call]) {
        for c in calls {
            match c {
                Call::Dst { tiles, .. } => *tiles = 5,
                Call::Loop { body, .. } => widen(body),
                _ => {}
            }
        }
    }
    widen(&mut kernel_mut(&mut k, "conv_b", Role::Compute).body);
    k
}

#[test]
fn dst_capacity_in_half_sync_fp32() {
    let mut k = five_dst_tiles();
    let err = check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect_err("5 fp32 tiles");
    assert_eq!(
        err,
        CheckError::DstOverflow {
            node: "conv_b".into(),
            role: Role::Compute,
            tiles: 5,
            capacity: 4,
            format: "fp32"
        }
    );
    // The same 5 tiles fit a bf16 DST (8 tiles).
    kernel_mut(&mut k, "conv_b", Role::Compute).precision = Some(Precision {
        fp32_dest: false,
        ..Precision::PORT
    });
    check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect("5 bf16 tiles fit");
}

/// The pool without its writer's calls: nobody pops `cb_out`.
fn pool_writer_emptied() -> Kir {
    let mut k = kir();
    kernel_mut(&mut k, "pool", Role::Writer).body.clear();
    k
}

#[test]
fn cb_protocol_unbalanced_push_and_pop() {
    let k = pool_writer_emptied();
    let err = check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect_err("nobody pops cb_out");
    match err {
        CheckError::CbUnbalanced {
            node,
            cb,
            id,
            pushed,
            popped,
            core,
        } => {
            assert_eq!((node.as_str(), cb.as_str(), id), ("pool", "cb_out", 16));
            // 32×16 output pixels = 16 blocks over 120 cores: core (0,0) has one block of one channel tile.
            assert_eq!(core, Core { x: 0, y: 0 });
            assert_eq!((pushed, popped), (1, 0));
        }
        other => panic!("expected CbUnbalanced, got {other:?}"),
    }
}

/// The pool's `cb_src` with 6 pages, which its reader's 4-page pushes do not divide.
fn cb_src_of_6_pages() -> Kir {
    let mut k = kir();
    let node = node_mut(&mut k, "pool");
    let cb = node
        .cbs
        .iter_mut()
        .find(|c| c.name == "cb_src")
        .expect("cb");
    cb.pages = 6;
    k
}

#[test]
fn cb_pages_must_divide_the_capacity() {
    let k = cb_src_of_6_pages();
    let err = check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect_err("4 pages into 6");
    assert_eq!(
        err,
        CheckError::CbPagesDoNotDivide {
            node: "pool".into(),
            role: Role::Reader,
            cb: "cb_src".into(),
            pages: 4,
            capacity: 6
        }
    );
}

/// conv_a's reader without its first call, the weights' reserve.
fn weights_pushed_unreserved() -> Kir {
    let mut k = kir();
    kernel_mut(&mut k, "conv_a", Role::Reader).body.remove(0);
    k
}

#[test]
fn push_without_reserve() {
    let k = weights_pushed_unreserved();
    let err =
        check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect_err("weights pushed unreserved");
    match err {
        CheckError::PushWithoutReserve {
            node,
            cb,
            pushed,
            reserved,
            ..
        } => {
            assert_eq!(
                (node.as_str(), cb.as_str(), pushed, reserved),
                ("conv_a", "cb_weights", 1, 0)
            );
        }
        other => panic!("expected PushWithoutReserve, got {other:?}"),
    }
}

/// conv_a's writer with 342 runtime args on its second core.
fn writer_with_342_args() -> Kir {
    let mut k = kir();
    kernel_mut(&mut k, "conv_a", Role::Writer).runtime_args[1].args = vec![Arg::Const(0); 342];
    k
}

#[test]
fn at_most_341_runtime_args() {
    let k = writer_with_342_args();
    let err = check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect_err("342 args");
    assert_eq!(
        err,
        CheckError::TooManyRuntimeArgs {
            node: "conv_a".into(),
            role: Role::Writer,
            core: Core { x: 1, y: 0 },
            count: 342,
            max: 341
        }
    );
}

/// The pool's `cb_out` with id 64.
fn cb_id_64() -> Kir {
    let mut k = kir();
    let node = node_mut(&mut k, "pool");
    node.cbs
        .iter_mut()
        .find(|c| c.name == "cb_out")
        .expect("cb")
        .id = 64;
    k
}

#[test]
fn cb_ids_below_64() {
    let k = cb_id_64();
    let err = check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect_err("id 64");
    assert_eq!(
        err,
        CheckError::CbIdOutOfRange {
            node: "pool".into(),
            cb: "cb_out".into(),
            id: 64,
            max: 64
        }
    );
}

/// conv_b's reader with a first DRAM read of 2080 bytes.
fn dram_read_of_2080_bytes() -> Kir {
    let mut k = kir();
    let mut first = true;
    each_call(
        &mut kernel_mut(&mut k, "conv_b", Role::Reader).body,
        &mut |c| {
            if let Call::DramRead { page_bytes, .. } = c {
                if first {
                    *page_bytes = 2080;
                    first = false;
                }
            }
        },
    );
    k
}

#[test]
fn noc_alignment_of_dram_reads_and_l1_pages() {
    let k = dram_read_of_2080_bytes();
    let err = check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH)
        .expect_err("2080 is not a multiple of 64");
    assert_eq!(
        err,
        CheckError::Misaligned {
            node: "conv_b".into(),
            role: Role::Reader,
            transfer: "DRAM read",
            bytes: 2080,
            alignment: 64
        }
    );
    let mut k = kir();
    let node = node_mut(&mut k, "pool");
    node.cbs
        .iter_mut()
        .find(|c| c.name == "cb_out")
        .expect("cb")
        .page_bytes = 2056;
    let err = check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect_err("2056-byte L1 pages");
    assert_eq!(
        err,
        CheckError::Misaligned {
            node: "pool".into(),
            role: Role::Writer,
            transfer: "L1 CB page",
            bytes: 2056,
            alignment: 16
        }
    );
}

/// The conv reader's L1 → L1 row copies: rows of a size that is not a multiple of the 16-byte
/// NoC L1 alignment are refused, and the program the planner makes (bf16: 32-byte face rows)
/// has its copies in its reader: at W 64 with whole channel tiles, the zero tile's 64-byte
/// doubling copies, the shifted views' face-row moves and row fixes (the prologue's, the first
/// blocks' and the later blocks') and the whole-tile im2col copies.
#[test]
fn noc_alignment_of_l1_row_copies() {
    let layers: &[Layer] = &[("c1", 1, 32, 3, true), ("c2", 32, 32, 3, true)];
    let p = plan(&chain(64, 32, layers), &PlanParams::default()).expect("plans");
    let mut k = lower(&p).expect("lowers");
    check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect("the unmodified program passes");
    let reader = node_mut(&mut k, "c2")
        .kernels
        .iter_mut()
        .find(|k| k.role == Role::Reader)
        .expect("reader");
    let mut copies = 0;
    fn row_bytes(calls: &mut [Call], copies: &mut u32) {
        for c in calls {
            match c {
                Call::L1Copy { row_bytes, .. } if *row_bytes == 32 => {
                    *row_bytes = 24;
                    *copies += 1;
                }
                Call::L1Copy { row_bytes, .. } => assert!([64, 2048].contains(row_bytes)),
                Call::Loop { body, .. } => row_bytes(body, copies),
                _ => {}
            }
        }
    }
    row_bytes(&mut reader.body, &mut copies);
    assert_eq!(copies, 6);
    let err = check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect_err("24-byte rows");
    assert_eq!(
        err,
        CheckError::Misaligned {
            node: "c2".into(),
            role: Role::Reader,
            transfer: "L1 row copy",
            bytes: 24,
            alignment: 16
        }
    );
}

/// The pool with 17 semaphores.
fn seventeen_semaphores() -> Kir {
    let mut k = kir();
    node_mut(&mut k, "pool").semaphores = 17;
    k
}

#[test]
fn semaphore_count() {
    let k = seventeen_semaphores();
    let err = check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect_err("17 semaphores");
    assert_eq!(
        err,
        CheckError::TooManySemaphores {
            node: "pool".into(),
            count: 17,
            max: 16
        }
    );
}

/// Applies `f` to every call of `calls`, loops included.
fn each_call(calls: &mut [Call], f: &mut impl FnMut(&mut Call)) {
    for c in calls {
        f(c);
        if let Call::Loop { body, .. } | Call::Dst { body, .. } = c {
            each_call(body, f);
        }
    }
}

fn kernel_mut<'a>(kir: &'a mut Kir, name: &str, role: Role) -> &'a mut kernel_gen::kir::Kernel {
    node_mut(kir, name)
        .kernels
        .iter_mut()
        .find(|k| k.role == role)
        .expect("kernel")
}

/// conv_b configuring 2 semaphores. Its sender also computes a block: its reader waits for
/// semaphore 2, which its writer sets once it has read the weights.
fn conv_b_with_2_semaphores() -> Kir {
    let mut k = kir();
    node_mut(&mut k, "conv_b").semaphores = 2;
    k
}

#[test]
fn semaphore_ids_are_below_the_node_count() {
    let k = conv_b_with_2_semaphores();
    let err = check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect_err("semaphore 2 of 2");
    assert_eq!(
        err,
        CheckError::UnknownSemaphore {
            node: "conv_b".into(),
            role: Role::Reader,
            sem: 2,
            count: 2
        }
    );
}

/// conv_b (64 blocks of 32 pixels on 64 cores) with the first's writer sending to 62 of 63.
fn multicast_to_62() -> Kir {
    let mut k = kir();
    each_call(
        &mut kernel_mut(&mut k, "conv_b", Role::Writer).body,
        &mut |c| {
            if let Call::McastWrite { dests, .. } = c {
                *dests = 62;
            }
        },
    );
    k
}

#[test]
fn multicast_must_reach_every_other_core() {
    let k = multicast_to_62();
    let err = check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect_err("62 of 63 receivers");
    assert_eq!(
        err,
        CheckError::MulticastDests {
            node: "conv_b".into(),
            role: Role::Writer,
            transfer: "multicast write",
            dests: 62,
            receivers: 63
        }
    );
}

#[test]
fn multicast_size_is_noc_aligned() {
    let mut k = kir();
    each_call(
        &mut kernel_mut(&mut k, "conv_b", Role::Writer).body,
        &mut |c| {
            if let Call::McastWrite { page_bytes, .. } = c {
                *page_bytes = 2050;
            }
        },
    );
    let err = check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect_err("odd bytes");
    assert_eq!(
        err,
        CheckError::Misaligned {
            node: "conv_b".into(),
            role: Role::Writer,
            transfer: "multicast write",
            bytes: 2050,
            alignment: 16
        }
    );
}

#[test]
fn both_grids_give_valid_programs() {
    for grid in [Grid::ETH_DISPATCH, Grid::TENSIX_DISPATCH] {
        let params = PlanParams {
            grid,
            ..PlanParams::default()
        };
        let c = compile(&chain(640, 480, LAYERS), &params).expect("compiles");
        let step = c.program.step("conv_b").expect("step");
        let cores: u32 = step.ranges.iter().map(|r| r.len()).sum();
        assert_eq!(cores, grid.cores());
    }
}

#[test]
fn planner_rejects_what_it_cannot_lower() {
    let mut g = chain(64, 32, LAYERS);
    g.nodes.push(superpoint_graph::Node {
        name: "sm".into(),
        inputs: vec!["pool".into()],
        op: superpoint_graph::Op::Softmax,
    });
    g.outputs = vec!["sm".into()];
    assert_eq!(
        plan(&g, &PlanParams::default()),
        Err(PlanError::SoftmaxWithoutFold { node: "sm".into() })
    );
    assert_eq!(
        plan(&chain(48, 32, LAYERS), &PlanParams::default()),
        Err(PlanError::FrameNotMultiple32 {
            node: "frame".into(),
            width: 48,
            height: 32
        })
    );
}

fn resize_params(width: u32, height: u32) -> PlanParams {
    PlanParams {
        input_size: Some((width, height)),
        ..PlanParams::default()
    }
}

#[test]
fn resize_rejects_empty_and_oversized_planes() {
    for (w, h) in [(0, 100), (100, 0), (4097, 100), (100, 5000)] {
        assert_eq!(
            plan(&chain(64, 32, &[]), &resize_params(w, h)).err(),
            Some(PlanError::PlaneSize {
                node: "frame".to_string(),
                width: w,
                height: h,
                max: 4096
            }),
            "{w}x{h}"
        );
    }
    assert!(plan(&chain(64, 32, &[]), &resize_params(4096, 4096)).is_ok());
}

#[test]
fn resize_rejects_empty_and_partial_tile_frames() {
    // The graph already rejects an empty frame; the device needs whole tiles on top.
    assert!(matches!(
        plan(&chain(0, 32, &[]), &resize_params(100, 100)),
        Err(PlanError::Graph(_))
    ));
    assert_eq!(
        plan(&chain(40, 32, &[]), &resize_params(100, 100)).err(),
        Some(PlanError::FrameNotMultiple32 {
            node: "frame".to_string(),
            width: 40,
            height: 32
        })
    );
}

#[test]
fn resize_band_beyond_l1_names_the_node() {
    // 4096 → 32 in both axes: every output tile's band is the whole plane, 128 × 128 tiles.
    let err = compile(&chain(32, 32, &[]), &resize_params(4096, 4096)).expect_err("too big");
    match err {
        CompileError::Check(CheckError::L1Overflow { node, used, .. }) => {
            assert_eq!(node, "frame");
            assert!(used > 2 * 128 * 128 * 2048);
        }
        other => panic!("expected L1Overflow, got {other:?}"),
    }
}

/// The kernel IR of the sampling node alone (64×32 frame, dense map and candidates external).
fn sampling_kir() -> Kir {
    use superpoint_graph::names;
    let graph = superpoint_graph::superpoint(64, 32).pruned(&[names::DESCRIPTORS]);
    let params = PlanParams {
        external: std::collections::BTreeSet::from([
            names::DESCRIPTORS_DENSE.to_string(),
            names::KEYPOINTS.to_string(),
        ]),
        ..PlanParams::default()
    };
    let kir = lower(&plan(&graph, &params).expect("plans")).expect("lowers");
    check(&kir, &Limits::BLACKHOLE, Grid::ETH_DISPATCH).expect("the unmodified program passes");
    kir
}

/// Applies `f` to every call of the `role` kernel of the sampling node, loops included.
fn edit_sampling(kir: &mut Kir, role: Role, f: &mut impl FnMut(&mut Call)) {
    fn visit(calls: &mut [Call], f: &mut impl FnMut(&mut Call)) {
        for c in calls {
            f(c);
            if let Call::Loop { body, .. } | Call::Dst { body, .. } = c {
                visit(body, f);
            }
        }
    }
    let node = node_mut(kir, superpoint_graph::names::DESCRIPTORS);
    let kernel = node
        .kernels
        .iter_mut()
        .find(|k| k.role == role)
        .expect("kernel");
    visit(&mut kernel.body, f);
}

#[test]
fn noc_alignment_of_partial_page_transfers() {
    let name = superpoint_graph::names::DESCRIPTORS;
    // The gather reads 512-byte pixel rows at 512-byte steps within the map's pages; 32 would
    // misalign.
    let mut k = sampling_kir();
    edit_sampling(&mut k, Role::Reader, &mut |c| {
        if let Call::DramPart { offset_step, .. } = c {
            if *offset_step == 512 {
                *offset_step = 32;
            }
        }
    });
    assert_eq!(
        check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH),
        Err(CheckError::Misaligned {
            node: name.into(),
            role: Role::Reader,
            transfer: "DRAM read at page offsets in steps",
            bytes: 32,
            alignment: 64
        })
    );
    // The writer's descriptor rows at 8-byte steps would break the 16-byte DRAM write alignment.
    let mut k = sampling_kir();
    edit_sampling(&mut k, Role::Writer, &mut |c| {
        if let Call::DramPart {
            write: true,
            offset_step,
            ..
        } = c
        {
            *offset_step = 8;
        }
    });
    assert_eq!(
        check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH),
        Err(CheckError::Misaligned {
            node: name.into(),
            role: Role::Writer,
            transfer: "DRAM write at page offsets in steps",
            bytes: 8,
            alignment: 16
        })
    );
}

#[test]
fn sampling_cb_protocol_counts_the_data_bounded_loops() {
    // The compute kernel forgetting to pop the pixel rows of each corner it tilized.
    let mut k = sampling_kir();
    edit_sampling(&mut k, Role::Compute, &mut |c| {
        if let Call::Loop { body, .. } = c {
            body.retain(|b| !matches!(b, Call::CbPop { cb: 0, .. }));
        }
    });
    // 64×32: 2 regions of 1024 records, so at most 32 tiles of 32 candidates per core, each
    // pushing 4 corners × 8 channel tiles of rows.
    assert_eq!(
        check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH),
        Err(CheckError::CbUnbalanced {
            node: superpoint_graph::names::DESCRIPTORS.into(),
            cb: "cb_rows".into(),
            id: 0,
            core: Core { x: 0, y: 0 },
            pushed: 32 * 32,
            popped: 0
        })
    );
}

/// conv_a's writer with one runtime arg fewer on core (0,0) than it names.
fn writer_missing_an_arg() -> Kir {
    let mut k = kir();
    kernel_mut(&mut k, "conv_a", Role::Writer).runtime_args[0]
        .args
        .pop();
    k
}

#[test]
fn runtime_args_match_the_names_on_every_core() {
    let k = writer_missing_an_arg();
    let names = kir()
        .nodes
        .iter()
        .find(|n| n.node == "conv_a")
        .and_then(|n| n.kernels.iter().find(|k| k.role == Role::Writer))
        .expect("conv_a's writer")
        .runtime_arg_names
        .len();
    assert!(names > 1, "conv_a's writer names its args: {names}");
    assert_eq!(
        check(&k, &Limits::BLACKHOLE, Grid::ETH_DISPATCH),
        Err(CheckError::RuntimeArgCount {
            node: "conv_a".into(),
            role: Role::Writer,
            core: Core { x: 0, y: 0 },
            names,
            count: names - 1
        })
    );
}

/// The pool's reader reserving pages of cb 40, which the node does not configure (no CB of the
/// node is near that id).
fn reserve_on_an_unconfigured_cb() -> Kir {
    let mut k = kir();
    assert!(node_mut(&mut k, "pool").cbs.iter().all(|c| c.id != 40));
    let mut first = true;
    each_call(
        &mut kernel_mut(&mut k, "pool", Role::Reader).body,
        &mut |c| {
            if let Call::CbReserve { cb, .. } = c {
                if first {
                    *cb = 40;
                    first = false;
                }
            }
        },
    );
    assert!(!first, "the pool's reader reserves CB pages");
    k
}

#[test]
fn cb_ids_a_kernel_uses_are_configured() {
    assert_eq!(
        check(
            &reserve_on_an_unconfigured_cb(),
            &Limits::BLACKHOLE,
            Grid::ETH_DISPATCH
        ),
        Err(CheckError::UnknownCb {
            node: "pool".into(),
            role: Role::Reader,
            id: 40
        })
    );
}

/// A program broken in one place, with the limits and grid it is checked against.
type Broken = fn() -> (Kir, Limits, Grid);

/// `kir` checked against the p150a's limits on the ETH-dispatch grid.
fn on_blackhole(kir: Kir) -> (Kir, Limits, Grid) {
    (kir, Limits::BLACKHOLE, Grid::ETH_DISPATCH)
}

/// One node whose semaphore and CB configuration is a 124,672-byte dispatch command (see
/// `tests/dispatch.rs`), over ETH dispatch's 32 KiB prefetch entry.
fn scattered_on_eth() -> (Kir, Limits, Grid) {
    on_blackhole(Kir {
        nodes: vec![common::small_kir::scattered()],
        arena: Default::default(),
    })
}

/// Two cores whose runtime args and CB config need 96 B, in a 95-byte kernel-config region.
fn config_over_a_95_byte_region() -> (Kir, Limits, Grid) {
    let kir = Kir {
        nodes: vec![common::small_kir::two_core_config()],
        arena: Default::default(),
    };
    let tight = Limits {
        kernel_config_bytes: 95,
        ..Limits::BLACKHOLE
    };
    (kir, tight, Grid::ETH_DISPATCH)
}

/// One broken program per [`CheckError`] variant (each with a test asserting the details, here or
/// in `tests/dispatch.rs`).
const BROKEN: &[(&str, Broken)] = &[
    ("L1Overflow", || on_blackhole(oversized_conv())),
    ("DstOverflow", || on_blackhole(five_dst_tiles())),
    ("CbUnbalanced", || on_blackhole(pool_writer_emptied())),
    ("CbPagesDoNotDivide", || on_blackhole(cb_src_of_6_pages())),
    ("PushWithoutReserve", || {
        on_blackhole(weights_pushed_unreserved())
    }),
    (
        "UnknownCb",
        || on_blackhole(reserve_on_an_unconfigured_cb()),
    ),
    ("CbIdOutOfRange", || on_blackhole(cb_id_64())),
    (
        "TooManyRuntimeArgs",
        || on_blackhole(writer_with_342_args()),
    ),
    ("RuntimeArgCount", || on_blackhole(writer_missing_an_arg())),
    ("Misaligned", || on_blackhole(dram_read_of_2080_bytes())),
    ("TooManySemaphores", || on_blackhole(seventeen_semaphores())),
    ("UnknownSemaphore", || {
        on_blackhole(conv_b_with_2_semaphores())
    }),
    ("MulticastDests", || on_blackhole(multicast_to_62())),
    ("KernelConfigOverflow", config_over_a_95_byte_region),
    ("DispatchCommandTooLarge", scattered_on_eth),
];

/// The variants of `CheckError` as `src/check.rs` declares them.
fn check_error_variants() -> BTreeSet<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/check.rs");
    let source = std::fs::read_to_string(&path).expect("src/check.rs");
    let file = syn::parse_file(&source).expect("src/check.rs parses");
    file.items
        .iter()
        .find_map(|item| match item {
            syn::Item::Enum(e) if e.ident == "CheckError" => Some(e),
            _ => None,
        })
        .expect("src/check.rs declares CheckError")
        .variants
        .iter()
        .map(|v| v.ident.to_string())
        .collect()
}

#[test]
fn every_check_error_variant_has_a_broken_program() {
    let variants = check_error_variants();
    let table: BTreeSet<String> = BROKEN.iter().map(|(name, _)| name.to_string()).collect();
    assert_eq!(
        table, variants,
        "BROKEN needs one entry per CheckError variant of src/check.rs (a broken program and a test of its error)"
    );
    for (name, broken) in BROKEN {
        let (kir, limits, grid) = broken();
        let err = check(&kir, &limits, grid).expect_err(name);
        let debug = format!("{err:?}");
        let got: String = debug
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect();
        assert_eq!(&got, name, "{err}");
    }
}
