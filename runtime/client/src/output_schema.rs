//! Checks a tool's `structuredContent` against the `outputSchema` it declared (feature
//! `output-validation`), as the specification asks of clients ("Clients SHOULD validate
//! structured results against this schema") and as the official TypeScript and Python
//! clients do: a result that breaks its tool's contract is an error, not data.
//!
//! Schemas are learned from `tools/list` (the client lists tools before a call anyway
//! where the protocol needs it) and compiled at the first call of their tool; a tool the
//! client has not listed is not checked.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use mcp_runtime::model::ToolResult;
use serde_json::Value;

use crate::error::ClientError;

/// A tool's declared output schema: as listed, then compiled (or refused) once.
enum Known {
    Listed(Value),
    Compiled(Arc<jsonschema::Validator>),
    /// The schema itself is not a valid JSON Schema: nothing can be checked against it.
    Unusable,
}

/// The output schemas of the tools the client listed.
#[derive(Default)]
pub(crate) struct OutputSchemas {
    tools: Mutex<HashMap<String, Known>>,
}

impl OutputSchemas {
    /// Notes what `tools/list` said of tool `name` (a tool without a schema forgets one
    /// it had).
    pub(crate) fn remember(&self, name: &str, schema: Option<&Value>) {
        let mut tools = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
        match schema {
            Some(schema) => {
                tools.insert(name.to_owned(), Known::Listed(schema.clone()));
            }
            None => {
                tools.remove(name);
            }
        }
    }

    fn validator(&self, name: &str) -> Option<Arc<jsonschema::Validator>> {
        let mut tools = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
        let known = tools.get_mut(name)?;
        if let Known::Listed(schema) = known {
            *known = match jsonschema::validator_for(schema) {
                Ok(validator) => Known::Compiled(Arc::new(validator)),
                Err(e) => {
                    tracing::warn!("the output schema of tool `{name}` is not usable: {e}");
                    Known::Unusable
                }
            };
        }
        match known {
            Known::Compiled(validator) => Some(Arc::clone(validator)),
            _ => None,
        }
    }

    /// `Ok` unless tool `name` declared an output schema that `result` breaks: no
    /// `structuredContent` in a result that is not an error, or content the schema refuses.
    pub(crate) fn check(&self, name: &str, result: &ToolResult) -> Result<(), ClientError> {
        if result.is_error {
            return Ok(());
        }
        let Some(validator) = self.validator(name) else {
            return Ok(());
        };
        let Some(structured) = &result.structured else {
            return Err(ClientError::invalid(format!(
                "tool `{name}` declares an outputSchema but its result has no structuredContent"
            )));
        };
        let first = validator
            .iter_errors(structured)
            .next()
            .map(|error| format!("{error} (at `{}`)", error.instance_path()));
        match first {
            None => Ok(()),
            Some(error) => Err(ClientError::invalid(format!(
                "the structuredContent of tool `{name}` does not match its outputSchema: {error}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(structured: Option<Value>, is_error: bool) -> ToolResult {
        let mut r = ToolResult::text("t");
        r.structured = structured;
        r.is_error = is_error;
        r
    }

    #[test]
    fn a_result_is_checked_against_its_tools_schema() {
        let schemas = OutputSchemas::default();
        schemas.remember(
            "weather",
            Some(&json!({"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]})),
        );
        assert!(schemas
            .check("weather", &result(Some(json!({"t": 3.5})), false))
            .is_ok());
        let wrong = schemas
            .check("weather", &result(Some(json!({"t": "warm"})), false))
            .unwrap_err();
        assert_eq!(wrong.kind(), crate::ClientErrorKind::InvalidResult);
        assert!(wrong.to_string().contains("/t"), "{wrong}");
        let missing = schemas.check("weather", &result(None, false)).unwrap_err();
        assert!(
            missing.to_string().contains("no structuredContent"),
            "{missing}"
        );
        // An error result, a tool without a schema, a tool never listed: not checked.
        assert!(schemas.check("weather", &result(None, true)).is_ok());
        schemas.remember("plain", None);
        assert!(schemas
            .check("plain", &result(Some(json!(1)), false))
            .is_ok());
        assert!(schemas
            .check("unknown", &result(Some(json!(1)), false))
            .is_ok());
        // Listed again without a schema: forgotten.
        schemas.remember("weather", None);
        assert!(schemas.check("weather", &result(None, false)).is_ok());
    }

    #[test]
    fn an_unusable_schema_checks_nothing() {
        let schemas = OutputSchemas::default();
        schemas.remember("odd", Some(&json!({"type": 12})));
        assert!(schemas
            .check("odd", &result(Some(json!("x")), false))
            .is_ok());
    }
}
