//! What the author registered — tools, resources, templates, prompts, completion — with each list's encoded pages cached per revision and opaque cursors.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;

use super::handler::{PromptFn, ResourceFn, ToolByRefFn, ToolFn};
use crate::model::{Prompt, Resource, ResourceTemplate, Tool};
use crate::protocol::version::ProtocolVersion;
use crate::server::uri_template::UriTemplate;
use crate::wire::{Encoded, RpcError};

pub(super) struct ToolEntry {
    pub(super) tool: Tool,
    pub(super) handler: Arc<ToolFn>,
    /// The same handler reading the arguments in place, when it can (typed tools).
    pub(super) by_ref: Option<Arc<ToolByRefFn>>,
}

pub(super) struct ResourceEntry {
    pub(super) resource: Resource,
    pub(super) handler: Arc<ResourceFn>,
}

pub(super) struct TemplateEntry {
    pub(super) template: ResourceTemplate,
    pub(super) parsed: UriTemplate,
    pub(super) handler: Arc<ResourceFn>,
}

pub(super) struct PromptEntry {
    pub(super) prompt: Prompt,
    pub(super) handler: Arc<PromptFn>,
}

pub(super) fn read_lock<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    // A handler never runs under these locks, so poisoning cannot leave them half-updated.
    lock.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(super) fn write_lock<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// An opaque cursor: the offset of the next page.
fn encode_cursor(offset: usize) -> String {
    crate::primitives::base64::encode_url_safe(format!("o{offset}"))
}

pub(super) fn decode_cursor(params: Option<&Value>) -> Result<usize, RpcError> {
    let Some(cursor) = params.and_then(|p| p.get("cursor")) else {
        return Ok(0);
    };
    let bad = || RpcError::invalid_params("invalid cursor");
    let s = cursor.as_str().ok_or_else(bad)?;
    let bytes = crate::primitives::base64::decode_url_safe(s).map_err(|_| bad())?;
    let text = std::str::from_utf8(&bytes).map_err(|_| bad())?;
    text.strip_prefix('o')
        .and_then(|n| n.parse().ok())
        .ok_or_else(bad)
}

/// A list the server offers, with its encoded pages per revision. A list changes rarely
/// and every client asks for it, so each page is shaped once per revision and then
/// served as the same bytes until the list changes (`items_mut` drops the pages, under
/// the list's write lock). Only pages starting at a multiple of the page size are kept —
/// the cursors this server hands out — so forged cursors cannot grow the cache: it holds
/// at most one encoding of the list per revision.
pub(super) struct Listed<T> {
    items: Vec<T>,
    pages: Mutex<HashMap<(ProtocolVersion, usize), Encoded>>,
}

impl<T> Listed<T> {
    pub(super) fn new(items: Vec<T>) -> Listed<T> {
        Listed {
            items,
            pages: Mutex::new(HashMap::new()),
        }
    }

    /// The items, to change them: every cached page is dropped.
    pub(super) fn items_mut(&mut self) -> &mut Vec<T> {
        self.pages
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
        &mut self.items
    }

    /// The page at `offset` in revision `v`, shaped by `shape` (items, next cursor) unless
    /// it is cached.
    pub(super) fn page(
        &self,
        v: ProtocolVersion,
        offset: usize,
        size: usize,
        shape: impl FnOnce(&[T], Option<String>) -> Result<Encoded, RpcError>,
    ) -> Result<Encoded, RpcError> {
        let size = size.max(1);
        let cacheable = offset.is_multiple_of(size);
        let lock_pages = || {
            self.pages
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if cacheable {
            if let Some(hit) = lock_pages().get(&(v, offset)) {
                return Ok(hit.clone());
            }
        }
        let (items, next) = page(&self.items, offset, size)?;
        let encoded = shape(items, next)?;
        if cacheable {
            lock_pages().insert((v, offset), encoded.clone());
        }
        Ok(encoded)
    }
}

impl<T> std::ops::Deref for Listed<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.items
    }
}

fn page<T>(items: &[T], offset: usize, size: usize) -> Result<(&[T], Option<String>), RpcError> {
    let end = offset.saturating_add(size.max(1)).min(items.len());
    // A cursor past the end (forged, or from a list that shrank) is invalid.
    let slice = items
        .get(offset..end)
        .ok_or_else(|| RpcError::invalid_params("invalid cursor"))?;
    let next = (end < items.len()).then(|| encode_cursor(end));
    Ok((slice, next))
}
