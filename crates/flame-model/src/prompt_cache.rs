//! Providers' prompt caches as pure code: what each request of a sequence reads from a
//! provider's cache, writes to it and sends uncached, under that provider's rules. `flame replay`
//! runs Flame's requests for a recorded session through it to price them as the provider would
//! have, without sending them.
//!
//! A request is a list of [`Block`]s — the tools and system prompt, then each message — each
//! with a hash of its bytes and its tokens. The cache keys a prefix by the chain of its blocks'
//! hashes, so two requests share an entry only when everything up to it is byte for byte the
//! same. Time comes in with each request, since entries expire. What other sessions of the same
//! agent left in the cache (the agent's fixed prompt, when it starts every session with the same
//! bytes) is granted with [`PromptCache::hold`].
//!
//! The rules ([`CacheRules`]):
//!
//! - **Anthropic** caches on request. A block marked with `cache_control` (at most four) writes
//!   an entry for the prefix ending there, for five minutes or an hour, renewed each time it is
//!   read. A request reads the longest prefix that an unexpired entry holds, found at a mark or
//!   at one of the 20 block boundaries before it (its lookback); what follows up to its last
//!   mark is written — up to its last hour mark at the hour's price, the rest at five minutes' —
//!   and the rest is uncached input. A prefix shorter than the model's minimum (1,024 tokens for
//!   Sonnet) is not cached.
//! - **Automatic** (OpenAI): every prompt of at least 1,024 tokens is cached on its own, and a
//!   request reads the longest cached prefix, rounded down to 1,024 tokens plus a whole number of
//!   128-token steps; entries last about five minutes from their last use. Writes cost nothing
//!   more than input.
//! - **Floor**: the least any cache could charge for the same requests — every prefix sent
//!   before is read, whenever it was sent, and each block is written once, the first time its
//!   prefix is sent.

use std::collections::HashMap;

use crate::{CacheLifetime, ChatMessage, Timestamp, Usage};

/// A provider's cache rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheRules {
    Anthropic {
        /// The shortest prefix cached, in tokens.
        min_tokens: u64,
    },
    Automatic {
        min_tokens: u64,
        /// Cached prefixes are this many tokens longer than `min_tokens`, or a multiple of it.
        step: u64,
        /// How long an entry lasts after its last use.
        lifetime_ms: i64,
    },
    Floor,
}

/// How many block boundaries before a mark Anthropic looks for an entry.
pub const ANTHROPIC_LOOKBACK_BLOCKS: usize = 20;

impl CacheRules {
    /// Anthropic's, for Sonnet and models with its minimum.
    pub const ANTHROPIC: CacheRules = CacheRules::Anthropic { min_tokens: 1_024 };
    /// OpenAI's automatic prompt caching.
    pub const OPENAI: CacheRules =
        CacheRules::Automatic { min_tokens: 1_024, step: 128, lifetime_ms: 5 * 60 * 1000 };
}

/// One block of a request as the cache sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// A hash of the block's bytes ([`text_hash`], [`message_hash`]).
    pub hash: u64,
    pub tokens: u64,
    /// The block carries a cache mark (Anthropic's `cache_control`) for this lifetime.
    pub mark: Option<CacheLifetime>,
}

/// What one request did with the cache, in tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheUse {
    pub read: u64,
    /// Written for five minutes (Anthropic) or written once (the floor).
    pub written: u64,
    /// Written for an hour.
    pub written_long: u64,
    /// Sent without the cache.
    pub uncached: u64,
}

impl CacheUse {
    /// The usage a provider would report for the request's input.
    pub fn usage(&self) -> Usage {
        Usage {
            cache_read_tokens: self.read,
            cache_write_long_tokens: self.written_long,
            cache_write_tokens: self.written,
            input_tokens: self.uncached,
            output_tokens: 0,
        }
    }

    pub fn add(&mut self, more: &CacheUse) {
        self.read = self.read.saturating_add(more.read);
        self.written = self.written.saturating_add(more.written);
        self.written_long = self.written_long.saturating_add(more.written_long);
        self.uncached = self.uncached.saturating_add(more.uncached);
    }

    /// Every token the requests sent.
    pub fn total(&self) -> u64 {
        self.usage().prompt_tokens()
    }
}

/// A provider's cache over a sequence of requests.
#[derive(Debug, Clone)]
pub struct PromptCache {
    rules: CacheRules,
    /// Prefixes held, by the hash of their blocks' chain: when each expires (the floor's never
    /// do).
    entries: HashMap<u64, Timestamp>,
}

impl PromptCache {
    pub fn new(rules: CacheRules) -> PromptCache {
        PromptCache { rules, entries: HashMap::new() }
    }

    /// Takes the prefix made of `blocks` as held at `at` by requests this sequence did not send:
    /// other sessions of the same agent, which start with the same bytes. The next request that
    /// starts with them reads them (and so renews the entry), under the rules' minimum; the
    /// floor holds them for good. A replay grants this where the recorded session read them.
    pub fn hold(&mut self, at: Timestamp, blocks: &[Block]) {
        let (prefixes, through) = chains(blocks);
        let (Some(&prefix), Some(&tokens)) = (prefixes.last(), through.last()) else { return };
        let until = match self.rules {
            CacheRules::Floor => Timestamp::MAX,
            CacheRules::Anthropic { min_tokens } | CacheRules::Automatic { min_tokens, .. } => {
                if tokens < min_tokens {
                    return;
                }
                at
            }
        };
        let expires = self.entries.entry(prefix).or_insert(Timestamp::MIN);
        *expires = (*expires).max(until);
    }

    /// Sends a request of `blocks` at `at`: what it reads, writes and sends uncached, and the
    /// entries it leaves.
    pub fn send(&mut self, at: Timestamp, blocks: &[Block]) -> CacheUse {
        let (prefixes, through) = chains(blocks);
        let total = through.last().copied().unwrap_or(0);
        let live = |entries: &HashMap<u64, Timestamp>, prefix: &u64| {
            entries.get(prefix).is_some_and(|&expires| expires >= at)
        };
        match self.rules {
            CacheRules::Floor => {
                let mut used = CacheUse::default();
                for (i, block) in blocks.iter().enumerate() {
                    // Counts come from transcripts, which may state anything: sums saturate.
                    if self.entries.insert(prefixes[i], Timestamp::MAX).is_some() {
                        used.read = used.read.saturating_add(block.tokens);
                    } else {
                        used.written = used.written.saturating_add(block.tokens);
                    }
                }
                used
            }
            CacheRules::Automatic { min_tokens, step, lifetime_ms } => {
                if total < min_tokens {
                    return CacheUse { uncached: total, ..CacheUse::default() };
                }
                let matched = (0..blocks.len())
                    .rev()
                    .find(|&i| live(&self.entries, &prefixes[i]))
                    .map_or(0, |i| through[i]);
                let read = if matched >= min_tokens {
                    min_tokens + (matched - min_tokens) / step * step
                } else {
                    0
                };
                for i in 0..blocks.len() {
                    if through[i] >= min_tokens {
                        self.entries.insert(prefixes[i], at.saturating_add(lifetime_ms));
                    }
                }
                CacheUse { read, uncached: total.saturating_sub(read), ..CacheUse::default() }
            }
            CacheRules::Anthropic { min_tokens } => {
                let marks: Vec<usize> =
                    (0..blocks.len()).filter(|&i| blocks[i].mark.is_some()).collect();
                // The longest prefix an entry holds, at a mark or within its lookback.
                let hit = marks
                    .iter()
                    .filter_map(|&m| {
                        (m.saturating_sub(ANTHROPIC_LOOKBACK_BLOCKS)..=m)
                            .rev()
                            .find(|&j| live(&self.entries, &prefixes[j]))
                    })
                    .max();
                let read = hit.map_or(0, |j| through[j]);
                if let Some(j) = hit {
                    // Reading an entry renews it for its lifetime; which one it was written
                    // with is not kept, so it is renewed for the longer the request asks.
                    let lifetime = marks.iter().filter_map(|&m| blocks[m].mark).max();
                    let renewed = at.saturating_add(lifetime.map_or(0, CacheLifetime::millis));
                    let expires = self.entries.get_mut(&prefixes[j]).expect("the hit is held");
                    *expires = (*expires).max(renewed);
                }
                let cached: Vec<usize> =
                    marks.iter().copied().filter(|&m| through[m] >= min_tokens).collect();
                let last = cached.last().copied().filter(|&m| through[m] > read);
                let (mut written, mut written_long) = (0, 0);
                if let Some(last) = last {
                    let long_end = cached
                        .iter()
                        .copied()
                        .filter(|&m| blocks[m].mark == Some(CacheLifetime::Long))
                        .map(|m| through[m])
                        .filter(|&t| t > read)
                        .max();
                    let short_from = long_end.unwrap_or(read).max(read);
                    written_long = long_end.map_or(0, |t| t - read);
                    written = through[last].saturating_sub(short_from);
                }
                for &m in &cached {
                    let lifetime = blocks[m].mark.map_or(0, CacheLifetime::millis);
                    let expires = self.entries.entry(prefixes[m]).or_insert(Timestamp::MIN);
                    *expires = (*expires).max(at.saturating_add(lifetime));
                }
                let uncached =
                    total.saturating_sub(read).saturating_sub(written).saturating_sub(written_long);
                CacheUse { read, written, written_long, uncached }
            }
        }
    }
}

/// The hash of each prefix of `blocks` (its blocks' chain) and the tokens through it.
fn chains(blocks: &[Block]) -> (Vec<u64>, Vec<u64>) {
    let mut prefixes = Vec::with_capacity(blocks.len());
    let mut through = Vec::with_capacity(blocks.len());
    let (mut chain, mut tokens) = (0xcbf2_9ce4_8422_2325_u64, 0u64);
    for block in blocks {
        chain = mix(chain, block.hash);
        tokens = tokens.saturating_add(block.tokens);
        prefixes.push(chain);
        through.push(tokens);
    }
    (prefixes, through)
}

/// A block's chain of hashes, one block further: order matters, so a block moved is a prefix
/// changed.
fn mix(chain: u64, block: u64) -> u64 {
    let mut x = chain ^ block.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// FNV-1a of `text`, tagged with `kind` so that equal texts in different roles differ.
pub fn text_hash(kind: &str, text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in kind.as_bytes().iter().chain([0u8].iter()).chain(text.as_bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The hash of a message's bytes as a request sends it.
pub fn message_hash(message: &ChatMessage) -> u64 {
    match message {
        ChatMessage::User(text) => text_hash("user", text),
        ChatMessage::Assistant { text, tool_calls } => {
            let mut hash = text_hash("assistant", text);
            for call in tool_calls {
                hash = mix(hash, text_hash(&call.name, &format!("{}{}", call.id, call.arguments)));
            }
            hash
        }
        ChatMessage::ToolResult { call_id, content, is_error } => {
            mix(text_hash(call_id, content), u64::from(*is_error))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Timestamp = 60_000;

    fn block(name: &str, tokens: u64, mark: Option<CacheLifetime>) -> Block {
        Block { hash: text_hash("user", name), tokens, mark }
    }

    /// A conversation of `n` messages of 1,000 tokens after a 5,000-token system prompt, the
    /// system and the newest message marked as Flame marks them.
    fn conversation(n: usize) -> Vec<Block> {
        let mut blocks = vec![block("system", 5_000, Some(CacheLifetime::Long))];
        for i in 0..n {
            let mark = (i + 1 == n).then_some(CacheLifetime::Short);
            blocks.push(block(&format!("message {i}"), 1_000, mark));
        }
        blocks
    }

    #[test]
    fn anthropic_reads_the_previous_request_and_writes_what_was_appended() {
        let mut cache = PromptCache::new(CacheRules::ANTHROPIC);
        let first = cache.send(0, &conversation(3));
        assert_eq!(first, CacheUse { read: 0, written: 3_000, written_long: 5_000, uncached: 0 });
        let second = cache.send(MINUTE, &conversation(4));
        assert_eq!(second, CacheUse { read: 8_000, written: 1_000, written_long: 0, uncached: 0 });
    }

    #[test]
    fn anthropic_entries_expire_unless_read_and_the_hours_outlive_the_minutes() {
        let mut cache = PromptCache::new(CacheRules::ANTHROPIC);
        cache.send(0, &conversation(3));
        // Six minutes later the conversation's five-minute entry is gone; the system prompt's
        // hour is not.
        let later = cache.send(6 * MINUTE, &conversation(4));
        assert_eq!((later.read, later.written), (5_000, 4_000));
        // Reading renews: one read every four minutes keeps a five-minute entry.
        let mut cache = PromptCache::new(CacheRules::ANTHROPIC);
        for (k, n) in (3..8).enumerate() {
            let used = cache.send(k as i64 * 4 * MINUTE, &conversation(n));
            if k > 0 {
                assert_eq!(used.written, 1_000, "call {k}");
            }
        }
    }

    #[test]
    fn anthropic_looks_back_twenty_blocks_from_a_mark_and_no_further() {
        let mut cache = PromptCache::new(CacheRules::ANTHROPIC);
        cache.send(0, &conversation(2));
        // 20 blocks appended: the previous end is within the lookback of the newest mark.
        let near = cache.send(MINUTE, &conversation(22));
        assert_eq!(near.read, 7_000);
        let mut cache = PromptCache::new(CacheRules::ANTHROPIC);
        cache.send(0, &conversation(2));
        // 21 appended: out of reach, so only the system prompt is read.
        let far = cache.send(MINUTE, &conversation(23));
        assert_eq!(far.read, 5_000);
    }

    #[test]
    fn anthropic_caches_nothing_shorter_than_its_minimum_and_nothing_after_the_last_mark() {
        let mut cache = PromptCache::new(CacheRules::ANTHROPIC);
        let short = [block("system", 500, Some(CacheLifetime::Long)), block("hi", 10, None)];
        assert_eq!(cache.send(0, &short), CacheUse { uncached: 510, ..CacheUse::default() });
        let mut unmarked = conversation(2);
        unmarked.push(block("tail", 300, None));
        let used = cache.send(0, &unmarked);
        assert_eq!(used.uncached, 300);
    }

    #[test]
    fn openai_reads_whole_steps_of_the_longest_prefix_it_saw() {
        let mut cache = PromptCache::new(CacheRules::OPENAI);
        let blocks: Vec<Block> = (0..4).map(|i| block(&format!("part {i}"), 1_000, None)).collect();
        assert_eq!(cache.send(0, &blocks[..1]).read, 0, "nothing was cached before");
        let used = cache.send(MINUTE, &blocks);
        // 1,000 tokens were seen, short of the minimum: nothing is read.
        assert_eq!(used.read, 0);
        let again = cache.send(2 * MINUTE, &blocks);
        assert_eq!(
            again,
            CacheUse { read: 1_024 + 23 * 128, uncached: 4_000 - 3_968, ..CacheUse::default() }
        );
        assert_eq!(cache.send(20 * MINUTE, &blocks).read, 0, "expired");
    }

    #[test]
    fn a_prefix_held_by_other_sessions_is_read_by_a_request_that_starts_with_it() {
        let shared = block("tools and system", 5_000, None);
        let mut request = vec![shared];
        request.extend(conversation(2).into_iter().skip(1));
        request[1].mark = Some(CacheLifetime::Long);
        for rules in [CacheRules::ANTHROPIC, CacheRules::OPENAI, CacheRules::Floor] {
            let mut cache = PromptCache::new(rules);
            cache.hold(MINUTE, &request[..1]);
            let used = cache.send(MINUTE, &request);
            assert!(used.read >= 4_096, "{rules:?}: {used:?}");
            assert_eq!(used.total(), 7_000, "{rules:?}");
            // Another start is not held: it is written (or sent) whole.
            let mut other = request.clone();
            other[0] = block("another agent's prompt", 5_000, None);
            assert_eq!(PromptCache::new(rules).send(MINUTE, &other).read, 0, "{rules:?}");
        }
        // Held at a moment, not for ever: what was not read by then is gone.
        let mut cache = PromptCache::new(CacheRules::ANTHROPIC);
        cache.hold(MINUTE, &request[..1]);
        assert_eq!(cache.send(2 * MINUTE, &request).read, 0);
        // Shorter than the minimum, nothing is held.
        let mut cache = PromptCache::new(CacheRules::ANTHROPIC);
        let small = [block("small", 500, None), block("rest", 1_000, Some(CacheLifetime::Long))];
        cache.hold(0, &small[..1]);
        assert_eq!(cache.send(0, &small).read, 0);
    }

    #[test]
    fn the_floor_writes_each_prefix_once_and_reads_it_ever_after() {
        let mut cache = PromptCache::new(CacheRules::Floor);
        assert_eq!(cache.send(0, &conversation(2)).written, 7_000);
        let later = cache.send(1_000 * MINUTE, &conversation(3));
        assert_eq!((later.read, later.written), (7_000, 1_000));
        // A block changed rewrites everything after it.
        let mut changed = conversation(3);
        changed[1] = block("edited", 1_000, None);
        let used = cache.send(1_001 * MINUTE, &changed);
        assert_eq!((used.read, used.written), (5_000, 3_000));
    }
}
