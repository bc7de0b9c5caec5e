//! Replay tests of the model adapters on real recorded traffic, the conformance suite every
//! adapter passes, Vertex AI's credential flows, fault tests on the same loopback server,
//! keep-alive faults on a raw-socket server, the limits on what the adapters read, and the check
//! that every recording in the shared folder is used.

mod anthropic;
mod bounded_reads;
mod common;
mod conformance;
mod context_cache;
mod context_overflow;
mod coverage;
mod embeddings;
mod faults;
mod gemini;
mod keep_alive;
mod openai;
mod openai_responses;
mod vertex;
