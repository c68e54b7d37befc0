//! What bounds the work and the memory of the requests in flight: the prediction [`Queue`]
//! (full → 503 with `Retry-After`) and the memory [`Budget`]s that every request reserves from
//! before it holds a body, a decoded image or a response.
//!
//! A request takes, in this order and each once: a queue slot, a reservation in the body
//! budget (its declared length), one in the request budget (decoding, the plane and the
//! response, estimated from the image header and the keypoint cap), a decoder, the device.
//! Acquiring in one order makes the waits deadlock-free; every holder finishes in bounded time
//! (timeouts on the client side, a bounded network run), so every wait ends.

use std::sync::Arc;

use axum::http::StatusCode;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::error::ApiError;
use super::telemetry::{Rejection, Telemetry};

/// Seconds a client refused for a full queue is told to wait (`Retry-After`).
pub const RETRY_AFTER_SECS: u64 = 1;

/// The prediction queue: at most `max` requests admitted (waiting or running) at once.
pub struct Queue {
    slots: Arc<Semaphore>,
    max: usize,
    telemetry: Arc<Telemetry>,
}

/// An admitted request's place; freed when dropped.
pub struct Slot {
    _permit: OwnedSemaphorePermit,
    telemetry: Arc<Telemetry>,
}

impl Queue {
    pub fn new(max: usize, telemetry: Arc<Telemetry>) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(max)),
            max,
            telemetry,
        }
    }

    /// A slot, or 503 with `Retry-After` when all are taken (never waits).
    pub fn admit(&self) -> Result<Slot, ApiError> {
        match self.slots.clone().try_acquire_owned() {
            Ok(permit) => {
                self.telemetry.queue_depth.inc();
                Ok(Slot {
                    _permit: permit,
                    telemetry: self.telemetry.clone(),
                })
            }
            Err(_) => {
                self.telemetry.reject(Rejection::QueueFull);
                Err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "the server is busy: its queue of {} requests is full (--max-queue); \
                         retry after {RETRY_AFTER_SECS} s",
                        self.max
                    ),
                )
                .retry_after(RETRY_AFTER_SECS))
            }
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.telemetry.queue_depth.dec();
    }
}

/// A pool of memory, in bytes, that requests reserve from (kept as a semaphore of KiB).
pub struct Budget {
    pool: &'static str,
    /// The command-line flag that sets it, for messages.
    flag: &'static str,
    kib: Arc<Semaphore>,
    total_kib: usize,
    telemetry: Arc<Telemetry>,
}

/// Bytes held in a [`Budget`]; returned when dropped, or in part by [`Reservation::shrink_to`].
pub struct Reservation {
    permit: OwnedSemaphorePermit,
    pool: &'static str,
    telemetry: Arc<Telemetry>,
}

fn kib(bytes: u64) -> usize {
    usize::try_from(bytes.div_ceil(1024)).unwrap_or(usize::MAX)
}

impl Budget {
    pub fn new(
        pool: &'static str,
        flag: &'static str,
        bytes: u64,
        telemetry: Arc<Telemetry>,
    ) -> Self {
        let total_kib = kib(bytes).min(Semaphore::MAX_PERMITS);
        Self {
            pool,
            flag,
            kib: Arc::new(Semaphore::new(total_kib)),
            total_kib,
            telemetry,
        }
    }

    /// Reserves `bytes` for `what`, waiting for other requests to return theirs; 413 when the
    /// budget as a whole is smaller.
    pub async fn reserve(&self, bytes: u64, what: &str) -> Result<Reservation, ApiError> {
        let wanted = kib(bytes);
        let too_large = || {
            self.telemetry.reject(Rejection::ImageTooLarge);
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "{what} needs {} MiB, more than this server's {} of {} MiB ({}); \
                     send a smaller image",
                    wanted.div_ceil(1024),
                    self.pool,
                    self.total_kib / 1024,
                    self.flag
                ),
            )
        };
        let count = u32::try_from(wanted).map_err(|_| too_large())?;
        if wanted > self.total_kib {
            return Err(too_large());
        }
        let permit = self
            .kib
            .clone()
            .acquire_many_owned(count)
            .await
            .map_err(|_| ApiError::internal("the memory budget is closed"))?;
        self.gauge(wanted as i64);
        Ok(Reservation {
            permit,
            pool: self.pool,
            telemetry: self.telemetry.clone(),
        })
    }

    fn gauge(&self, delta_kib: i64) {
        self.telemetry
            .memory
            .with_label_values(&[self.pool])
            .add(delta_kib * 1024);
    }
}

impl Reservation {
    /// Keeps only `bytes` of the reservation (never grows it).
    pub fn shrink_to(&mut self, bytes: u64) {
        let keep = kib(bytes);
        let held = self.permit.num_permits();
        if keep < held {
            if let Some(released) = self.permit.split(held - keep) {
                self.gauge(-((held - keep) as i64));
                drop(released);
            }
        }
    }

    fn gauge(&self, delta_kib: i64) {
        self.telemetry
            .memory
            .with_label_values(&[self.pool])
            .add(delta_kib * 1024);
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.gauge(-(self.permit.num_permits() as i64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn telemetry() -> Arc<Telemetry> {
        Arc::new(Telemetry::new().expect("metrics"))
    }

    #[test]
    fn a_full_queue_answers_503_with_retry_after_and_frees_on_drop() {
        let t = telemetry();
        let queue = Queue::new(2, t.clone());
        let a = queue.admit().expect("first");
        let _b = queue.admit().expect("second");
        assert_eq!(t.queue_depth.get(), 2);
        let refused = queue.admit().err().expect("full");
        assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.retry_after, Some(RETRY_AFTER_SECS));
        drop(a);
        assert_eq!(t.queue_depth.get(), 1);
        queue.admit().expect("a slot again");
    }

    #[tokio::test]
    async fn reservations_wait_for_memory_shrink_and_refuse_what_never_fits() {
        let t = telemetry();
        let budget = Arc::new(Budget::new(
            "requests",
            "--request-memory",
            1 << 20,
            t.clone(),
        ));
        let gauge = || t.memory.with_label_values(&["requests"]).get();
        let mut first = budget.reserve(700 << 10, "a").await.expect("fits");
        assert_eq!(gauge(), 700 << 10);
        // 400 KiB more does not fit until the first shrinks to 100 KiB.
        let waiting = tokio::spawn({
            let budget = budget.clone();
            async move { budget.reserve(400 << 10, "b").await.map(|_| ()) }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        first.shrink_to(100 << 10);
        waiting.await.expect("join").expect("fits after the shrink");
        assert_eq!(gauge(), 100 << 10);
        drop(first);
        assert_eq!(gauge(), 0);
        let never = budget
            .reserve(2 << 20, "a 2 MiB image")
            .await
            .err()
            .expect("too big");
        assert_eq!(never.status, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(
            never.message.contains("--request-memory"),
            "{}",
            never.message
        );
    }
}
