//! Who may call `web`, `api_server` and `a2a`: the authentication the flags choose, the host names
//! the server answers to, and the refusal to serve a non-loopback address to anyone unless the
//! command line says so (and then says so loudly).

use std::net::SocketAddr;

use adk_gate::{ApiKeys, Authentication, Gate, JwtAuthenticator};

use crate::args::{AuthMode, GateArgs};
use crate::error::{LaunchError, LaunchErrorKind};

/// What the gate flags configure.
pub(crate) struct Access {
    pub(crate) authentication: Authentication,
    /// The host names to answer to besides the loopback ones and the bound address.
    pub(crate) hosts: Vec<String>,
}

fn usage(message: impl Into<String>) -> LaunchError {
    LaunchError::new(LaunchErrorKind::Usage, message)
}

/// The authentication and hosts `args` ask for, with a JWT key set read once to check it; `host`
/// is the `--host` the server listens on (a name there is a name it answers to).
pub(crate) async fn access(args: &GateArgs, host: &str) -> Result<Access, LaunchError> {
    let jwt_wanted =
        args.jwks_url.is_some() || args.jwks_file.is_some() || args.jwt_secret_file.is_some();
    let keys_wanted = args.api_keys_file.is_some();
    let mode = match args.auth {
        Some(mode) => mode,
        None if jwt_wanted => AuthMode::Jwt,
        None if keys_wanted => AuthMode::ApiKey,
        None => AuthMode::None,
    };
    let mut authentication = Authentication::new();
    match mode {
        AuthMode::None if jwt_wanted || keys_wanted => {
            return Err(usage(
                "--auth none was given with JWT or API key flags; drop one or the other",
            ));
        }
        AuthMode::None => {}
        AuthMode::Jwt => {
            authentication = authentication.jwt(jwt(args).await?);
            if keys_wanted {
                authentication = authentication.api_keys(api_keys(args)?);
            }
        }
        AuthMode::ApiKey => {
            if !keys_wanted {
                return Err(usage("--auth api-key needs --api-keys-file"));
            }
            authentication = authentication.api_keys(api_keys(args)?);
        }
    }
    let mut hosts = args.allowed_hosts.clone();
    let unspecified = host
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_unspecified());
    if !host.is_empty() && !unspecified {
        hosts.push(host.to_owned());
    }
    Ok(Access {
        authentication,
        hosts,
    })
}

async fn jwt(args: &GateArgs) -> Result<JwtAuthenticator, LaunchError> {
    let mut builder = JwtAuthenticator::builder().user_claim(&args.jwt_user_claim);
    builder = match (&args.jwks_url, &args.jwks_file, &args.jwt_secret_file) {
        (Some(url), _, _) => builder.jwks_url(url),
        (_, Some(file), _) => builder.jwks_file(file),
        (_, _, Some(file)) => {
            let secret = std::fs::read(file).map_err(|error| {
                LaunchError::with_source(
                    LaunchErrorKind::Usage,
                    format!("cannot read the JWT secret file {}", file.display()),
                    error,
                )
            })?;
            builder.hs256_secret(trim_newline(secret))
        }
        _ => {
            return Err(usage(
                "--auth jwt needs the keys tokens are verified with: --jwks-url, --jwks-file or \
                 --jwt-secret-file",
            ));
        }
    };
    if let Some(issuer) = &args.jwt_issuer {
        builder = builder.issuer(issuer);
    }
    if let Some(audience) = &args.jwt_audience {
        builder = builder.audience(audience);
    }
    let jwt = builder.build().map_err(|error| usage(error.to_string()))?;
    // A wrong URL or file stops the server now rather than refusing every request later.
    jwt.load_keys()
        .await
        .map_err(|error| usage(error.to_string()))?;
    Ok(jwt)
}

/// A secret file's bytes without the newline an editor adds at the end.
fn trim_newline(mut secret: Vec<u8>) -> Vec<u8> {
    while secret
        .last()
        .is_some_and(|byte| matches!(byte, b'\n' | b'\r'))
    {
        secret.pop();
    }
    secret
}

fn api_keys(args: &GateArgs) -> Result<ApiKeys, LaunchError> {
    let Some(file) = &args.api_keys_file else {
        return Err(usage("API keys need --api-keys-file"));
    };
    ApiKeys::from_file(file).map_err(|error| usage(error.to_string()))
}

/// The gate of a lone A2A server with `access` and `origins`.
pub(crate) fn a2a_gate(
    access: &Access,
    args: &GateArgs,
    origins: &[String],
) -> Result<Gate, LaunchError> {
    let mut gate = Gate::builder()
        .allowed_hosts(&access.hosts)
        .authentication(access.authentication.clone())
        .admin_scope(&args.admin_scope);
    for origin in origins {
        gate = gate.allow_origin(origin.clone());
    }
    gate.build()
        .map_err(|error| LaunchError::new(LaunchErrorKind::Usage, error.to_string()))
}

/// Refuses to serve `bound`, a non-loopback address, without authentication unless
/// `--allow-unauthenticated` says to; when it does, says loudly what that means.
pub(crate) fn check_exposure(
    access: &Access,
    args: &GateArgs,
    bound: SocketAddr,
) -> Result<(), LaunchError> {
    if !access.authentication.is_empty() || bound.ip().is_loopback() {
        return Ok(());
    }
    if !args.allow_unauthenticated {
        return Err(LaunchError::new(
            LaunchErrorKind::Usage,
            format!(
                "refusing to serve {bound} without authentication: anyone who reaches it could \
                 read and change every user's sessions and run the agents on your model key. \
                 Authenticate callers (--auth jwt with --jwks-url, --jwt-issuer and \
                 --jwt-audience, or --auth api-key with --api-keys-file), listen on 127.0.0.1, \
                 or pass --allow-unauthenticated if something in front of the server \
                 authenticates them"
            ),
        ));
    }
    eprintln!(
        "\n\
         ****************************************************************************\n\
         WARNING: serving {bound} WITHOUT AUTHENTICATION (--allow-unauthenticated).\n\
         Anyone who can reach this port can read, change and delete every user's\n\
         sessions and artifacts, read every trace, and run the agents on your model\n\
         key. Only do this behind something that authenticates every request.\n\
         ****************************************************************************\n"
    );
    Ok(())
}
