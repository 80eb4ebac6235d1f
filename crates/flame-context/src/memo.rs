//! Token counts of the texts assembly renders, remembered across assemblies.
//!
//! A frame's XML changes rarely, while contexts are assembled on every message, and counting is
//! most of an assembly's cost. A count depends only on the encoding and the text, so it is kept
//! under the text itself (never a hash of it, so a remembered count is always exact). The memo
//! forgets everything when it holds [`CAPACITY`] texts, which bounds it to a few megabytes.
//!
//! A count is looked up by the text borrowed, without a copy.

use std::sync::{LazyLock, Mutex};

use flame_tokens::Encoding;
// Texts are hashed whole on every look-up; they are the caller's own, so a fast hasher is used.
use rustc_hash::FxHashMap as HashMap;

const CAPACITY: usize = 16_384;

/// The remembered counts by encoding, then by text (looked up by the text borrowed, so a count
/// already known costs no copy of it).
#[derive(Default)]
struct Counts {
    by_encoding: HashMap<Encoding, HashMap<String, u64>>,
    /// How many texts are remembered, over every encoding.
    len: usize,
}

static COUNTS: LazyLock<Mutex<Counts>> = LazyLock::new(Mutex::default);

/// `flame_tokens::count`, remembered.
pub(crate) fn count(encoding: Encoding, text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    // Counting happens outside the lock, so parallel assemblies do not wait on each other.
    let known = COUNTS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .by_encoding
        .get(&encoding)
        .and_then(|texts| texts.get(text).copied());
    if let Some(n) = known {
        return n;
    }
    let n = flame_tokens::count(encoding, text);
    let mut counts = COUNTS.lock().unwrap_or_else(|p| p.into_inner());
    if counts.len >= CAPACITY {
        counts.by_encoding.clear();
        counts.len = 0;
    }
    if counts.by_encoding.entry(encoding).or_default().insert(text.to_owned(), n).is_none() {
        counts.len += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_counts_equal_fresh_ones() {
        let text = r#"<child id="f0000000000" status="planned"><title>Pagination</title></child>"#;
        let first = count(Encoding::O200kBase, text);
        assert_eq!(first, flame_tokens::count(Encoding::O200kBase, text));
        assert_eq!(count(Encoding::O200kBase, text), first);
        assert_eq!(
            count(Encoding::ClaudeEstimate, text),
            flame_tokens::count(Encoding::ClaudeEstimate, text)
        );
    }
}
