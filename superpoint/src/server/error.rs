//! Errors of the HTTP service: [`ApiError`], what a request gets back (a status and a JSON body
//! `{"error": "..."}`), and [`ServerError`], what can stop the service from starting.
//!
//! Status codes: 400 when the request cannot be read (malformed JSON, bad base64, bad or missing
//! query parameters), 408 when its body is too slow, 413 when it is too large (body, pixels, or
//! the memory decoding needs), 422 when it is well formed but unusable (an image that does not
//! decode, a plane of the wrong length, an option out of range), 404/405 for unknown routes and
//! methods, 503 (with `Retry-After`) when the server is busy, 500 only for faults of the server
//! itself.

use std::net::IpAddr;

use axum::extract::rejection::QueryRejection;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use thiserror::Error;

use crate::backend::tensix::TensixError;
use crate::error::{message_chain, Error};

/// A failed request: the status and the message sent as `{"error": message}`, and for a busy
/// server the seconds to wait, sent as `Retry-After`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{status}: {message}")]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// An error with this status and message.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            retry_after: None,
        }
    }

    /// The same error, telling the client to retry after `seconds`.
    pub fn retry_after(self, seconds: u64) -> Self {
        Self {
            retry_after: Some(seconds),
            ..self
        }
    }

    /// 400: the request cannot be read.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 500: a fault of the server, not of the request.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// A JSON body that does not parse (400) or does not fit the request's fields (422).
    pub(super) fn json(e: serde_json::Error) -> Self {
        use serde_json::error::Category;
        match e.classify() {
            Category::Data => Self::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("invalid request: {e}"),
            ),
            Category::Syntax | Category::Eof | Category::Io => {
                Self::bad_request(format!("the body is not valid JSON: {e}"))
            }
        }
    }

    /// Query parameters that do not parse.
    pub(super) fn query(rejection: QueryRejection) -> Self {
        Self::bad_request(rejection.body_text())
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        if let Error::OutOfMemory { .. } = e {
            return Self::new(StatusCode::SERVICE_UNAVAILABLE, message_chain(&e)).retry_after(1);
        }
        let status = match &e {
            Error::EmptyImage
            | Error::UnsupportedFormat(_)
            | Error::Decode(_)
            | Error::ImageSize { .. }
            | Error::PlaneLength { .. }
            | Error::InvalidOption { .. }
            | Error::Tensix(TensixError::FrameSize { .. } | TensixError::InputSize { .. }) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            Error::Io { .. }
            | Error::NotAFile { .. }
            | Error::FileTooLarge { .. }
            | Error::OutOfMemory { .. }
            | Error::Weights { .. }
            | Error::WeightTensor { .. }
            | Error::WeightsUnavailable(_)
            | Error::BackendUnavailable { .. }
            | Error::Graph(_)
            | Error::Eval(_)
            | Error::Tensix(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self::new(status, message_chain(&e))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message });
        let mut response = (self.status, Json(body)).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// Why the service could not start.
#[derive(Debug, Error)]
pub enum ServerError {
    #[error("invalid server setting {name} = {value}: {why}")]
    Config {
        name: &'static str,
        value: String,
        why: String,
    },
    #[error("cannot listen on {host} port {port}")]
    Bind {
        host: IpAddr,
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("no free port on {host} in {first}..={last}; choose one with --port")]
    NoFreePort { host: IpAddr, first: u16, last: u16 },
    #[error("cannot set up the metrics: {0}")]
    Metrics(String),
    /// A variant to warm up that the model refuses (its size or frame).
    #[error("cannot warm the model up")]
    Warmup(#[source] crate::Error),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
