//! Whether the service is ready for predictions (`GET /health`): not while it warms its variants
//! up on the devices (the server already listens, so that a load balancer can ask), nor once
//! warm-up has failed or every device of its pool has failed.

use std::sync::Arc;

use axum::http::StatusCode;
use serde::Serialize;
use serde_json::{json, Value};

use super::error::ApiError;
use super::telemetry::Rejection;
use super::Shared;
use crate::backend::tensix::WarmupVariant;

/// Seconds a client refused during warm-up is told to wait (`Retry-After`).
pub const WARMUP_RETRY_AFTER_SECS: u64 = 5;

/// The service's state of readiness.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Readiness {
    /// Warm-up runs: `done` of `total` steps (variants × devices) are done.
    WarmingUp { done: usize, total: usize },
    /// Predictions are served.
    Ready,
    /// Warm-up failed; the server does not serve predictions.
    Failed { error: String },
}

/// Starts warming `variants` up on a thread of its own, publishing progress and the outcome.
pub(super) fn warm_up(shared: Arc<Shared>, variants: Vec<WarmupVariant>) {
    std::thread::spawn(move || {
        let progress = |step: &crate::WarmupStep| {
            shared.ready.send_replace(Readiness::WarmingUp {
                done: step.done,
                total: step.total,
            });
        };
        let outcome = shared.model.warmup_variants(&variants, Some(&progress));
        shared.ready.send_replace(match outcome {
            Ok(()) => {
                tracing::info!("warm-up done: {} variant(s) prepared", variants.len());
                Readiness::Ready
            }
            Err(e) => {
                tracing::error!("warm-up failed: {e}");
                Readiness::Failed {
                    error: e.to_string(),
                }
            }
        });
    });
}

impl Shared {
    /// The readiness, `Failed` also when no device of the pool is left.
    pub(super) fn readiness(&self) -> Readiness {
        let state = self.ready.borrow().clone();
        match self.model.tensix() {
            Some(t) if state == Readiness::Ready && t.healthy_devices() == 0 => Readiness::Failed {
                error: "every device of the pool has failed (see /info)".to_string(),
            },
            _ => state,
        }
    }

    /// A prediction may start: 503 with `Retry-After` while warming up, 503 once failed.
    pub(super) fn check_ready(&self) -> Result<(), ApiError> {
        match self.readiness() {
            Readiness::Ready => Ok(()),
            Readiness::WarmingUp { done, total } => {
                self.telemetry.reject(Rejection::WarmingUp);
                Err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "the server is warming up ({done} of {total} variants prepared); retry \
                         after {WARMUP_RETRY_AFTER_SECS} s, or wait for GET /health to answer 200"
                    ),
                )
                .retry_after(WARMUP_RETRY_AFTER_SECS))
            }
            Readiness::Failed { error } => Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("the server cannot serve predictions: {error}"),
            )),
        }
    }

    /// The answer to `GET /health`: 200 when ready, else 503, with the readiness as JSON.
    pub(super) fn health(&self) -> (StatusCode, Value) {
        let readiness = self.readiness();
        let status = match readiness {
            Readiness::Ready => StatusCode::OK,
            _ => StatusCode::SERVICE_UNAVAILABLE,
        };
        let body = match readiness {
            Readiness::Ready => json!({ "status": "ok" }),
            other => serde_json::to_value(other).unwrap_or(Value::Null),
        };
        (status, body)
    }
}
