//! What the author registered — tools, resources, templates, prompts, completion — with each list's encoded pages cached per revision and opaque cursors.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;

use super::handler::{PromptFn, ResourceFn, ToolByRefFn, ToolFn};
use crate::auth::Principal;
use crate::model::{Prompt, Resource, ResourceTemplate, Tool};
use crate::protocol::version::ProtocolVersion;
use crate::server::context::Context;
use crate::server::uri_template::UriTemplate;
use crate::wire::{Encoded, RpcError};

pub(super) struct ToolEntry {
    pub(super) tool: Tool,
    pub(super) handler: Arc<ToolFn>,
    /// The same handler reading the arguments in place, when it can (typed tools).
    pub(super) by_ref: Option<Arc<ToolByRefFn>>,
    /// Disabled entries are neither listed nor served ([`Server::disable_tool`](super::Server::disable_tool)).
    pub(super) enabled: bool,
}

pub(super) struct ResourceEntry {
    pub(super) resource: Resource,
    pub(super) handler: Arc<ResourceFn>,
    pub(super) enabled: bool,
}

pub(super) struct TemplateEntry {
    pub(super) template: ResourceTemplate,
    pub(super) parsed: UriTemplate,
    pub(super) handler: Arc<ResourceFn>,
    pub(super) enabled: bool,
}

pub(super) struct PromptEntry {
    pub(super) prompt: Prompt,
    pub(super) handler: Arc<PromptFn>,
    pub(super) enabled: bool,
}

/// An item a server lists, as the predicate of
/// [`ServerBuilder::visible_if`](crate::ServerBuilder::visible_if) sees it.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Listing<'a> {
    /// A tool (`tools/list`, `tools/call`).
    Tool(&'a Tool),
    /// A prompt (`prompts/list`, `prompts/get`).
    Prompt(&'a Prompt),
    /// A resource (`resources/list`, `resources/read`).
    Resource(&'a Resource),
    /// A resource template (`resources/templates/list`, and `resources/read` of a URI
    /// it matches).
    ResourceTemplate(&'a ResourceTemplate),
}

/// One of the lists a server offers, for its cache hint
/// ([`ServerBuilder::list_cache_hint`](crate::ServerBuilder::list_cache_hint)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListKind {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list`.
    Resources,
    /// `resources/templates/list`.
    ResourceTemplates,
}

/// The author's predicate on what a caller sees.
pub(crate) type VisibleFn = dyn Fn(Listing<'_>, &Context) -> bool + Send + Sync;

/// What the registry's entries have in common for listing and serving.
pub(super) trait Entry {
    fn listing(&self) -> Listing<'_>;
    fn enabled(&self) -> bool;
}

impl Entry for ToolEntry {
    fn listing(&self) -> Listing<'_> {
        Listing::Tool(&self.tool)
    }
    fn enabled(&self) -> bool {
        self.enabled
    }
}

impl Entry for PromptEntry {
    fn listing(&self) -> Listing<'_> {
        Listing::Prompt(&self.prompt)
    }
    fn enabled(&self) -> bool {
        self.enabled
    }
}

impl Entry for ResourceEntry {
    fn listing(&self) -> Listing<'_> {
        Listing::Resource(&self.resource)
    }
    fn enabled(&self) -> bool {
        self.enabled
    }
}

impl Entry for TemplateEntry {
    fn listing(&self) -> Listing<'_> {
        Listing::ResourceTemplate(&self.template)
    }
    fn enabled(&self) -> bool {
        self.enabled
    }
}

/// Who a list is for, and what decides what they see: the tools their token's scopes
/// do not reach (the resource server's per-tool scopes, carried by the principal) and
/// the author's predicate, which needs the request's [`Context`].
#[derive(Clone, Copy, Default)]
pub(crate) struct Audience<'a> {
    pub(crate) principal: Option<&'a Principal>,
    pub(crate) ctx: Option<&'a Context>,
    pub(crate) predicate: Option<&'a VisibleFn>,
}

impl Audience<'_> {
    /// Whether the caller sees `item` (enabled or not).
    pub(crate) fn sees(&self, item: Listing<'_>) -> bool {
        if let (Listing::Tool(tool), Some(principal)) = (item, self.principal) {
            if principal.denied_tools.contains(&tool.name) {
                return false;
            }
        }
        match (self.predicate, self.ctx) {
            (None, _) => true,
            (Some(visible), Some(ctx)) => visible(item, ctx),
            // Never reached (lists are answered with a context when there is a
            // predicate); fail closed if it were.
            (Some(_), None) => false,
        }
    }

    /// Whether the list may differ from one caller to another: then its pages are
    /// `private` in 2026-07-28, whatever the author's hint says. A caller with a token is
    /// one (an authenticated answer is private unless proven otherwise, as in HTTP
    /// caching; tools are filtered by the token's scopes).
    pub(crate) fn per_caller(&self) -> bool {
        self.principal.is_some() || self.predicate.is_some()
    }

    /// The entry, if it is enabled and the caller sees it.
    pub(crate) fn serves<T: Entry>(&self, entry: &T) -> bool {
        entry.enabled() && self.sees(entry.listing())
    }
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
/// at most one encoding of the list per revision, and per set of visible items when
/// callers see different ones (bounded, see [`MAX_VARIANT_PAGES`]). A page is keyed by
/// exactly what it holds, so callers who see the same items share it and no caller is
/// ever served a page made for what another sees.
pub(super) struct Listed<T> {
    items: Vec<T>,
    pages: Mutex<HashMap<PageKey, Encoded>>,
}

/// What a cached page is: revision, offset, whether it is marked private, and which
/// items it was made of (`None`: all of them).
#[derive(Clone, PartialEq, Eq, Hash)]
struct PageKey {
    version: ProtocolVersion,
    offset: usize,
    private: bool,
    visible: Option<Box<[usize]>>,
}

/// Pages of filtered lists kept at most (each caller's view may be another): beyond it
/// such pages are shaped per request.
const MAX_VARIANT_PAGES: usize = 256;

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

    /// The page at `offset` in revision `v` of what `audience` is served (enabled items
    /// it sees; cursors count those), shaped by `shape` (items, next cursor, whether the
    /// list is per caller) unless it is cached.
    pub(super) fn page(
        &self,
        v: ProtocolVersion,
        offset: usize,
        size: usize,
        audience: &Audience<'_>,
        shape: impl FnOnce(&[&T], Option<String>, bool) -> Result<Encoded, RpcError>,
    ) -> Result<Encoded, RpcError>
    where
        T: Entry,
    {
        let size = size.max(1);
        let private = audience.per_caller();
        let filtered = private || self.items.iter().any(|e| !e.enabled());
        let visible: Option<Box<[usize]>> = filtered
            .then(|| {
                self.items
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| audience.serves(*e))
                    .map(|(i, _)| i)
                    .collect::<Box<[usize]>>()
            })
            .filter(|v| v.len() != self.items.len());
        let key = PageKey {
            version: v,
            offset,
            private,
            visible,
        };
        let lock_pages = || {
            self.pages
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        let cacheable = offset.is_multiple_of(size);
        if cacheable {
            if let Some(hit) = lock_pages().get(&key) {
                return Ok(hit.clone());
            }
        }
        let chosen: Vec<&T> = match &key.visible {
            None => self.items.iter().collect(),
            Some(indices) => indices.iter().filter_map(|i| self.items.get(*i)).collect(),
        };
        let (items, next) = page(&chosen, offset, size)?;
        let encoded = shape(items, next, private)?;
        if cacheable {
            let mut pages = lock_pages();
            if key.visible.is_none() || pages.len() < MAX_VARIANT_PAGES {
                pages.insert(key, encoded.clone());
            }
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
