#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod auth;
mod body;
mod error;
mod gate;
mod hosts;
mod idempotency;
mod origins;
mod principal;
mod reply;
mod serve;

pub use auth::{
    API_KEY_HEADER, ApiKeys, AuthError, Authentication, Authenticator, DEFAULT_JWKS_REFRESH,
    DEFAULT_LEEWAY, JwtAuthenticator, JwtAuthenticatorBuilder,
};
pub use body::{BodyError, BodyReader, BodyReservation};
pub use error::GateError;
pub use gate::{Gate, GateBuilder, request_host};
pub use hosts::{DEFAULT_HOSTS, HostPolicy};
pub use idempotency::{
    IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_METADATA_KEY, IdempotencyKeyError, MAX_IDEMPOTENCY_KEY_LEN,
    idempotency_key,
};
pub use origins::OriginPolicy;
pub use principal::{Caller, Forbidden, NoGate, Principal};
pub use serve::{
    ConnectionLimits, DEFAULT_HEADER_READ_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_WRITE_TIMEOUT,
    serve,
};
