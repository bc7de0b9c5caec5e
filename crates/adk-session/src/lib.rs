//! Session, artifact and memory services for adk-rs.
//!
//! This crate will own the implementations of [`adk_core::SessionService`],
//! [`adk_core::ArtifactService`] and [`adk_core::MemoryService`]: in-memory, SQLite (the embedded
//! default) and PostgreSQL (feature `postgres`), plus filesystem and object-store artifacts.
