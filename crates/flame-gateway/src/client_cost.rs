//! What the client's own request would have cost: each request of a session run through the
//! provider's prompt cache as pure code (`flame_model::prompt_cache`, the model `flame replay`
//! prices with), so that what the upstream billed for what the gateway sent stands beside what
//! the client alone would have paid under the same rules.
//!
//! A request is its fixed part as one block, then one block per item of its conversation, each
//! weighing the tokens of the messages it made (as the thread counted them) or, for an item that
//! made none (a reasoning item, an image), a quarter of its bytes. An Anthropic item marked with
//! `cache_control` is a breakpoint for the lifetime it asks (`"ttl": "1h"`, else five minutes);
//! the fixed part is one when its system prompt or tools are marked. OpenAI's cache needs no
//! marks.

use std::collections::HashMap;

use flame_context::MESSAGE_OVERHEAD;
use flame_import::wire::{WireFormat, WireThread};
use flame_model::prompt_cache::{Block, CacheRules, PromptCache};
use flame_model::{CacheLifetime, Timestamp, Usage};

use crate::request::{Item, Request};

/// The most fixed parts whose token counts are kept: a session has a handful (its main
/// thread's, its subagents').
const MAX_FIXED_COUNTS: usize = 64;

/// One session's cache, as the client's own requests would have used it.
#[derive(Debug)]
pub(crate) struct ClientCache {
    wire: WireFormat,
    cache: PromptCache,
    fixed_tokens: HashMap<u64, u64>,
}

/// The lifetime a block's bytes ask the cache to keep it for, if they mark it.
fn mark(wire: WireFormat, bytes: &str) -> Option<CacheLifetime> {
    if wire != WireFormat::Anthropic || !bytes.contains("\"cache_control\"") {
        return None;
    }
    Some(if bytes.contains("\"1h\"") { CacheLifetime::Long } else { CacheLifetime::Short })
}

/// [`mark`] of an item, whose bytes were looked through for a mark as they were read.
fn item_mark(wire: WireFormat, item: &Item<'_>) -> Option<CacheLifetime> {
    if item.marked { mark(wire, item.raw.get()) } else { None }
}

impl ClientCache {
    pub fn new(wire: WireFormat) -> ClientCache {
        let rules = match wire {
            WireFormat::Anthropic => CacheRules::ANTHROPIC,
            WireFormat::Responses | WireFormat::Chat => CacheRules::OPENAI,
        };
        ClientCache { wire, cache: PromptCache::new(rules), fixed_tokens: HashMap::new() }
    }

    /// The tokens of the request's fixed part, counted once per fixed part.
    pub fn fixed_tokens(&mut self, request: &Request<'_>) -> u64 {
        self.fixed_block(request).tokens
    }

    fn fixed_block(&mut self, request: &Request<'_>) -> Block {
        if self.fixed_tokens.len() >= MAX_FIXED_COUNTS {
            self.fixed_tokens.clear();
        }
        let encoding = self.wire.encoding();
        let tokens = *self
            .fixed_tokens
            .entry(request.fixed_hash)
            .or_insert_with(|| flame_tokens::count(encoding, &request.fixed_text));
        Block { hash: request.fixed_hash, tokens, mark: mark(self.wire, &request.fixed_text) }
    }

    /// Sends `request`, whose conversation `thread` has just read, through the cache at `at`:
    /// the input usage the client's own request would have had.
    pub fn send(&mut self, request: &Request<'_>, thread: &WireThread, at: Timestamp) -> Usage {
        let mut blocks = vec![self.fixed_block(request)];
        let messages = thread.messages();
        for (i, item) in request.conversation().iter().enumerate() {
            let made = thread.made(i);
            let tokens = if made.is_empty() {
                item.raw.get().len() as u64 / 4
            } else {
                made.iter().map(|m| messages.get(m.message).map_or(0, |m| m.tokens)).sum::<u64>()
                    + MESSAGE_OVERHEAD
            };
            blocks.push(Block { hash: item.hash, tokens, mark: item_mark(self.wire, item) });
        }
        self.cache.send(at, &blocks).usage()
    }

    /// A side call, which no thread reads: its items weigh a quarter of their bytes.
    pub fn send_side(&mut self, request: &Request<'_>, at: Timestamp) -> Usage {
        let mut blocks = vec![self.fixed_block(request)];
        blocks.extend(request.conversation().iter().map(|item| Block {
            hash: item.hash,
            tokens: item.raw.get().len() as u64 / 4,
            mark: item_mark(self.wire, item),
        }));
        self.cache.send(at, &blocks).usage()
    }
}
