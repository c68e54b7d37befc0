//! The routes of the service and the request → detection → response path.
//!
//! A prediction response (all three `predict` routes give the same one for the same image and
//! options) has the reference port's fields:
//! `num_keypoints`; `keypoints`, [x, y] in original image pixels, best first; `scores`,
//! descending; `original_size` and `image_size` (the network frame), both [width, height];
//! `scale`, original pixels per frame pixel, [x, y]; `descriptors`, `null` or
//! `{"data": base64 NPZ, "shape": [N, 256], "dtype": "float16"}`; `serving_path`, the backend;
//! `timing_ms` with `preprocess` (base64 and image decode, resize), `device_forward`,
//! `postprocess` (selection, sampling, NPZ), `queue` (waiting for memory, a decoder or a
//! device), `compile` (compiling and loading device programs the request needed and no warm-up
//! had prepared; 0 for warm variants) and `total` (the server's wall time for the request, from
//! its body being read); `truncated`, true when more keypoints passed the options than the
//! server's cap (`max_response_keypoints`) and the response carries the best `cap` of them;
//! `device`, the id of the Tensix device that ran it (`null` on the CPU).
//!
//! A prediction request goes: body length checked (413) → queue slot (503) → body read into the
//! body budget (408, 413) → image header probed (413 over the pixel limit) → its decoding,
//! plane and response reserved in the request budget → decoded → the network → the response,
//! sent in chunks, its memory returned once the client has taken it.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use superpoint_graph::{Tensor, MAX_NMS_RADIUS};
use tokio::task::JoinError;

use super::admission::{Reservation, Slot};
use super::body::{declared_length, read_body, ChunkedBody, ReadBody};
use super::conn::Phase;
use super::error::ApiError;
use super::npz::{descriptors_npz, KEY};
use super::telemetry::{metrics_response, Rejection};
use super::Shared;
use crate::backend::Backend;
use crate::decode::{decode_plane, probe, PlaneSpec, Probe, MAX_SIDE, MIN_SIDE};
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
                      GET /health, GET /info, GET /metrics, GET /v1/models";

/// Bytes a response may need per keypoint while it is built, with descriptors: the f32 row
/// (1024), its f16 NPZ row (512), that in base64 (683) and in the JSON (683), the point and
/// score (~40); rounded up.
const RESPONSE_BYTES_PER_KEYPOINT: u64 = 3 << 10;
/// The same without descriptors.
const RESPONSE_BYTES_PER_POINT_ONLY: u64 = 128;
/// A response's fixed part, rounded up.
const RESPONSE_BYTES_FIXED: u64 = 64 << 10;

pub(super) fn routes(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/predict", post(predict))
        .route("/predict_raw", post(predict_raw))
        .route("/predict_plane", post(predict_plane))
        .route("/health", get(health))
        .route("/info", get(info))
        .route("/metrics", get(metrics))
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
    device: Option<u32>,
    timing_ms: TimingMs,
    truncated: bool,
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
    compile: f64,
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

/// A request's image as the decoder takes it, with what its header says.
enum Image {
    Encoded(Bytes, Probe),
    Plane {
        data: Bytes,
        width: usize,
        height: usize,
    },
}

async fn predict(
    State(shared): State<Arc<Shared>>,
    phase: Option<Extension<Phase>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    // The JSON route holds the body and the parsed base64 text at once: twice the body.
    let (slot, body) = receive(&shared, &headers, body, 2, phase).await?;
    let started = Instant::now();
    let ReadBody { bytes, reservation } = body;
    let request: PredictRequest = serde_json::from_slice(&bytes).map_err(ApiError::json)?;
    drop(bytes);
    let options = shared.options(OptionFields {
        max_keypoints: request.max_keypoints,
        keypoint_threshold: request.keypoint_threshold,
        nms_radius: request.nms_radius,
        return_descriptors: request.return_descriptors,
    })?;
    let payload = Payload::Base64(request.image);
    run(shared, slot, payload, reservation, options, started).await
}

async fn predict_raw(
    State(shared): State<Arc<Shared>>,
    query: Result<Query<OptionFields>, QueryRejection>,
    phase: Option<Extension<Phase>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let Query(fields) = query.map_err(ApiError::query)?;
    let options = shared.options(fields)?;
    let (slot, body) = receive(&shared, &headers, body, 1, phase).await?;
    let started = Instant::now();
    let payload = Payload::Encoded(body.bytes);
    run(shared, slot, payload, body.reservation, options, started).await
}

async fn predict_plane(
    State(shared): State<Arc<Shared>>,
    query: Result<Query<PlaneQuery>, QueryRejection>,
    phase: Option<Extension<Phase>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let Query(q) = query.map_err(ApiError::query)?;
    let (Some(height), Some(width)) = (q.height, q.width) else {
        return Err(ApiError::bad_request(
            "predict_plane needs the query parameters height and width (the plane's size in \
             pixels), e.g. /predict_plane?height=480&width=640",
        ));
    };
    let options = shared.options(OptionFields {
        max_keypoints: q.max_keypoints,
        keypoint_threshold: q.keypoint_threshold,
        nms_radius: q.nms_radius,
        return_descriptors: q.return_descriptors,
    })?;
    let (slot, body) = receive(&shared, &headers, body, 1, phase).await?;
    let started = Instant::now();
    let payload = Payload::Plane {
        data: body.bytes,
        width,
        height,
    };
    run(shared, slot, payload, body.reservation, options, started).await
}

/// Admits a prediction request and reads its body: 413 at once for a declared length over the
/// limit, 503 when the queue is full, then the body (`factor` bytes reserved per body byte).
async fn receive(
    shared: &Shared,
    headers: &HeaderMap,
    body: Body,
    factor: u64,
    phase: Option<Extension<Phase>>,
) -> Result<(Slot, ReadBody), ApiError> {
    shared.check_ready()?;
    let declared = declared_length(headers, shared.config.body_limit, &shared.telemetry)?;
    let slot = shared.queue.admit()?;
    let body = read_body(
        declared,
        body,
        &shared.config.body_limits(),
        &shared.bodies,
        factor,
        &shared.telemetry,
        phase.as_ref().map(|Extension(p)| p),
    )
    .await?;
    Ok((slot, body))
}

/// Probes the image, reserves its memory, decodes it (a few at once), runs the network (one
/// at a time) and builds the response; the queue slot is held until the response is built.
/// What the request holds (its slot, its reservations) moves into each blocking step, so that
/// a request cancelled by its client's leaving keeps them until the step it started ends.
async fn run(
    shared: Arc<Shared>,
    slot: Slot,
    payload: Payload,
    body_reservation: Reservation,
    options: Options,
    started: Instant,
) -> Result<Response, ApiError> {
    let cap = shared.config.max_response_keypoints;
    let options = capped(options, cap);
    let (image, body_reservation) = tokio::task::spawn_blocking(move || {
        Ok::<_, ApiError>((payload.probe()?, body_reservation))
    })
    .await
    .map_err(joined)??;
    let (width, height, decode_bytes) = image.size();
    shared.check_pixels(width, height)?;
    let waiting = Instant::now();
    let reservation = shared
        .requests
        .reserve(
            decode_bytes + response_bytes(&options),
            &format!("decoding the {width}x{height} image and answering"),
        )
        .await?;
    let decoder = shared
        .decode
        .clone()
        .acquire_owned()
        .await
        .map_err(|_| closed())?;
    let mut queue = waiting.elapsed();
    let spec = options.plane_spec();
    let (plane, decode_time, reservation) = tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        let plane = image.decode(spec)?;
        drop((decoder, body_reservation));
        Ok::<_, ApiError>((plane, start.elapsed(), reservation))
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
    let (json, mut reservation) = tokio::task::spawn_blocking(move || {
        let detection = shared.model.detect_plane(plane, &options, decode_time);
        drop(device);
        let mut detection = detection?;
        let truncated = cut(&mut detection, cap);
        let prediction = prediction(detection, truncated, queue, started)?;
        let json = serde_json::to_vec(&prediction)
            .map_err(|e| ApiError::internal(format!("cannot write the response: {e}")))?;
        drop(slot);
        Ok::<_, ApiError>((json, reservation))
    })
    .await
    .map_err(joined)??;
    reservation.shrink_to(json.len() as u64);
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::new(ChunkedBody::new(Bytes::from(json), reservation)))
        .map_err(|e| ApiError::internal(format!("cannot build the response: {e}")))
}

/// The options with `max_keypoints` bounded by the cap: one more than the cap is asked for
/// when the client wants more, so that a cut can be seen.
fn capped(options: Options, cap: usize) -> Options {
    let cap = cap as i64;
    if options.max_keypoints == -1 || options.max_keypoints > cap {
        Options {
            max_keypoints: cap + 1,
            ..options
        }
    } else {
        options
    }
}

/// Keeps the best `cap` keypoints (they come best first); true when some were cut.
fn cut(d: &mut Detection, cap: usize) -> bool {
    if d.keypoints.len() <= cap {
        return false;
    }
    d.keypoints.truncate(cap);
    d.scores.truncate(cap);
    if let Some(rows) = &mut d.descriptors {
        rows.truncate(cap * d.descriptor_dim);
    }
    true
}

/// An upper bound of the bytes building the response takes (see the constants).
fn response_bytes(options: &Options) -> u64 {
    let points = options.max_keypoints.max(0) as u64;
    let per_point = if options.return_descriptors {
        RESPONSE_BYTES_PER_KEYPOINT
    } else {
        RESPONSE_BYTES_PER_POINT_ONLY
    };
    RESPONSE_BYTES_FIXED + points * per_point
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

    /// 413 when the image has more pixels than the server's limit.
    fn check_pixels(&self, width: u64, height: u64) -> Result<(), ApiError> {
        let max_pixels = self.config.max_pixels;
        match width.checked_mul(height) {
            Some(pixels) if pixels <= max_pixels => Ok(()),
            _ => {
                self.telemetry.reject(Rejection::ImageTooLarge);
                Err(ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!(
                        "the image is {width}x{height} pixels, more than this server's limit \
                         of {max_pixels} pixels (--max-pixels); downscale it first"
                    ),
                ))
            }
        }
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
    /// The image bytes (base64 decoded) and what their header says.
    fn probe(self) -> Result<Image, ApiError> {
        match self {
            Payload::Base64(text) => {
                let bytes = base64_image(&text)?;
                drop(text);
                let probe = probe(&bytes)?;
                Ok(Image::Encoded(Bytes::from(bytes), probe))
            }
            Payload::Encoded(bytes) => {
                let probe = probe(&bytes)?;
                Ok(Image::Encoded(bytes, probe))
            }
            Payload::Plane {
                data,
                width,
                height,
            } => Ok(Image::Plane {
                data,
                width,
                height,
            }),
        }
    }
}

impl Image {
    /// Width, height and the bytes decoding allocates (for a plane: its copy).
    fn size(&self) -> (u64, u64, u64) {
        match self {
            Image::Encoded(_, p) => (p.width, p.height, p.decode_bytes),
            Image::Plane { width, height, .. } => {
                let (w, h) = (*width as u64, *height as u64);
                (w, h, w.saturating_mul(h))
            }
        }
    }

    /// The network input plane.
    fn decode(self, spec: PlaneSpec) -> Result<Tensor<u8>, ApiError> {
        let input = match &self {
            Image::Encoded(bytes, _) => Input::from(&bytes[..]),
            Image::Plane {
                data,
                width,
                height,
            } => Input::plane(&data[..], *width, *height),
        };
        Ok(decode_plane(&input, spec)?)
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

/// The response for a detection; `truncated` when it was cut to the cap, `queue` is the time
/// spent waiting, `started` when the request's body had been read.
fn prediction(
    d: Detection,
    truncated: bool,
    queue: Duration,
    started: Instant,
) -> Result<Prediction, ApiError> {
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
        device: d.device,
        timing_ms: TimingMs {
            preprocess: d.timing.preprocess,
            device_forward: d.timing.forward,
            postprocess: d.timing.postprocess + encode_ms,
            queue: millis(queue) + d.timing.queue,
            compile: d.timing.compile,
            total: millis(started.elapsed()),
        },
        truncated,
        keypoints: d.keypoints,
        scores: d.scores,
    })
}

async fn health(State(shared): State<Arc<Shared>>) -> (StatusCode, Json<Value>) {
    let (status, body) = shared.health();
    (status, Json(body))
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
        "devices": shared.model.tensix().map(|t| t.devices()),
        "readiness": shared.readiness(),
        "frame": [config.frame.0, config.frame.1],
        "defaults": {
            "max_keypoints": defaults.max_keypoints,
            "keypoint_threshold": shortest(defaults.keypoint_threshold),
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
            "device_queue": "requests run one per device at a time, in arrival order, each on the least-loaded device",
            "max_queue": config.max_queue,
            "max_connections": config.max_connections,
            "max_response_keypoints": config.max_response_keypoints,
            "body_memory_bytes": config.body_memory,
            "request_memory_bytes": config.request_memory,
            "timeouts_s": {
                "header": config.header_timeout.as_secs_f64(),
                "body": config.body_timeout.as_secs_f64(),
                "idle": config.idle_timeout.as_secs_f64(),
                "write": config.write_timeout.as_secs_f64(),
                "shutdown": config.shutdown_timeout.as_secs_f64(),
            },
        },
    }))
}

/// An f32 as the JSON number of its shortest decimal form (0.005, not the f64 widening
/// 0.004999999888241291).
fn shortest(x: f32) -> Value {
    x.to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

async fn metrics(State(shared): State<Arc<Shared>>) -> Response {
    let devices = shared
        .model
        .tensix()
        .map(|t| t.devices())
        .unwrap_or_default();
    let ready = shared.readiness() == super::Readiness::Ready;
    shared.telemetry.observe_devices(&devices, ready);
    metrics_response(&shared.telemetry)
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
