//! A frame's opening and what follows it: how each request in a frame starts with the one
//! before it.
//!
//! Providers cache the prefix of a request and read it back at a tenth of the price (DESIGN.md
//! §11), so a saving in tokens that rewrites the start of a request is a loss. A frame's context
//! is therefore kept append-only. The first call in a frame makes its *opening*: the
//! `<stack-context>` document as the tree stands then, the frame's older tool results masked
//! and, when the budget needs it, its oldest messages left out with a line that says so. The
//! caller keeps it ([`FrameContext`], in the store) and hands it back at every later call, which
//! sends it byte for byte and then the frame's messages. What changes around the frame
//! meanwhile — a child pops with its results, a sibling finishes elsewhere, the plan changes, a
//! finished frame's files — is *appended*: the call finds the frames whose element is not what
//! the model was last told (a digest of each is kept) and returns a note with their elements as
//! they are now, which the caller stores as a message of the frame before sending, so every
//! later call sends it where it was first sent.
//!
//! The opening is made again only by these rules, checked in this order at each call:
//!
//! 1. **Asked**: the person asked for it ([`FrameContext::rebuild_asked`]).
//! 2. **Cold**: longer than the conversation's cache lifetime ([`CachePolicy::conversation`])
//!    has passed since the frame's last call, so the provider no longer holds the frame's
//!    prefix and rewriting it costs nothing more than sending it.
//! 3. **Budget**: the context no longer fits the budget, even with every older tool result
//!    masked.
//!
//! A new opening shows the tree as it is now, so the notes of earlier openings are no longer
//! sent (they are kept in [`FrameContext::superseded_notes`]).
//!
//! Masking keeps the prefix too: a tool result sent whole is sent whole until a *batch* masks
//! it, and one sent as a stub stays a stub. A batch masks every result older than the newest
//! [`ContextInput::keep_tool_results`] at once, and happens when an opening is made, when the
//! budget needs it, and otherwise only when it pays and the frame can afford it:
//!
//! - It pays when what it saves outweighs the rewrite: it sends everything from the first
//!   result it masks again (`T` tokens), which costs `T × (write − read)` once, and saves `S`
//!   tokens on every later call, each worth `read` ([`CacheEconomics`]). A frame is expected
//!   to go on for [`MASKING_HORIZON`] times the calls it has made so far (`n`), so a batch
//!   pays when `MASKING_HORIZON × n × S × read ≥ T × (write − read)`. With the prices of a
//!   local server (reading its cache costs nothing) only the budget masks.
//! - The frame can afford it while what its batches have sent again since the opening was
//!   made, as shares of their requests added up, stays within [`MAX_REWRITTEN_PER_MILLE`] of a
//!   request per call: its requests start with nine tenths of the one before on average, and
//!   a short frame, whose future the horizon overrates, does not rewrite itself call after call.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use flame_model::budget::ToldBudget;
use flame_model::{
    CacheLifetime, FrameContext, Message, MessageId, OpeningReason, Role, SectionKind,
    SectionState, Timestamp, ToldFrame,
};

use crate::mask::{self, KeptMasks, Masked};
use crate::render::{self, Plan};
use crate::{
    ContextDoc, ContextError, ContextInput, ContextReport, KeptParts, MESSAGE_OVERHEAD,
    OpeningReport, Section, budget, memo,
};

/// How many times the calls it has made so far a frame is expected to go on for, when a batch
/// of masking is weighed: chosen by replaying the shared Claude Code sessions in dollars under
/// Anthropic's cache (`flame replay`; one result kept whole, rewrites capped at an eighth).
/// Flame's input cost as a share of the linear session's was, for 2, 4, 8 and 16: 0.560, 0.554,
/// 0.550, 0.550 (session 4d5611e5) and 0.563, 0.541, 0.540, 0.541 (fa812bfe).
pub const MASKING_HORIZON: u128 = 8;

/// The most a frame's batches of masking may send again of the frame's previous request, in
/// thousandths, on average over the requests since the opening was made: an eighth, so a
/// request starts with seven eighths of the one before it at the least. Replayed (horizon 8,
/// one result kept whole), 100, 125 and 150 cost 0.558, 0.550, 0.544 of the linear session's
/// input (4d5611e5) and 0.543, 0.540, 0.536 (fa812bfe), sending 0.460, 0.449, 0.437 and 0.382,
/// 0.376, 0.368 of its tokens; at 150 the frame of the agent's scripted cache test (ten files
/// read, a child pushed and popped) starts its requests with less than nine tenths of the one
/// before on average.
pub const MAX_REWRITTEN_PER_MILLE: u64 = 125;

/// What a frame's calls go to, as far as its context cares: how long the provider keeps the
/// conversation's cached prefix, and what its cache charges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachePolicy {
    pub conversation: CacheLifetime,
    pub economics: CacheEconomics,
}

impl CachePolicy {
    /// How long Flame asks Anthropic to keep a frame's conversation, its opening included (a
    /// parent frame's requests keep the tools and the shared preamble for an hour whatever this
    /// says: `request`): chosen by replaying the shared sessions in dollars (`flame replay
    /// --cache-lifetime`): five minutes cost 0.55 and 0.54 of the linear sessions' input, an
    /// hour 0.67 and 0.65 (an hour's writes cost twice the input price, five minutes' 1.25 times
    /// it, and the calls of a frame come minutes apart). Measured before issue 39, which made
    /// them 0.524 and 0.500 with five minutes.
    pub const ANTHROPIC_CONVERSATION: CacheLifetime = CacheLifetime::Short;

    /// Anthropic's cache at `price`'s rates (its list rates when the price is not known).
    pub fn anthropic(price: Option<&flame_model::cost::Price>) -> CachePolicy {
        let conversation = CachePolicy::ANTHROPIC_CONVERSATION;
        let economics =
            price.map_or(CacheEconomics::ANTHROPIC, |p| CacheEconomics::of_price(p, conversation));
        CachePolicy { conversation, economics }
    }

    /// A provider that caches on its own for minutes (OpenAI), at `price`'s rates.
    pub fn automatic(price: Option<&flame_model::cost::Price>) -> CachePolicy {
        let conversation = CacheLifetime::Short;
        let economics =
            price.map_or(CacheEconomics::AUTOMATIC, |p| CacheEconomics::of_price(p, conversation));
        CachePolicy { conversation, economics }
    }

    /// A model server on this computer.
    pub fn local() -> CachePolicy {
        CachePolicy { conversation: CacheLifetime::Short, economics: CacheEconomics::LOCAL }
    }
}

impl Default for CachePolicy {
    /// Anthropic's, until a call says otherwise.
    fn default() -> CachePolicy {
        CachePolicy::anthropic(None)
    }
}

/// What reading a token from the provider's cache and writing one to it cost, in thousandths of
/// what an input token sent without the cache costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheEconomics {
    pub read: u64,
    pub write: u64,
}

impl CacheEconomics {
    /// Anthropic's rates with the conversation cached for five minutes: reads at a tenth of the
    /// input price, writes at 1.25 times it.
    pub const ANTHROPIC: CacheEconomics = CacheEconomics { read: 100, write: 1_250 };

    /// A model server on this computer: reading its cache is free, and what is not in it is
    /// processed again (prefill), as uncached input is.
    pub const LOCAL: CacheEconomics = CacheEconomics { read: 0, write: 1_000 };

    /// A provider that caches on its own and bills what it writes as input, at the smallest
    /// discount OpenAI gives a cached read (half the input price): for a model whose price is
    /// not known.
    pub const AUTOMATIC: CacheEconomics = CacheEconomics { read: 500, write: 1_000 };

    /// The rates of a model's price for writes of `lifetime`; a price without an input rate
    /// (a model that costs nothing) is a local server's.
    pub fn of_price(price: &flame_model::cost::Price, lifetime: CacheLifetime) -> CacheEconomics {
        if price.input == 0 {
            return CacheEconomics::LOCAL;
        }
        let write = match lifetime {
            CacheLifetime::Short => price.cache_write,
            CacheLifetime::Long => price.cache_write_long,
        };
        let share = |rate: u64| rate.saturating_mul(1_000) / price.input;
        CacheEconomics { read: share(price.cache_read), write: share(write) }
    }
}

/// What the call is and what its provider's cache charges: what decides when the opening is
/// made again and when a batch of masking pays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallRules {
    /// When the call is made.
    pub now: Timestamp,
    /// How long the provider keeps the conversation's cached prefix after a call (the lifetime
    /// the request asks for its messages (Anthropic), or the minutes a provider that caches on
    /// its own keeps a prefix), and what its cache charges.
    pub policy: CachePolicy,
}

/// What the next call in a frame sends, and what the caller must keep before sending it.
#[derive(Debug, Clone, PartialEq)]
pub struct NextCall {
    pub doc: ContextDoc,
    /// The frame's context as it must be stored before the call is sent, when the call
    /// changes it: an opening made, a note to append, a batch of results masked. `None` when it
    /// is as stored.
    pub update: Option<ContextUpdate>,
}

/// A change to a frame's stored context.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextUpdate {
    /// The context to store. When there is a note, the caller adds the note's message id to
    /// its `notes`.
    pub context: FrameContext,
    /// A note to append to the frame's messages (as [`Role::Note`]) before the call; `doc`
    /// already sends it last.
    pub note: Option<String>,
}

/// The id the doc gives a note not yet stored: after every stored message.
pub const UNSTORED_NOTE: MessageId = MessageId(i64::MAX);

/// What the next call in `input.focus` sends, given the frame's context as stored (`None`:
/// the conversation enters the frame). `kept` holds parts of the caller's earlier assemblies
/// and how many of `input.messages` are settled (see [`KeptParts`]); the result is the same
/// without it.
pub fn next_call(
    input: &ContextInput<'_>,
    stored: Option<&FrameContext>,
    rules: &CallRules,
    kept: Option<(&mut KeptParts, usize)>,
) -> Result<NextCall, ContextError> {
    let (mut parts, settled) = match kept {
        Some((parts, settled)) => (Some(parts), settled),
        None => (None, 0),
    };
    let plan = Plan::new(input, parts.as_mut().map(|p| p.units.take().unwrap_or_default()))?;
    let masks = parts.as_deref_mut().map(|p| &mut p.masks);
    let reason = match stored {
        None => Some(OpeningReason::Entered),
        Some(stored) => rebuild_reason(stored, input.messages, rules),
    };
    let call = match (stored, reason) {
        (Some(stored), None) => kept_opening(input, &plan, stored, rules, masks, settled),
        (_, reason) => {
            let reason = reason.unwrap_or(OpeningReason::Entered);
            fresh_opening(input, &plan, stored, reason, rules, masks, settled)
        }
    };
    if let Some(parts) = parts {
        parts.units = plan.into_kept();
    }
    Ok(call)
}

/// Whether the next call in a frame whose context is `stored` (`None` before its first call) makes
/// a new opening whatever the budget says: it enters the frame, the person asked, or the frame's
/// cached prefix expired (rules 1 and 2). A caller that reads the project instructions only for
/// an opening reads them when this says so, and otherwise again only when the budget made one.
pub fn opening_due(
    stored: Option<&FrameContext>,
    messages: &[Arc<Message>],
    rules: &CallRules,
) -> bool {
    stored.is_none_or(|stored| rebuild_reason(stored, messages, rules).is_some())
}

/// Why the stored opening must be made again before this call, if it must (rules 1 and 2 of
/// the module's documentation; the budget is checked once the context is put together).
fn rebuild_reason(
    stored: &FrameContext,
    messages: &[Arc<Message>],
    rules: &CallRules,
) -> Option<OpeningReason> {
    if stored.rebuild_asked {
        return Some(OpeningReason::Asked);
    }
    let last_call = messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map_or(stored.made_at, |m| m.created_at.max(stored.made_at));
    (rules.now.saturating_sub(last_call) > rules.policy.conversation.millis())
        .then_some(OpeningReason::Cold)
}

/// The messages of `input` a context sends under an opening: from `from` on, without `skip`
/// (context notes no longer sent), and how many of them come from the first `settled`.
fn live_messages(
    input: &ContextInput<'_>,
    from: Option<MessageId>,
    skip: &HashSet<MessageId>,
    settled: usize,
) -> (Vec<Arc<Message>>, usize) {
    let start = from.map_or(0, |first| input.messages.partition_point(|m| m.id < first));
    let mut live = Vec::with_capacity(input.messages.len() - start);
    let mut live_settled = 0;
    for (i, message) in input.messages.iter().enumerate().skip(start) {
        if skip.contains(&message.id) {
            continue;
        }
        live.push(Arc::clone(message));
        if i < settled {
            live_settled += 1;
        }
    }
    (live, live_settled)
}

/// A new opening for `reason`: the tree as it is now, every older tool result masked, the
/// budget's give-way order applied.
fn fresh_opening(
    input: &ContextInput<'_>,
    plan: &Plan<'_>,
    stored: Option<&FrameContext>,
    reason: OpeningReason,
    rules: &CallRules,
    masks: Option<&mut KeptMasks>,
    settled: usize,
) -> NextCall {
    let notes: HashSet<MessageId> = stored
        .map(|s| s.notes.iter().chain(&s.superseded_notes).copied().collect())
        .unwrap_or_default();
    let (mut live, live_settled) = live_messages(input, None, &notes, settled);
    // The notes of the earlier opening are not sent, so the model is told of its budget anew.
    let budget = budget_note(input, None);
    let note = budget.as_ref().map(|(text, _)| text.clone());
    if let Some(text) = &note {
        live.push(Arc::new(unstored_note(input, text)));
    }
    let through = mask::boundary(&live, input.keep_tool_results);
    let masked = mask_with(&live, through, input, masks, live_settled);
    let newly_masked = newly_masked(&live, &masked.messages, stored.and_then(|s| s.masked_through));
    let live_input = ContextInput { messages: &live, ..*input };
    let mut doc = budget::fit(&live_input, plan, masked);
    let generation = stored.map_or(1, |s| s.generation + 1);
    let first_message =
        (doc.report.omitted_messages > 0).then(|| doc.messages.first().map(|m| m.id)).flatten();
    let superseded_notes = stored
        .map(|s| s.superseded_notes.iter().chain(&s.notes).copied().collect())
        .unwrap_or_default();
    let context = FrameContext {
        generation,
        opening: doc.xml.clone(),
        opening_tokens: doc.report.opening.tokens,
        reason,
        made_at: rules.now,
        first_message,
        omission: doc.omission.clone(),
        sections: doc.report.sections.clone(),
        masked_through: through,
        told: told(plan),
        notes: Vec::new(),
        superseded_notes,
        rebuild_asked: false,
        rewritten_per_mille: 0,
        budget_told: budget.and_then(|(_, told)| told),
        instructions: doc.report.opening.instructions.clone(),
    };
    let report = &mut doc.report;
    let shared = input.budget.tool_schemas.saturating_add(report.sections[0].tokens);
    report.opening = OpeningReport {
        generation,
        reason,
        reason_text: reason.describe().to_owned(),
        made_at: rules.now,
        made_now: true,
        tokens: context.opening_tokens,
        noted_frames: 0,
        newly_masked,
        // The tools and the preamble are every frame's of the tree: the one prefix a new
        // opening may find cached.
        cache_read_tokens: shared,
        cache_written_tokens: report
            .total_tokens
            .saturating_add(input.budget.tool_schemas)
            .saturating_sub(shared),
        instructions: context.instructions.clone(),
    };
    NextCall { doc, update: Some(ContextUpdate { context, note }) }
}

/// The call under the stored opening: a note appended if frames changed, a batch of masking
/// if it pays, and a new opening after all if the budget is still exceeded.
fn kept_opening(
    input: &ContextInput<'_>,
    plan: &Plan<'_>,
    stored: &FrameContext,
    rules: &CallRules,
    mut masks: Option<&mut KeptMasks>,
    settled: usize,
) -> NextCall {
    let skip: HashSet<MessageId> = stored.superseded_notes.iter().copied().collect();
    let (mut live, live_settled) = live_messages(input, stored.first_message, &skip, settled);
    let previous_end = previous_end(&live);
    let note = note(plan, input, &stored.told);
    let budget = budget_note(input, stored.budget_told.as_ref());
    let text = match (&note, &budget) {
        (Some(note), Some((budget, _))) => Some(format!("{}\n\n{budget}", note.text)),
        (Some(note), None) => Some(note.text.clone()),
        (None, Some((budget, _))) => Some(budget.clone()),
        (None, None) => None,
    };
    if let Some(text) = &text {
        live.push(Arc::new(unstored_note(input, text)));
    }
    let current = stored.masked_through;
    let candidate = mask::boundary(&live, input.keep_tool_results).max(current);
    let now = mask_with(&live, current, input, masks.as_deref_mut(), live_settled);
    // What the frame's previous request weighed, tools included: a batch's rewrite is a share
    // of it.
    let previous = previous_end.and_then(|end| live.iter().position(|m| m.id == end));
    let previous_request = [
        input.budget.tool_schemas,
        memo::count(input.encoding, &crate::preamble(input.workspace)),
        stored.opening_tokens,
        stored.omission.as_deref().map_or(0, |l| memo::count(input.encoding, l)),
        previous.map_or(0, |end| {
            now.messages[..=end].iter().map(|m| m.tokens + MESSAGE_OVERHEAD).sum::<u64>()
        }),
    ]
    .into_iter()
    .fold(0u64, u64::saturating_add);
    let share = |rewritten: u64| {
        rewritten.min(previous_request).saturating_mul(1_000) / previous_request.max(1)
    };
    // What the messages from each one on weigh as sent now, and what masking saves on each.
    let mut sent_after: Vec<u64> = vec![0; live.len() + 1];
    for i in (0..live.len()).rev() {
        sent_after[i] = sent_after[i + 1] + now.messages[i].tokens + MESSAGE_OVERHEAD;
    }
    let sent_from = |first: usize| sent_after[first];
    let saved_now = now.saved.clone();
    // A batch sends everything again from the first message it changes: the cached prefix the
    // call can still read ends before it.
    let batch = |masks: Option<&mut KeptMasks>| {
        let masked = mask_with(&live, candidate, input, masks, live_settled);
        let first = (0..live.len()).find(|&i| masked.saved[i] != saved_now[i]);
        let rewritten = first.map_or(0, sent_from);
        let prefix_end = first.and_then(|i| i.checked_sub(1)).map(|i| live[i].id);
        Batch { masked, first, rewritten, prefix_end }
    };
    // A batch rewrites at least from the first result it would mask: when the frame cannot
    // afford that much, or reading the cache is free, it is not weighed at all.
    let weighed = candidate != current
        && rules.policy.economics.read > 0
        && live
            .iter()
            .position(|m| m.tool_result.is_some() && current.is_none_or(|c| m.id > c))
            .is_some_and(|first| churn_allows(stored, &live, share(sent_from(first))));
    let considered = weighed.then(|| batch(masks.as_deref_mut()));
    let pays = considered.as_ref().is_some_and(|b| {
        b.first.is_some_and(|first| {
            batch_pays(input, &now, &b.masked, first, b.rewritten, rules.policy.economics)
                && churn_allows(stored, &live, share(b.rewritten))
        })
    });
    let (mut batched, mut doc) = match considered {
        Some(b) if pays => {
            (Some(share(b.rewritten)), under_opening(input, stored, &live, b.masked, b.prefix_end))
        }
        _ => (None, under_opening(input, stored, &live, now, previous_end)),
    };
    if !doc.report.fits && candidate != current && batched.is_none() {
        // The budget masks what the rule would not have yet.
        let b = batch(masks.as_deref_mut());
        batched = Some(share(b.rewritten));
        doc = under_opening(input, stored, &live, b.masked, b.prefix_end);
    }
    if !doc.report.fits {
        return fresh_opening(
            input,
            plan,
            Some(stored),
            OpeningReason::Budget,
            rules,
            masks,
            settled,
        );
    }
    let through = if batched.is_some() { candidate } else { current };
    doc.report.opening.noted_frames = note.as_ref().map_or(0, |n| n.frames);
    doc.report.opening.newly_masked = newly_masked(&live, &doc.messages, current);
    let changed = text.is_some() || batched.is_some();
    let update = changed.then(|| ContextUpdate {
        context: FrameContext {
            masked_through: through,
            told: note.as_ref().map_or_else(|| stored.told.clone(), |n| n.told.clone()),
            rewritten_per_mille: stored.rewritten_per_mille.saturating_add(batched.unwrap_or(0)),
            budget_told: budget.map_or_else(|| stored.budget_told.clone(), |(_, told)| told),
            ..stored.clone()
        },
        note: text,
    });
    NextCall { doc, update }
}

/// A batch of masking considered: the messages as it sends them, the first it changes, and
/// what it sends again from there (the tokens the provider had cached).
struct Batch {
    masked: Masked,
    first: Option<usize>,
    rewritten: u64,
    prefix_end: Option<MessageId>,
}

/// The context under the stored opening with the live messages as `masked` sends them;
/// `prefix_end` is the newest of them the provider should still hold, sent as before.
fn under_opening(
    input: &ContextInput<'_>,
    stored: &FrameContext,
    live: &[Arc<Message>],
    masked: Masked,
    prefix_end: Option<MessageId>,
) -> ContextDoc {
    let system = crate::preamble(input.workspace);
    let preamble_tokens = memo::count(input.encoding, &system);
    let omission_tokens = stored
        .omission
        .as_deref()
        .map_or(0, |line| memo::count(input.encoding, line) + MESSAGE_OVERHEAD);
    let history: u64 = masked.messages.iter().map(|m| m.tokens + MESSAGE_OVERHEAD).sum();
    let history = history + omission_tokens;
    let total = preamble_tokens + stored.opening_tokens + history;
    let budget = input.budget.available();
    let mut sections: Vec<Section> =
        stored.sections.iter().filter(|s| s.kind != SectionKind::History).cloned().collect();
    let omitted = match stored.first_message {
        Some(first) => input.messages.partition_point(|m| m.id < first) as u32,
        None => 0,
    };
    sections.push(Section {
        kind: SectionKind::History,
        frame: Some(input.focus.clone()),
        label: format!("{} of {} messages", live.len(), live.len() + omitted as usize),
        tokens: history,
        state: if omitted == 0 { SectionState::Full } else { SectionState::Compacted },
    });
    // What earlier requests sent, as it is sent again: the prefix the provider holds.
    let cached_end = prefix_end.and_then(|end| live.iter().position(|m| m.id == end));
    let cached_messages: u64 = cached_end.map_or(0, |end| {
        masked.messages[..=end].iter().map(|m| m.tokens + MESSAGE_OVERHEAD).sum::<u64>()
            + omission_tokens
    });
    let instructions_tokens: u64 = stored
        .sections
        .iter()
        .filter(|s| s.kind == SectionKind::Instructions)
        .map(|s| s.tokens)
        .sum();
    let read = [input.budget.tool_schemas, preamble_tokens, stored.opening_tokens, cached_messages]
        .into_iter()
        .fold(0u64, u64::saturating_add);
    let (masked_results, masked_calls, masked_tokens_saved) = masked.counts_from(0);
    ContextDoc {
        system,
        xml: stored.opening.clone(),
        omission: stored.omission.clone(),
        previous_end: prefix_end,
        system_shared: crate::shared_preamble(input.workspace.is_some()).len(),
        is_parent: crate::focus_is_parent(input),
        report: ContextReport {
            focus: input.focus.clone(),
            budget,
            total_tokens: total,
            fits: total <= budget,
            sections,
            omitted_messages: omitted,
            linear_tokens: preamble_tokens + instructions_tokens + input.linear_message_tokens,
            masked_results,
            masked_calls,
            masked_tokens_saved,
            opening: OpeningReport {
                generation: stored.generation,
                reason: stored.reason,
                reason_text: stored.reason.describe().to_owned(),
                made_at: stored.made_at,
                made_now: false,
                tokens: stored.opening_tokens,
                noted_frames: 0,
                newly_masked: 0,
                cache_read_tokens: read,
                cache_written_tokens: total
                    .saturating_add(input.budget.tool_schemas)
                    .saturating_sub(read),
                instructions: stored.instructions.clone(),
            },
            cache_hit_per_mille: None,
        },
        messages: masked.messages,
    }
}

/// The newest message the frame's previous request sent: the one before the newest reply
/// (the previous call's answer), when there is one.
fn previous_end(live: &[Arc<Message>]) -> Option<MessageId> {
    let reply = live.iter().rposition(|m| m.role == Role::Assistant)?;
    reply.checked_sub(1).map(|end| live[end].id)
}

/// `messages` masked through `through`, with the kept forms when the caller keeps them.
fn mask_with(
    messages: &[Arc<Message>],
    through: Option<MessageId>,
    input: &ContextInput<'_>,
    masks: Option<&mut KeptMasks>,
    settled: usize,
) -> Masked {
    mask::mask_kept(
        messages,
        through,
        input.focus,
        input.read_back,
        input.encoding,
        masks.map(|m| (m, settled)),
    )
}

/// How many tool results of `live` `sent` sends as stubs that masking through `before` sent
/// whole.
fn newly_masked(live: &[Arc<Message>], sent: &[Arc<Message>], before: Option<MessageId>) -> u32 {
    live.iter()
        .zip(sent)
        .filter(|(m, s)| m.tool_result.is_some() && m.tokens != s.tokens)
        .filter(|(m, _)| before.is_none_or(|b| m.id > b))
        .count() as u32
}

/// Whether masking as `batch` does rather than as `now` pays (the module's documentation): the
/// batch sends `rewritten` tokens again, from its first change, `first`, on.
fn batch_pays(
    input: &ContextInput<'_>,
    now: &Masked,
    batch: &Masked,
    first: usize,
    rewritten: u64,
    economics: CacheEconomics,
) -> bool {
    let saved: u64 =
        batch.saved[first..].iter().sum::<u64>() - now.saved[first..].iter().sum::<u64>();
    let calls = input.messages.iter().filter(|m| m.role == Role::Assistant).count() as u128;
    MASKING_HORIZON * calls * u128::from(saved) * u128::from(economics.read)
        >= u128::from(rewritten) * u128::from(economics.write.saturating_sub(economics.read))
}

/// Whether a batch that sends `share` thousandths of the frame's previous request again keeps
/// what the frame's requests have rewritten of the one before them since the opening was made
/// within [`MAX_REWRITTEN_PER_MILLE`] of it on average, this request included.
fn churn_allows(stored: &FrameContext, live: &[Arc<Message>], share: u64) -> bool {
    // Each reply since the opening answered a request; this one follows the newest of them.
    let requests_after_another =
        live.iter().filter(|m| m.role == Role::Assistant && m.created_at >= stored.made_at).count()
            as u64;
    stored.rewritten_per_mille.saturating_add(share)
        <= requests_after_another.saturating_mul(MAX_REWRITTEN_PER_MILLE)
}

/// What the model is told of every frame the plan shows: each unit's digest in full.
fn told(plan: &Plan<'_>) -> Vec<ToldFrame> {
    budget::document_order(plan)
        .into_iter()
        .map(|u| ToldFrame { frame: plan.units[u].frame.id.clone(), digest: plan.digest(u) })
        .collect()
}

/// A note telling of the frames that changed since the model was told of them.
struct Note {
    text: String,
    /// What the model has been told once the note is sent.
    told: Vec<ToldFrame>,
    /// How many frames it tells of.
    frames: u32,
}

/// The note for the frames the plan shows whose element is not what `told` says the model was
/// told (changed, or new), and for the frames it was told of that are no longer shown;
/// `None` when nothing changed.
fn note(plan: &Plan<'_>, input: &ContextInput<'_>, told_before: &[ToldFrame]) -> Option<Note> {
    let before: HashMap<&flame_model::FrameId, u64> =
        told_before.iter().map(|t| (&t.frame, t.digest)).collect();
    let mut now = Vec::new();
    let mut elements = Vec::new();
    for u in budget::document_order(plan) {
        let told = ToldFrame { frame: plan.units[u].frame.id.clone(), digest: plan.digest(u) };
        if before.get(&told.frame) != Some(&told.digest) {
            elements.push(plan.note_element(u));
        }
        now.push(told);
    }
    let shown: HashSet<&flame_model::FrameId> = now.iter().map(|t| &t.frame).collect();
    for gone in told_before.iter().filter(|t| !shown.contains(&t.frame)) {
        let frame = input.frames.iter().find(|f| f.id == gone.frame);
        elements.push(render::gone_element(&gone.frame, frame));
    }
    if elements.is_empty() {
        return None;
    }
    let frames = elements.len() as u32;
    let mut text = String::from(
        "[Flame] These frames changed after the <stack-context> that opens this conversation was \
         written; this is what they are now, and it replaces what was said of them before:\n<stack-update>",
    );
    for element in &elements {
        text.push_str(element);
    }
    text.push_str("\n</stack-update>");
    Some(Note { text, told: now, frames })
}

/// The note telling the model what the focus has left of its budgets, when it says something
/// new since `told` (see `flame_model::budget::budget_note`), and what the model is told then;
/// `None` when the caller keeps no budgets or there is nothing new. Frames are named by their
/// id and title as the path shows them (every budget that bounds a frame is on its path).
fn budget_note(
    input: &ContextInput<'_>,
    told: Option<&ToldBudget>,
) -> Option<(String, Option<ToldBudget>)> {
    let allowance = input.allowance?;
    let title = |id: &flame_model::FrameId| match input.frames.iter().find(|f| &f.id == id) {
        Some(frame) => format!("frame {id} \"{}\"", frame.title),
        None => format!("frame {id}"),
    };
    flame_model::budget::budget_note(allowance, told, title)
}

/// A note not stored yet, as the doc sends it: last, and counted as the store will count it.
fn unstored_note(input: &ContextInput<'_>, text: &str) -> Message {
    Message {
        id: UNSTORED_NOTE,
        frame: input.focus.clone(),
        role: Role::Note,
        content: text.to_owned(),
        tool_calls: None,
        tool_result: None,
        tokens: memo::count(input.encoding, text),
        model: None,
        usage: None,
        created_at: 0,
        interrupted: false,
    }
}
