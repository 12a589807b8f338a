//! Signed state (docs/behaviour.md §7): an agent with a `state_secret` signs every state it produces
//! and verifies the signature before continuing one, so that stored state cannot be edited.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::error::AgentError;
use crate::state::RunResult;

type HmacSha256 = Hmac<Sha256>;

fn mac(secret: &str, state: &RunResult) -> HmacSha256 {
    let mut mac =
        HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC accepts keys of any length");
    mac.update(state.unsigned_json().as_bytes());
    mac
}

/// The lowercase hex HMAC-SHA256 of the state's canonical JSON without its signature.
pub(crate) fn sign(secret: &str, state: &RunResult) -> String {
    let bytes = mac(secret, state).finalize().into_bytes();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks a state's signature against every secret (the first signs; all verify, for
/// rotation). Refusals are `state_invalid`.
pub(crate) fn verify(secrets: &[String], state: &RunResult) -> Result<(), AgentError> {
    let Some(signature) = state.signature() else {
        return Err(AgentError::state_invalid("State signature is missing"));
    };
    // Signed over the state as given, which held more than this state writes: whatever
    // the signature is, it is not this state's.
    if state.signed_content_altered {
        return Err(AgentError::state_invalid("State signature does not match"));
    }
    let matches = decode_hex(signature).is_some_and(|expected| {
        secrets
            .iter()
            .any(|secret| mac(secret, state).verify_slice(&expected).is_ok())
    });
    if matches {
        Ok(())
    } else {
        Err(AgentError::state_invalid("State signature does not match"))
    }
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}
