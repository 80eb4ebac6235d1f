//! Token counting for Flame.
//!
//! Counts use the tiktoken encoding that matches the model (`o200k_base` for current OpenAI
//! models, `cl100k_base` for older ones). Anthropic publishes no tokenizer, so Claude models get a
//! documented estimate: the `o200k_base` count plus a fifth, rounded up, which errs on the side
//! of sending less. Each encoding is built once, lazily, on first use (about 35 ms optimised,
//! from the compact tables of `tables.rs`) and then holds its tokens (4.5 MB for `o200k_base`) for
//! as long as the process runs; [`warm_up`] builds them ahead of time, for a benchmark that must
//! not time it. The counts are tiktoken-rs's own (`bpe.rs` counts with its pre-tokenizer and its
//! merge).
//!
//! tiktoken's pre-tokenizer regex overflows its stack on a long run of white space (1 MB of
//! spaces crashes the process) and its byte-pair merge is quadratic in the length of one word
//! (1 MB of "a" takes most of a second). So [`count`] never hands tiktoken a long run: text is
//! split into runs of white space and of other characters; runs up to [`MAX_ENCODED_RUN`] bytes
//! are encoded in batches, and longer runs — rare in real text, and nothing a model reads well
//! anyway — are estimated from their characters ([`estimate_run`]), as are runs holding
//! replacement or control characters (decoded binary data, which tiktoken encodes slowly).
//!
//! tiktoken-rs's own encodings are not used to count: their base64 tables would add 5.3 MB to every
//! binary, and each built `CoreBPE` holds about 45 MB. `build.rs` writes each encoding as a compact
//! table instead (every token past the 256 bytes is two lower-ranked tokens: 1.3 MB for both), and
//! `bpe.rs` counts with one buffer of tokens and an index, which the tests check token for token
//! against tiktoken-rs. `Encoding::for_model` picks the encoding from a model name; the app does
//! not warm up, so a window that counts nothing holds none. `count_message(encoding, message)` is
//! the one rule for what a message weighs (its text, its tool calls and its tool result as JSON,
//! each counted on its own), used by the facade for live messages and by every importer.

mod bpe;
mod message;
mod tables;

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use bpe::Bpe;
pub use message::count_message;

/// The longest run of white space or of other characters that tiktoken itself encodes.
pub const MAX_ENCODED_RUN: usize = 256;
/// How much text is handed to tiktoken at once; batches end between runs.
const BATCH_BYTES: usize = 16 * 1024;

/// A way of counting tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// GPT-4o, GPT-4.1, GPT-5, the o-series, and (as the closest public encoding) open models.
    O200kBase,
    /// GPT-4, GPT-3.5 and the first embedding models.
    Cl100kBase,
    /// Claude models: `o200k_base` × 1.2, rounded up (Anthropic's tokenizer is not public).
    ClaudeEstimate,
}

impl Encoding {
    /// The encoding for a model name as the providers spell it. Unknown names (local models
    /// served by Ollama, llama.cpp and the like) get `o200k_base`, the closest public encoding.
    pub fn for_model(model: &str) -> Encoding {
        let model = model.to_ascii_lowercase();
        let model = model.rsplit('/').next().unwrap_or(&model); // "openai/gpt-4o" on OpenRouter
        if model.starts_with("claude") {
            Encoding::ClaudeEstimate
        } else if (model.starts_with("gpt-4")
            && !model.starts_with("gpt-4o")
            && !model.starts_with("gpt-4.1"))
            || model.starts_with("gpt-3.5")
            || model.starts_with("text-embedding-ada")
            || model.starts_with("text-embedding-3")
        {
            Encoding::Cl100kBase
        } else {
            Encoding::O200kBase
        }
    }

    fn bpe(self) -> &'static Bpe {
        static O200K: LazyLock<Bpe> = LazyLock::new(tables::o200k_base);
        static CL100K: LazyLock<Bpe> = LazyLock::new(tables::cl100k_base);
        match self {
            Encoding::O200kBase | Encoding::ClaudeEstimate => &O200K,
            Encoding::Cl100kBase => &CL100K,
        }
    }
}

/// Builds the encodings now, so the first real count does not pay for it.
pub fn warm_up() {
    Encoding::O200kBase.bpe();
    Encoding::Cl100kBase.bpe();
}

/// The number of tokens `text` costs in `encoding`. Never panics and never stalls: see the
/// crate documentation for how long runs are handled.
pub fn count(encoding: Encoding, text: &str) -> u64 {
    let tokens = count_guarded(encoding.bpe(), text);
    match encoding {
        Encoding::ClaudeEstimate => (tokens * 6).div_ceil(5),
        _ => tokens,
    }
}

fn count_guarded(bpe: &Bpe, text: &str) -> u64 {
    let mut tokens = 0u64;
    let mut batch_start = 0;
    let mut batch_end = 0;
    for (start, end) in runs(text) {
        if end - start > MAX_ENCODED_RUN || looks_binary(&text[start..end]) {
            tokens += encode(bpe, &text[batch_start..batch_end]);
            tokens += estimate_run(&text[start..end]);
            batch_start = end;
            batch_end = end;
        } else {
            if end - batch_start > BATCH_BYTES {
                tokens += encode(bpe, &text[batch_start..batch_end]);
                batch_start = start;
            }
            batch_end = end;
        }
    }
    tokens + encode(bpe, &text[batch_start..batch_end])
}

fn encode(bpe: &Bpe, text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    // Runs are short, so the pre-tokenizer cannot overflow its stack here; should it give up or
    // panic anyway, the estimate stands in rather than the caller failing.
    std::panic::catch_unwind(|| bpe.count(text))
        .ok()
        .flatten()
        .unwrap_or_else(|| estimate_run(text))
}

/// Runs carrying replacement or control characters are decoded binary data, which tiktoken
/// encodes slowly (about 3 MB/s) and nobody needs counted exactly.
fn looks_binary(run: &str) -> bool {
    run.chars().any(|c| c == char::REPLACEMENT_CHARACTER || (c.is_control() && !c.is_whitespace()))
}

/// Maximal runs of white space and of other characters, as byte ranges.
fn runs(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, first) = chars.next()?;
        let space = first.is_whitespace();
        let mut end = start + first.len_utf8();
        while let Some(&(i, c)) = chars.peek() {
            if c.is_whitespace() != space {
                break;
            }
            end = i + c.len_utf8();
            chars.next();
        }
        Some((start, end))
    })
}

/// An estimate for one long run: white space at about eight characters a token (tiktoken
/// merges long stretches of spaces), ASCII at about four bytes a token, and one token for
/// every other character (CJK ideographs, emoji and the like are about one token each).
pub fn estimate_run(run: &str) -> u64 {
    let mut spaces = 0u64;
    let mut ascii = 0u64;
    let mut other = 0u64;
    for c in run.chars() {
        if c.is_whitespace() {
            spaces += 1;
        } else if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
    }
    spaces.div_ceil(8) + ascii.div_ceil(4) + other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_get_their_encodings() {
        assert_eq!(Encoding::for_model("gpt-4o-mini"), Encoding::O200kBase);
        assert_eq!(Encoding::for_model("gpt-4.1"), Encoding::O200kBase);
        assert_eq!(Encoding::for_model("gpt-5"), Encoding::O200kBase);
        assert_eq!(Encoding::for_model("o3-mini"), Encoding::O200kBase);
        assert_eq!(Encoding::for_model("gpt-4-turbo"), Encoding::Cl100kBase);
        assert_eq!(Encoding::for_model("gpt-3.5-turbo"), Encoding::Cl100kBase);
        assert_eq!(Encoding::for_model("claude-sonnet-4-5"), Encoding::ClaudeEstimate);
        assert_eq!(Encoding::for_model("openai/gpt-4o"), Encoding::O200kBase);
        assert_eq!(Encoding::for_model("llama3.1:8b"), Encoding::O200kBase);
    }

    #[test]
    fn ordinary_text_is_counted_exactly() {
        let text = "Flame gives an LLM agent a call stack instead of a chat log.";
        let exact = tiktoken_rs::o200k_base().unwrap().encode_ordinary(text).len() as u64;
        assert_eq!(count(Encoding::O200kBase, text), exact);
        assert!(count(Encoding::Cl100kBase, text) > 0);
        assert_eq!(count(Encoding::ClaudeEstimate, text), (exact * 6).div_ceil(5));
        assert_eq!(count(Encoding::O200kBase, ""), 0);
    }

    #[test]
    fn long_texts_in_batches_stay_close_to_the_exact_count() {
        let text = "The frame's results are handed to its parent and siblings. ".repeat(2000);
        let exact = tiktoken_rs::o200k_base().unwrap().encode_ordinary(&text).len() as f64;
        let counted = count(Encoding::O200kBase, &text) as f64;
        assert!((counted - exact).abs() / exact < 0.01, "{counted} vs {exact}");
    }

    #[test]
    fn pathological_text_neither_crashes_nor_counts_nothing() {
        let megabyte = 1 << 20;
        let spaces = " ".repeat(megabyte);
        let a = "a".repeat(megabyte);
        let cjk = "上下文窗口的令牌预算".repeat(megabyte / 30);
        let mut rng = fastrand::Rng::with_seed(5);
        let random: Vec<u8> = (0..megabyte).map(|_| rng.u8(..)).collect();
        let random = String::from_utf8_lossy(&random).into_owned();
        for (name, text) in [("spaces", &spaces), ("a", &a), ("cjk", &cjk), ("random", &random)] {
            let tokens = count(Encoding::O200kBase, text);
            assert!(tokens > 1000, "{name}: {tokens}");
            assert!(tokens < text.len() as u64, "{name}: {tokens}");
        }
    }

    #[test]
    fn runs_alternate_between_space_and_the_rest() {
        let text = "ab  c\n\nd";
        let runs: Vec<&str> = runs(text).map(|(s, e)| &text[s..e]).collect();
        assert_eq!(runs, ["ab", "  ", "c", "\n\n", "d"]);
    }
}
