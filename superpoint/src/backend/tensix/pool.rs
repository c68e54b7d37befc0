//! The device pool of the Tensix backend: one session (an opened device with its loaded
//! programs and traces) per device, every call dispatched to the least-loaded device still in
//! the pool, and a device that fails taken out of it.
//!
//! A device's load is the number of calls assigned to it, waiting for it or running on it;
//! ties go to the device that has been given the fewest calls, so that even one caller at a time
//! spreads its calls. A call whose device is lost (`tt_runtime::Error::DeviceLost`, which no
//! input can cause) marks that device failed, logs an error naming it, and runs again on another
//! device; other errors are the call's own and are returned as they are. When every device has
//! failed, calls fail with [`TensixError::NoDevices`], which lists each device's failure.

use std::fmt;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::error::TensixError;
use crate::error::message_chain;

/// Which devices a model runs on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum DeviceSet {
    /// Every device the runtime finds (the emulator: as many as `$TTR_EMU_DEVICES`, default 1).
    #[default]
    All,
    /// The first `n` devices, ids 0..n.
    Count(u32),
    /// These device ids.
    Ids(Vec<u32>),
}

impl DeviceSet {
    /// `all`, a count (`2`: devices 0 and 1) or ids separated by commas (`0,2`; one id alone is
    /// written with a comma, `3,`).
    pub fn parse(text: &str) -> Result<DeviceSet, TensixError> {
        let text = text.trim();
        let bad = |why: &str| TensixError::DeviceSet {
            set: text.to_string(),
            why: why.to_string(),
        };
        if text.eq_ignore_ascii_case("all") {
            return Ok(DeviceSet::All);
        }
        let number = |s: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| bad("write `all`, a count such as `2`, or ids such as `0,1` (`3,` for device 3 alone)"))
        };
        if !text.contains(',') {
            let n = number(text)?;
            return if n == 0 {
                Err(bad("a count of devices is at least 1"))
            } else {
                Ok(DeviceSet::Count(n))
            };
        }
        let ids = text
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(number)
            .collect::<Result<Vec<u32>, _>>()?;
        DeviceSet::Ids(ids).checked()
    }

    fn checked(self) -> Result<DeviceSet, TensixError> {
        if let DeviceSet::Ids(ids) = &self {
            let bad = |why: String| TensixError::DeviceSet {
                set: self.to_string(),
                why,
            };
            if ids.is_empty() {
                return Err(bad("the list of device ids is empty".to_string()));
            }
            for (i, id) in ids.iter().enumerate() {
                if ids[..i].contains(id) {
                    return Err(bad(format!("device {id} is listed twice")));
                }
            }
        }
        Ok(self)
    }

    /// The device ids of the set on a runtime with `available` devices (ids 0..available).
    pub fn resolve(&self, available: u32) -> Result<Vec<u32>, TensixError> {
        let missing = |id: u32| TensixError::MissingDevice {
            id,
            available,
            set: self.to_string(),
        };
        match self.clone().checked()? {
            DeviceSet::All if available == 0 => Err(TensixError::NoDevices {
                failures: "the runtime found no device".to_string(),
            }),
            DeviceSet::All => Ok((0..available).collect()),
            DeviceSet::Count(n) if n > available => Err(missing(available)),
            DeviceSet::Count(n) => Ok((0..n).collect()),
            DeviceSet::Ids(ids) => match ids.iter().find(|&&id| id >= available) {
                Some(&id) => Err(missing(id)),
                None => Ok(ids),
            },
        }
    }
}

impl fmt::Display for DeviceSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSet::All => f.write_str("all"),
            DeviceSet::Count(n) => write!(f, "{n}"),
            DeviceSet::Ids(ids) => {
                let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
                let text = ids.join(",");
                if ids.len() == 1 {
                    write!(f, "{text},")
                } else {
                    f.write_str(&text)
                }
            }
        }
    }
}

impl std::str::FromStr for DeviceSet {
    type Err = TensixError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DeviceSet::parse(s)
    }
}

/// What one device of the pool has done, for `/info` and `/metrics`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceStats {
    /// The runtime's device id.
    pub id: u32,
    /// Calls assigned to it now, waiting for it or running.
    pub queue: usize,
    /// Frames it has run for callers (warm-up frames not counted).
    pub frames: u64,
    /// Seconds it has been held: frames, warm-up, compiling and loading programs.
    pub busy_seconds: f64,
    /// Seconds frames spent compiling and loading programs no warm-up had prepared.
    pub compile_seconds: f64,
    /// Frames that compiled or loaded a program.
    pub compiles: u64,
    /// Why it left the pool, once it has.
    pub failed: Option<String>,
}

/// The result of a call, and where and how long it waited.
#[derive(Debug)]
pub struct Ran<T> {
    pub value: T,
    /// The id of the device that ran it.
    pub device: u32,
    /// Time spent waiting for devices (all attempts).
    pub queue: Duration,
    /// Time the call spent compiling and loading programs on the device that ran it.
    pub compile: Duration,
}

/// What a call did on its device: its value, and the time it spent compiling and loading.
pub struct Done<T> {
    pub value: T,
    pub compile: Duration,
}

struct Slot<S> {
    id: u32,
    session: Mutex<S>,
}

#[derive(Debug, Default)]
struct State {
    load: usize,
    given: u64,
    frames: u64,
    busy: Duration,
    compile: Duration,
    compiles: u64,
    failed: Option<String>,
}

/// The sessions of a model's devices.
pub struct Pool<S> {
    slots: Vec<Slot<S>>,
    state: Mutex<Vec<State>>,
}

/// A poisoned lock is taken over: a panic inside leaves no half-written state that a later call
/// reads (a frame writes its whole input; the counters are plain numbers).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<S> Pool<S> {
    /// A pool of `(device id, session)`s, in the order given; at least one.
    pub fn new(sessions: Vec<(u32, S)>) -> Result<Pool<S>, TensixError> {
        if sessions.is_empty() {
            return Err(TensixError::NoDevices {
                failures: "the pool was given no device".to_string(),
            });
        }
        let state = sessions.iter().map(|_| State::default()).collect();
        Ok(Pool {
            slots: sessions
                .into_iter()
                .map(|(id, s)| Slot {
                    id,
                    session: Mutex::new(s),
                })
                .collect(),
            state: Mutex::new(state),
        })
    }

    /// Runs `f` on the session of the first device (failed or not), waiting for it.
    pub fn with_first<T>(&self, f: impl FnOnce(&mut S) -> T) -> T {
        // `new` refuses an empty pool.
        f(&mut lock(&self.slots[0].session))
    }

    /// Devices still in the pool.
    pub fn healthy(&self) -> usize {
        lock(&self.state)
            .iter()
            .filter(|s| s.failed.is_none())
            .count()
    }

    /// Every device's figures, in pool order.
    pub fn stats(&self) -> Vec<DeviceStats> {
        lock(&self.state)
            .iter()
            .zip(&self.slots)
            .map(|(s, slot)| DeviceStats {
                id: slot.id,
                queue: s.load,
                frames: s.frames,
                busy_seconds: s.busy.as_secs_f64(),
                compile_seconds: s.compile.as_secs_f64(),
                compiles: s.compiles,
                failed: s.failed.clone(),
            })
            .collect()
    }

    /// Runs `f` on the session of device `id` (failed or not), waiting for it.
    pub fn with_id<T>(&self, id: u32, f: impl FnOnce(&mut S) -> T) -> Option<T> {
        let slot = self.slots.iter().find(|s| s.id == id)?;
        Some(f(&mut lock(&slot.session)))
    }

    /// Runs `f` on each session in pool order, one at a time.
    pub fn each<T>(&self, mut f: impl FnMut(u32, &mut S) -> T) -> Vec<T> {
        self.slots
            .iter()
            .map(|slot| f(slot.id, &mut lock(&slot.session)))
            .collect()
    }

    /// The least-loaded device still in the pool, now counted as loaded by one more call.
    fn pick(&self) -> Result<usize, TensixError> {
        let mut state = lock(&self.state);
        let chosen = state
            .iter()
            .enumerate()
            .filter(|(_, s)| s.failed.is_none())
            .min_by_key(|(i, s)| (s.load, s.given, *i))
            .map(|(i, _)| i);
        match chosen {
            Some(i) => {
                state[i].load += 1;
                state[i].given += 1;
                Ok(i)
            }
            None => Err(self.none_left(&state)),
        }
    }

    fn none_left(&self, state: &[State]) -> TensixError {
        let failures: Vec<String> = state
            .iter()
            .zip(&self.slots)
            .map(|(s, slot)| {
                format!(
                    "device {}: {}",
                    slot.id,
                    s.failed.as_deref().unwrap_or("in the pool")
                )
            })
            .collect();
        TensixError::NoDevices {
            failures: failures.join("; "),
        }
    }

    /// Takes device `i` out of the pool for `error`, unless it already is.
    fn fail(&self, i: usize, error: &TensixError) {
        let mut state = lock(&self.state);
        if state[i].failed.is_none() {
            state[i].failed = Some(message_chain(error));
            let left = state.iter().filter(|s| s.failed.is_none()).count();
            tracing::error!(
                device = self.slots[i].id,
                "device {} failed and left the pool ({left} left): {}",
                self.slots[i].id,
                message_chain(error)
            );
        }
    }

    /// Device `i`'s call is over: it held the device for `busy`, of which `compile` compiling
    /// and loading; `frame` when it ran a caller's frame.
    fn release(&self, i: usize, busy: Duration, compile: Duration, frame: bool) {
        let mut state = lock(&self.state);
        let s = &mut state[i];
        s.load -= 1;
        s.busy += busy;
        if frame {
            s.frames += 1;
            if !compile.is_zero() {
                s.compile += compile;
                s.compiles += 1;
            }
        }
    }

    fn failed(&self, i: usize) -> bool {
        lock(&self.state)[i].failed.is_some()
    }

    /// Runs one frame, `work`, on the least-loaded device; again on another device for as long
    /// as the device it ran on is lost.
    pub fn run<T>(
        &self,
        mut work: impl FnMut(&mut S) -> Result<Done<T>, TensixError>,
    ) -> Result<Ran<T>, TensixError> {
        let mut queue = Duration::ZERO;
        loop {
            let i = self.pick()?;
            let waiting = Instant::now();
            let mut session = lock(&self.slots[i].session);
            queue += waiting.elapsed();
            if self.failed(i) {
                drop(session);
                self.release(i, Duration::ZERO, Duration::ZERO, false);
                continue;
            }
            let start = Instant::now();
            let result = work(&mut session);
            drop(session);
            let busy = start.elapsed();
            match result {
                Ok(done) => {
                    self.release(i, busy, done.compile, true);
                    return Ok(Ran {
                        value: done.value,
                        device: self.slots[i].id,
                        queue,
                        compile: done.compile,
                    });
                }
                Err(e) if e.is_device_lost() => {
                    self.fail(i, &e);
                    self.release(i, busy, Duration::ZERO, false);
                }
                Err(e) => {
                    self.release(i, busy, Duration::ZERO, false);
                    return Err(e);
                }
            }
        }
    }

    /// Runs `work` on every device still in the pool, each on a thread of its own (warm-up). A
    /// device lost meanwhile leaves the pool and the others carry on; another error is returned
    /// (the first in pool order) once every device is done; none left is `NoDevices`.
    pub fn each_parallel(
        &self,
        work: impl Fn(u32, &mut S) -> Result<(), TensixError> + Sync,
    ) -> Result<(), TensixError>
    where
        S: Send,
    {
        let work = &work;
        let results: Vec<Result<(), TensixError>> = std::thread::scope(|scope| {
            let running: Vec<_> = (0..self.slots.len())
                .filter(|&i| !self.failed(i))
                .map(|i| {
                    lock(&self.state)[i].load += 1;
                    scope.spawn(move || {
                        let start = Instant::now();
                        let result = work(self.slots[i].id, &mut lock(&self.slots[i].session));
                        if let Err(e) = &result {
                            if e.is_device_lost() {
                                self.fail(i, e);
                            }
                        }
                        self.release(i, start.elapsed(), Duration::ZERO, false);
                        result
                    })
                })
                .collect();
            running
                .into_iter()
                .map(|t| t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        if self.healthy() == 0 {
            return Err(self.none_left(&lock(&self.state)));
        }
        results
            .into_iter()
            .find_map(|r| r.err().filter(|e| !e.is_device_lost()))
            .map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use kernel_gen::runner::RunError;

    use super::*;

    fn lost(id: u32) -> TensixError {
        TensixError::Device {
            doing: format!("running the main program on device {id}"),
            source: RunError::Runtime(tt_runtime::Error::DeviceLost(format!(
                "emulated device {id} stopped responding"
            ))),
        }
    }

    /// A stand-in device: its id, whether it is lost, and the frames it ran.
    struct Fake {
        id: u32,
        lost: bool,
        ran: Vec<u32>,
    }

    fn pool(ids: &[u32]) -> Pool<Fake> {
        let sessions = ids
            .iter()
            .map(|&id| {
                (
                    id,
                    Fake {
                        id,
                        lost: false,
                        ran: Vec::new(),
                    },
                )
            })
            .collect();
        Pool::new(sessions).unwrap()
    }

    /// Runs frame `n` on `p`: an error when its device is lost.
    fn frame(p: &Pool<Fake>, n: u32) -> Result<Ran<u32>, TensixError> {
        p.run(|s| {
            if s.lost {
                return Err(lost(s.id));
            }
            s.ran.push(n);
            Ok(Done {
                value: n * 10,
                compile: Duration::ZERO,
            })
        })
    }

    #[test]
    fn device_sets_parse_and_resolve_against_the_devices_present() {
        assert_eq!(DeviceSet::parse("all").unwrap(), DeviceSet::All);
        assert_eq!(DeviceSet::parse("2").unwrap(), DeviceSet::Count(2));
        assert_eq!(
            DeviceSet::parse("0, 2").unwrap(),
            DeviceSet::Ids(vec![0, 2])
        );
        assert_eq!(DeviceSet::parse("3,").unwrap(), DeviceSet::Ids(vec![3]));
        for (text, why) in [
            ("0", "at least 1"),
            ("two", "write `all`"),
            ("1,1", "listed twice"),
            (",", "empty"),
            ("-1,", "write `all`"),
        ] {
            let e = DeviceSet::parse(text).unwrap_err().to_string();
            assert!(e.contains(why), "{text}: {e}");
        }
        for set in ["all", "2", "0,2", "3,"] {
            assert_eq!(DeviceSet::parse(set).unwrap().to_string(), set);
        }
        assert_eq!(DeviceSet::All.resolve(3).unwrap(), vec![0, 1, 2]);
        assert_eq!(DeviceSet::Count(2).resolve(3).unwrap(), vec![0, 1]);
        assert_eq!(DeviceSet::Ids(vec![2, 0]).resolve(3).unwrap(), vec![2, 0]);
        let e = DeviceSet::Count(2).resolve(1).unwrap_err();
        assert!(
            matches!(
                e,
                TensixError::MissingDevice {
                    id: 1,
                    available: 1,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("TTR_EMU_DEVICES"), "{e}");
        assert!(matches!(
            DeviceSet::Ids(vec![0, 4]).resolve(3),
            Err(TensixError::MissingDevice { id: 4, .. })
        ));
        assert!(matches!(
            DeviceSet::All.resolve(0),
            Err(TensixError::NoDevices { .. })
        ));
    }

    #[test]
    fn one_caller_at_a_time_alternates_between_idle_devices() {
        let p = pool(&[3, 5]);
        let devices: Vec<u32> = (0..4).map(|n| frame(&p, n).unwrap().device).collect();
        assert_eq!(devices, vec![3, 5, 3, 5]);
        let stats = p.stats();
        assert_eq!(
            stats
                .iter()
                .map(|s| (s.id, s.frames, s.queue))
                .collect::<Vec<_>>(),
            vec![(3, 2, 0), (5, 2, 0)]
        );
    }

    #[test]
    fn calls_go_to_the_least_loaded_device_not_in_turn() {
        let p = Arc::new(pool(&[0, 1]));
        // A long call holds device 0 until the short calls are done; they must all go to the
        // idle device 1 (in turn, the second would wait behind the long call for 10 s).
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let long = {
            let p = p.clone();
            std::thread::spawn(move || {
                p.run(|s| {
                    let _ = started_tx.send(());
                    let _ = release_rx.recv_timeout(Duration::from_secs(10));
                    Ok(Done {
                        value: s.id,
                        compile: Duration::ZERO,
                    })
                })
                .map(|r| r.device)
            })
        };
        started_rx.recv().unwrap();
        assert_eq!(p.stats()[0].queue, 1);
        let short: Vec<u32> = (0..3).map(|n| frame(&p, n).unwrap().device).collect();
        release_tx.send(()).unwrap();
        assert_eq!(short, vec![1, 1, 1]);
        assert_eq!(long.join().unwrap().unwrap(), 0);
    }

    #[test]
    fn a_lost_device_leaves_the_pool_and_its_frame_runs_on_another() {
        let p = pool(&[0, 1]);
        frame(&p, 0).unwrap();
        p.with_id(1, |s| s.lost = true);
        let moved = frame(&p, 1).unwrap();
        assert_eq!((moved.device, moved.value), (0, 10));
        assert_eq!(p.healthy(), 1);
        let stats = p.stats();
        let failure = stats[1].failed.as_deref().expect("device 1 failed");
        assert!(
            failure.contains("on device 1: device lost: emulated device 1 stopped responding"),
            "{failure}"
        );
        // Later frames never go to the failed device.
        for n in 2..5 {
            assert_eq!(frame(&p, n).unwrap().device, 0);
        }
        assert_eq!(
            p.with_id(0, |s| s.ran.clone()).unwrap(),
            vec![0, 1, 2, 3, 4]
        );
        assert_eq!(p.with_id(1, |s| s.ran.clone()).unwrap(), Vec::<u32>::new());
    }

    #[test]
    fn with_no_device_left_calls_fail_naming_each_failure() {
        let p = pool(&[0, 1]);
        p.each(|_, s| s.lost = true);
        let e = frame(&p, 0).unwrap_err();
        let TensixError::NoDevices { failures } = &e else {
            panic!("{e:?}");
        };
        assert!(
            failures.contains("device 0: the device failed")
                && failures.contains("device 1: the device failed"),
            "{failures}"
        );
        assert!(matches!(frame(&p, 1), Err(TensixError::NoDevices { .. })));
    }

    #[test]
    fn errors_of_the_call_itself_keep_the_device_in_the_pool() {
        let p = pool(&[0]);
        let tries = AtomicUsize::new(0);
        let e = p
            .run::<()>(|_| {
                tries.fetch_add(1, Ordering::Relaxed);
                Err(TensixError::FrameSize {
                    width: 100,
                    height: 100,
                })
            })
            .unwrap_err();
        assert!(matches!(e, TensixError::FrameSize { .. }), "{e:?}");
        assert_eq!(tries.load(Ordering::Relaxed), 1);
        assert_eq!(p.healthy(), 1);
        assert_eq!(p.stats()[0].queue, 0);
    }

    #[test]
    fn parallel_work_runs_on_every_device_and_survives_a_lost_one() {
        let p = pool(&[0, 1, 2]);
        p.with_id(2, |s| s.lost = true);
        p.each_parallel(|id, s| {
            if s.lost {
                return Err(lost(id));
            }
            s.ran.push(100 + id);
            Ok(())
        })
        .unwrap();
        assert_eq!(p.healthy(), 2);
        assert_eq!(
            p.each(|_, s| s.ran.clone()),
            vec![vec![100], vec![101], vec![]]
        );
        let none = pool(&[0]);
        none.with_id(0, |s| s.lost = true);
        let e = none
            .each_parallel(|id, s| if s.lost { Err(lost(id)) } else { Ok(()) })
            .unwrap_err();
        assert!(matches!(e, TensixError::NoDevices { .. }), "{e:?}");
    }
}
