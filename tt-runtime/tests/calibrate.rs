//! The timeline model's calibration (`tt_runtime::calibrate`): the published figures are the
//! cited ones (docs/cost-model.md), the modeled figures are deterministic, and each is within the
//! stated error of its reference.

use tt_runtime::calibrate::{calibrate, Kind, REFERENCES};
use tt_runtime::{Device, Dispatch, TimelineModel};

/// The largest error the docs state for any reference.
const STATED_ERROR: f64 = 0.15;

#[test]
fn published_figures_are_the_cited_ones() {
    // tt-metal GEMM_FLOPS (P150 manually tuned, BF16, HiFi2, device-based utilization %),
    // tt-low-level-documentation ideal_performance.md (Blackhole B/cycle), tt-metal PR #49820.
    let cited = [21.94, 52.52, 74.07, 33.0, 34.0, 24.0, 135.43];
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
