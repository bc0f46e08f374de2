//! Tool and prompt arguments from the command line: `key=value` words, or one JSON object.
//!
//! A tool argument's value is read as JSON when it is valid JSON (`n=3`, `on=true`,
//! `tags=["a","b"]`, `name="3"` for the string "3") and as a string otherwise
//! (`city=Oslo`). Prompt arguments are strings by the protocol, so a prompt's values are
//! taken as written.

use serde_json::{Map, Value};

/// Tool arguments: `key=value` words, or the JSON object `json` (not both).
pub(crate) fn tool_arguments(words: &[String], json: Option<&str>) -> Result<Value, String> {
    if let Some(json) = json {
        if !words.is_empty() {
            return Err("give the arguments as key=value words or as --args JSON, not both".into());
        }
        let value: Value =
            serde_json::from_str(json).map_err(|e| format!("--args is not valid JSON: {e}"))?;
        return match value {
            Value::Object(_) => Ok(value),
            other => Err(format!("--args must be a JSON object, not {other}")),
        };
    }
    let mut arguments = Map::new();
    for (key, raw) in pairs(words)? {
        let value = serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()));
        arguments.insert(key.to_owned(), value);
    }
    Ok(Value::Object(arguments))
}

/// Prompt arguments: `key=value` words, each value a string as written.
pub(crate) fn prompt_arguments(words: &[String]) -> Result<Vec<(String, String)>, String> {
    Ok(pairs(words)?
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect())
}

/// `key=value` words split at their first `=`; a word without one, an empty key or a key
/// given twice is an error naming it.
fn pairs(words: &[String]) -> Result<Vec<(&str, &str)>, String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for word in words {
        let (key, value) = word
            .split_once('=')
            .ok_or_else(|| format!("expected key=value, got `{word}`"))?;
        if key.is_empty() {
            return Err(format!("expected key=value, got `{word}` (no key)"));
        }
        if !seen.insert(key) {
            return Err(format!("the argument `{key}` is given twice"));
        }
        out.push((key, value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn values_are_json_when_they_parse_and_strings_otherwise() {
        let args = tool_arguments(
            &words(&[
                "city=Oslo",
                "years=2",
                "on=true",
                "tags=[\"a\",1]",
                "quoted=\"2\"",
                "empty=",
                "eq=a=b",
                "obj={\"k\":null}",
            ]),
            None,
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"city": "Oslo", "years": 2, "on": true, "tags": ["a", 1], "quoted": "2",
                   "empty": "", "eq": "a=b", "obj": {"k": null}})
        );
    }

    #[test]
    fn bad_words_say_what_is_wrong() {
        assert!(tool_arguments(&words(&["city"]), None)
            .unwrap_err()
            .contains("expected key=value, got `city`"));
        assert!(tool_arguments(&words(&["=x"]), None)
            .unwrap_err()
            .contains("no key"));
        assert!(tool_arguments(&words(&["a=1", "a=2"]), None)
            .unwrap_err()
            .contains("twice"));
    }

    #[test]
    fn json_arguments_must_be_one_object() {
        assert_eq!(
            tool_arguments(&[], Some("{\"a\": [1]}")).unwrap(),
            json!({"a": [1]})
        );
        assert!(tool_arguments(&[], Some("[1]"))
            .unwrap_err()
            .contains("object"));
        assert!(tool_arguments(&[], Some("{"))
            .unwrap_err()
            .contains("not valid JSON"));
        assert!(tool_arguments(&words(&["a=1"]), Some("{}"))
            .unwrap_err()
            .contains("not both"));
    }

    #[test]
    fn prompt_values_stay_strings() {
        assert_eq!(
            prompt_arguments(&words(&["n=3", "t=true"])).unwrap(),
            vec![
                ("n".to_owned(), "3".to_owned()),
                ("t".to_owned(), "true".to_owned())
            ]
        );
    }
}
