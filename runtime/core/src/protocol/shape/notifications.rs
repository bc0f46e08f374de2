//! The params of the notifications a handler sends while it runs
//! (`notifications/progress`, `notifications/message`), projected through the
//! negotiated revision's generated types, and the shortest written form of a number.

use serde_json::{json, Value};

use super::{by_revision, object, project};
use crate::protocol::version::ProtocolVersion;
use crate::wire::RpcError;

/// Params of `notifications/progress`.
pub fn progress(
    v: ProtocolVersion,
    token: &Value,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> Result<Value, RpcError> {
    let mut params = object(json!({"progressToken": token, "progress": number(progress)}));
    if let Some(t) = total {
        params.insert("total".into(), number(t));
    }
    if let (true, Some(m)) = (v.features().progress_message, message) {
        params.insert("message".into(), json!(m));
    }
    by_revision!(v, |m| project::<m::ProgressNotificationParams>(
        "a progress notification",
        Value::Object(params)
    ))
}

/// Params of `notifications/message`.
pub fn log_message(
    v: ProtocolVersion,
    level: crate::model::LogLevel,
    logger: Option<&str>,
    data: Value,
) -> Result<Value, RpcError> {
    let mut params = object(json!({"level": level, "data": data}));
    if let Some(l) = logger {
        params.insert("logger".into(), json!(l));
    }
    by_revision!(v, |m| project::<m::LoggingMessageNotificationParams>(
        "a log message",
        Value::Object(params)
    ))
}

/// A number in its shortest written form: `50.0` is written `50`.
pub fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}
