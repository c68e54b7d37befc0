//! Finding the pretrained checkpoint in the Hugging Face cache layout, and the offline failure.

mod common;

use std::path::PathBuf;

use superpoint::hub::{cached_path, locate, HubEnv, WeightsSource, REVISION};
use superpoint::{Error, SuperPoint};

#[test]
fn the_cache_directory_follows_the_hub_variables_in_order() {
    let env = HubEnv {
        hf_hub_cache: Some(PathBuf::from("/a")),
        hf_home: Some(PathBuf::from("/b")),
        home: Some(PathBuf::from("/c")),
        offline: false,
    };
    assert_eq!(env.cache_dir(), Some(PathBuf::from("/a")));
    let env = HubEnv {
        hf_hub_cache: None,
        ..env
    };
    assert_eq!(env.cache_dir(), Some(PathBuf::from("/b/hub")));
    let env = HubEnv {
        hf_home: None,
        ..env
    };
    assert_eq!(
        env.cache_dir(),
        Some(PathBuf::from("/c/.cache/huggingface/hub"))
    );
}

#[test]
fn the_pinned_snapshot_is_found_and_loaded_from_the_cache() {
    let cache = tempfile::tempdir().expect("tempdir");
    let path = cached_path(cache.path());
    assert!(path.ends_with(format!(
        "models--magic-leap-community--superpoint/snapshots/{REVISION}/model.safetensors"
    )));
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::copy(
        common::fixtures_dir().join("weights/random-seed1.safetensors"),
        &path,
    )
    .expect("copy");
    let env = HubEnv {
        hf_hub_cache: Some(cache.path().to_path_buf()),
        offline: true,
        ..HubEnv::default()
    };
    assert_eq!(
        locate(&env).expect("found"),
        WeightsSource::Cache(path.clone())
    );
    let model = SuperPoint::builder().hub_env(env).build().expect("model");
    assert_eq!(model.weights_source(), &WeightsSource::Cache(path));
}

#[test]
fn offline_without_the_checkpoint_says_how_to_get_it() {
    let cache = tempfile::tempdir().expect("tempdir");
    let env = HubEnv {
        hf_hub_cache: Some(cache.path().to_path_buf()),
        offline: true,
        ..HubEnv::default()
    };
    match SuperPoint::builder().hub_env(env).build() {
        Err(Error::WeightsUnavailable(msg)) => {
            assert!(msg.contains("HF_HUB_OFFLINE"), "{msg}");
            assert!(msg.contains("--weights"), "{msg}");
            assert!(msg.contains(REVISION), "{msg}");
        }
        Err(other) => panic!("expected WeightsUnavailable, got {other}"),
        Ok(_) => panic!("expected WeightsUnavailable, got a model"),
    }
}
