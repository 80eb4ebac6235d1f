//! What counting in one encoding needs, and nothing more: its tokens, found by their bytes, and
//! its pre-tokenizer.
//!
//! tiktoken-rs's `CoreBPE` keeps each token in three heap allocations of its own (a map from
//! bytes to rank, its reverse, and a sorted list) and 128 copies of its regex: about 45 MB for
//! o200k_base, held for as long as the process runs. Counting needs only the lookup from bytes to
//! rank, and here the tokens are one buffer with an index: about 4.5 MB. A count is what
//! `CoreBPE::encode_ordinary(text).len()` is, by the same steps: the pre-tokenizer cuts the text
//! into pieces, a piece that is a token counts one, and any other piece counts the parts
//! tiktoken's byte-pair merge cuts it into ([`Bpe::merged_parts`]). `tables.rs` tests this
//! against tiktoken-rs, long pieces included.

use std::hash::Hasher;

use fancy_regex::Regex;
use rustc_hash::FxHasher;

/// A token's number in its encoding; the merge joins the lowest first.
pub(crate) type Rank = u32;

/// A slot of the index that holds no token.
const EMPTY: Rank = Rank::MAX;

/// One encoding's ordinary tokens and its pre-tokenizer.
pub(crate) struct Bpe {
    /// Every token's bytes, one after another in rank order.
    bytes: Box<[u8]>,
    /// Where each rank's token ends in `bytes`; it starts where the one before ends.
    ends: Box<[u32]>,
    /// The ranks, placed by the hash of their bytes (open addressing, probing the next slot); at
    /// least twice as many slots as tokens, so a probe for bytes that are no token, which the
    /// merge makes all the time, meets an empty slot within a step or two.
    slots: Box<[Rank]>,
    pieces: Regex,
}

impl Bpe {
    /// An encoding of the tokens `ends` cuts `bytes` into, rank by rank (no token twice), with
    /// the pre-tokenizer `pattern`, as tiktoken-rs spells it.
    pub(crate) fn new(bytes: Vec<u8>, ends: Vec<u32>, pattern: &str) -> Bpe {
        let pieces = Regex::new(pattern).expect("the patterns are tiktoken-rs's own");
        let slots = vec![EMPTY; (2 * ends.len()).next_power_of_two()].into_boxed_slice();
        let mut bpe =
            Bpe { bytes: bytes.into_boxed_slice(), ends: ends.into_boxed_slice(), slots, pieces };
        for rank in 0..bpe.ends.len() as Rank {
            let slot = bpe.slot(bpe.token(rank));
            debug_assert_eq!(bpe.slots[slot], EMPTY, "rank {rank}'s token is there twice");
            bpe.slots[slot] = rank;
        }
        bpe
    }

    /// How many ordinary tokens the encoding has.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The bytes of the token `rank`.
    pub(crate) fn token(&self, rank: Rank) -> &[u8] {
        let end = self.ends[rank as usize] as usize;
        let start = rank.checked_sub(1).map_or(0, |before| self.ends[before as usize] as usize);
        &self.bytes[start..end]
    }

    /// The rank of the token `bytes` are, if they are one.
    pub(crate) fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        let rank = self.slots[self.slot(bytes)];
        (rank != EMPTY).then_some(rank)
    }

    /// The slot that holds `bytes`' rank, or the empty slot where it would go.
    fn slot(&self, bytes: &[u8]) -> usize {
        let mut hasher = FxHasher::default();
        hasher.write(bytes);
        let mask = self.slots.len() - 1;
        let mut slot = hasher.finish() as usize & mask;
        loop {
            let rank = self.slots[slot];
            if rank == EMPTY || self.token(rank) == bytes {
                return slot;
            }
            slot = (slot + 1) & mask;
        }
    }

    /// The number of tokens `text` encodes to, or `None` when the pre-tokenizer gives up on it
    /// (fancy-regex's backtracking limit), where tiktoken-rs panics.
    pub(crate) fn count(&self, text: &str) -> Option<u64> {
        let mut tokens = 0;
        for piece in self.pieces.find_iter(text) {
            let piece = piece.ok()?.as_str().as_bytes();
            tokens += if self.rank(piece).is_some() { 1 } else { self.merged_parts(piece) };
        }
        Some(tokens)
    }

    /// How many tokens tiktoken's byte-pair merge makes of `piece`: while two neighbouring parts
    /// join into a token, join the pair whose token has the lowest rank (the leftmost of equals).
    /// This is tiktoken-rs's `_byte_pair_merge` (MIT), which `encode_ordinary` runs on pieces
    /// under 100 bytes and whose result its other merge, for longer pieces, is the same as.
    fn merged_parts(&self, piece: &[u8]) -> u64 {
        if piece.len() < 2 {
            return piece.len() as u64;
        }
        // (where a part starts, the rank of it joined with the next part)
        let mut parts: Vec<(usize, Rank)> = Vec::with_capacity(piece.len() + 1);
        let mut lowest: (Rank, usize) = (Rank::MAX, usize::MAX);
        for i in 0..piece.len() - 1 {
            let rank = self.rank(&piece[i..i + 2]).unwrap_or(Rank::MAX);
            if rank < lowest.0 {
                lowest = (rank, i);
            }
            parts.push((i, rank));
        }
        parts.push((piece.len() - 1, Rank::MAX));
        parts.push((piece.len(), Rank::MAX));
        // The rank of part `i` joined with the part after next, read before the next is removed.
        let joined = |parts: &[(usize, Rank)], i: usize| {
            if i + 3 < parts.len() {
                self.rank(&piece[parts[i].0..parts[i + 3].0]).unwrap_or(Rank::MAX)
            } else {
                Rank::MAX
            }
        };
        while lowest.0 != Rank::MAX {
            let i = lowest.1;
            if i > 0 {
                parts[i - 1].1 = joined(&parts, i - 1);
            }
            parts[i].1 = joined(&parts, i);
            parts.remove(i + 1);
            lowest = (Rank::MAX, usize::MAX);
            for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
                if rank < lowest.0 {
                    lowest = (rank, i);
                }
            }
        }
        parts.len() as u64 - 1
    }
}
