//! The JWT access token (RFC 9068) as text: the compact JWS taken apart, and its claims
//! checked by type and value. No key and no network here (the signature is checked in
//! `jwt` with the key set's keys), so that the parsing of what any client may send is
//! built, tested and fuzzed without the `auth` feature's dependencies.

use base64::Engine;
use serde_json::{Map, Value};

use super::config::names_resource;
use super::VerifyError;
use mcp_runtime::auth::Principal;

/// A JWS in compact serialization (RFC 7515 §7.1), taken apart: three base64url parts,
/// the first a JSON object. The payload is kept as bytes until the signature is verified.
pub(crate) struct Jws<'a> {
    pub(crate) header: Map<String, Value>,
    /// `header.payload`, as signed (checked by `jwt`, with the feature `auth`).
    #[cfg_attr(not(feature = "auth"), allow(dead_code))]
    pub(crate) signed: &'a [u8],
    pub(crate) payload: Vec<u8>,
    #[cfg_attr(not(feature = "auth"), allow(dead_code))]
    pub(crate) signature: Vec<u8>,
}

impl<'a> Jws<'a> {
    pub(crate) fn parse(token: &'a str) -> Result<Jws<'a>, VerifyError> {
        let malformed = || VerifyError::Invalid("the token is not a well-formed JWT".into());
        let decode = |part: &str| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(part)
                .map_err(|_| malformed())
        };
        let (signed, signature) = token.rsplit_once('.').ok_or_else(malformed)?;
        let (header, payload) = signed.split_once('.').ok_or_else(malformed)?;
        if payload.contains('.') {
            return Err(malformed());
        }
        let header = match serde_json::from_slice(&decode(header)?) {
            Ok(Value::Object(map)) => map,
            _ => return Err(malformed()),
        };
        Ok(Jws {
            header,
            signed: signed.as_bytes(),
            payload: decode(payload)?,
            signature: decode(signature)?,
        })
    }
}

/// What a token's claims are checked against.
pub(crate) struct ClaimRules<'a> {
    /// `iss` must be exactly this.
    pub(crate) issuer: &'a str,
    /// `aud` must name this resource (canonically) …
    pub(crate) resource: &'a str,
    /// … or one of these, exactly.
    pub(crate) audiences: &'a [String],
    /// Clock skew allowed on `exp`, `nbf` and `iat`, in seconds.
    pub(crate) leeway: u64,
}

/// The claims checked by type and value (RFC 9068 §4) at `now` (seconds since the Unix
/// epoch), and read into the caller they name.
///
/// A token must name its caller: `sub`, or the client (`client_id`, else `azp`). RFC 9068
/// §2.2 requires both; tokens with one of them are accepted (many servers omit one for
/// `client_credentials` grants, or write `azp`), and the principal is bound by what they
/// name. A token with neither is refused: every such token would be one and the same
/// caller, sharing sessions, `requestState` and tasks with all the others.
pub(crate) fn check_claims(
    rules: &ClaimRules<'_>,
    claims: Map<String, Value>,
    now: u64,
) -> Result<Principal, VerifyError> {
    let invalid = |why: &str| VerifyError::Invalid(why.to_owned());
    let number = |name: &str| -> Result<Option<u64>, VerifyError> {
        match claims.get(name) {
            None => Ok(None),
            Some(Value::Number(n)) => n
                .as_u64()
                .or_else(|| {
                    n.as_f64()
                        .filter(|f| f.is_finite() && *f >= 0.0)
                        .map(|f| f as u64)
                })
                .map(Some)
                .ok_or_else(|| invalid(&format!("the {name} claim is not a valid time"))),
            Some(_) => Err(invalid(&format!("the {name} claim is not a number"))),
        }
    };
    let exp = number("exp")?.ok_or_else(|| invalid("the token has no exp claim"))?;
    if exp.saturating_add(rules.leeway) < now {
        return Err(invalid("the token has expired"));
    }
    let future = |t: u64| t > now.saturating_add(rules.leeway);
    if number("nbf")?.is_some_and(future) {
        return Err(invalid("the token is not valid yet (nbf)"));
    }
    // A token issued in the future comes from a clock far off, or was minted to outlive
    // its stated lifetime.
    if number("iat")?.is_some_and(future) {
        return Err(invalid("the token was issued in the future (iat)"));
    }
    if claims.get("iss").and_then(Value::as_str) != Some(rules.issuer) {
        return Err(invalid(
            "the token was issued by another authorization server",
        ));
    }
    let audience: Vec<String> = match claims.get("aud") {
        Some(Value::String(a)) => vec![a.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| a.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(|| invalid("the aud claim is not a list of strings"))?,
        _ => return Err(invalid("the token has no audience")),
    };
    let for_us = audience.iter().any(|a| {
        names_resource(a, rules.resource) || rules.audiences.iter().any(|extra| extra == a)
    });
    if !for_us {
        return Err(invalid("the token was issued for another resource (aud)"));
    }
    let string = |name: &str| -> Result<Option<String>, VerifyError> {
        match claims.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(invalid(&format!("the {name} claim is not a string"))),
        }
    };
    let subject = string("sub")?;
    let client_id = match string("client_id")? {
        Some(c) => Some(c),
        None => string("azp")?,
    };
    if subject.is_none() && client_id.is_none() {
        return Err(invalid(
            "the token names neither its subject (sub) nor its client (client_id)",
        ));
    }
    let scopes = scopes_of(&claims)?;
    let mut principal = Principal::new(rules.issuer)
        .scopes(scopes)
        .audience(audience)
        .expires_at(exp);
    principal.subject = subject;
    principal.client_id = client_id;
    principal.claims = claims;
    Ok(principal)
}

/// `scope` (space-separated, RFC 9068) or `scp` (a list, or a string, as some servers write).
pub(crate) fn scopes_of(claims: &Map<String, Value>) -> Result<Vec<String>, VerifyError> {
    let bad = || VerifyError::Invalid("the scope claim is malformed".into());
    let split = |s: &str| {
        s.split(' ')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    match claims.get("scope").or_else(|| claims.get("scp")) {
        None => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(split(s)),
        Some(Value::Array(items)) => items
            .iter()
            .map(|s| s.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(bad),
        Some(_) => Err(bad()),
    }
}

/// Runs everything a resource server reads of a token's text — the compact JWS, its
/// header, and (as if its signature verified) its claims — on `token`, for the fuzz
/// targets: whatever the input, this returns (`Ok` only for a token whose claims pass
/// the fixed rules below), and never panics.
#[doc(hidden)]
pub fn fuzz_token(token: &[u8]) -> bool {
    let Ok(token) = std::str::from_utf8(token) else {
        return false;
    };
    let Ok(jws) = Jws::parse(token) else {
        return false;
    };
    let _ = jws.header.get("alg").and_then(Value::as_str);
    let Ok(Value::Object(claims)) = serde_json::from_slice(&jws.payload) else {
        return false;
    };
    let rules = ClaimRules {
        issuer: "https://as.example.com",
        resource: "https://mcp.example.com/mcp",
        audiences: &[],
        leeway: 30,
    };
    check_claims(&rules, claims, 1_700_000_000).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(claims: Value) -> Result<Principal, VerifyError> {
        let rules = ClaimRules {
            issuer: "https://as",
            resource: "https://mcp.example.com/mcp",
            audiences: &[],
            leeway: 30,
        };
        let Value::Object(claims) = claims else {
            unreachable!()
        };
        check_claims(&rules, claims, 1_000_000)
    }

    fn base() -> Value {
        json!({"iss": "https://as", "aud": "https://mcp.example.com/mcp", "exp": 1_000_100, "sub": "u"})
    }

    #[test]
    fn a_future_iat_beyond_the_leeway_is_refused() {
        let mut c = base();
        c["iat"] = json!(1_000_000 + 3600);
        let e = check(c.clone()).unwrap_err();
        assert!(e.to_string().contains("iat"), "{e}");
        c["iat"] = json!(1_000_000 + 30);
        assert!(check(c.clone()).is_ok(), "within the leeway");
        c["iat"] = json!(999_000);
        assert!(check(c).is_ok());
    }

    #[test]
    fn a_token_must_name_its_subject_or_its_client() {
        let mut c = base();
        c.as_object_mut().unwrap().remove("sub");
        let e = check(c.clone()).unwrap_err();
        assert!(e.to_string().contains("neither"), "{e}");
        c["client_id"] = json!("app");
        assert_eq!(check(c.clone()).unwrap().client_id.as_deref(), Some("app"));
        c.as_object_mut().unwrap().remove("client_id");
        c["azp"] = json!("app2");
        assert_eq!(check(c).unwrap().client_id.as_deref(), Some("app2"));
    }

    #[test]
    fn audiences_with_extra_trailing_slashes_do_not_match() {
        for (aud, ok) in [
            ("https://mcp.example.com/mcp", true),
            ("https://mcp.example.com/mcp/", true),
            ("https://mcp.example.com/mcp//", false),
            ("https://mcp.example.com/mcp///", false),
        ] {
            let mut c = base();
            c["aud"] = json!(aud);
            assert_eq!(check(c).is_ok(), ok, "{aud}");
        }
    }

    #[test]
    fn fuzz_entry_takes_anything() {
        for input in [&b""[..], b"a.b.c", b"..", b"\xff.\xfe.", b"e30.e30.e30"] {
            assert!(!fuzz_token(input));
        }
    }
}
