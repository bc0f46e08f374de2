//! `private_key_jwt` client authentication (RFC 7523 §2.2, OpenID Connect Core §9): a JWT
//! the client signs with its own key, naming itself as issuer and subject and the
//! authorization server as audience.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, RsaKeyPair};
use serde_json::json;

/// A client's private key for `private_key_jwt`: a PKCS#8 PEM (`BEGIN PRIVATE KEY`) and
/// its JWS algorithm (`ES256`, `ES384` or `RS256`).
#[derive(Clone)]
pub struct SigningKey {
    pkcs8: Vec<u8>,
    algorithm: Algorithm,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Algorithm {
    Es256,
    Es384,
    Rs256,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("algorithm", &self.algorithm)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A PKCS#8 PEM private key for `algorithm` (`ES256`, `ES384`, `RS256`); an error
    /// that says why when the PEM or the key does not fit.
    pub fn from_pem(pem: &str, algorithm: &str) -> Result<SigningKey, String> {
        let algorithm = match algorithm {
            "ES256" => Algorithm::Es256,
            "ES384" => Algorithm::Es384,
            "RS256" => Algorithm::Rs256,
            other => return Err(format!("unsupported signing algorithm `{other}`")),
        };
        let body: String = pem
            .lines()
            .map(str::trim)
            .skip_while(|l| *l != "-----BEGIN PRIVATE KEY-----")
            .skip(1)
            .take_while(|l| *l != "-----END PRIVATE KEY-----")
            .collect();
        let pkcs8 = base64::engine::general_purpose::STANDARD
            .decode(body)
            .map_err(|e| format!("not a PKCS#8 PEM private key: {e}"))?;
        let key = SigningKey { pkcs8, algorithm };
        // Parsed once here so that a bad key is refused at configuration.
        key.sign(b"probe")?;
        Ok(key)
    }

    fn name(&self) -> &'static str {
        match self.algorithm {
            Algorithm::Es256 => "ES256",
            Algorithm::Es384 => "ES384",
            Algorithm::Rs256 => "RS256",
        }
    }

    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        let rng = SystemRandom::new();
        let refused = |e: &dyn std::fmt::Display| format!("the {} key: {e}", self.name());
        match self.algorithm {
            Algorithm::Es256 | Algorithm::Es384 => {
                let alg = if self.algorithm == Algorithm::Es256 {
                    &signature::ECDSA_P256_SHA256_FIXED_SIGNING
                } else {
                    &signature::ECDSA_P384_SHA384_FIXED_SIGNING
                };
                let pair =
                    EcdsaKeyPair::from_pkcs8(alg, &self.pkcs8, &rng).map_err(|e| refused(&e))?;
                pair.sign(&rng, message)
                    .map(|s| s.as_ref().to_vec())
                    .map_err(|e| refused(&e))
            }
            Algorithm::Rs256 => {
                let pair = RsaKeyPair::from_pkcs8(&self.pkcs8).map_err(|e| refused(&e))?;
                let mut out = vec![0u8; pair.public().modulus_len()];
                pair.sign(&signature::RSA_PKCS1_SHA256, &rng, message, &mut out)
                    .map_err(|e| refused(&e))?;
                Ok(out)
            }
        }
    }

    /// A client assertion of `client_id` for the authorization server `audience`, valid
    /// for five minutes.
    pub(crate) fn assertion(&self, client_id: &str, audience: &str) -> Result<String, String> {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut jti = [0u8; 16];
        getrandom::getrandom(&mut jti).map_err(|e| e.to_string())?;
        let header = json!({"alg": self.name(), "typ": "JWT"});
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + 300,
            "jti": b64.encode(jti),
        });
        let signing_input = format!(
            "{}.{}",
            b64.encode(header.to_string()),
            b64.encode(claims.to_string())
        );
        let signature = self.sign(signing_input.as_bytes())?;
        Ok(format!("{signing_input}.{}", b64.encode(signature)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RSA: &str = include_str!("../../testdata/keys/rsa-a.pem");
    const RSA_PUBLIC: &str = include_str!("../../testdata/keys/rsa-a.pub.pem");
    const EC: &str = include_str!("../../testdata/keys/ec-p256.pem");

    #[test]
    fn an_rs256_assertion_verifies_with_another_jwt_library() {
        let key = SigningKey::from_pem(RSA, "RS256").unwrap();
        let jwt = key.assertion("client-1", "https://as.example").unwrap();
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
        validation.set_audience(&["https://as.example"]);
        validation.set_issuer(&["client-1"]);
        let decoded = jsonwebtoken::decode::<serde_json::Value>(
            &jwt,
            &jsonwebtoken::DecodingKey::from_rsa_pem(RSA_PUBLIC.as_bytes()).unwrap(),
            &validation,
        )
        .unwrap();
        assert_eq!(decoded.claims["sub"], "client-1");
        assert!(decoded.claims["jti"]
            .as_str()
            .is_some_and(|j| !j.is_empty()));
    }

    #[test]
    fn keys_that_do_not_fit_are_refused_at_configuration() {
        assert!(SigningKey::from_pem(EC, "ES256").is_ok());
        assert!(SigningKey::from_pem(EC, "RS256").is_err());
        assert!(SigningKey::from_pem(RSA, "ES256").is_err());
        assert!(SigningKey::from_pem(EC, "HS256").is_err());
        assert!(SigningKey::from_pem("not a pem", "ES256").is_err());
        assert!(SigningKey::from_pem(
            "-----BEGIN PRIVATE KEY-----\n!!\n-----END PRIVATE KEY-----",
            "ES256"
        )
        .is_err());
    }
}
