//! The environment variables the local model reads when its configuration leaves a choice open:
//! the cache directory, the Python whose pip downloads, and a GGUF file to serve instead of the
//! bundled model.

/// The environment variable that overrides the cache directory.
pub const DIR_ENV: &str = "ADK_LOCAL_MODEL_DIR";
/// The environment variable that names the Python interpreter whose pip is used.
pub const PYTHON_ENV: &str = "ADK_LOCAL_MODEL_PYTHON";
/// The environment variable that names a GGUF file to serve instead of the bundled model.
pub const GGUF_ENV: &str = "ADK_LOCAL_MODEL_GGUF";
