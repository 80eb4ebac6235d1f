//! The encodings, built from the compact tables `build.rs` writes (its documentation describes
//! them) rather than by tiktoken-rs's `o200k_base()` and `cl100k_base()`: those parse base64 text
//! that would be linked into every program counting tokens (5.3 MB), where the tables are 1.3 MB.
//! Each encoding counts as tiktoken-rs's does — the same tokens under the same ranks, the same
//! pre-tokenizer — which the tests below check against tiktoken-rs itself.

use crate::bpe::Bpe;

static O200K_TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.tokens"));
static CL100K_TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.tokens"));

/// cl100k_base's pre-tokenizer, as tiktoken-rs's `cl100k_base()` has it (it exports
/// o200k_base's pattern but not this one).
const CL100K_PATTERN: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

/// GPT-4o's and later models' encoding.
pub(crate) fn o200k_base() -> Bpe {
    let (bytes, ends) = tokens(O200K_TABLE);
    Bpe::new(bytes, ends, tiktoken_rs::O200K_BASE_PAT_STR)
}

/// GPT-4's and GPT-3.5's encoding.
pub(crate) fn cl100k_base() -> Bpe {
    let (bytes, ends) = tokens(CL100K_TABLE);
    Bpe::new(bytes, ends, CL100K_PATTERN)
}

/// The tokens a table holds, in rank order: their bytes one after another, and where each ends.
fn tokens(table: &[u8]) -> (Vec<u8>, Vec<u32>) {
    let (count, rest) = table.split_at(4);
    let count = u32::from_le_bytes(count.try_into().expect("four bytes")) as usize;
    let (&width, rest) = rest.split_first().expect("the table has a rank width");
    let (single, pairs) = rest.split_at(256);
    let mut bytes = single.to_vec();
    let mut ends: Vec<u32> = Vec::with_capacity(count);
    ends.extend(1..=256);
    let mut pairs = Ranks { rest: pairs, buffer: 0, held: 0, width: u32::from(width) };
    let span = |ends: &[u32], rank: usize| {
        let start = if rank == 0 { 0 } else { ends[rank - 1] as usize };
        start..ends[rank] as usize
    };
    while ends.len() < count {
        let (first, second) = pairs.next().zip(pairs.next()).expect("the table holds every pair");
        bytes.extend_from_within(span(&ends, first));
        bytes.extend_from_within(span(&ends, second));
        ends.push(bytes.len() as u32);
    }
    (bytes, ends)
}

/// The ranks a table's pairs are made of: numbers `width` bits wide, packed lowest bits first.
struct Ranks<'a> {
    rest: &'a [u8],
    buffer: u64,
    held: u32,
    width: u32,
}

impl Iterator for Ranks<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.held < self.width {
            let (&byte, rest) = self.rest.split_first()?;
            self.buffer |= u64::from(byte) << self.held;
            self.held += 8;
            self.rest = rest;
        }
        let rank = self.buffer & ((1 << self.width) - 1);
        self.buffer >>= self.width;
        self.held -= self.width;
        Some(rank as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Same tokens under the same ranks (and no token where tiktoken-rs has none), and the
    /// same counts of text that exercises the pre-tokenizer and the merges.
    fn assert_same(ours: &Bpe, theirs: &tiktoken_rs::CoreBPE) {
        for rank in 0..ours.len() as u32 {
            let token = ours.token(rank);
            assert_eq!(theirs.decode_bytes(&[rank]).ok().as_deref(), Some(token), "rank {rank}");
            assert_eq!(ours.rank(token), Some(rank), "rank {rank} is found by its bytes");
        }
        let past = ours.len() as u32;
        assert!(theirs.decode_bytes(&[past]).is_err(), "tiktoken-rs has a token at {past}");
        let mut rng = fastrand::Rng::with_seed(19);
        let random: String = (0..2000).map(|_| rng.char(..)).collect();
        // Pieces of 100 bytes and more, which tiktoken-rs merges with its other algorithm.
        let word: String = (0..1000).map(|_| rng.lowercase()).collect();
        let (long, longer) = (&word[..150], &word[..300]);
        let ideographs = "上下文窗口的令牌预算".repeat(20);
        let texts = [
            "Flame gives an LLM agent a call stack instead of a chat log.",
            "fn main() {\n    println!(\"{}\", 1_000_000);\n}\r\n\r\n  trailing   \n",
            "I'll say they've GOT 12345 things: café, naïve, 上下文窗口, emoji 🔥🔥, <|endoftext|>",
            "WORDS'RE CAPS'LL, Mixed'Ve case'S; 3.14159 /path/to/file.rs\t\ttabs",
            "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
            &random,
            long,
            longer,
            &word,
            &ideographs,
        ];
        for text in texts {
            assert_eq!(ours.count(text), Some(theirs.encode_ordinary(text).len() as u64), "{text}");
        }
    }

    #[test]
    fn o200k_base_is_tiktoken_rs_own() {
        assert_same(&o200k_base(), &tiktoken_rs::o200k_base().unwrap());
    }

    #[test]
    fn cl100k_base_is_tiktoken_rs_own() {
        assert_same(&cl100k_base(), &tiktoken_rs::cl100k_base().unwrap());
    }

    #[test]
    fn a_table_holds_its_pairs_and_nothing_more() {
        for table in [O200K_TABLE, CL100K_TABLE] {
            let count = u32::from_le_bytes(table[..4].try_into().unwrap()) as usize;
            let width = usize::from(table[4]);
            assert!(count <= 1 << width && count > 1 << (width - 1), "{count} in {width} bits");
            let pair_bits = (count - 256) * 2 * width;
            assert_eq!(table.len(), 4 + 1 + 256 + pair_bits.div_ceil(8));
        }
    }
}
