//! The timeline model's calibration (`tt_runtime::calibrate`): the published figures are the
//! cited ones (docs/cost-model.md), the modeled figures are deterministic, and each is within the
//! stated error of its reference.

use tt_runtime::calibrate::{calibrate, Kind, REFERENCES};
use tt_runtime::{Device, Dispatch, TimelineModel};

/// The largest error the docs state for any reference.
const STATED_ERROR: f64 = 0.15;

/// The modeled figures, in the order of `REFERENCES`, as `superpoint bench --calibrate` prints
/// them (two decimals): regression pins of the model and the calibration programs.
const MODELED: [f64; 9] = [
    21.56, 45.44, 74.74, 31.52, 32.60, 24.49, 4.97, 40.85, 124.00,
];

#[test]
fn published_figures_are_the_cited_ones() {
    // tt-metal GEMM_FLOPS (P150 manually tuned, BF16, HiFi2, device-based utilization %),
    // tt-low-level-documentation ideal_performance.md (Blackhole B/cycle) and its multicast
    // sweeps (11x10 without loopback, 2 KiB × 64; linked 11x10 with loopback, 16 KiB × 64),
    // tt-metal PR #49820.
    let cited = [21.94, 52.52, 74.07, 33.0, 34.0, 24.0, 4.98, 40.75, 135.43];
    let published: Vec<f64> = REFERENCES.iter().map(|r| r.published).collect();
    assert_eq!(published, cited);
    assert_eq!(
        REFERENCES
            .iter()
            .filter(|r| matches!(r.kind, Kind::Gemm { .. }))
            .count(),
        3
    );
}

#[test]
fn calibration_is_deterministic_and_within_the_stated_error() {
    let dev = Device::open(Dispatch::Auto).expect("device");
    let model = TimelineModel::BLACKHOLE;
    let first = calibrate(&dev, &model).expect("calibration runs");
    let again = calibrate(&dev, &model).expect("calibration runs");
    assert_eq!(first, again, "the modeled figures are deterministic");
    let moved: Vec<String> = first
        .iter()
        .zip(MODELED)
        .filter(|(c, pinned)| (c.modeled - pinned).abs() > 0.005 + 1e-9)
        .map(|(c, pinned)| {
            format!(
                "{}: modeled {:.2}, pinned {pinned:.2}",
                c.reference.name, c.modeled
            )
        })
        .collect();
    assert!(
        moved.is_empty(),
        "{}; a change meant to move them updates MODELED here and docs/cost-model.md",
        moved.join("\n")
    );
    let over: Vec<String> = first
        .iter()
        .filter(|c| c.error() > STATED_ERROR)
        .map(|c| {
            format!(
                "{}: published {}, modeled {:.2} ({:.1} %)",
                c.reference.name,
                c.reference.published,
                c.modeled,
                100.0 * c.error()
            )
        })
        .collect();
    assert!(over.is_empty(), "{}", over.join("\n"));
}
