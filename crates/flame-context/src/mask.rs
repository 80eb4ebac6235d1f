//! Observation masking: the focused frame's older tool results are sent as one-line stubs.
//!
//! Old tool output is most of a long frame's history, and the model rarely needs it verbatim
//! once it has answered it (Lindenbauer et al., "The Complexity Trap", arXiv 2508.21433). A tool
//! result older than the newest K results is replaced by a line that names the tool, its
//! arguments (paths kept whole), the result's size, and how to read it back from the frame's
//! log. The call it answers keeps its name and short arguments, but its long texts (a file
//! written whole, the strings of an edit) are cut to their start with a mark saying how long
//! they were: the workspace holds what was written, and the frame's log the call whole. The newest result is never masked, nor any result after the last assistant message: the
//! model has not answered those yet. The rule depends only on the messages and K, so the same
//! history always gives the same context.
//!
//! K is `ContextInput::keep_tool_results`, the person's `keep_tool_results` setting, by default
//! `DEFAULT_KEEP_TOOL_RESULTS` (1), chosen by replaying the shared sessions in dollars. The masking
//! boundary moves in batches (`opening.rs`) to the newest result older than the newest K. A stub's
//! argument values other than paths are cut to 200 bytes, and it gives the result's size in bytes
//! and tokens and how to read it back (`read_frame_log {"id", "tool_call_id"}`, which returns that
//! one result up to 256 KiB however long the log). A cut call's texts longer than 200 bytes, at any
//! depth and never under a path-like key, keep their start and a mark with their length, and its
//! message is weighed again the way it was counted. Each result's call (the newest earlier message naming it,
//! its first such call) is looked for among the 16 messages before it, and only when it is not
//! there in a map of every call id, built at most once per assembly (`CallsAnswered`), so a frame
//! of thousands of results masks in linear time (`flame-api`'s `benches/context.rs`). Kept
//! masks (`KeptMasks`) hold each settled message's masked form as the message sent, with what the
//! calls of each settled message with a long argument count, weighed when it settles, so that an
//! assembly after a long edit is masked does not count it whole as well as its cut form and its
//! stub; the caller promises that a settled id names one message until
//! `KeptParts::forget_messages`.

use std::collections::hash_map::Entry;
use std::sync::Arc;

use flame_model::cost::group_thousands as grouped;
use flame_model::{FrameId, Message, MessageId, Role, ToolCall, ToolResult};
use flame_tokens::Encoding;
use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;

use crate::memo;

/// The default number of newest tool results kept whole when a batch masks the older ones
/// (`opening.rs`), chosen by replaying the two shared sessions in dollars under Anthropic's
/// cache (`flame replay`; `cargo bench -p flame-api --bench import`). Results are masked in
/// batches, so between two batches more than this many are whole. K = 1, 2, 3 cost 0.550,
/// 0.592, 0.614 of the linear session's input dollars (4d5611e5) and 0.540, 0.550, 0.573
/// (fa812bfe), and sent 0.449, 0.456, 0.465 and 0.376, 0.379, 0.382 of its tokens; first-touch
/// recall was 100% at every K, since stubs and cut calls keep their paths.
pub const DEFAULT_KEEP_TOOL_RESULTS: usize = 1;

/// The most bytes of one argument value (other than a path) a stub shows; longer values are
/// cut and end in "…". Arguments come from the model or an imported transcript.
pub const MAX_STUB_VALUE_BYTES: usize = 200;

/// The most bytes of a path-like argument a stub shows. Paths are kept whole up to this, since
/// they are what lets the model (and first-touch recall) find the file again.
pub const MAX_STUB_PATH_BYTES: usize = 1024;

/// The most arguments a stub shows; the rest are left out.
pub const MAX_STUB_ARGUMENTS: usize = 8;

/// The focus's messages as they are sent, and what masking saved.
pub(crate) struct Masked {
    /// A message sent as it is is the caller's own, shared; only stubbed results and messages
    /// with cut calls are other messages, and a settled one's is kept between assemblies, so an
    /// assembly copies no message.
    pub messages: Vec<Arc<Message>>,
    /// For each message, the tokens masking saved on it (0 for one sent as it is).
    pub saved: Vec<u64>,
    /// For each message, how many of its tool calls had long arguments cut.
    pub masked_calls: Vec<u32>,
}

impl Masked {
    /// What masking did to the messages from `first` on, as the context report counts it: the
    /// tool results it stubbed, the calls whose long arguments it cut, and the tokens it saved.
    pub fn counts_from(&self, first: usize) -> (u32, u32, u64) {
        let results = (first..self.messages.len())
            .filter(|&i| self.messages[i].tool_result.is_some() && self.saved[i] > 0)
            .count() as u32;
        (results, self.masked_calls[first..].iter().sum(), self.saved[first..].iter().sum())
    }
}

/// How a masked result's stub says to get the result again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ReadBack {
    /// From the frame's log with `read_frame_log`: Flame's own agent, which has the frame tools.
    #[default]
    FrameLog,
    /// By making the call again: an agent with its own tools and not Flame's (a client of the
    /// gateway, a session `flame replay` prices), which can read the file or run the command
    /// again.
    CallAgain,
}

/// Masks `messages` (the focus's own, oldest first) keeping the newest `keep` tool results in
/// full; `None` masks nothing.
pub(crate) fn mask(
    messages: &[Arc<Message>],
    keep: Option<usize>,
    focus: &FrameId,
    read_back: ReadBack,
    encoding: Encoding,
) -> Masked {
    mask_kept(messages, boundary(messages, keep), focus, read_back, encoding, None)
}

/// The newest tool result that masking keeping the newest `keep` results in full would mask:
/// every result up to it (by id) is masked. The newest result is always kept whatever `keep`
/// says, and so is every result after the last assistant message, which the model has not
/// answered yet. `None` when nothing would be masked.
pub(crate) fn boundary(messages: &[Arc<Message>], keep: Option<usize>) -> Option<MessageId> {
    let keep = keep?.max(1);
    let last_assistant = messages.iter().rposition(|m| m.role == Role::Assistant)?;
    let results: Vec<usize> =
        (0..messages.len()).filter(|&i| is_tool_result(&messages[i])).collect();
    let masked = results.len().saturating_sub(keep);
    results[..masked].iter().rev().find(|&&i| i <= last_assistant).map(|&i| messages[i].id)
}

/// The masked forms of settled messages (their stubs and cut calls), kept between assemblies:
/// building a stub and weighing a cut call again (JSON written and counted) was most of an
/// assembly of a long frame, and copying the forms (tool-call arguments are JSON maps) the most
/// of what was left. A settled message's content never changes under its id, and the call a
/// settled result answers is among the settled messages before it, so each form depends only
/// on the message's id, the focus and the encoding.
#[derive(Debug, Default)]
pub(crate) struct KeptMasks {
    /// The focus and encoding the forms were made for; another of either starts over.
    made_for: Option<(FrameId, Encoding)>,
    /// Each settled result as its stub sends it.
    stubs: HashMap<MessageId, Kept<Arc<Message>>>,
    /// Each settled message whose calls were cut: the cut form.
    calls: HashMap<MessageId, Kept<CutCalls>>,
    /// The number of the masking under way, which marks the forms it used; the others are
    /// dropped when it ends.
    masking: u64,
    /// What the calls of each settled message with a long argument are counted as, weighed
    /// when the message settles rather than when masking cuts them, so that the two counts do
    /// not fall on one assembly: a chat's assembly after a long edit is masked would otherwise
    /// count the edit's whole arguments, then the cut ones and the stub. Kept until the focus
    /// changes: a frame's settled messages stay.
    weights: HashMap<MessageId, u64>,
    /// The newest settled message weighed, if any.
    weighed_through: Option<MessageId>,
}

#[derive(Debug)]
struct Kept<T> {
    form: T,
    used_by: u64,
}

#[derive(Debug)]
struct CutCalls {
    /// The calls cut, by index in the message, ascending.
    which: Vec<usize>,
    /// The message as sent with those calls cut, costing its tokens less `saved`; `None` when
    /// none of them had a long argument to cut.
    sent: Option<Arc<Message>>,
    /// How many of them had long arguments to cut.
    masked: u32,
    /// The tokens the cut saved on the message's calls.
    saved: u64,
}

impl KeptMasks {
    /// Ends a masking: only the forms it or the masking before it used are kept for the next.
    /// A call masks its messages twice when it weighs a batch (as they are, and as the batch
    /// would send them), so the forms of both are kept, and neither drops the other's.
    fn finish(&mut self) {
        let since = self.masking.saturating_sub(1);
        self.stubs.retain(|_, kept| kept.used_by >= since);
        self.calls.retain(|_, kept| kept.used_by >= since);
        self.masking += 1;
    }
}

/// Masks the tool results of `messages` up to `through` (by id), the newest result and those the
/// model has not answered excepted; with the forms of `messages[..settled]` taken from (and kept
/// in) `kept`. The caller promises that a message id given as settled names the same message in
/// every call with the same `kept`.
pub(crate) fn mask_kept(
    messages: &[Arc<Message>],
    through: Option<MessageId>,
    focus: &FrameId,
    read_back: ReadBack,
    encoding: Encoding,
    kept: Option<(&mut KeptMasks, usize)>,
) -> Masked {
    let unchanged = || Masked {
        messages: messages.to_vec(),
        saved: vec![0; messages.len()],
        masked_calls: vec![0; messages.len()],
    };
    let Some(through) = through else { return unchanged() };
    let Some(last_assistant) = messages.iter().rposition(|m| m.role == Role::Assistant) else {
        return unchanged();
    };
    let (mut kept, settled) = match kept {
        Some((kept, settled)) => {
            if kept.made_for.as_ref().is_none_or(|(f, e)| f != focus || *e != encoding) {
                *kept = KeptMasks {
                    made_for: Some((focus.clone(), encoding)),
                    masking: kept.masking,
                    ..KeptMasks::default()
                };
            }
            (Some(kept), settled.min(messages.len()))
        }
        None => (None, 0),
    };
    let results: Vec<usize> =
        (0..messages.len()).filter(|&i| is_tool_result(&messages[i])).collect();
    // The newest result is always sent whole.
    let masked_count =
        results[..results.len().saturating_sub(1)].partition_point(|&i| messages[i].id <= through);
    let mut answered = CallsAnswered::new(messages);
    let mut saved = vec![0; messages.len()];
    let mut stubs: Vec<Option<Arc<Message>>> = vec![None; messages.len()];
    // The calls the masked results answer, to be cut.
    let mut calls = Vec::new();
    for &i in &results[..masked_count] {
        if i > last_assistant {
            continue;
        }
        let call = answered.of(i);
        calls.extend(call);
        let message = &messages[i];
        let made = || {
            let call =
                call.and_then(|(m, c)| messages[m].tool_calls.as_ref().map(|calls| &calls[c]));
            let stub = stub(message, call, focus, read_back);
            let tokens = memo::count(encoding, &stub);
            Arc::new(stubbed(message, stub, tokens))
        };
        let sent = match &mut kept {
            Some(kept) if i < settled => {
                let masking = kept.masking;
                let entry = kept
                    .stubs
                    .entry(message.id)
                    .or_insert_with(|| Kept { form: made(), used_by: masking });
                entry.used_by = masking;
                Arc::clone(&entry.form)
            }
            _ => made(),
        };
        // A result already smaller than its stub is sent as it is.
        if sent.tokens >= message.tokens {
            continue;
        }
        saved[i] = message.tokens - sent.tokens;
        stubs[i] = Some(sent);
    }
    // A call two results answer is cut once.
    calls.sort_unstable();
    calls.dedup();
    if let Some(kept) = &mut kept {
        weigh_settled(kept, &messages[..settled], encoding);
    }
    // Each message's cut calls, found in the kept forms or made now.
    let mut masked_calls = vec![0; messages.len()];
    let mut cut: Vec<Option<Arc<Message>>> = vec![None; messages.len()];
    for group in calls.chunk_by(|a, b| a.0 == b.0) {
        let m = group[0].0;
        let message = &messages[m];
        let which = group.iter().map(|&(_, c)| c);
        let made;
        let form = match &mut kept {
            Some(kept) if m < settled => {
                let masking = kept.masking;
                let weight = kept.weights.get(&message.id).copied();
                let entry = match kept.calls.entry(message.id) {
                    Entry::Occupied(entry)
                        if entry.get().form.which.iter().copied().eq(which.clone()) =>
                    {
                        entry.into_mut()
                    }
                    entry => {
                        let form = cut_calls(message, which.collect(), encoding, weight);
                        match entry {
                            Entry::Occupied(mut entry) => {
                                entry.insert(Kept { form, used_by: masking });
                                entry.into_mut()
                            }
                            Entry::Vacant(entry) => entry.insert(Kept { form, used_by: masking }),
                        }
                    }
                };
                entry.used_by = masking;
                &entry.form
            }
            _ => {
                made = cut_calls(message, which.collect(), encoding, None);
                &made
            }
        };
        masked_calls[m] = form.masked;
        if let Some(sent) = &form.sent {
            saved[m] = form.saved;
            cut[m] = Some(Arc::clone(sent));
        }
    }
    // The messages as sent.
    let sent = messages
        .iter()
        .zip(stubs)
        .zip(cut)
        .map(|((message, stub), cut)| match (stub, cut) {
            (None, None) => Arc::clone(message),
            (Some(sent), None) | (None, Some(sent)) => sent,
            // A message that is a result and calls too, as odd transcripts have it: its stub
            // with its calls cut, costing what the cut left (its calls were counted with it).
            (Some(stub), Some(cut)) => Arc::new(resent(
                message,
                stub.content.clone(),
                cut.tool_calls.clone(),
                stub.tool_result.clone(),
                cut.tokens,
            )),
        })
        .collect();
    if let Some(kept) = kept {
        kept.finish();
    }
    Masked { messages: sent, saved, masked_calls }
}

/// Result `message` as sent in place of its text and detail: `stub`, of `tokens` tokens.
fn stubbed(message: &Message, stub: String, tokens: u64) -> Message {
    let result = message.tool_result.as_ref().map(|result| ToolResult {
        detail: None,
        is_error: result.is_error,
        name: result.name.clone(),
        tool_call_id: result.tool_call_id.clone(),
    });
    resent(message, stub, message.tool_calls.clone(), result, tokens)
}

/// `message` with its content, calls, result and tokens replaced. Its other fields are copied;
/// the replaced ones, which hold its long texts, are not copied only to be dropped.
fn resent(
    message: &Message,
    content: String,
    tool_calls: Option<Vec<ToolCall>>,
    tool_result: Option<ToolResult>,
    tokens: u64,
) -> Message {
    Message {
        id: message.id,
        frame: message.frame.clone(),
        role: message.role,
        content,
        tool_calls,
        tool_result,
        tokens,
        model: message.model.clone(),
        usage: message.usage,
        created_at: message.created_at,
        interrupted: message.interrupted,
    }
}

/// Weighs the calls of each of `settled` not weighed yet that has a long argument.
fn weigh_settled(kept: &mut KeptMasks, settled: &[Arc<Message>], encoding: Encoding) {
    let weighed = kept.weighed_through;
    let from = settled.iter().rposition(|m| Some(m.id) <= weighed).map_or(0, |i| i + 1);
    for message in &settled[from..] {
        let calls = message.tool_calls.as_deref().unwrap_or_default();
        if calls.iter().any(|call| has_long_argument(&call.arguments, false)) {
            kept.weights
                .entry(message.id)
                .or_insert_with(|| memo::count(encoding, &calls_json(message)));
        }
    }
    if let Some(last) = settled.last() {
        kept.weighed_through = Some(last.id);
    }
}

/// Whether [`masked_arguments`] would cut something of `value`.
fn has_long_argument(value: &Value, under_path: bool) -> bool {
    match value {
        Value::String(text) => !under_path && text.len() > MAX_STUB_VALUE_BYTES + MARK_BYTES,
        Value::Array(items) => items.iter().any(|v| has_long_argument(v, under_path)),
        Value::Object(map) => {
            map.iter().any(|(k, v)| has_long_argument(v, under_path || is_path_key(k)))
        }
        _ => false,
    }
}

/// Message `message`'s calls with the long arguments of calls `which` cut, and what that saved;
/// `weight` is what its calls are counted as, when known.
fn cut_calls(
    message: &Message,
    which: Vec<usize>,
    encoding: Encoding,
    weight: Option<u64>,
) -> CutCalls {
    let mut calls = message.tool_calls.clone().unwrap_or_default();
    let mut masked = 0;
    for &c in &which {
        if let Some(shorter) = masked_arguments(&calls[c].arguments, false) {
            calls[c].arguments = shorter;
            masked += 1;
        }
    }
    if masked == 0 {
        return CutCalls { which, sent: None, masked, saved: 0 };
    }
    let before = weight.unwrap_or_else(|| memo::count(encoding, &calls_json(message)));
    let after = memo::count(encoding, &calls_json_of(&calls));
    let saved = before.saturating_sub(after);
    // A call's arguments were counted as the JSON of the message's calls, so a message with
    // cut calls costs its own tokens less what the cut saved.
    let tokens = message.tokens.saturating_sub(saved);
    let sent =
        resent(message, message.content.clone(), Some(calls), message.tool_result.clone(), tokens);
    CutCalls { which, sent: Some(Arc::new(sent)), masked, saved }
}

/// How far back from a result its call is looked for before every message's call is found in
/// one pass: a result almost always follows the message that made its call.
const NEAR_CALL: usize = 16;

/// Where the call a result answers is, found by looking back a little from the result, or in
/// [`calls_answered`] of all the messages, made once, when that finds nothing: most assemblies
/// mask a few results of a long frame, and hashing every call id of it at every call was most
/// of masking's cost.
struct CallsAnswered<'a> {
    messages: &'a [Arc<Message>],
    all: Option<Vec<Option<(usize, usize)>>>,
}

impl<'a> CallsAnswered<'a> {
    fn new(messages: &'a [Arc<Message>]) -> CallsAnswered<'a> {
        CallsAnswered { messages, all: None }
    }

    /// As `calls_answered(messages)[i]`.
    fn of(&mut self, i: usize) -> Option<(usize, usize)> {
        let Some(result) = &self.messages[i].tool_result else { return None };
        let id = result.tool_call_id.as_str();
        for m in (i.saturating_sub(NEAR_CALL)..i).rev() {
            let calls = self.messages[m].tool_calls.iter().flatten();
            if let Some(c) = calls.into_iter().position(|call| call.id == id) {
                return Some((m, c));
            }
        }
        if i <= NEAR_CALL {
            return None;
        }
        self.all.get_or_insert_with(|| calls_answered(self.messages))[i]
    }
}

/// For each message, where the call it answers is when it is a tool result: the newest earlier
/// message with a call of the result's id, and the first such call in that message. `None` for
/// other messages and for a result whose call is not among the earlier messages. One pass with
/// a map from call id to its newest call, so a frame with thousands of results is not searched
/// again for each of them.
fn calls_answered(messages: &[Arc<Message>]) -> Vec<Option<(usize, usize)>> {
    let mut newest: HashMap<&str, (usize, usize)> = HashMap::default();
    let mut answered = vec![None; messages.len()];
    for (m, message) in messages.iter().enumerate() {
        // A result's call is looked for before its own message's calls are added: only earlier
        // messages hold the call it answers.
        if let Some(result) = &message.tool_result {
            answered[m] = newest.get(result.tool_call_id.as_str()).copied();
        }
        for (c, call) in message.tool_calls.iter().flatten().enumerate() {
            match newest.entry(call.id.as_str()) {
                // Within one message the first call of an id is the one found.
                Entry::Occupied(entry) if entry.get().0 == m => {}
                Entry::Occupied(mut entry) => {
                    entry.insert((m, c));
                }
                Entry::Vacant(entry) => {
                    entry.insert((m, c));
                }
            }
        }
    }
    answered
}

/// `value` with every text longer than [`MAX_STUB_VALUE_BYTES`] cut and marked, at any depth,
/// except under a path-like key; `None` when nothing is long enough to cut.
fn masked_arguments(value: &Value, under_path: bool) -> Option<Value> {
    match value {
        Value::String(text) if !under_path && text.len() > MAX_STUB_VALUE_BYTES + MARK_BYTES => {
            Some(Value::String(format!(
                "{} [masked by Flame: {} bytes in all; the frame's log has it whole]",
                cut(text, MAX_STUB_VALUE_BYTES),
                grouped(text.len() as u64)
            )))
        }
        Value::Array(items) => {
            let shorter: Vec<Option<Value>> =
                items.iter().map(|v| masked_arguments(v, under_path)).collect();
            shorter.iter().any(Option::is_some).then(|| {
                Value::Array(
                    shorter
                        .into_iter()
                        .zip(items)
                        .map(|(s, v)| s.unwrap_or_else(|| v.clone()))
                        .collect(),
                )
            })
        }
        Value::Object(map) => {
            let mut changed = false;
            let shorter: serde_json::Map<String, Value> = map
                .iter()
                .map(|(k, v)| {
                    let cut = masked_arguments(v, under_path || is_path_key(k));
                    changed |= cut.is_some();
                    (k.clone(), cut.unwrap_or_else(|| v.clone()))
                })
                .collect();
            changed.then_some(Value::Object(shorter))
        }
        _ => None,
    }
}

/// About the bytes the mark adds to a cut text: a text only a little longer than the limit is
/// left whole, since cutting it would save nothing.
const MARK_BYTES: usize = 80;

/// The JSON text a message's tool calls are counted as (`flame_tokens::count_message`).
fn calls_json(message: &Message) -> String {
    message.tool_calls.as_deref().map_or_else(String::new, calls_json_of)
}

fn calls_json_of(calls: &[ToolCall]) -> String {
    serde_json::to_string(calls).unwrap_or_default()
}

fn is_tool_result(m: &Message) -> bool {
    m.role == Role::Tool && m.tool_result.is_some()
}

/// The line a masked result is sent as; `call` is the call it answers, if found.
fn stub(result: &Message, call: Option<&ToolCall>, focus: &FrameId, read_back: ReadBack) -> String {
    let tool_result = result.tool_result.as_ref().expect("only tool results are masked");
    let name =
        tool_result.name.as_deref().or(call.map(|c| c.name.as_str())).unwrap_or("a tool call");
    let arguments = call.map(|c| format!(" {}", arguments(&c.arguments))).unwrap_or_default();
    let how = match read_back {
        ReadBack::FrameLog => {
            let read_back = serde_json::json!({
                "id": focus.to_string(),
                "tool_call_id": tool_result.tool_call_id,
            });
            format!("read it back with read_frame_log {read_back}")
        }
        ReadBack::CallAgain => format!("to see it again, call {name} again"),
    };
    format!(
        "[Flame] Result of {name}{arguments} masked ({} bytes, {} tokens); {how}",
        grouped(result.content.len() as u64),
        grouped(result.tokens),
    )
}

/// The arguments as compact JSON, paths whole and other long values cut.
fn arguments(value: &Value) -> String {
    let Value::Object(map) = value else {
        return cut(&value.to_string(), MAX_STUB_VALUE_BYTES);
    };
    let mut shown = serde_json::Map::new();
    for (key, v) in map.iter().take(MAX_STUB_ARGUMENTS) {
        let limit = if is_path_key(key) { MAX_STUB_PATH_BYTES } else { MAX_STUB_VALUE_BYTES };
        let key = cut(key, MAX_STUB_VALUE_BYTES);
        let shown_value = match v {
            Value::String(s) => Value::String(cut(s, limit)),
            other => {
                let text = other.to_string();
                if text.len() <= limit { other.clone() } else { Value::String(cut(&text, limit)) }
            }
        };
        shown.insert(key, shown_value);
    }
    Value::Object(shown).to_string()
}

/// Whether an argument names a file or folder: `path`, `file_path`, `notebook_path`, `paths`…
fn is_path_key(key: &str) -> bool {
    key.to_ascii_lowercase().contains("path")
}

/// `text` cut to at most `limit` bytes on a character boundary, with "…" when cut.
fn cut(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use flame_model::{Frame, MessageId, Status, ToolResult, TreeId};
    use serde_json::json;

    use super::*;
    use crate::{Budget, ContextInput};

    const ENCODING: Encoding = Encoding::O200kBase;

    /// The messages shared, as the assembler takes them.
    fn shared(messages: &[Message]) -> Vec<Arc<Message>> {
        messages.iter().cloned().map(Arc::new).collect()
    }

    /// [`super::mask`] of messages the test holds.
    fn mask(
        messages: &[Message],
        keep: Option<usize>,
        focus: &FrameId,
        encoding: Encoding,
    ) -> Masked {
        super::mask(&shared(messages), keep, focus, ReadBack::FrameLog, encoding)
    }

    fn focus() -> FrameId {
        FrameId::parse("f0000000001").unwrap()
    }

    fn message(id: i64, role: Role, content: &str) -> Message {
        Message {
            id: MessageId(id),
            frame: focus(),
            role,
            content: content.to_owned(),
            tool_calls: None,
            tool_result: None,
            tokens: flame_tokens::count(ENCODING, content),
            model: None,
            usage: None,
            created_at: id,
            interrupted: false,
        }
    }

    fn call(id: i64, call_id: &str, arguments: Value) -> Message {
        let mut m = message(id, Role::Assistant, "");
        m.tool_calls = Some(vec![ToolCall {
            arguments,
            id: call_id.to_owned(),
            name: "read_file".to_owned(),
        }]);
        m
    }

    fn result(id: i64, call_id: &str, content: &str) -> Message {
        let mut m = message(id, Role::Tool, content);
        m.tool_result = Some(ToolResult {
            detail: None,
            is_error: false,
            name: None,
            tool_call_id: call_id.to_owned(),
        });
        m
    }

    /// A long output, far larger than any stub.
    fn output(n: usize) -> String {
        format!("output {n}: {}", "fn main() { println!(\"hello\"); }\n".repeat(100))
    }

    /// A user request, then `n` call/result pairs, then the assistant's answer.
    fn history(n: usize) -> Vec<Message> {
        let mut messages = vec![message(0, Role::User, "read the files")];
        for k in 0..n {
            let id = messages.len() as i64;
            let call_id = format!("call_{k}");
            messages.push(call(id, &call_id, json!({"path": format!("src/{k}.rs")})));
            messages.push(result(id + 1, &call_id, &output(k)));
        }
        let id = messages.len() as i64;
        messages.push(message(id, Role::Assistant, "done"));
        messages
    }

    fn masked_indexes(masked: &Masked) -> Vec<usize> {
        (0..masked.saved.len()).filter(|&i| masked.saved[i] > 0).collect()
    }

    /// The call result `i` answers, found the way masking first found it: by searching the
    /// earlier messages, newest first, for the first call of the result's id.
    fn call_by_search(messages: &[Message], i: usize) -> Option<(usize, usize)> {
        let id = &messages[i].tool_result.as_ref()?.tool_call_id;
        (0..i).rev().find_map(|m| {
            messages[m].tool_calls.as_ref()?.iter().position(|c| &c.id == id).map(|c| (m, c))
        })
    }

    proptest::proptest! {
        /// Call ids repeat across messages and within one, and results name calls that come
        /// later, never, or more than once: the map, and the lookup that looks back a little
        /// before it takes the map, find the call the search found.
        #[test]
        fn the_call_map_finds_the_call_a_search_of_the_earlier_messages_finds(
            turns in proptest::collection::vec((0..3u8, 0..4u8), 0..60)
        ) {
            let mut messages = Vec::new();
            for (k, (kind, id)) in turns.into_iter().enumerate() {
                let k = k as i64;
                let call_id = |n: u8| format!("c{}", n % 4);
                let message = match kind {
                    0 => {
                        let mut turn = call(k, &call_id(id), json!({"path": format!("{k}.rs")}));
                        let calls = turn.tool_calls.as_mut().unwrap();
                        for n in [id + 1, id] {
                            calls.push(ToolCall {
                                arguments: json!({"path": format!("{k}-{n}.rs")}),
                                id: call_id(n),
                                name: "read_file".to_owned(),
                            });
                        }
                        turn
                    }
                    1 => result(k, &call_id(id), "output"),
                    _ => message(k, Role::User, "go on"),
                };
                messages.push(message);
            }
            let messages_shared = shared(&messages);
            let answered = calls_answered(&messages_shared);
            let mut looked_up = CallsAnswered::new(&messages_shared);
            for (i, found) in answered.into_iter().enumerate() {
                proptest::prop_assert_eq!(found, call_by_search(&messages, i), "message {}", i);
                proptest::prop_assert_eq!(looked_up.of(i), found, "message {}", i);
            }
        }
    }

    /// Masking as it was first written: each masked result's call found by searching the
    /// messages before it, and the call cut in the copy as each result is met.
    fn mask_as_first_written(messages: &[Message], keep: Option<usize>) -> Masked {
        let mut out = Masked {
            messages: shared(messages),
            saved: vec![0; messages.len()],
            masked_calls: vec![0; messages.len()],
        };
        let Some(keep) = keep else { return out };
        let keep = keep.max(1);
        let Some(last_assistant) = messages.iter().rposition(|m| m.role == Role::Assistant) else {
            return out;
        };
        let results: Vec<usize> =
            (0..messages.len()).filter(|&i| is_tool_result(&messages[i])).collect();
        let masked_count = results.len().saturating_sub(keep);
        for &i in &results[..masked_count] {
            if i > last_assistant {
                continue;
            }
            let found = call_by_search(messages, i);
            if let Some((m, c)) = found {
                let calls = Arc::make_mut(&mut out.messages[m]).tool_calls.as_mut().unwrap();
                if let Some(shorter) = masked_arguments(&calls[c].arguments, false) {
                    calls[c].arguments = shorter;
                    out.masked_calls[m] += 1;
                }
            }
            let message = &messages[i];
            let call = found.map(|(m, c)| &messages[m].tool_calls.as_ref().unwrap()[c]);
            let stub = stub(message, call, &focus(), ReadBack::FrameLog);
            let tokens = memo::count(ENCODING, &stub);
            if tokens >= message.tokens {
                continue;
            }
            out.saved[i] = message.tokens - tokens;
            let sent = Arc::make_mut(&mut out.messages[i]);
            sent.content = stub;
            sent.tokens = tokens;
            if let Some(result) = &mut sent.tool_result {
                result.detail = None;
            }
        }
        for (m, message) in messages.iter().enumerate().filter(|(m, _)| out.masked_calls[*m] > 0) {
            let before = memo::count(ENCODING, &calls_json(message));
            let after = memo::count(ENCODING, &calls_json(&out.messages[m]));
            let saved = before.saturating_sub(after);
            out.saved[m] = saved;
            Arc::make_mut(&mut out.messages[m]).tokens = message.tokens.saturating_sub(saved);
        }
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 200, ..Default::default() })]
        /// Calls with long and short arguments, results large and small, with and without a
        /// detail, ids that repeat or answer nothing, a message that is a result and calls too:
        /// the messages, savings and cut calls are what masking as first written gave.
        #[test]
        fn masking_gives_what_it_gave_as_first_written(
            turns in proptest::collection::vec((0..5u8, 0..4u8, proptest::bool::ANY), 0..30),
            keep in proptest::option::of(0..5usize),
        ) {
            let long = "let x = 1;\n".repeat(40);
            let mut messages = Vec::new();
            for (k, (kind, id, big)) in turns.into_iter().enumerate() {
                let k = k as i64;
                let call_id = format!("c{id}");
                let arguments = if big {
                    json!({"path": format!("{k}.rs"), "content": long, "edits": [{"new": long}]})
                } else {
                    json!({"path": format!("{k}.rs")})
                };
                let mut message = match kind {
                    0 => call(k, &call_id, arguments),
                    1 | 2 => {
                        let mut r = result(k, &call_id, &format!("output {k}"));
                        r.tokens = if big { 5_000 } else { 3 };
                        if kind == 2 {
                            r.tool_result.as_mut().unwrap().detail =
                                Some(flame_model::ToolDetail::List { count: 3, truncated: false });
                        }
                        r
                    }
                    3 => message(k, Role::Assistant, "thinking"),
                    _ => {
                        // A result that also calls: as odd transcripts have it.
                        let mut r = result(k, &call_id, "both");
                        r.tokens = 4_000;
                        r.tool_calls = call(k, &format!("c{}", (id + 1) % 4), arguments).tool_calls;
                        r
                    }
                };
                if message.tool_calls.is_some() {
                    message.tokens = 10_000;
                }
                messages.push(message);
            }
            let now = mask(&messages, keep, &focus(), ENCODING);
            let first = mask_as_first_written(&messages, keep);
            proptest::prop_assert_eq!(&now.messages, &first.messages);
            proptest::prop_assert_eq!(&now.saved, &first.saved);
            proptest::prop_assert_eq!(&now.masked_calls, &first.masked_calls);
            // The history as it grows, one message at a time, each masked with the forms
            // kept from the masking before (all but the newest message settled): the same.
            let mut kept = KeptMasks::default();
            for end in 0..=messages.len() {
                let grown = &messages[..end];
                let settled = end.saturating_sub(1);
                let grown_shared = shared(grown);
                let with_kept = mask_kept(&grown_shared, boundary(&grown_shared, keep), &focus(), ReadBack::FrameLog, ENCODING, Some((&mut kept, settled)));
                let fresh = mask(grown, keep, &focus(), ENCODING);
                proptest::prop_assert_eq!(with_kept.messages, fresh.messages, "{} messages", end);
                proptest::prop_assert_eq!(with_kept.saved, fresh.saved);
                proptest::prop_assert_eq!(with_kept.masked_calls, fresh.masked_calls);
            }
        }
    }

    #[test]
    fn two_results_of_one_call_cut_it_once() {
        let long = "z".repeat(1_000);
        let mut messages = history(3);
        messages[1] = call(1, "call_0", json!({"path": "a.rs", "content": long}));
        // The second result answers the same call again.
        messages[4].tool_result.as_mut().unwrap().tool_call_id = "call_0".to_owned();
        let masked = mask(&messages, Some(1), &focus(), ENCODING);
        assert_eq!(masked_indexes(&masked), vec![1, 2, 4]);
        assert_eq!(masked.masked_calls, vec![0, 1, 0, 0, 0, 0, 0, 0]);
        assert!(masked.messages[4].content.contains(r#"{"content":"zzz"#));
    }

    /// A long working session: 2,000 results, each stub naming its own call. Each result's
    /// call is found once, not by searching the messages before it.
    #[test]
    fn a_frame_of_two_thousand_results_is_masked_call_by_call() {
        let n = 2_000;
        let mut messages = vec![message(0, Role::User, "read the files")];
        for k in 0..n {
            let id = messages.len() as i64;
            let call_id = format!("call_{k}");
            messages.push(call(id, &call_id, json!({"path": format!("src/{k}.rs")})));
            let mut output = result(id + 1, &call_id, &format!("output {k:04}"));
            // Weighed as a long output would be, without counting one.
            output.tokens = 5_000;
            messages.push(output);
        }
        messages.push(message(messages.len() as i64, Role::Assistant, "done"));
        let masked = mask(&messages, Some(DEFAULT_KEEP_TOOL_RESULTS), &focus(), ENCODING);
        let stubbed = masked_indexes(&masked);
        assert_eq!(stubbed.len(), n - DEFAULT_KEEP_TOOL_RESULTS);
        for (k, &i) in stubbed.iter().enumerate() {
            assert_eq!(i, 2 + 2 * k);
            let stub = &masked.messages[i].content;
            let named = format!(
                r#"read_file {{"path":"src/{k}.rs"}} masked (11 bytes, 5,000 tokens); read it back with read_frame_log {{"id":"f0000000001","tool_call_id":"call_{k}"}}"#
            );
            assert!(stub.ends_with(&named), "{stub}");
        }
    }

    #[test]
    fn keeps_the_newest_k_results_in_full() {
        let messages = history(6);
        let masked = mask(&messages, Some(2), &focus(), ENCODING);
        // Results are at 2, 4, 6, 8, 10, 12; the newest two (10 and 12) stay.
        assert_eq!(masked_indexes(&masked), vec![2, 4, 6, 8]);
        assert_eq!(*masked.messages[10], messages[10]);
        assert_eq!(*masked.messages[12], messages[12]);
        for i in [2, 4, 6, 8] {
            assert!(masked.messages[i].content.starts_with("[Flame] Result of read_file"));
            assert_eq!(masked.messages[i].tool_result, messages[i].tool_result);
            assert!(masked.messages[i].tokens < messages[i].tokens);
        }
        assert_eq!(masked.messages.len(), messages.len());
    }

    #[test]
    fn never_masks_the_newest_result() {
        let messages = history(3);
        let masked = mask(&messages, Some(0), &focus(), ENCODING);
        assert_eq!(masked_indexes(&masked), vec![2, 4]);
        assert_eq!(*masked.messages[6], messages[6]);
    }

    #[test]
    fn never_masks_a_result_the_model_has_not_answered() {
        let mut messages = history(3);
        // The model's last turn called three tools at once; their results have no answer yet.
        let id = messages.len() as i64;
        let mut turn = call(id, "late_0", json!({"path": "src/late0.rs"}));
        turn.tool_calls.as_mut().unwrap().extend([
            ToolCall {
                arguments: json!({"path": "src/late1.rs"}),
                id: "late_1".to_owned(),
                name: "read_file".to_owned(),
            },
            ToolCall {
                arguments: json!({"path": "src/late2.rs"}),
                id: "late_2".to_owned(),
                name: "read_file".to_owned(),
            },
        ]);
        messages.push(turn);
        for k in 0..3 {
            let id = messages.len() as i64;
            messages.push(result(id, &format!("late_{k}"), &output(10 + k)));
        }
        let masked = mask(&messages, Some(1), &focus(), ENCODING);
        // All three unanswered results stay although K is 1; the earlier, answered ones go.
        assert_eq!(masked_indexes(&masked), vec![2, 4, 6]);
        assert_eq!(masked.messages[9..], shared(&messages[9..]));
    }

    #[test]
    fn none_masks_nothing() {
        let messages = history(20);
        let masked = mask(&messages, None, &focus(), ENCODING);
        assert_eq!(masked.messages, shared(&messages));
        assert!(masked.saved.iter().all(|&s| s == 0));
    }

    #[test]
    fn masking_is_deterministic() {
        let messages = history(12);
        let first = mask(&messages, Some(4), &focus(), ENCODING);
        let second = mask(&messages, Some(4), &focus(), ENCODING);
        assert_eq!(first.messages, second.messages);
        assert_eq!(first.saved, second.saved);
    }

    #[test]
    fn the_stub_names_the_tool_its_arguments_the_size_and_where_to_read_it() {
        let mut messages = history(2);
        messages[1] = call(1, "call_0", json!({"path": "src/a.rs", "limit": 200}));
        let masked = mask(&messages, Some(1), &focus(), ENCODING);
        let size = messages[2].content.len();
        assert!(size > 1000);
        assert_eq!(
            masked.messages[2].content,
            format!(
                "[Flame] Result of read_file {{\"limit\":200,\"path\":\"src/a.rs\"}} masked ({} bytes, {} tokens); read it back with read_frame_log {{\"id\":\"f0000000001\",\"tool_call_id\":\"call_0\"}}",
                grouped(size as u64),
                grouped(messages[2].tokens),
            )
        );
    }

    /// An agent with its own tools (a client of the gateway) is told to make the call again,
    /// not to read a frame log it has no tool for.
    #[test]
    fn an_agents_stub_says_to_make_the_call_again() {
        let mut messages = history(2);
        messages[1] = call(1, "call_0", json!({"file_path": "src/a.rs"}));
        let masked =
            super::mask(&shared(&messages), Some(1), &focus(), ReadBack::CallAgain, ENCODING);
        let size = messages[2].content.len();
        assert_eq!(
            masked.messages[2].content,
            format!(
                "[Flame] Result of read_file {{\"file_path\":\"src/a.rs\"}} masked ({} bytes, {} tokens); to see it again, call read_file again",
                grouped(size as u64),
                grouped(messages[2].tokens),
            )
        );
    }

    #[test]
    fn the_stub_takes_the_name_the_result_records_and_names_a_call_it_cannot_find() {
        let mut messages = history(2);
        messages[2].tool_result.as_mut().unwrap().name = Some("search".to_owned());
        messages[2].tool_result.as_mut().unwrap().tool_call_id = "elsewhere".to_owned();
        let masked = mask(&messages, Some(1), &focus(), ENCODING);
        assert!(
            masked.messages[2].content.starts_with("[Flame] Result of search masked ("),
            "{}",
            masked.messages[2].content
        );
    }

    #[test]
    fn long_arguments_are_cut_but_paths_are_kept_up_to_their_limit() {
        let path = format!("src/{}.rs", "deep/".repeat(100));
        assert!(path.len() > MAX_STUB_VALUE_BYTES && path.len() < MAX_STUB_PATH_BYTES);
        let long_path = "p".repeat(MAX_STUB_PATH_BYTES + 10);
        let text = "x".repeat(MAX_STUB_VALUE_BYTES + 50);
        let shown =
            arguments(&json!({"file_path": path, "new_string": text, "notebook_path": long_path}));
        assert!(shown.contains(&path), "{shown}");
        assert!(shown.contains(&format!("\"{}…\"", "x".repeat(MAX_STUB_VALUE_BYTES))), "{shown}");
        assert!(!shown.contains(&"x".repeat(MAX_STUB_VALUE_BYTES + 1)));
        assert!(shown.contains(&format!("\"{}…\"", "p".repeat(MAX_STUB_PATH_BYTES))));
        assert!(!shown.contains(&"p".repeat(MAX_STUB_PATH_BYTES + 1)));
        // A value that is not text is cut as its JSON, and a multi-byte character is not split.
        let list: Vec<u32> = (0..200).collect();
        let shown = arguments(&json!({"lines": list, "query": "é".repeat(MAX_STUB_VALUE_BYTES)}));
        assert!(shown.len() < 3 * MAX_STUB_VALUE_BYTES + 40, "{shown}");
        assert!(shown.contains(&format!("\"{}…\"", "é".repeat(MAX_STUB_VALUE_BYTES / 2))));
    }

    #[test]
    fn a_stub_shows_at_most_its_limit_of_arguments() {
        let many: serde_json::Map<String, Value> =
            (0..MAX_STUB_ARGUMENTS + 3).map(|k| (format!("a{k:02}"), json!(k))).collect();
        let shown = arguments(&Value::Object(many));
        assert!(shown.contains(&format!("\"a{:02}\"", MAX_STUB_ARGUMENTS - 1)));
        assert!(!shown.contains(&format!("\"a{:02}\"", MAX_STUB_ARGUMENTS)));
    }

    #[test]
    fn a_masked_results_call_keeps_its_paths_and_short_arguments_and_cuts_long_texts() {
        let long = "let x = 1;\n".repeat(100);
        let mut messages = history(3);
        for i in [1, 3] {
            let call_id = format!("call_{}", i / 2);
            messages[i] = call(
                i as i64,
                &call_id,
                json!({
                    "file_path": format!("src/{}.rs", "deep/".repeat(60)),
                    "old_string": long,
                    "replace_all": false,
                    "edits": [{"new_string": long, "old_string": "x"}],
                }),
            );
            messages[i].tokens = flame_tokens::count_message(ENCODING, &new_message(&messages[i]));
        }
        let masked = mask(&messages, Some(1), &focus(), ENCODING);
        // The results at 2 and 4 are masked, so the calls at 1 and 3 are cut; 5 and 6 stay.
        assert_eq!(masked.masked_calls, vec![0, 1, 0, 1, 0, 0, 0, 0]);
        assert_eq!(*masked.messages[5], messages[5]);
        let arguments = &masked.messages[1].tool_calls.as_ref().unwrap()[0].arguments;
        assert_eq!(
            arguments["file_path"],
            messages[1].tool_calls.as_ref().unwrap()[0].arguments["file_path"]
        );
        assert_eq!(arguments["replace_all"], false);
        assert_eq!(arguments["edits"][0]["old_string"], "x");
        for cut in [&arguments["old_string"], &arguments["edits"][0]["new_string"]] {
            let cut = cut.as_str().unwrap();
            assert!(cut.starts_with(&long[..MAX_STUB_VALUE_BYTES]), "{cut}");
            assert!(
                cut.ends_with(
                    "[masked by Flame: 1,100 bytes in all; the frame's log has it whole]"
                ),
                "{cut}"
            );
        }
        // The call's message weighs what its cut calls weigh, and the saving is counted.
        let weighed = flame_tokens::count_message(ENCODING, &new_message(&masked.messages[1]));
        assert_eq!(masked.messages[1].tokens, weighed);
        assert_eq!(masked.saved[1], messages[1].tokens - weighed);
    }

    #[test]
    fn a_call_with_only_short_arguments_is_sent_as_it_is() {
        let messages = history(4);
        let masked = mask(&messages, Some(1), &focus(), ENCODING);
        assert!(masked.masked_calls.iter().all(|&n| n == 0));
        for i in [1, 3, 5] {
            assert_eq!(*masked.messages[i], messages[i]);
            assert_eq!(masked.saved[i], 0);
        }
        // A text just past the limit is not worth its mark.
        let edge = "y".repeat(MAX_STUB_VALUE_BYTES + MARK_BYTES);
        assert_eq!(masked_arguments(&json!({"content": edge}), false), None);
    }

    fn new_message(m: &Message) -> flame_model::NewMessage {
        flame_model::NewMessage {
            role: m.role,
            content: m.content.clone(),
            tool_calls: m.tool_calls.clone(),
            tool_result: m.tool_result.clone(),
            model: m.model.clone(),
            usage: m.usage,
            interrupted: m.interrupted,
        }
    }

    #[test]
    fn the_report_says_what_masking_saved() {
        let frame = Frame::new(
            focus(),
            TreeId::parse("t0000000000").unwrap(),
            None,
            0,
            "Read",
            "Read the files",
            Status::InProgress,
            1,
        );
        let messages = history(5);
        let sent = shared(&messages);
        let logs = HashMap::new();
        let trails = HashMap::new();
        let frames = [frame];
        let input = |keep| ContextInput {
            focus: &frames[0].id,
            frames: &frames,
            messages: &sent,
            encoding: ENCODING,
            budget: Budget::of(1_000_000),
            log_paths: &logs,
            linear_message_tokens: 0,
            workspace: None,
            trails: &trails,
            path_trails: &trails,
            keep_tool_results: keep,
            allowance: None,
            instructions: None,
            read_back: ReadBack::FrameLog,
        };
        let full = crate::assemble(&input(None)).unwrap();
        let masked = crate::assemble(&input(Some(2))).unwrap();
        assert_eq!(full.report.masked_results, 0);
        assert_eq!(full.report.masked_tokens_saved, 0);
        assert_eq!(masked.report.masked_results, 3);
        assert!(masked.report.masked_tokens_saved > 0);
        assert_eq!(
            full.report.total_tokens - masked.report.total_tokens,
            masked.report.masked_tokens_saved
        );
        assert_eq!(
            masked.messages[2].content,
            mask(&messages, Some(2), &focus(), ENCODING).messages[2].content
        );
    }
}
