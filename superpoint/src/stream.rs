//! Detection over a stream of inputs with decoding ahead and every device busy: a feeder thread
//! pulls inputs, worker threads decode them in parallel, one runner thread per device (one on
//! the CPU) runs the network on decoded planes (each frame going to the least-loaded device), and
//! the iterator hands the detections out in input order.
//!
//! At most a window of inputs is in flight, from being pulled to being handed out: the feeder
//! takes a token per input and the iterator returns one per detection it hands out, so that a
//! slow frame (a first frame compiling its programs) never lets the others pile up without bound.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, Sender};
use superpoint_graph::Tensor;

use crate::decode::decode_plane;
use crate::error::Result;
use crate::input::Input;
use crate::model::{Runner, SuperPoint};
use crate::options::Options;
use crate::output::Detection;

type Decoded = (usize, Result<Tensor<u8>>, Duration);

/// An iterator of detections in input order (see [`SuperPoint::stream`]).
pub struct DetectStream<'m> {
    results: Receiver<(usize, Result<Detection>)>,
    ready: BTreeMap<usize, Result<Detection>>,
    next: usize,
    /// Returns the feeder a place in the window for each detection handed out.
    tokens: Sender<()>,
    model: PhantomData<&'m SuperPoint>,
}

impl<'m> DetectStream<'m> {
    pub(crate) fn new<I>(
        runner: Runner,
        inputs: I,
        options: Options,
        decoders: usize,
        runners: usize,
    ) -> Self
    where
        I: Iterator<Item = Input<'static>> + Send + 'static,
    {
        let (decoders, runners) = (decoders.max(1), runners.max(1));
        let window = 2 * (decoders + runners);
        let (token_tx, token_rx) = bounded::<()>(window);
        for _ in 0..window {
            // The channel holds exactly `window` tokens, so these sends never block or fail.
            let _ = token_tx.send(());
        }
        let (job_tx, job_rx) = bounded::<(usize, Input<'static>)>(decoders);
        let (decoded_tx, decoded_rx) = bounded::<Decoded>(runners);
        let (result_tx, result_rx) = bounded(window);
        thread::spawn(move || {
            for job in inputs.enumerate() {
                if token_rx.recv().is_err() || job_tx.send(job).is_err() {
                    break;
                }
            }
        });
        let spec = options.plane_spec();
        for _ in 0..decoders {
            let (jobs, decoded) = (job_rx.clone(), decoded_tx.clone());
            thread::spawn(move || {
                for (index, input) in jobs {
                    let start = Instant::now();
                    let plane = decode_plane(&input, spec);
                    if decoded.send((index, plane, start.elapsed())).is_err() {
                        break;
                    }
                }
            });
        }
        drop(decoded_tx);
        for _ in 0..runners {
            let (planes, results, runner) = (decoded_rx.clone(), result_tx.clone(), runner.clone());
            thread::spawn(move || {
                for (index, plane, decode) in planes {
                    let detection = plane.and_then(|p| runner.detect_plane(p, &options, decode));
                    if results.send((index, detection)).is_err() {
                        break;
                    }
                }
            });
        }
        Self {
            results: result_rx,
            ready: BTreeMap::new(),
            next: 0,
            tokens: token_tx,
            model: PhantomData,
        }
    }
}

impl Iterator for DetectStream<'_> {
    type Item = Result<Detection>;

    fn next(&mut self) -> Option<Self::Item> {
        let detection = loop {
            if let Some(found) = self.ready.remove(&self.next) {
                break found;
            }
            let (index, detection) = self.results.recv().ok()?;
            self.ready.insert(index, detection);
        };
        self.next += 1;
        // The feeder may be gone (the inputs ran out): then nobody needs the token.
        let _ = self.tokens.try_send(());
        Some(detection)
    }
}
