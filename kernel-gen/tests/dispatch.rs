//! The kernel-config and dispatch-command figures ([`kernel_gen::dispatch`]) against values
//! worked out by hand from tt-metal's layout rules, the check that refuses a program whose
//! semaphore and CB configuration does not fit one ETH-dispatch prefetch entry, and the figure
//! `kernel-gen --report` prints for a shipped program.

mod common;

use common::small_kir::{cb, kernel, node, rect, scattered, two_core_config};
use kernel_gen::check::{check, CheckError};
use kernel_gen::dispatch::{config_command_bytes, kernel_config};
use kernel_gen::kir::Kir;
use kernel_gen::report::report;
use kernel_gen::{Core, Grid, Limits, PlanParams, Role};

#[test]
fn kernel_config_follows_tt_metal_layout() {
    let (a, b, c) = (
        Core { x: 0, y: 0 },
        Core { x: 1, y: 0 },
        Core { x: 2, y: 0 },
    );
    // Cores a, b run the reader and the compute kernel; c only the reader: two kernel groups.
    // Group {a, b}: reader slot max(3, 5) = 5 args, compute slot 2 args: 7 · 4 = 28 B, aligned
    // to 32. Group {c}: reader 9 args = 36 B, aligned to 48. The region takes the larger, 48,
    // and names c. Semaphores 0..2: 3 · 16 = 48 B. CB ids up to 17: 18 · 16 = 288 B.
    let n = node(
        vec![rect(0, 0, 2, 0)],
        vec![cb(0), cb(3), cb(17)],
        3,
        vec![
            kernel(
                Role::Reader,
                vec![rect(0, 0, 2, 0)],
                &[(a, 3), (b, 5), (c, 9)],
            ),
            kernel(Role::Compute, vec![rect(0, 0, 1, 0)], &[(a, 2), (b, 2)]),
        ],
    );
    let config = kernel_config(&n);
    assert_eq!(config.core, c);
    assert_eq!(
        (config.runtime_args, config.semaphores, config.cbs),
        (48, 48, 288)
    );
    assert_eq!(config.bytes(), 384);
}

#[test]
fn config_command_is_one_packed_write_per_rectangle() {
    // Two rectangles, 1 semaphore and CB ids up to 16: each sub-command carries 16 + 17 · 16 =
    // 288 B. 16 B prefetch header + align16(16 + 2 · 12) = 48 + 2 · 288 = 640 B, a multiple of 64.
    let n = node(
        vec![rect(0, 0, 11, 8), rect(0, 9, 3, 9)],
        vec![cb(0), cb(1), cb(16)],
        1,
        Vec::new(),
    );
    assert_eq!(config_command_bytes(&n), 640);
    // One rectangle: 16 + align16(28) = 32 + 288 = 336, padded to 384.
    let one = node(vec![rect(0, 0, 11, 9)], vec![cb(16)], 1, Vec::new());
    assert_eq!(config_command_bytes(&one), 384);
    // Nothing to configure: no command.
    assert_eq!(
        config_command_bytes(&node(vec![rect(0, 0, 0, 0)], Vec::new(), 0, Vec::new())),
        0
    );
}

#[test]
fn config_command_splits_at_35_sub_commands() {
    assert_eq!(config_command_bytes(&scattered()), 3 * 36352 + 15616);
}

#[test]
fn eth_dispatch_refuses_a_configuration_over_32_kib() {
    let kir = Kir {
        nodes: vec![scattered()],
        arena: Default::default(),
    };
    assert_eq!(
        check(&kir, &Limits::BLACKHOLE, Grid::ETH_DISPATCH),
        Err(CheckError::DispatchCommandTooLarge {
            node: "n".into(),
            bytes: 124672,
            limit: 32 * 1024,
            dispatch: "Ethernet",
        })
    );
    // On 11×10, Tensix dispatch's 128 KiB entry holds the 110 cores' configuration (commands of
    // 35, 35, 35 and 5 sub-commands: 3 · 36352 + 5248 B); no other rule is broken.
    let mut tensix = kir.clone();
    tensix.nodes[0].ranges.retain(|r| r.start.x < 11);
    assert_eq!(config_command_bytes(&tensix.nodes[0]), 3 * 36352 + 5248);
    assert_eq!(
        check(&tensix, &Limits::BLACKHOLE, Grid::TENSIX_DISPATCH),
        Ok(())
    );
}

#[test]
fn kernel_config_over_the_region_names_the_core() {
    let kir = Kir {
        nodes: vec![two_core_config()],
        arena: Default::default(),
    };
    let b = Core { x: 1, y: 0 };
    let tight = Limits {
        kernel_config_bytes: 95,
        ..Limits::BLACKHOLE
    };
    assert_eq!(
        check(&kir, &tight, Grid::ETH_DISPATCH),
        Err(CheckError::KernelConfigOverflow {
            node: "n".into(),
            core: b,
            bytes: 96,
            runtime_args: 80,
            semaphores: 0,
            cbs: 16,
            region: 95,
        })
    );
    let exact = Limits {
        kernel_config_bytes: 96,
        ..Limits::BLACKHOLE
    };
    assert_eq!(check(&kir, &exact, Grid::ETH_DISPATCH), Ok(()));
}

#[test]
fn report_shows_the_nms_dispatch_command() {
    use superpoint_graph::{names, superpoint};
    // NMS alone on the score map at 640×480 on 12×10: 300 map tiles on all 120 cores, one
    // rectangle; one semaphore (the halo exchange) and CB ids up to cb_out = 16 (ops::nms):
    // 16 + 17 · 16 = 288 B of data, 16 + align16(16 + 12) = 32 B of headers: 336, padded to 384.
    let graph = superpoint(640, 480).pruned(&[names::NMS]);
    let params = PlanParams {
        external: std::collections::BTreeSet::from([names::SCORES.to_string()]),
        ..PlanParams::default()
    };
    let kir = kernel_gen::lower::lower(&kernel_gen::plan::plan(&graph, &params).expect("plans"))
        .expect("lowers");
    let rows = report(&kir);
    let nms = rows.iter().find(|r| r.op == "nms").expect("an NMS row");
    assert_eq!(nms.cores, 120);
    assert_eq!(nms.dispatch_command_bytes, 384);
}
