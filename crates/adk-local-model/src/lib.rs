#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod commands;
mod config;
mod env;
mod error;
mod pins;
mod process;
mod progress;
mod server;
mod setup;

use std::path::{Path, PathBuf};

pub use config::{
    Layout, LocalModelConfig, ModelSource, SMOLLM2_GGUF, SMOLLM2_NAME, ServerOptions, default_dir,
};
pub use env::{DIR_ENV, GGUF_ENV, PYTHON_ENV};
pub use error::{Error, Result};
pub use pins::{
    CMAKE_VERSION, LLAMA_CPP_PYTHON, LLAMA_CPP_PYTHON_SHA256, LLAMA_CPP_PYTHON_VERSION,
    NINJA_VERSION, SMOLLM2_PACKAGE, SMOLLM2_VERSION,
};
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
