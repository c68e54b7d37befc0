//! Detection over a stream of inputs with decoding ahead: a feeder thread pulls inputs, worker
//! threads decode them in parallel, and the iterator runs the network on each decoded plane in
//! input order while the next ones decode.

use std::collections::BTreeMap;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver};
use superpoint_graph::Tensor;

use crate::decode::decode_plane;
use crate::error::Result;
use crate::input::Input;
use crate::model::SuperPoint;
use crate::options::Options;
use crate::output::Detection;

type Decoded = (usize, Result<Tensor<u8>>, Duration);

/// An iterator of detections in input order (see [`SuperPoint::stream`]).
pub struct DetectStream<'m> {
    model: &'m SuperPoint,
    options: Options,
    results: Receiver<Decoded>,
    ready: BTreeMap<usize, (Result<Tensor<u8>>, Duration)>,
    next: usize,
}

impl<'m> DetectStream<'m> {
    pub(crate) fn new<I>(model: &'m SuperPoint, inputs: I, options: Options, workers: usize) -> Self
    where
        I: Iterator<Item = Input<'static>> + Send + 'static,
    {
        let (job_tx, job_rx) = bounded::<(usize, Input<'static>)>(workers);
        let (result_tx, result_rx) = bounded::<Decoded>(workers * 2);
        thread::spawn(move || {
            for job in inputs.enumerate() {
                if job_tx.send(job).is_err() {
                    break;
                }
            }
        });
        let spec = options.plane_spec();
        for _ in 0..workers {
            let jobs = job_rx.clone();
            let results = result_tx.clone();
            thread::spawn(move || {
                for (index, input) in jobs {
                    let start = Instant::now();
                    let plane = decode_plane(&input, spec);
                    if results.send((index, plane, start.elapsed())).is_err() {
                        break;
                    }
                }
            });
        }
        Self {
            model,
            options,
            results: result_rx,
            ready: BTreeMap::new(),
            next: 0,
        }
    }
}

impl Iterator for DetectStream<'_> {
    type Item = Result<Detection>;

    fn next(&mut self) -> Option<Self::Item> {
        let (plane, decode) = loop {
            if let Some(found) = self.ready.remove(&self.next) {
                break found;
            }
            let (index, plane, decode) = self.results.recv().ok()?;
            self.ready.insert(index, (plane, decode));
        };
        self.next += 1;
        Some(plane.and_then(|p| self.model.detect_plane(p, &self.options, decode)))
    }
}
