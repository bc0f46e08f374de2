//! Base64 (RFC 4648): the URL-safe alphabet without padding (§5) for the tokens the server
//! mints, and the standard alphabet with padding (§4) for header values.

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Why a text is not base64.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct DecodeError;

/// `bytes` in the URL-safe alphabet, without padding.
pub(crate) fn encode_url_safe(bytes: impl AsRef<[u8]>) -> String {
    let bytes = bytes.as_ref();
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        // A chunk of k bytes is k + 1 characters.
        for i in 0..=chunk.len() {
            let index = ((n >> (18 - 6 * i)) & 0x3f) as usize;
            out.push(char::from(URL_SAFE.get(index).copied().unwrap_or(b'A')));
        }
    }
    out
}

/// Decodes URL-safe base64 without padding; anything else (padding, another alphabet's
/// characters, a length no encoder produces, non-zero trailing bits) is an error, so that
/// each value has exactly one encoding.
pub(crate) fn decode_url_safe(text: &str) -> Result<Vec<u8>, DecodeError> {
    decode(text.as_bytes(), URL_SAFE)
}

/// Decodes standard base64 with its padding (RFC 4648 §4), required: a header value
/// whose padding is missing or wrong is refused, not guessed at.
pub(crate) fn decode_standard(text: &str) -> Result<Vec<u8>, DecodeError> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return Err(DecodeError);
    }
    let unpadded = match bytes {
        [rest @ .., b'=', b'='] => rest,
        [rest @ .., b'='] => rest,
        _ => bytes,
    };
    // Two pad characters stand for one byte, one for two; three never occur.
    if unpadded.len() % 4 == 1 || unpadded.ends_with(b"=") {
        return Err(DecodeError);
    }
    decode(unpadded, STANDARD)
}

fn decode(text: &[u8], alphabet: &[u8; 64]) -> Result<Vec<u8>, DecodeError> {
    if text.len() % 4 == 1 {
        return Err(DecodeError);
    }
    let value = |c: u8| -> Result<u32, DecodeError> {
        alphabet
            .iter()
            .position(|&a| a == c)
            .map(|p| p as u32)
            .ok_or(DecodeError)
    };
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
    for chunk in text.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let produced = chunk.len() - 1;
        // The bits below the last whole byte must be zero (one encoding per value).
        let unused = 24 - 8 * produced;
        if n & ((1 << unused) - 1) != 0 {
            return Err(DecodeError);
        }
        for i in 0..produced {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    #[test]
    fn rfc_4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode_url_safe(plain), encoded);
            assert_eq!(decode_url_safe(encoded).unwrap(), plain.as_bytes());
        }
        assert_eq!(decode_standard("Zm9vYg==").unwrap(), b"foob");
        assert_eq!(decode_standard("Zm9vYmE=").unwrap(), b"fooba");
        assert_eq!(decode_standard("Zm9vYmFy").unwrap(), b"foobar");
        assert_eq!(decode_standard("").unwrap(), b"");
    }

    #[test]
    fn agrees_with_the_base64_crate_on_every_length_and_byte() {
        let url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let standard = base64::engine::general_purpose::STANDARD;
        for len in 0..200usize {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 151 + len * 7) as u8).collect();
            let ours = encode_url_safe(&bytes);
            assert_eq!(ours, url.encode(&bytes));
            assert_eq!(decode_url_safe(&ours).unwrap(), bytes);
            assert_eq!(decode_standard(&standard.encode(&bytes)).unwrap(), bytes);
        }
    }

    #[test]
    fn refuses_what_has_no_single_encoding() {
        for bad in ["Z", "Zg=", "Zh", "Zm9", "Z+", "Zg==", "a b", "Zm9v\n"] {
            assert_eq!(decode_url_safe(bad), Err(DecodeError), "{bad:?}");
        }
        for bad in [
            "Zg=a",
            "Z===",
            "Zm9vY!==",
            "Zh==",
            "Zg",
            "Zm9vYg",
            "dXMtd2VzdDE",
            "Zg=",
            "====",
        ] {
            assert_eq!(decode_standard(bad), Err(DecodeError), "{bad:?}");
        }
    }

    #[test]
    fn refuses_what_the_base64_crate_refuses() {
        let url = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        // Every string of up to 3 characters over a small alphabet with edge cases.
        let chars = ["A", "Q", "g", "_", "-", "/", "+", "=", "z"];
        let mut texts = vec![String::new()];
        for _ in 0..3 {
            let next: Vec<String> = texts
                .iter()
                .flat_map(|t| chars.iter().map(move |c| format!("{t}{c}")))
                .collect();
            texts.extend(next);
        }
        let standard = base64::engine::general_purpose::STANDARD;
        for text in texts {
            assert_eq!(
                decode_url_safe(&text).ok(),
                url.decode(&text).ok(),
                "{text:?}"
            );
            for padded in [text.clone(), format!("{text}="), format!("{text}==")] {
                assert_eq!(
                    decode_standard(&padded).ok(),
                    standard.decode(&padded).ok(),
                    "{padded:?}"
                );
            }
        }
    }
}
