//! Replay tests of the model adapters on real recorded traffic, fault tests on the same loopback
//! server, and the check that every recording in the shared folder is used.

mod common;
mod coverage;
mod faults;
mod gemini;
mod openai;
