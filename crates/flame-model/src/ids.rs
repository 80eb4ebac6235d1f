//! Tree, frame and message ids.
//!
//! Tree and frame ids are short random strings (`t` or `f` and ten Crockford base-32 digits),
//! shown in full everywhere and accepted back verbatim. The randomness comes from an
//! [`IdSource`] the caller seeds, so tests are deterministic.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Crockford's base-32 alphabet in lower case: no i, l, o or u, so ids read aloud unambiguously.
const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
/// Digits after the prefix: 50 bits, so collisions are rare; the store still refuses duplicates.
const DIGITS: usize = 10;

macro_rules! string_id {
    ($name:ident, $prefix:literal, $what:literal) => {
        #[doc = concat!("The id of a ", $what, ", such as `", $prefix, "7k2m9q4x1z`.")]
        #[derive(
            Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, specta::Type,
        )]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The prefix every id of this kind starts with.
            pub const PREFIX: char = $prefix;

            /// Takes an id as a person or program wrote it. Surrounding white space is ignored;
            /// anything else that is not exactly an id of this kind is refused.
            pub fn parse(text: &str) -> Result<$name, crate::FrameError> {
                let text = text.trim();
                let valid = text.len() == DIGITS + 1
                    && text.starts_with($prefix)
                    && text[1..].bytes().all(|b| ALPHABET.contains(&b));
                if valid {
                    Ok($name(text.to_owned()))
                } else {
                    Err(crate::FrameError::Invalid(format!(
                        "{:?} is not a {} id (ids look like {}7k2m9q4x1z)",
                        text, $what, $prefix
                    )))
                }
            }

            /// Wraps a string already known to be an id, such as one read back from the store.
            pub fn from_trusted(text: String) -> $name {
                $name(text)
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

string_id!(TreeId, 't', "tree");
string_id!(FrameId, 'f', "frame");

/// A message's id: its row number in the store, increasing in the order messages were added.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, specta::Type,
)]
#[serde(transparent)]
pub struct MessageId(pub i64);

impl fmt::Display for MessageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Where new ids come from: a small deterministic generator (SplitMix64) that the caller seeds,
/// from the operating system's randomness in the app and from a constant in tests.
#[derive(Debug, Clone)]
pub struct IdSource {
    state: u64,
}

impl IdSource {
    pub fn seeded(seed: u64) -> IdSource {
        IdSource { state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn digits(&mut self, prefix: char) -> String {
        let mut bits = self.next_u64();
        let mut id = String::with_capacity(DIGITS + 1);
        id.push(prefix);
        for _ in 0..DIGITS {
            id.push(ALPHABET[(bits & 31) as usize] as char);
            bits >>= 5;
        }
        id
    }

    pub fn tree_id(&mut self) -> TreeId {
        TreeId(self.digits(TreeId::PREFIX))
    }

    pub fn frame_id(&mut self) -> FrameId {
        FrameId(self.digits(FrameId::PREFIX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_parse_back_verbatim() {
        let mut ids = IdSource::seeded(7);
        for _ in 0..1000 {
            let frame = ids.frame_id();
            assert_eq!(FrameId::parse(frame.as_str()).unwrap(), frame);
            let tree = ids.tree_id();
            assert_eq!(TreeId::parse(tree.as_str()).unwrap(), tree);
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_ids() {
        let a: Vec<_> = (0..5)
            .map({
                let mut ids = IdSource::seeded(42);
                move |_| ids.frame_id()
            })
            .collect();
        let b: Vec<_> = (0..5)
            .map({
                let mut ids = IdSource::seeded(42);
                move |_| ids.frame_id()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a[0], a[1]);
    }

    #[test]
    fn parse_refuses_what_is_not_an_id() {
        for bad in
            ["", "f", "t7k2m9q4x1z", "f7k2m9q4x1", "f7k2m9q4x1zz", "F7K2M9Q4X1Z", "f7k2m9q4x1i"]
        {
            assert!(FrameId::parse(bad).is_err(), "{bad:?} was accepted");
        }
        assert!(FrameId::parse("  f7k2m9q4x1z\n").is_ok());
    }
}
