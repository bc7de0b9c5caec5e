//! What every agent of this crate shares, written once: the `Agent` accessors of its `AgentBase`
//! and the builder methods for description, sub-agents and lifecycle callbacks.

/// Adds the shared builder methods to `$builder`, whose `AgentBase` is at `self.$($base).+`.
macro_rules! agent_base_builder_methods {
    ($builder:ty, $($base:ident).+) => {
        impl $builder {
            /// What the agent does; models read it to decide whether to transfer to it.
            pub fn description(mut self, description: impl Into<String>) -> Self {
                self.$($base).+.description = description.into();
                self
            }

            /// Adds a sub-agent: any agent, an `Arc` of one, or an `Arc<dyn Agent>`.
            pub fn sub_agent(mut self, agent: impl adk_core::IntoAgent) -> Self {
                self.$($base).+.sub_agents.push(agent.into_agent());
                self
            }

            /// Adds sub-agents, in order (agents of different types: chain
            /// [`sub_agent`](Self::sub_agent), or pass `Arc<dyn Agent>`s).
            pub fn sub_agents<A: adk_core::IntoAgent>(
                mut self,
                agents: impl IntoIterator<Item = A>,
            ) -> Self {
                self.$($base).+
                    .sub_agents
                    .extend(agents.into_iter().map(adk_core::IntoAgent::into_agent));
                self
            }

            /// Runs before the agent; see [`BeforeAgentCallback`](crate::BeforeAgentCallback).
            pub fn before_agent_callback(
                mut self,
                callback: impl Fn(&adk_core::CallbackContext) -> adk_core::Result<Option<adk_core::Content>>
                + Send
                + Sync
                + 'static,
            ) -> Self {
                self.$($base).+.before_agent.push(std::sync::Arc::new(callback));
                self
            }

            /// Runs after the agent; see [`AfterAgentCallback`](crate::AfterAgentCallback).
            pub fn after_agent_callback(
                mut self,
                callback: impl Fn(&adk_core::CallbackContext) -> adk_core::Result<Option<adk_core::Content>>
                + Send
                + Sync
                + 'static,
            ) -> Self {
                self.$($base).+.after_agent.push(std::sync::Arc::new(callback));
                self
            }
        }
    };
}

/// The `name`, `description` and `sub_agents` of an `Agent` impl, read from `self.base`.
macro_rules! agent_base_accessors {
    () => {
        fn name(&self) -> &str {
            &self.base.name
        }

        fn description(&self) -> &str {
            &self.base.description
        }

        fn sub_agents(&self) -> &[std::sync::Arc<dyn adk_core::Agent>] {
            &self.base.sub_agents
        }
    };
}

pub(crate) use agent_base_accessors;
pub(crate) use agent_base_builder_methods;
