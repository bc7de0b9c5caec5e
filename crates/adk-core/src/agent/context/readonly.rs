//! [`ReadonlyContext`]: what an instruction provider or a toolset may read of an invocation.

use serde_json::Value;

use super::InvocationContext;
use crate::{Content, InvocationId, SessionKey};

/// What an instruction provider may read: the invocation's identity, the user's message and the
/// session state, but nothing it could change.
#[derive(Clone, Debug)]
pub struct ReadonlyContext {
    invocation: InvocationContext,
}

impl ReadonlyContext {
    /// A read-only view of `invocation`.
    pub fn new(invocation: InvocationContext) -> Self {
        Self { invocation }
    }

    /// The id of the invocation.
    pub fn invocation_id(&self) -> &InvocationId {
        self.invocation.invocation_id()
    }

    /// The name of the running agent.
    pub fn agent_name(&self) -> &str {
        self.invocation.agent_name()
    }

    /// The branch of the running agent.
    pub fn branch(&self) -> Option<&str> {
        self.invocation.branch()
    }

    /// The user message that started the invocation.
    pub fn user_content(&self) -> Option<&Content> {
        self.invocation.user_content()
    }

    /// The identity of the session.
    pub fn session_key(&self) -> &SessionKey {
        self.invocation.session_key()
    }

    /// The session state's value of `key` (any scope, prefix included).
    pub fn state(&self, key: &str) -> Option<Value> {
        self.invocation
            .with_session(|session| session.state.get(key).cloned())
    }
}
