//! [`ToolStateScopes`]: which shared state scopes the tools of an invocation may write.

/// Which shared state scopes tools may write in an invocation. The runner sets it from its builder
/// (`RunnerBuilder::allow_app_state_from_tools`); an invocation without one allows everything, as
/// ADK Python does.
///
/// It is invocation data the runner installs: public for the runner only, not part of the API.
///
/// ```
/// use adk_flow::internal::ToolStateScopes;
///
/// let strict = ToolStateScopes::default().app(false);
/// assert!(!strict.allows_app());
/// assert!(ToolStateScopes::default().allows_app());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolStateScopes {
    app: bool,
}

impl Default for ToolStateScopes {
    fn default() -> Self {
        Self { app: true }
    }
}

impl ToolStateScopes {
    /// Whether tools may set `app:` keys, which every user of the app shares.
    pub fn app(mut self, allowed: bool) -> Self {
        self.app = allowed;
        self
    }

    /// Whether tools may set `app:` keys.
    pub fn allows_app(&self) -> bool {
        self.app
    }
}
