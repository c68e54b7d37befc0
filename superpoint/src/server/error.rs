//! Errors of the HTTP service: [`ApiError`], what a request gets back (a status and a JSON body
//! `{"error": "..."}`), and [`ServerError`], what can stop the service from starting.
//!
//! Status codes: 400 when the request cannot be read (malformed JSON, bad base64, bad or missing
//! query parameters), 413 when it is too large (body or pixels), 422 when it is well formed but
//! unusable (an image that does not decode, a plane of the wrong length, an option out of
//! range), 404/405 for unknown routes and methods, 500 only for faults of the server itself.

use std::net::IpAddr;

use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use thiserror::Error;

use crate::backend::tensix::TensixError;
use crate::error::Error;

/// A failed request: the status and the message sent as `{"error": message}`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{status}: {message}")]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    /// An error with this status and message.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
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

    /// A body that could not be read, e.g. larger than the limit (413).
    pub(super) fn body(rejection: BytesRejection, limit: usize) -> Self {
        let status = rejection.status();
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            Self::new(
                status,
                format!("the request body is larger than this server's limit of {limit} bytes (--body-limit)"),
            )
        } else {
            Self::new(status, rejection.body_text())
        }
    }

    /// Query parameters that do not parse.
    pub(super) fn query(rejection: QueryRejection) -> Self {
        Self::bad_request(rejection.body_text())
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
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
            | Error::Weights { .. }
            | Error::WeightTensor { .. }
            | Error::WeightsUnavailable(_)
            | Error::BackendUnavailable { .. }
            | Error::Graph(_)
            | Error::Eval(_)
            | Error::Tensix(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self::new(status, e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message });
        (self.status, Json(body)).into_response()
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
    #[error("cannot listen on {host} port {port}: {source}")]
    Bind {
        host: IpAddr,
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("no free port on {host} in {first}..={last}; choose one with --port")]
    NoFreePort { host: IpAddr, first: u16, last: u16 },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
