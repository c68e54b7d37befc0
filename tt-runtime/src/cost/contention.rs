//! Contention in cost model v2: a step takes at least its busiest NoC link's bytes at one link's
//! rate and its busiest DRAM bank's bytes at one bank's rate ([`TimelineModel::contention`]),
//! from the [`Occupancy`] the emulator routed (beside the aggregate DRAM bound of
//! [`TimelineStep`]). The constants and their sources are in the [`cost`](super) module docs.
//!
//! The bound is per program, not per core: it says when a step's traffic cannot fit through its
//! busiest link or bank however well the cores overlap, and takes the slowest core's timeline as
//! uncontended otherwise.

use crate::occupancy::{Link, Occupancy};

use super::timeline::{PhasedKernel, TimelineModel, TimelineStep};

/// The busiest NoC link and DRAM bank of a step and how long their bytes take.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Contention {
    /// The link that carried the most bytes, and its bytes.
    pub link: Option<(Link, u64)>,
    /// The DRAM bank that moved the most bytes, and its bytes.
    pub bank: Option<(usize, u64)>,
    /// The busiest link's bytes at one link's rate.
    pub link_seconds: f64,
    /// The busiest bank's bytes at one bank's rate.
    pub bank_seconds: f64,
}

impl Contention {
    /// The longer of the two.
    pub fn seconds(&self) -> f64 {
        self.link_seconds.max(self.bank_seconds)
    }

    /// Which of the two is longer, for a report.
    pub fn bound(&self) -> &'static str {
        if self.bank_seconds >= self.link_seconds {
            "DRAM bank"
        } else {
            "NoC link"
        }
    }
}

impl TimelineModel {
    /// The busiest link and bank of `occupancy` at one link's and one bank's rate.
    pub fn contention(&self, occupancy: &Occupancy) -> Contention {
        let link = occupancy.busiest_link();
        let bank = occupancy.busiest_bank();
        let bytes = |b: Option<u64>| b.unwrap_or(0) as f64;
        Contention {
            link,
            bank,
            link_seconds: bytes(link.map(|l| l.1)) / self.noc_link_bytes_per_cycle / self.clock_hz,
            bank_seconds: bytes(bank.map(|b| b.1)) / self.dram_bank_bytes_per_second,
        }
    }

    /// [`TimelineModel::step`] with the contention of the step's `occupancy`.
    pub fn contended_step(
        &self,
        cores: &[Vec<PhasedKernel>],
        occupancy: &Occupancy,
    ) -> TimelineStep {
        TimelineStep {
            contention: self.contention(occupancy),
            ..self.step(cores)
        }
    }
}
