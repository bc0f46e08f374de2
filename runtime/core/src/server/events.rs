//! The changes a server announces to its clients (list changes, resource updates).

/// A change the server announces to its clients.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerEvent {
    /// The tool list changed.
    ToolsChanged,
    /// The prompt list changed.
    PromptsChanged,
    /// The resource list changed.
    ResourcesChanged,
    /// A resource's contents changed.
    ResourceUpdated(String),
}
