//! Toolset wrappers: [`FilteredToolset`] keeps the tools of another toolset that pass a
//! [`ToolFilter`]; [`ToolsetExt`] adds the wrappers as methods.

use std::fmt;
use std::sync::Arc;

use adk_core::{ReadonlyContext, Result};
use async_trait::async_trait;

use crate::{Tool, Toolset};

/// A predicate on a tool in an invocation, as [`ToolFilter::Predicate`] holds it.
pub type ToolPredicate = Arc<dyn Fn(&dyn Tool, &ReadonlyContext) -> bool + Send + Sync>;

/// Which tools of a toolset an agent gets.
#[derive(Clone)]
pub enum ToolFilter {
    /// The tools with one of these names.
    Names(Vec<String>),
    /// The tools for which the predicate holds, asked per invocation.
    Predicate(ToolPredicate),
}

impl ToolFilter {
    /// A filter keeping the tools named in `names`.
    pub fn names<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::Names(names.into_iter().map(Into::into).collect())
    }

    /// A filter keeping the tools for which `predicate` holds.
    pub fn predicate(
        predicate: impl Fn(&dyn Tool, &ReadonlyContext) -> bool + Send + Sync + 'static,
    ) -> Self {
        Self::Predicate(Arc::new(predicate))
    }

    /// Whether `tool` passes in the invocation `ctx` describes.
    pub fn keeps(&self, tool: &dyn Tool, ctx: &ReadonlyContext) -> bool {
        match self {
            Self::Names(names) => names.iter().any(|name| name == tool.name()),
            Self::Predicate(predicate) => predicate(tool, ctx),
        }
    }
}

impl fmt::Debug for ToolFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Names(names) => f.debug_tuple("Names").field(names).finish(),
            Self::Predicate(_) => f.write_str("Predicate(..)"),
        }
    }
}

/// A toolset that yields the tools of another one that pass a [`ToolFilter`].
///
/// Closing it closes the inner toolset.
pub struct FilteredToolset<T> {
    inner: T,
    filter: ToolFilter,
}

impl<T: Toolset> FilteredToolset<T> {
    /// Wraps `inner`, keeping the tools that pass `filter`.
    pub fn new(inner: T, filter: ToolFilter) -> Self {
        Self { inner, filter }
    }

    /// The wrapped toolset.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

#[async_trait]
impl<T: Toolset> Toolset for FilteredToolset<T> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn tools(&self, ctx: &ReadonlyContext) -> Result<Vec<Arc<dyn Tool>>> {
        let mut tools = self.inner.tools(ctx).await?;
        tools.retain(|tool| self.filter.keeps(tool.as_ref(), ctx));
        Ok(tools)
    }

    async fn close(&self) -> Result<()> {
        self.inner.close().await
    }
}

impl<T: fmt::Debug> fmt::Debug for FilteredToolset<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilteredToolset")
            .field("inner", &self.inner)
            .field("filter", &self.filter)
            .finish()
    }
}

/// Wrappers for any [`Toolset`], as methods.
///
/// ```
/// # use std::sync::Arc;
/// # use adk_core::{ReadonlyContext, Result};
/// # use adk_tool::{Tool, Toolset};
/// use adk_tool::ToolsetExt;
///
/// # struct Mine;
/// # #[async_trait::async_trait]
/// # impl Toolset for Mine {
/// #     fn name(&self) -> &str { "mine" }
/// #     async fn tools(&self, _: &ReadonlyContext) -> Result<Vec<Arc<dyn Tool>>> { Ok(vec![]) }
/// # }
/// let only_reads = Mine.with_tool_names(["read_file", "list_directory"]);
/// let no_writes = Mine.with_tool_filter(|tool, _ctx| !tool.name().starts_with("write"));
/// ```
pub trait ToolsetExt: Toolset + Sized {
    /// Keeps only the tools named in `names`.
    fn with_tool_names<I, S>(self, names: I) -> FilteredToolset<Self>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        FilteredToolset::new(self, ToolFilter::names(names))
    }

    /// Keeps only the tools for which `predicate` holds.
    fn with_tool_filter(
        self,
        predicate: impl Fn(&dyn Tool, &ReadonlyContext) -> bool + Send + Sync + 'static,
    ) -> FilteredToolset<Self> {
        FilteredToolset::new(self, ToolFilter::predicate(predicate))
    }
}

impl<T: Toolset + Sized> ToolsetExt for T {}
