//! What Flame would have sent, call by call, for a session another tool recorded.
//!
//! For every model call in the transcript, the *linear* figure is what the agent actually sent:
//! the recorded input tokens including cache reads and cache writes. The *Flame* figure is the
//! context `flame_context::assemble` builds for the frame the call belongs to, from the tree as
//! it stood at that moment — frames not yet created are absent, frames not yet finished are
//! in progress with no results — with the frame's own messages up to the call, plus the
//! thread's *fixed overhead*: the tool's system prompt and tool definitions, which the
//! transcript does not contain. The overhead is estimated per thread (the main thread, each
//! subagent) as the first call's recorded input minus the counted messages before it, and is
//! added to Flame's side in full, although Flame's own preamble is already counted there: the
//! comparison leans against Flame, not for it.
//!
//! The budget is set so large that nothing is left out: the figures compare contexts that carry
//! everything Flame would show, not contexts trimmed to fit. Compaction calls (a model call that
//! summarises the conversation) are listed apart and left out of the totals: their recorded
//! input is the whole conversation, which Flame would not send to anything.
//!
//! Each frame's file trail is the one the draft carries (`files.rs`), as it stood at the call,
//! gathered over the frame's subtree as the live context gathers it: a frame's touches count
//! when the tool call that made them came before the call (in the call's own frame, an earlier
//! message; in any other, a message recorded no later). A finished frame lists its subtree's,
//! and each frame on the path above the call's its own (a subagent's parent segment, what it
//! touched before the subagent started), as the live context does.
//!
//! *First-touch recall* asks whether the trail does its job. For each call, the files its tool
//! calls touched for the first time in its frame, and that another frame touched before, are
//! the *returning* paths; one is *recalled* when what Flame assembles at that call names it —
//! the `<stack-context>` document with its `<log>` lines left out (every log is named, so they
//! would prove nothing), or the frame's own messages, their text and tool-call arguments. A
//! path is named where it appears whole: not preceded by a letter, digit, `.`, `-` or `_`, nor
//! followed by a letter, digit, `-`, `_` or `/`; a path relative to the session's folder may
//! thus be found within the absolute path the transcript wrote.
//!
//! *Dollars.* Flame's requests are made as the live agent makes them
//! (`flame_context::next_call`): each frame's opening is kept, and notes and batches of masking
//! are appended as the calls go, with the recorded calls' times deciding when a frame's cache
//! has gone cold. Each request is put in the shape Flame sends (`flame_context::request`) —
//! the thread's fixed prompt and Flame's preamble, then the opening and the messages, with
//! Flame's cache marks — and run through the provider's prompt cache
//! (`flame_model::prompt_cache`) at the recorded call's time, so entries expire as they would
//! have. The fixed prompt starts every session of the agent with the same bytes, so the
//! recorded session's first call read part of it from what earlier sessions had cached; Flame's
//! request starts with the same bytes and is granted the same: the part of the fixed prompt a
//! thread's first call read is its *shared* part, held in the cache (`PromptCache::hold`) at
//! every call whose recorded read covers it, and the rest is written like any other part.
//! Both sides are priced at one reference model's list prices (input only: both sides
//! write the same answers): the linear session at the usage it recorded (its own cache reads
//! and writes), Flame's at the simulated cache's. The *floor* is Flame's requests through a
//! cache that never forgets and marks every block: each block written once, the first time its
//! prefix is sent, and read ever after. The part Flame controls is everything but the thread's
//! fixed prompt, which both sides are taken to read from the cache at every call.

use std::collections::{HashMap, HashSet};

use flame_context::CachePolicy;
use flame_model::cost::{Price, PriceTable, cost_picodollars, round_to_micro_usd};
use flame_model::prompt_cache::{self, Block, CacheRules, CacheUse, PromptCache};
use flame_model::{CacheLifetime, Usage};
use flame_tokens::Encoding;
use serde::Serialize;

use crate::draft::{Draft, DraftFile, FrameKind, ModelCall};
use crate::replayer::{CallSite, Replayer};

/// Whose prompt cache and list prices a replay prices both sides under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplayProvider {
    /// Anthropic's cache (marks, lifetimes, lookback, minimum) at Claude Sonnet 4.5's prices.
    Anthropic,
    /// OpenAI's automatic prefix cache at GPT-4.1's prices.
    Openai,
}

impl ReplayProvider {
    /// The model whose list prices price both sides.
    pub fn reference_model(self) -> &'static str {
        match self {
            ReplayProvider::Anthropic => "claude-sonnet-4-5",
            ReplayProvider::Openai => "gpt-4.1",
        }
    }

    fn rules(self) -> CacheRules {
        match self {
            ReplayProvider::Anthropic => CacheRules::ANTHROPIC,
            ReplayProvider::Openai => CacheRules::OPENAI,
        }
    }
}

/// How a replay runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayOptions {
    pub provider: ReplayProvider,
    /// How long Flame asks Anthropic to keep a frame's conversation; `None`: what the live
    /// agent asks ([`CachePolicy::ANTHROPIC_CONVERSATION`]).
    pub conversation: Option<CacheLifetime>,
    /// How many of a frame's newest tool results stay whole when masking; `None`: Flame's
    /// default.
    pub keep_tool_results: Option<usize>,
    /// The model both sides are priced as, and its price; `None`: the provider's reference
    /// model at its list price.
    pub price: Option<(String, Price)>,
}

impl Default for ReplayOptions {
    fn default() -> ReplayOptions {
        ReplayOptions {
            provider: ReplayProvider::Anthropic,
            conversation: None,
            keep_tool_results: None,
            price: None,
        }
    }
}

/// What requests did with a prompt cache, in tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CacheTokens {
    pub read: u64,
    /// Written for the provider's short lifetime (five minutes), or once (the floor).
    pub written: u64,
    /// Written for an hour.
    pub written_long: u64,
    pub uncached: u64,
}

impl From<CacheUse> for CacheTokens {
    fn from(u: CacheUse) -> CacheTokens {
        CacheTokens {
            read: u.read,
            written: u.written,
            written_long: u.written_long,
            uncached: u.uncached,
        }
    }
}

/// One model call compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallRow {
    /// Index of the frame in the draft.
    pub frame: usize,
    pub frame_title: String,
    pub kind: FrameKind,
    pub at: i64,
    /// What the agent sent (recorded).
    pub linear_tokens: u64,
    /// What Flame would send: the assembled context plus the thread's fixed overhead.
    pub flame_tokens: u64,
    /// The fixed overhead included in `flame_tokens`.
    pub overhead_tokens: u64,
    /// Files the call touched first in its frame that another frame had touched before.
    pub returning_paths: u64,
    /// How many of those the assembled context names (see the module's comment).
    pub recalled_paths: u64,
    /// What the linear call's input cost as recorded, in micro-dollars.
    pub linear_micro_usd: u64,
    /// What Flame's request would have cost under the provider's cache, in micro-dollars.
    pub flame_micro_usd: u64,
    /// Flame's request through the cache that never forgets.
    pub floor_micro_usd: u64,
    /// What Flame's request did with the provider's cache.
    pub flame_cache: CacheTokens,
    /// Whether the call made its frame's opening (for the first time or again).
    pub opening_made: bool,
    /// How many frames the call told of in a note, and how many tool results it masked that
    /// the frame's earlier calls sent whole.
    pub noted_frames: u32,
    pub newly_masked: u32,
}

/// The whole comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replay {
    /// The provider whose cache and prices the dollars are under.
    pub provider: ReplayProvider,
    /// The model whose list prices they are.
    pub reference_model: String,
    /// How long Flame asked the provider to keep a frame's conversation.
    pub conversation: CacheLifetime,
    /// How many calls are compared (compaction calls excluded).
    pub calls: u64,
    /// What the linear session's input cost as recorded (its own cache reads and writes), in
    /// micro-dollars.
    pub linear_micro_usd: u64,
    /// What Flame's requests would have cost under the provider's cache.
    pub flame_micro_usd: u64,
    /// What they would have cost through a cache that never forgets (the module's comment).
    pub floor_micro_usd: u64,
    /// The threads' fixed prompts, read from the cache at every call: the part of each side
    /// that neither controls.
    pub fixed_micro_usd: u64,
    /// The linear session's recorded input usage, added up.
    pub linear_usage: Usage,
    /// What Flame's requests did with the provider's cache, added up.
    pub flame_cache: CacheTokens,
    /// On average over the calls after a frame's first, the share of the frame's previous
    /// request (in tokens) that the call's request starts with, block for block.
    pub prefix_share: Option<f64>,
    /// How many calls made a frame's opening, and how many of those made it again.
    pub openings: u64,
    pub openings_rebuilt: u64,
    pub linear_tokens: u64,
    pub flame_tokens: u64,
    pub peak_linear: u64,
    pub peak_flame: u64,
    /// Over every call: files touched first in a frame that another frame touched before, and
    /// how many of them the context assembled at that call named.
    pub returning_paths: u64,
    pub recalled_paths: u64,
    /// `recalled_paths / returning_paths`; `None` when no file returned.
    pub first_touch_recall: Option<f64>,
    /// Percentiles (10, 25, 50, 75, 90, 100) of Flame's context as a share of the linear one.
    pub ratio_percentiles: Vec<(u32, f64)>,
    pub compaction_calls: u64,
    pub compaction_linear_tokens: u64,
    /// The tokens of every subagent's own transcript, and of the results they handed back.
    pub subagent_transcript_tokens: u64,
    pub subagent_result_tokens: u64,
    /// How Flame's token count compares with the tool's own: over every pair of consecutive
    /// calls of one thread whose recorded input grew, the growth the tool recorded, and the
    /// tokens Flame counts for the messages in between (what the growth is made of).
    pub recorded_growth: u64,
    pub counted_growth: u64,
    pub per_call: Vec<CallRow>,
}

/// Compares every recorded call of `draft`, priced as `options` says.
pub fn replay(draft: &Draft, options: &ReplayOptions) -> Result<Replay, String> {
    let frames = Replayer::frames(draft, None)?;
    let encoding = draft
        .messages
        .iter()
        .find_map(|m| m.message.model.as_deref().filter(|m| !m.starts_with('<')))
        .map_or(Encoding::ClaudeEstimate, Encoding::for_model);
    // Where each message stands among its frame's, and what the frame's messages before it
    // weigh: what a call's request holds of its frame.
    let mut ordinals: Vec<usize> = Vec::with_capacity(draft.messages.len());
    let mut weights: Vec<u64> = Vec::with_capacity(draft.messages.len());
    {
        let mut counts = vec![(0usize, 0u64); draft.frames.len()];
        for m in &draft.messages {
            let (n, weight) = &mut counts[m.frame];
            ordinals.push(*n);
            weights.push(*weight);
            *n += 1;
            *weight = weight.saturating_add(m.tokens);
        }
    }
    // The main thread's segments share one overhead; each other frame is its own thread.
    let thread_of = |frame: usize| match draft.frames[frame].kind {
        FrameKind::Segment | FrameKind::Session => 0,
        _ => frame,
    };
    let (model, price) = match &options.price {
        Some((model, price)) => (model.clone(), *price),
        None => {
            let model = options.provider.reference_model();
            let price = PriceTable::default()
                .get(model)
                .map(|p| p.price())
                .ok_or("the reference model has no built-in price")?;
            (model.to_owned(), price)
        }
    };
    let input_price =
        |usage: &Usage| cost_picodollars(&Usage { output_tokens: 0, ..*usage }, &price);
    let policy = match options.provider {
        ReplayProvider::Anthropic => {
            let mut policy = CachePolicy::anthropic(Some(&price));
            if let Some(conversation) = options.conversation {
                policy.conversation = conversation;
                policy.economics = flame_context::CacheEconomics::of_price(&price, conversation);
            }
            policy
        }
        ReplayProvider::Openai => CachePolicy::automatic(Some(&price)),
    };
    let keep = options.keep_tool_results.unwrap_or(flame_context::DEFAULT_KEEP_TOOL_RESULTS);
    let mut cache = PromptCache::new(options.provider.rules());
    let mut floor = PromptCache::new(CacheRules::Floor);
    let mut overhead: HashMap<usize, FixedPrompt> = HashMap::new();
    let mut replayer = Replayer::new(encoding, policy, keep);
    let mut rows = Vec::new();
    let (mut compaction_calls, mut compaction_linear) = (0, 0);
    let (mut linear_pico, mut flame_pico, mut floor_pico, mut fixed_pico) =
        (0u128, 0u128, 0u128, 0u128);
    let mut linear_usage = Usage::default();
    let mut flame_cache = CacheUse::default();
    let (mut openings, mut rebuilt) = (0, 0);
    let mut last_blocks: HashMap<usize, Vec<Block>> = HashMap::new();
    let mut prefix_shares: Vec<f64> = Vec::new();
    for call in &draft.calls {
        if draft.frames[call.frame].kind == FrameKind::Compaction {
            compaction_calls += 1;
            compaction_linear = call.input_tokens.saturating_add(compaction_linear);
            continue;
        }
        let (before, counted) = (ordinals[call.message], weights[call.message]);
        let thread = thread_of(call.frame);
        let recorded = draft.messages[call.message]
            .message
            .usage
            .filter(|u| u.prompt_tokens() > 0)
            .unwrap_or(Usage { input_tokens: call.input_tokens, ..Usage::default() });
        let fixed_prompt = *overhead.entry(thread).or_insert_with(|| {
            let tokens = call.input_tokens.saturating_sub(counted);
            FixedPrompt { thread, tokens, shared: recorded.cache_read_tokens.min(tokens) }
        });
        let fixed = fixed_prompt.tokens;
        let came_before = |f: &DraftFile| {
            if f.frame == call.frame { f.message < call.message } else { f.at <= call.at }
        };
        let site = CallSite { frame: call.frame, before, at: call.at, fixed };
        let sent = replayer.call_in(draft, &frames, None, site)?;
        let prompt = replayer.prompt(&sent);
        let doc = sent.doc;
        if doc.report.opening.made_now {
            openings += 1;
            if sent.made_again {
                rebuilt += 1;
            }
        }
        let blocks = request_blocks(&fixed_prompt, &prompt);
        if let Some(previous) = last_blocks.get(&call.frame) {
            let common: u64 = previous
                .iter()
                .zip(&blocks)
                .take_while(|(a, b)| a.hash == b.hash)
                .map(|(a, _)| a.tokens)
                .sum();
            let whole: u64 = previous.iter().map(|b| b.tokens).sum();
            prefix_shares.push(common as f64 / whole.max(1) as f64);
        }
        last_blocks.insert(call.frame, blocks.clone());
        // What the recorded call read of its fixed prompt, other sessions of the agent had left
        // in the cache, or this one kept: Flame's request starts with the same bytes, and reads
        // them as well.
        if fixed_prompt.shared > 0 && recorded.cache_read_tokens >= fixed_prompt.shared {
            cache.hold(call.at, &blocks[..1]);
            floor.hold(call.at, &blocks[..1]);
        }
        let used = cache.send(call.at, &blocks);
        let ideal = floor.send(call.at, &blocks);
        let (linear, flame, floor_cost) =
            (input_price(&recorded), input_price(&used.usage()), input_price(&ideal.usage()));
        linear_pico += linear;
        flame_pico += flame;
        floor_pico += floor_cost;
        fixed_pico += input_price(&Usage { cache_read_tokens: fixed, ..Usage::default() });
        linear_usage.add(&Usage { output_tokens: 0, ..recorded });
        flame_cache.add(&used);
        let returning = returning_paths(draft, call, &came_before);
        let recalled = if returning.is_empty() {
            0
        } else {
            let assembled = assembled_text(&doc);
            returning.iter().filter(|p| names(&assembled, p)).count() as u64
        };
        rows.push(CallRow {
            frame: call.frame,
            frame_title: draft.frames[call.frame].title.clone(),
            kind: draft.frames[call.frame].kind,
            at: call.at,
            linear_tokens: call.input_tokens,
            flame_tokens: used.total(),
            overhead_tokens: fixed,
            returning_paths: returning.len() as u64,
            recalled_paths: recalled,
            linear_micro_usd: round_to_micro_usd(linear),
            flame_micro_usd: round_to_micro_usd(flame),
            floor_micro_usd: round_to_micro_usd(floor_cost),
            flame_cache: used.into(),
            opening_made: doc.report.opening.made_now,
            noted_frames: doc.report.opening.noted_frames,
            newly_masked: doc.report.opening.newly_masked,
        });
    }
    let mut ratios: Vec<f64> = rows
        .iter()
        .filter(|r| r.linear_tokens > 0)
        .map(|r| r.flame_tokens as f64 / r.linear_tokens as f64)
        .collect();
    ratios.sort_by(f64::total_cmp);
    let percentile = |p: u32| -> f64 {
        if ratios.is_empty() {
            return 0.0;
        }
        let at = ((ratios.len() - 1) as f64 * f64::from(p) / 100.0).round() as usize;
        ratios[at]
    };
    let subagents = draft.frames.iter().enumerate().filter(|(_, f)| f.kind == FrameKind::Subagent);
    let (mut transcript, mut results) = (0, 0);
    for (i, f) in subagents {
        transcript = sum(draft.messages.iter().filter(|m| m.frame == i).map(|m| m.tokens))
            .saturating_add(transcript);
        results = f
            .results
            .as_deref()
            .map_or(0, |r| flame_tokens::count(encoding, r))
            .saturating_add(results);
    }
    let (recorded_growth, counted_growth) = growth(draft, &thread_of);
    let returning = sum(rows.iter().map(|r| r.returning_paths));
    let recalled = sum(rows.iter().map(|r| r.recalled_paths));
    let prefix_share = if prefix_shares.is_empty() {
        None
    } else {
        Some(prefix_shares.iter().sum::<f64>() / prefix_shares.len() as f64)
    };
    Ok(Replay {
        prefix_share,
        provider: options.provider,
        reference_model: model,
        conversation: policy.conversation,
        calls: rows.len() as u64,
        linear_micro_usd: round_to_micro_usd(linear_pico),
        flame_micro_usd: round_to_micro_usd(flame_pico),
        floor_micro_usd: round_to_micro_usd(floor_pico),
        fixed_micro_usd: round_to_micro_usd(fixed_pico),
        linear_usage,
        flame_cache: flame_cache.into(),
        openings,
        openings_rebuilt: rebuilt,
        returning_paths: returning,
        recalled_paths: recalled,
        first_touch_recall: (returning > 0).then(|| recalled as f64 / returning as f64),
        linear_tokens: sum(rows.iter().map(|r| r.linear_tokens)),
        flame_tokens: sum(rows.iter().map(|r| r.flame_tokens)),
        peak_linear: rows.iter().map(|r| r.linear_tokens).max().unwrap_or(0),
        peak_flame: rows.iter().map(|r| r.flame_tokens).max().unwrap_or(0),
        ratio_percentiles: [10, 25, 50, 75, 90, 100]
            .into_iter()
            .map(|p| (p, percentile(p)))
            .collect(),
        compaction_calls,
        compaction_linear_tokens: compaction_linear,
        subagent_transcript_tokens: transcript,
        subagent_result_tokens: results,
        recorded_growth,
        counted_growth,
        per_call: rows,
    })
}

/// A thread's fixed prompt (the agent's tools and system prompt, which its transcript does not
/// hold), as estimated at its first call.
#[derive(Debug, Clone, Copy)]
struct FixedPrompt {
    thread: usize,
    tokens: u64,
    /// How many of its first tokens the first call read from the cache: the part other
    /// sessions of the agent had written before (never more than `tokens`).
    shared: u64,
}

/// The blocks of the request `prompt` makes after the thread's fixed prompt, as the provider's
/// cache sees them: the fixed prompt's shared part, the rest of it, then Flame's system prompt
/// (its shared start carrying the system's mark, the tree's part after it) and the messages
/// with their marks.
fn request_blocks(fixed: &FixedPrompt, prompt: &flame_context::request::Prompt) -> Vec<Block> {
    let thread = fixed.thread.to_string();
    let mut blocks = vec![Block {
        hash: prompt_cache::text_hash("fixed prompt", &thread),
        tokens: fixed.shared,
        mark: None,
    }];
    if fixed.tokens > fixed.shared {
        blocks.push(Block {
            hash: prompt_cache::text_hash("rest of the fixed prompt", &thread),
            tokens: fixed.tokens - fixed.shared,
            mark: None,
        });
    }
    let (shared, tree) = prompt.system.split_at(prompt.system_shared);
    blocks.push(Block {
        hash: prompt_cache::text_hash("system", shared),
        tokens: prompt.system_shared_tokens,
        mark: Some(prompt.system_lifetime),
    });
    if !tree.is_empty() {
        blocks.push(Block {
            hash: prompt_cache::text_hash("system", tree),
            tokens: prompt.system_tokens.saturating_sub(prompt.system_shared_tokens),
            mark: None,
        });
    }
    blocks.extend(prompt.messages.iter().enumerate().map(|(i, m)| Block {
        hash: prompt_cache::message_hash(m),
        tokens: prompt.tokens[i],
        mark: prompt.marks.iter().find(|mark| mark.message == i).map(|mark| mark.lifetime),
    }));
    blocks
}

/// The recorded and the counted growth of every thread's input between its consecutive calls
/// (see [`Replay::recorded_growth`]). A pair whose input shrank (a compaction, or a cache the
/// tool dropped) says nothing about counting and is left out, as are compaction calls.
fn growth(draft: &Draft, thread_of: &impl Fn(usize) -> usize) -> (u64, u64) {
    let mut last: HashMap<usize, &ModelCall> = HashMap::new();
    let (mut recorded, mut counted) = (0u64, 0u64);
    for call in &draft.calls {
        if draft.frames[call.frame].kind == FrameKind::Compaction {
            last.clear();
            continue;
        }
        let thread = thread_of(call.frame);
        if let Some(previous) = last.insert(thread, call)
            && call.input_tokens > previous.input_tokens
            && call.message > previous.message
        {
            recorded = recorded.saturating_add(call.input_tokens - previous.input_tokens);
            let between = &draft.messages[previous.message..call.message];
            counted =
                sum(between.iter().filter(|m| thread_of(m.frame) == thread).map(|m| m.tokens))
                    .saturating_add(counted);
        }
    }
    (recorded, counted)
}

/// The paths `call`'s tool calls touched that its frame had not touched before and another
/// frame had (as `came_before` tells), sorted.
fn returning_paths(
    draft: &Draft,
    call: &ModelCall,
    came_before: &impl Fn(&DraftFile) -> bool,
) -> Vec<String> {
    let touched: HashSet<&str> = draft
        .files
        .iter()
        .filter(|f| f.frame == call.frame && f.message == call.message)
        .map(|f| f.path.as_str())
        .collect();
    if touched.is_empty() {
        return Vec::new();
    }
    let mut own_before = HashSet::new();
    let mut others_before = HashSet::new();
    for f in draft.files.iter().filter(|f| came_before(f)) {
        if f.frame == call.frame {
            own_before.insert(f.path.as_str())
        } else {
            others_before.insert(f.path.as_str())
        };
    }
    let mut paths: Vec<String> = touched
        .into_iter()
        .filter(|p| !own_before.contains(p) && others_before.contains(p))
        .map(str::to_owned)
        .collect();
    paths.sort();
    paths
}

/// What Flame assembled at a call, as text to look for paths in: the stack-context without its
/// `<log>` lines, then each message's text and tool-call arguments.
fn assembled_text(doc: &flame_context::ContextDoc) -> String {
    let mut text: String = doc
        .xml
        .lines()
        .filter(|l| !l.trim_start().starts_with("<log>"))
        .flat_map(|l| [l, "\n"])
        .collect();
    for m in &doc.messages {
        text.push_str(&m.content);
        text.push('\n');
        for c in m.tool_calls.iter().flatten() {
            text.push_str(&c.arguments.to_string());
            text.push('\n');
        }
    }
    text
}

/// Whether `text` names `path` whole (see the module's comment).
fn names(text: &str, path: &str) -> bool {
    text.match_indices(path).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + path.len()..].chars().next();
        before.is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '.' | '-' | '_')))
            && after.is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '/')))
    })
}

/// A total of token counts that stops at `u64::MAX` instead of overflowing: the counts come
/// from transcripts, which may state anything.
fn sum(counts: impl Iterator<Item = u64>) -> u64 {
    counts.fold(0, u64::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::names;

    #[test]
    fn a_path_is_named_only_whole() {
        assert!(names("read src/lib.rs, then", "src/lib.rs"));
        assert!(names("{\"file_path\":\"/home/u/p/src/lib.rs\"}", "src/lib.rs"));
        assert!(names("<read>a.rs, src/lib.rs</read>", "src/lib.rs"));
        assert!(!names("src/lib.rsx", "src/lib.rs"));
        assert!(!names("my-src/lib.rs", "src/lib.rs"));
        assert!(!names("src/lib.rs/x", "src/lib.rs"));
        assert!(!names("", "src/lib.rs"));
    }
}
