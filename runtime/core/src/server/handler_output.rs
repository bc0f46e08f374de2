//! What resource and prompt handlers return: anything that becomes contents or a prompt
//! result, or a `Result` of it with an [`RpcError`]. As for tools
//! ([`IntoToolResult`](crate::IntoToolResult)), the one `Result` impl per trait lets a
//! closure's `Ok(..)` and `?` infer their error type.

use crate::model::{PromptMessage, PromptResult, ResourceContents};
use crate::wire::RpcError;

/// What a resource (or resource template) handler may return: its contents
/// (`Vec<ResourceContents>`, one `ResourceContents`), or text — the contents of the URI
/// read, with the resource's (template's) MIME type, `text/plain` when it declares none —
/// or a `Result` of any of them with an [`RpcError`]. An empty list is "not found".
pub trait IntoResourceContents {
    /// The contents of `uri`, whose declared MIME type is `mime_type`.
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError>;
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(self)
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(vec![self])
    }
}

impl IntoResourceContents for String {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        Ok(vec![ResourceContents::text(
            uri,
            mime_type.unwrap_or("text/plain"),
            self,
        )])
    }
}

impl IntoResourceContents for &'static str {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl<R: IntoResourceContents> IntoResourceContents for Result<R, RpcError> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, RpcError> {
        self?.into_contents(uri, mime_type)
    }
}

/// What a prompt handler may return: a [`PromptResult`], its messages
/// (`Vec<PromptMessage>`, one `PromptMessage`), or text — one message from the user — or
/// a `Result` of any of them with an [`RpcError`].
pub trait IntoPromptResult {
    /// The prompt's result.
    fn into_prompt_result(self) -> Result<PromptResult, RpcError>;
}

impl IntoPromptResult for PromptResult {
    fn into_prompt_result(self) -> Result<PromptResult, RpcError> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<PromptResult, RpcError> {
        Ok(PromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<PromptResult, RpcError> {
        Ok(PromptResult::new([self]))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<PromptResult, RpcError> {
        Ok(PromptResult::new([PromptMessage::user(self)]))
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<PromptResult, RpcError> {
        self.to_owned().into_prompt_result()
    }
}

impl<R: IntoPromptResult> IntoPromptResult for Result<R, RpcError> {
    fn into_prompt_result(self) -> Result<PromptResult, RpcError> {
        self?.into_prompt_result()
    }
}
