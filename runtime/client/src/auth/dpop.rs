//! DPoP (RFC 9449, SEP-1932): a key the client makes for the connection, proofs of its
//! possession on token requests and on every request to the MCP server, and the nonces
//! servers may require. Used when the authorization server advertises `ES256` in
//! `dpop_signing_alg_values_supported`.

use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use reqwest::Url;
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The connection's DPoP key and the nonces servers last gave.
pub(crate) struct DpopKey {
    pair: EcdsaKeyPair,
    jwk: Value,
    /// By origin: the authorization server's and the MCP server's nonces differ.
    nonces: Mutex<std::collections::HashMap<String, String>>,
}

impl DpopKey {
    /// A fresh P-256 key.
    pub(crate) fn generate() -> Result<DpopKey, String> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|e| format!("generating a DPoP key: {e}"))?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .map_err(|e| format!("reading the DPoP key: {e}"))?;
        // An uncompressed point: 0x04, x, y.
        let point = pair.public_key().as_ref();
        let (x, y) = match (point.get(1..33), point.get(33..65)) {
            (Some(x), Some(y)) => (x, y),
            _ => return Err("an unexpected P-256 public key".to_owned()),
        };
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let jwk = json!({"kty": "EC", "crv": "P-256", "x": b64.encode(x), "y": b64.encode(y)});
        Ok(DpopKey {
            pair,
            jwk,
            nonces: Mutex::default(),
        })
    }

    fn origin(url: &Url) -> String {
        url.origin().ascii_serialization()
    }

    /// Keeps the nonce a server at `url` gave (`DPoP-Nonce`).
    pub(crate) fn keep_nonce(&self, url: &Url, nonce: &str) {
        self.nonces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(DpopKey::origin(url), nonce.to_owned());
    }

    /// A proof for `method` on `url` (its query and fragment left out), bound to
    /// `access_token` when there is one (`ath`), with the server's last nonce.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &Url,
        access_token: Option<&str>,
    ) -> Result<String, String> {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let mut htu = url.clone();
        htu.set_query(None);
        htu.set_fragment(None);
        let mut jti = [0u8; 16];
        getrandom::getrandom(&mut jti).map_err(|e| e.to_string())?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut claims = serde_json::Map::new();
        claims.insert("jti".into(), json!(b64.encode(jti)));
        claims.insert("htm".into(), json!(method));
        claims.insert("htu".into(), json!(htu.as_str()));
        claims.insert("iat".into(), json!(now));
        if let Some(nonce) = self
            .nonces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&DpopKey::origin(url))
        {
            claims.insert("nonce".into(), json!(nonce));
        }
        if let Some(token) = access_token {
            claims.insert(
                "ath".into(),
                json!(b64.encode(Sha256::digest(token.as_bytes()))),
            );
        }
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let input = format!(
            "{}.{}",
            b64.encode(header.to_string()),
            b64.encode(Value::Object(claims).to_string())
        );
        let signature = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .map_err(|e| format!("signing a DPoP proof: {e}"))?;
        Ok(format!("{input}.{}", b64.encode(signature.as_ref())))
    }
}
