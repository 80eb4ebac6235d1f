//! What a provider's decoder checks of each event it reads, whichever the provider: the names
//! and token counts a server gives, and the bytes a turn gathers, each within its limit. Both
//! decoders (`anthropic.rs`, `openai.rs`) use it, and `decode.rs` drives them.

use crate::{MAX_NAME_BYTES, MAX_TURN_BYTES, MAX_USAGE_TOKENS};

/// Why a decoder cannot go on: `Ok` for an error the provider reported in the stream, `Err` for a
/// stream that cannot be read.
pub(crate) type Stop = Result<String, String>;

/// The bytes a turn has gathered (its text, tool-call names, ids and arguments), kept under
/// [`MAX_TURN_BYTES`].
#[derive(Debug, Default)]
pub(crate) struct TurnBytes(usize);

impl TurnBytes {
    /// Counts `more` bytes about to be added, or refuses them if the turn would pass its limit.
    pub fn add(&mut self, more: usize) -> Result<(), Stop> {
        if self.0 + more > MAX_TURN_BYTES {
            return Err(Err(format!(
                "the reply is longer than {} MiB",
                MAX_TURN_BYTES / (1024 * 1024)
            )));
        }
        self.0 += more;
        Ok(())
    }
}

/// `value`, a name the server gave `what`, if it is no longer than [`MAX_NAME_BYTES`].
pub(crate) fn name(value: &str, what: &str) -> Result<String, Stop> {
    if value.len() > MAX_NAME_BYTES {
        return Err(Err(format!("{what} is longer than {MAX_NAME_BYTES} bytes")));
    }
    Ok(value.to_owned())
}

/// A token count the provider reported under `key` of `usage`, if it is there and no more than
/// [`MAX_USAGE_TOKENS`].
pub(crate) fn tokens(usage: &serde_json::Value, key: &str) -> Result<Option<u64>, Stop> {
    match usage[key].as_u64() {
        Some(n) if n > MAX_USAGE_TOKENS => {
            Err(Err(format!("the usage reports more than {MAX_USAGE_TOKENS} tokens ({key})")))
        }
        n => Ok(n),
    }
}
