//! Finding the pretrained checkpoint (`magic-leap-community/superpoint` at a pinned revision) in
//! the Hugging Face cache layout, and downloading it with the hub client when it is absent and
//! the network is allowed.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The Hugging Face repository of the converted Magic Leap weights.
pub const REPO_ID: &str = "magic-leap-community/superpoint";
/// The pinned revision (the one the reference port used).
pub const REVISION: &str = "734450e9ffe229074f5998494ddc615475cdb20a";
/// The checkpoint file in the repository.
pub const FILENAME: &str = "model.safetensors";

/// The environment variables that decide where the cache is and whether to go online.
#[derive(Debug, Clone, Default)]
pub struct HubEnv {
    pub hf_hub_cache: Option<PathBuf>,
    pub hf_home: Option<PathBuf>,
    pub home: Option<PathBuf>,
    pub offline: bool,
}

impl HubEnv {
    /// Reads `HF_HUB_CACHE`, `HF_HOME`, `HOME` and `HF_HUB_OFFLINE` from the process environment.
    pub fn from_process() -> Self {
        let path = |k| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let offline = std::env::var("HF_HUB_OFFLINE")
            .map(|v| {
                matches!(
                    v.trim().to_ascii_lowercase().as_str(),
                    "1" | "true" | "yes" | "on"
                )
            })
            .unwrap_or(false);
        Self {
            hf_hub_cache: path("HF_HUB_CACHE"),
            hf_home: path("HF_HOME"),
            home: path("HOME"),
            offline,
        }
    }

    /// The hub cache directory: `HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`.
    pub fn cache_dir(&self) -> Option<PathBuf> {
        self.hf_hub_cache
            .clone()
            .or_else(|| self.hf_home.as_ref().map(|h| h.join("hub")))
            .or_else(|| self.home.as_ref().map(|h| h.join(".cache/huggingface/hub")))
    }
}

/// The checkpoint's path inside a hub cache directory, whether or not it exists.
pub fn cached_path(cache_dir: &Path) -> PathBuf {
    cache_dir
        .join(format!("models--{}", REPO_ID.replace('/', "--")))
        .join("snapshots")
        .join(REVISION)
        .join(FILENAME)
}

/// Where the pretrained weights came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WeightsSource {
    /// A file the caller named.
    File(PathBuf),
    /// The hub cache (already present).
    Cache(PathBuf),
    /// Downloaded now into the hub cache.
    Downloaded(PathBuf),
}

impl WeightsSource {
    /// The checkpoint file.
    pub fn path(&self) -> &Path {
        match self {
            WeightsSource::File(p) | WeightsSource::Cache(p) | WeightsSource::Downloaded(p) => p,
        }
    }
}

impl std::fmt::Display for WeightsSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WeightsSource::File(p) => write!(f, "file {}", p.display()),
            WeightsSource::Cache(p) => {
                write!(f, "{REPO_ID}@{REVISION} (HF cache: {})", p.display())
            }
            WeightsSource::Downloaded(p) => {
                write!(f, "{REPO_ID}@{REVISION} (downloaded to {})", p.display())
            }
        }
    }
}

fn how_to_get(cache: &Option<PathBuf>) -> String {
    let target = cache
        .as_ref()
        .map(|c| cached_path(c).display().to_string())
        .unwrap_or_else(|| "the HF cache (set HF_HUB_CACHE or HF_HOME)".to_string());
    format!(
        "run `huggingface-cli download {REPO_ID} {FILENAME} --revision {REVISION}` on a machine with network access \
         (it lands in {target}), or pass the checkpoint with --weights PATH (library: SuperPoint::from_weights)"
    )
}

/// Finds the pinned checkpoint in the cache, downloading it when absent and `env.offline` is false.
pub fn locate(env: &HubEnv) -> Result<WeightsSource> {
    let cache = env.cache_dir();
    if let Some(dir) = &cache {
        let path = cached_path(dir);
        if path.is_file() {
            return Ok(WeightsSource::Cache(path));
        }
    }
    if env.offline {
        return Err(Error::WeightsUnavailable(format!(
            "the pretrained weights are not in the HF cache and HF_HUB_OFFLINE is set; {}",
            how_to_get(&cache)
        )));
    }
    let mut builder = hf_hub::api::sync::ApiBuilder::new().with_progress(false);
    if let Some(dir) = &cache {
        builder = builder.with_cache_dir(dir.clone());
    }
    let fail = |e: hf_hub::api::sync::ApiError| {
        Error::WeightsUnavailable(format!(
            "the pretrained weights are not in the HF cache and downloading them failed ({e}); {}",
            how_to_get(&cache)
        ))
    };
    let api = builder.build().map_err(fail)?;
    let repo = hf_hub::Repo::with_revision(
        REPO_ID.to_string(),
        hf_hub::RepoType::Model,
        REVISION.to_string(),
    );
    let path = api.repo(repo).get(FILENAME).map_err(fail)?;
    Ok(WeightsSource::Downloaded(path))
}
