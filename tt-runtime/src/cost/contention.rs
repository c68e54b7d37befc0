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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::Counters;
    use crate::device::CoreCoord;
    use crate::program::KernelRole;

    #[test]
    fn the_busiest_link_bounds_a_step_its_cores_would_finish_sooner() {
        // 1 MiB on NoC 0 from (1,2) to (3,4): each of its 4 links carries 1 MiB, 16384 cycles at
        // 64 B/cycle; the one core's kernel counted nothing.
        let at = CoreCoord::new;
        let o = Occupancy::default()
            .route(0, at(1, 2), at(3, 4), at(3, 4), false, 1 << 20)
            .expect("route");
        let m = TimelineModel::BLACKHOLE;
        let idle = [vec![PhasedKernel::flat(
            KernelRole::Reader,
            Counters::default(),
        )]];
        let step = m.contended_step(&idle, &o);
        let link_seconds = 16384.0 / 1.35e9;
        assert!((step.contention.link_seconds - link_seconds).abs() < 1e-15);
        assert_eq!(step.contention.bank, None);
        assert_eq!(step.dominant(), "NoC link");
        assert!((step.seconds() - (link_seconds + 1e-6)).abs() < 1e-15);
        // The same step without its occupancy is the dispatch alone.
        assert_eq!(m.step(&idle).seconds(), 1e-6);
    }
}
