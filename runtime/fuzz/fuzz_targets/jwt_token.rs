//! Fuzzes what the resource server reads of a bearer token before and after its
//! signature: the compact JWS (three base64url parts, a JSON header), and the claims as
//! if the signature verified (`exp`, `nbf`, `iat`, `iss`, `aud`, `sub`/`client_id`,
//! `scope`/`scp`, by type and value) — `mcp_runtime_http::auth::fuzz_token`. Invariant:
//! no panic and no hang, whatever the token; the input is also tried as the payload of a
//! token built around it, so that the claim checks see JSON objects often.
#![no_main]

use libfuzzer_sys::fuzz_target;

fn b64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 3);
    for group in bytes.chunks(3) {
        let n = group.iter().fold(0u32, |n, b| (n << 8) | u32::from(*b)) << (8 * (3 - group.len()));
        for i in 0..=group.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

fuzz_target!(|input: &[u8]| {
    // As a token.
    let _ = mcp_runtime_http::auth::fuzz_token(input);
    // As the claims of a token with a plausible header and signature.
    let token = format!(
        "{}.{}.{}",
        b64url(br#"{"alg":"RS256","typ":"at+jwt","kid":"a"}"#),
        b64url(input),
        b64url(b"signature")
    );
    let _ = mcp_runtime_http::auth::fuzz_token(token.as_bytes());
});
