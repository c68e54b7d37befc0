//! `superpoint bench --calibrate`: the timeline cost model (v2) against published Blackhole
//! measurements. Runs `tt_runtime::calibrate`'s programs on the device (the emulator without a
//! card) and prints, per reference, the published figure, the modeled one and the error; the last
//! line is the largest error over all references.

use tt_runtime::calibrate::{self, Calibration};
use tt_runtime::{Device, Dispatch, TimelineModel};

/// The calibration table, one line per reference, and the closing line.
pub fn table(rows: &[Calibration]) -> Vec<String> {
    let mut lines = vec![format!(
        "{:<32} {:>10} {:>10} {:<12} {:>7}  source",
        "reference", "published", "modeled", "unit", "error"
    )];
    for c in rows {
        let r = &c.reference;
        lines.push(format!(
            "{:<32} {:>10.2} {:>10.2} {:<12} {:>6.1}%  {}",
            r.name,
            r.published,
            c.modeled,
            r.unit,
            100.0 * c.error(),
            r.source
        ));
    }
    let worst = rows.iter().map(Calibration::error).fold(0.0, f64::max);
    lines.push(format!(
        "calibration: max error {:.1}% over {} references",
        100.0 * worst,
        rows.len()
    ));
    lines
}

pub fn run() -> anyhow::Result<()> {
    let dev = Device::open(Dispatch::Auto)?;
    println!(
        "== the timeline cost model (v2, tt_runtime::TimelineModel BLACKHOLE) against published Blackhole measurements; MODELED from {} runs ==",
        Device::backend_name()
    );
    let rows = calibrate::calibrate(&dev, &TimelineModel::BLACKHOLE)?;
    for line in table(&rows) {
        println!("{line}");
    }
    Ok(())
}
