//! Request bodies in, response bodies out, both bounded.
//!
//! In: a `Content-Length` over the limit is answered 413 before a byte of the body is read;
//! the body is read within the body timeout (else 408) and up to the limit (else 413), into
//! memory reserved from the body budget first.
//!
//! Out: a response body hands its bytes to the connection in [`CHUNK`]-byte frames, so the
//! connection's write buffer holds one chunk, not the response; the response's reservation in
//! the request budget is returned when the last chunk has been taken (or the connection
//! dropped).

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::http::{header, HeaderMap, StatusCode};
use http_body::{Frame, SizeHint};
use http_body_util::{BodyExt, LengthLimitError, Limited};

use super::admission::{Budget, Reservation};
use super::conn::Phase;
use super::error::ApiError;
use super::telemetry::{Rejection, Telemetry};

/// The most bytes of a response handed to the connection at once.
pub const CHUNK: usize = 64 << 10;

/// What bounds the reading of one body.
pub struct BodyLimits {
    pub limit: usize,
    pub timeout: Duration,
}

/// A body read into memory, with its reservation in the body budget.
pub struct ReadBody {
    pub bytes: Bytes,
    pub reservation: Reservation,
}

/// The body length the request declares (`Content-Length`), refused with 413 at once when over
/// the limit, before any of the body is read.
pub fn declared_length(
    headers: &HeaderMap,
    limit: usize,
    telemetry: &Telemetry,
) -> Result<Option<u64>, ApiError> {
    let Some(value) = headers.get(header::CONTENT_LENGTH) else {
        return Ok(None);
    };
    let length = value
        .to_str()
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .ok_or_else(|| ApiError::bad_request("the Content-Length header is not a number"))?;
    if length > limit as u64 {
        return Err(too_large(limit, telemetry));
    }
    Ok(Some(length))
}

fn too_large(limit: usize, telemetry: &Telemetry) -> ApiError {
    telemetry.reject(Rejection::BodyTooLarge);
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the request body is larger than this server's limit of {limit} bytes (--body-limit)"
        ),
    )
}

/// Reads a request body of `declared` length (the limit when unknown): `factor` bytes per body
/// byte reserved first (the copies the route makes while parsing), then the body within the
/// timeout and the limit. Marks the connection as processing once the body is in.
pub async fn read_body(
    declared: Option<u64>,
    body: Body,
    limits: &BodyLimits,
    budget: &Budget,
    factor: u64,
    telemetry: &Telemetry,
    phase: Option<&Phase>,
) -> Result<ReadBody, ApiError> {
    let expected = declared.unwrap_or(limits.limit as u64);
    let mut reservation = budget
        .reserve(factor * expected, "the request body")
        .await?;
    let collected =
        tokio::time::timeout(limits.timeout, Limited::new(body, limits.limit).collect())
            .await
            .map_err(|_| {
                telemetry.reject(Rejection::BodyTimeout);
                ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "the request body did not arrive within {} s (--body-timeout)",
                        limits.timeout.as_secs_f64()
                    ),
                )
            })?;
    let bytes = match collected {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<LengthLimitError>() => return Err(too_large(limits.limit, telemetry)),
        Err(e) => {
            return Err(ApiError::bad_request(format!(
                "cannot read the request body: {e}"
            )))
        }
    };
    reservation.shrink_to(factor * bytes.len() as u64);
    if let Some(phase) = phase {
        phase.processing();
    }
    Ok(ReadBody { bytes, reservation })
}

/// A response body sent in [`CHUNK`]-byte frames, holding its memory reservation until the
/// last frame is taken.
pub struct ChunkedBody {
    rest: Bytes,
    reservation: Option<Reservation>,
}

impl ChunkedBody {
    pub fn new(bytes: Bytes, reservation: Reservation) -> Self {
        Self {
            rest: bytes,
            reservation: Some(reservation),
        }
    }
}

impl HttpBody for ChunkedBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.rest.is_empty() {
            self.reservation = None;
            return Poll::Ready(None);
        }
        let n = self.rest.len().min(CHUNK);
        let chunk = self.rest.split_to(n);
        if self.rest.is_empty() {
            self.reservation = None;
        }
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.rest.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn a_response_goes_out_in_chunks_and_returns_its_memory_after_the_last() {
        let telemetry = Arc::new(Telemetry::new().expect("metrics"));
        let budget = Budget::new("requests", "--request-memory", 1 << 20, telemetry.clone());
        let reserved = || telemetry.memory.with_label_values(&["requests"]).get();
        let data: Vec<u8> = (0..CHUNK * 2 + 10).map(|i| i as u8).collect();
        let reservation = budget
            .reserve(data.len() as u64, "a response")
            .await
            .expect("fits");
        let mut body = ChunkedBody::new(Bytes::from(data.clone()), reservation);
        let mut sent = Vec::new();
        let mut sizes = Vec::new();
        let mut held = Vec::new();
        while let Some(frame) = body.frame().await {
            held.push(reserved() > 0);
            let chunk = frame.expect("infallible").into_data().expect("data");
            sizes.push(chunk.len());
            sent.extend_from_slice(&chunk);
        }
        assert_eq!(sizes, vec![CHUNK, CHUNK, 10]);
        // Held while chunks remain, returned as the last one is taken.
        assert_eq!(held, vec![true, true, false]);
        assert_eq!(sent, data);
        assert_eq!(reserved(), 0);
    }
}
