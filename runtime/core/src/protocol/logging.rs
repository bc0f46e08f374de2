//! Log levels in force: a legacy session's (`logging/setLevel`) or a 2026-07-28
//! request's own (`_meta` log level), and which messages they let through.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use crate::model::LogLevel;

/// A session's minimum log level, shared with its running handlers so that a
/// `logging/setLevel` takes effect at once. 0 means "not set".
#[derive(Clone, Debug, Default)]
pub(crate) struct SharedLogLevel(Arc<AtomicU8>);

impl SharedLogLevel {
    /// Sets the level.
    pub(crate) fn set(&self, level: LogLevel) {
        self.0.store(level as u8 + 1, Ordering::Relaxed);
    }

    /// The level, if set.
    pub(crate) fn get(&self) -> Option<LogLevel> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            n => LOG_LEVELS.get(usize::from(n - 1)).copied(),
        }
    }
}

const LOG_LEVELS: [LogLevel; 8] = [
    LogLevel::Debug,
    LogLevel::Info,
    LogLevel::Notice,
    LogLevel::Warning,
    LogLevel::Error,
    LogLevel::Critical,
    LogLevel::Alert,
    LogLevel::Emergency,
];

/// Which log messages may be sent for a request.
#[derive(Clone, Debug)]
pub(crate) enum LogFilter {
    /// Legacy session: the session's level (everything until `logging/setLevel`).
    Session(SharedLogLevel),
    /// Modern request that named a level in `_meta`.
    AtLeast(LogLevel),
    /// Modern request without a level: no log messages at all.
    Off,
}

impl LogFilter {
    pub(crate) fn allows(&self, level: LogLevel) -> bool {
        match self {
            LogFilter::Session(shared) => shared.get().is_none_or(|min| level >= min),
            LogFilter::AtLeast(min) => level >= *min,
            LogFilter::Off => false,
        }
    }
}
