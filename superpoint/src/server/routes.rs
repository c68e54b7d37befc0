//! The routes of the service and the request → detection → response path.
//!
//! A prediction response (all three `predict` routes give the same one for the same image and
//! options) has the reference port's fields:
//! `num_keypoints`; `keypoints`, [x, y] in original image pixels, best first; `scores`,
//! descending; `original_size` and `image_size` (the network frame), both [width, height];
//! `scale`, original pixels per frame pixel, [x, y]; `descriptors`, `null` or
//! `{"data": base64 NPZ, "shape": [N, 256], "dtype": "float16"}`; `serving_path`, the backend;
//! `timing_ms` with `preprocess` (base64 and image decode, resize), `device_forward`,
//! `postprocess` (selection, sampling, NPZ), `queue` (waiting for a decoder or the device) and
//! `total` (the server's wall time for the request, from its body being read).

use std::borrow::Cow;
use std::io::Cursor;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Query, State};
use axum::http::{Method, StatusCode, Uri};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use superpoint_graph::{Tensor, MAX_NMS_RADIUS};
use tokio::task::JoinError;

use super::error::ApiError;
use super::npz::{descriptors_npz, KEY};
use super::Shared;
use crate::backend::Backend;
use crate::decode::{decode_plane, PlaneSpec, MAX_SIDE, MIN_SIDE};
use crate::hub::REPO_ID;
use crate::input::Input;
use crate::options::Options;
use crate::output::Detection;

/// Base64 as clients send it: standard alphabet, padding optional.
const BASE64_IN: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Every route, for the help text of 404 responses.
const ROUTES: &str = "POST /predict, POST /predict_raw, POST /predict_plane?height=H&width=W, \
                      GET /health, GET /info, GET /v1/models";

pub(super) fn routes(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/predict", post(predict))
        .route("/predict_raw", post(predict_raw))
        .route("/predict_plane", post(predict_plane))
        .route("/health", get(health))
        .route("/info", get(info))
        .route("/v1/models", get(models))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(shared)
}

/// The detection options a request may set; absent ones take the defaults.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OptionFields {
    max_keypoints: Option<i64>,
    keypoint_threshold: Option<f32>,
    nms_radius: Option<i64>,
    return_descriptors: Option<bool>,
}

/// The JSON body of `POST /predict`. It repeats [`OptionFields`] rather than flattening it:
/// serde does not support `flatten` together with `deny_unknown_fields`, and a flattened
/// struct in a query string would see its numbers as strings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PredictRequest {
    /// The image file, base64 (a `data:` URL prefix is accepted).
    image: String,
    max_keypoints: Option<i64>,
    keypoint_threshold: Option<f32>,
    nms_radius: Option<i64>,
    return_descriptors: Option<bool>,
}

/// The query of `POST /predict_plane` (the options repeated as in [`PredictRequest`]).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlaneQuery {
    height: Option<usize>,
    width: Option<usize>,
    max_keypoints: Option<i64>,
    keypoint_threshold: Option<f32>,
    nms_radius: Option<i64>,
    return_descriptors: Option<bool>,
}

/// A prediction response (fields described in the module doc).
#[derive(Debug, Serialize)]
struct Prediction {
    num_keypoints: usize,
    keypoints: Vec<[f32; 2]>,
    scores: Vec<f32>,
    original_size: [usize; 2],
    image_size: [usize; 2],
    scale: [f32; 2],
    descriptors: Option<Descriptors>,
    serving_path: &'static str,
    timing_ms: TimingMs,
}

#[derive(Debug, Serialize)]
struct Descriptors {
    /// Base64 of an NPZ archive with the (N, 256) float16 array `descriptors`.
    data: String,
    shape: [usize; 2],
    dtype: &'static str,
}

#[derive(Debug, Serialize)]
struct TimingMs {
    preprocess: f64,
    device_forward: f64,
    postprocess: f64,
    queue: f64,
    total: f64,
}

/// The image of a request, before decoding.
enum Payload {
    Base64(String),
    Encoded(Bytes),
    Plane {
        data: Bytes,
        width: usize,
        height: usize,
    },
}

async fn predict(
    State(shared): State<Arc<Shared>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Prediction>, ApiError> {
    let started = Instant::now();
    let body = body.map_err(|r| ApiError::body(r, shared.config.body_limit))?;
    let request: PredictRequest = serde_json::from_slice(&body).map_err(ApiError::json)?;
    drop(body);
    let options = shared.options(OptionFields {
        max_keypoints: request.max_keypoints,
        keypoint_threshold: request.keypoint_threshold,
        nms_radius: request.nms_radius,
        return_descriptors: request.return_descriptors,
    })?;
    run(shared, Payload::Base64(request.image), options, started).await
}

async fn predict_raw(
    State(shared): State<Arc<Shared>>,
    query: Result<Query<OptionFields>, QueryRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Prediction>, ApiError> {
    let started = Instant::now();
    let Query(fields) = query.map_err(ApiError::query)?;
    let body = body.map_err(|r| ApiError::body(r, shared.config.body_limit))?;
    let options = shared.options(fields)?;
    run(shared, Payload::Encoded(body), options, started).await
}

async fn predict_plane(
    State(shared): State<Arc<Shared>>,
    query: Result<Query<PlaneQuery>, QueryRejection>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Prediction>, ApiError> {
    let started = Instant::now();
    let Query(q) = query.map_err(ApiError::query)?;
    let (Some(height), Some(width)) = (q.height, q.width) else {
        return Err(ApiError::bad_request(
            "predict_plane needs the query parameters height and width (the plane's size in \
             pixels), e.g. /predict_plane?height=480&width=640",
        ));
    };
    let body = body.map_err(|r| ApiError::body(r, shared.config.body_limit))?;
    let options = shared.options(OptionFields {
        max_keypoints: q.max_keypoints,
        keypoint_threshold: q.keypoint_threshold,
        nms_radius: q.nms_radius,
        return_descriptors: q.return_descriptors,
    })?;
    let payload = Payload::Plane {
        data: body,
        width,
        height,
    };
    run(shared, payload, options, started).await
}

/// Decodes on a blocking thread (a few at once), then runs the network on another (one at a
/// time) and builds the response there.
async fn run(
    shared: Arc<Shared>,
    payload: Payload,
    options: Options,
    started: Instant,
) -> Result<Json<Prediction>, ApiError> {
    let waiting = Instant::now();
    let decoder = shared
        .decode
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| closed())?;
    let mut queue = waiting.elapsed();
    let (spec, max_pixels) = (options.plane_spec(), shared.config.max_pixels);
    let (plane, decode_time) = tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        let plane = payload.decode(spec, max_pixels);
        drop(decoder);
        plane.map(|p| (p, start.elapsed()))
    })
    .await
    .map_err(joined)??;

    let waiting = Instant::now();
    let device = shared
        .device
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| closed())?;
    queue += waiting.elapsed();
    let prediction = tokio::task::spawn_blocking(move || {
        let detection = shared.model.detect_plane(plane, &options, decode_time);
        drop(device);
        prediction(detection?, queue, started)
    })
    .await
    .map_err(joined)??;
    Ok(Json(prediction))
}

impl Shared {
    /// The request's options over the server's defaults, validated.
    fn options(&self, fields: OptionFields) -> Result<Options, ApiError> {
        let defaults = self.defaults();
        let mut options = Options {
            max_keypoints: fields.max_keypoints.unwrap_or(defaults.max_keypoints),
            keypoint_threshold: fields
                .keypoint_threshold
                .unwrap_or(defaults.keypoint_threshold),
            return_descriptors: fields
                .return_descriptors
                .unwrap_or(defaults.return_descriptors),
            ..defaults
        };
        if let Some(radius) = fields.nms_radius {
            options = options.with_nms_radius(radius)?;
        }
        options.validate()?;
        Ok(options)
    }

    /// The library's default options on the server's frame.
    fn defaults(&self) -> Options {
        Options {
            frame: self.config.frame,
            ..Options::default()
        }
    }
}

impl Payload {
    /// The network input plane, after checking the image against the pixel limit.
    fn decode(self, spec: PlaneSpec, max_pixels: u64) -> Result<Tensor<u8>, ApiError> {
        match self {
            Payload::Base64(text) => encoded_plane(&base64_image(&text)?, spec, max_pixels),
            Payload::Encoded(bytes) => encoded_plane(&bytes, spec, max_pixels),
            Payload::Plane {
                data,
                width,
                height,
            } => {
                check_pixels(width as u64, height as u64, max_pixels)?;
                Ok(decode_plane(&Input::plane(&data[..], width, height), spec)?)
            }
        }
    }
}

/// The bytes of a base64 image, with an optional `data:` URL prefix and line breaks.
fn base64_image(text: &str) -> Result<Vec<u8>, ApiError> {
    let text = text.trim();
    let text = match text.strip_prefix("data:") {
        Some(url) => url.split_once(',').map_or("", |(_, data)| data),
        None => text,
    };
    let text: Cow<'_, str> = if text.bytes().any(|b| b.is_ascii_whitespace()) {
        text.chars().filter(|c| !c.is_ascii_whitespace()).collect()
    } else {
        Cow::Borrowed(text)
    };
    BASE64_IN
        .decode(text.as_bytes())
        .map_err(|e| ApiError::bad_request(format!("`image` is not valid base64: {e}")))
}

/// Decodes an image file after checking its header's size against the pixel limit (when the
/// header cannot be read, decoding reports why).
fn encoded_plane(bytes: &[u8], spec: PlaneSpec, max_pixels: u64) -> Result<Tensor<u8>, ApiError> {
    if let Some((width, height)) = header_size(bytes) {
        check_pixels(width, height, max_pixels)?;
    }
    Ok(decode_plane(&Input::from(bytes), spec)?)
}

/// The width and height in an image file's header.
fn header_size(bytes: &[u8]) -> Option<(u64, u64)> {
    let format = image::guess_format(bytes).ok()?;
    if format == image::ImageFormat::Jpeg {
        let header = turbojpeg::read_header(bytes).ok()?;
        return Some((header.width as u64, header.height as u64));
    }
    let (w, h) = image::ImageReader::with_format(Cursor::new(bytes), format)
        .into_dimensions()
        .ok()?;
    Some((w as u64, h as u64))
}

fn check_pixels(width: u64, height: u64, max_pixels: u64) -> Result<(), ApiError> {
    match width.checked_mul(height) {
        Some(pixels) if pixels <= max_pixels => Ok(()),
        _ => Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the image is {width}x{height} pixels, more than this server's limit of \
                 {max_pixels} pixels (--max-pixels); downscale it first"
            ),
        )),
    }
}

/// The response for a detection; `queue` is the time spent waiting, `started` when the
/// request's body had been read.
fn prediction(d: Detection, queue: Duration, started: Instant) -> Result<Prediction, ApiError> {
    let encode_start = Instant::now();
    let descriptors = match &d.descriptors {
        Some(rows) => {
            let npz = descriptors_npz(rows, d.descriptor_dim).map_err(|e| {
                ApiError::internal(format!("cannot write the descriptors' NPZ: {e}"))
            })?;
            Some(Descriptors {
                data: STANDARD.encode(npz),
                shape: [d.len(), d.descriptor_dim],
                dtype: "float16",
            })
        }
        None => None,
    };
    let encode_ms = millis(encode_start.elapsed());
    Ok(Prediction {
        num_keypoints: d.len(),
        original_size: d.image_size,
        image_size: d.frame_size,
        scale: d.scale,
        descriptors,
        serving_path: d.backend,
        timing_ms: TimingMs {
            preprocess: d.timing.preprocess,
            device_forward: d.timing.forward,
            postprocess: d.timing.postprocess + encode_ms,
            queue: millis(queue),
            total: millis(started.elapsed()),
        },
        keypoints: d.keypoints,
        scores: d.scores,
    })
}

async fn health() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

async fn info(State(shared): State<Arc<Shared>>) -> Json<Value> {
    let defaults = shared.defaults();
    let config = &shared.config;
    let backend = shared.model.backend();
    Json(json!({
        "model": "superpoint",
        "model_id": REPO_ID,
        "version": env!("CARGO_PKG_VERSION"),
        "backend": backend.name(),
        "serving_path": backend.name(),
        "backends_available": Backend::available(),
        "device": {
            "kind": backend.name(),
            "threads": rayon::current_num_threads(),
        },
        "weights": shared.model.weights_source().to_string(),
        "tensix": shared.model.tensix().map(|t| t.dispatch()),
        "frame": [config.frame.0, config.frame.1],
        "defaults": {
            "max_keypoints": defaults.max_keypoints,
            "keypoint_threshold": defaults.keypoint_threshold,
            "nms_radius": defaults.nms_radius,
            "return_descriptors": defaults.return_descriptors,
        },
        "variants": {
            "frames": [[config.frame.0, config.frame.1]],
            "nms_radius": [0, MAX_NMS_RADIUS],
            "inputs": ["jpeg", "png", "bmp", "gif", "tiff", "webp", "pnm", "plane"],
        },
        "descriptors": { "key": KEY, "dtype": "float16", "format": "npz" },
        "limits": {
            "body_limit_bytes": config.body_limit,
            "max_pixels": config.max_pixels,
            "max_side": MAX_SIDE,
            "min_side": MIN_SIDE,
            "decode_workers": config.decode_workers,
            "device_queue": "requests run one at a time, in arrival order",
        },
    }))
}

/// A minimal OpenAI-style model list (a stub: the one model this server runs).
async fn models() -> Json<Value> {
    Json(json!({
        "object": "list",
        "data": [{
            "id": REPO_ID,
            "object": "model",
            "created": 0,
            "owned_by": "magic-leap-community",
        }],
    }))
}

async fn not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no route {method} {}; the routes are {ROUTES}", uri.path()),
    )
}

async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{method} is not allowed on {}; the routes are {ROUTES}",
            uri.path()
        ),
    )
}

fn closed() -> ApiError {
    ApiError::internal("the server is shutting down")
}

fn joined(e: JoinError) -> ApiError {
    if e.is_panic() {
        ApiError::internal("internal error: the request panicked; the server keeps running")
    } else {
        ApiError::internal("internal error: the request was cancelled")
    }
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
