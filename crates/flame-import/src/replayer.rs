//! What Flame sends for one call of a session, one call at a time: the step [`crate::replay`]
//! prices for every recorded call, and the request the gateway sends in its context mode
//! (issue 37), so that the bytes the gateway sends are the requests replay prices.
//!
//! A [`Replayer`] keeps what a live agent keeps between the calls of a session: each frame's
//! context as stored (its opening, what was masked, what it was told) and the notes appended to
//! each frame, both by the frame's draft key, which stays the same as the session's draft grows.
//! [`Replayer::call`] takes the draft as it stands (frames not yet created are absent, frames not
//! yet finished are in progress: the tree as it stood at the call) and where the call is — its
//! frame, how many of the frame's messages came before it, when it is made and how many tokens
//! the thread's fixed prompt weighs — and gives the context `flame_context::next_call` makes for
//! it ([`Replayer::prompt`]: the request `flame_context::request::prompt` shapes from it).
//!
//! Messages are numbered within their frame (`2 × (n + 1)` for the frame's `n`-th message) and a
//! note the call appends takes the odd number just below the call's first message, so a frame's
//! numbers stay the same however the session's other frames grow. The frames get the ids the
//! caller gives them (the stored frames', for the gateway), or ids made from their keys.

use std::collections::HashMap;
use std::sync::Arc;

use flame_context::request::Prompt;
use flame_context::{Budget, CachePolicy, CallRules, ContextDoc, ContextInput, KeptParts};
use flame_model::{
    FileTrail, Frame, FrameContext, FrameId, IdSource, Message, MessageId, NewMessage, Role,
    Status, Timestamp, TreeId,
};
use flame_tokens::Encoding;

use crate::draft::{Draft, DraftFile};

/// Where a call is made in a draft.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallSite {
    /// The frame, by index in the draft.
    pub frame: usize,
    /// How many of the frame's messages came before the call.
    pub before: usize,
    pub at: Timestamp,
    /// The tokens of the thread's fixed prompt (the agent's system prompt and tools), which
    /// stand where Flame's own tool schemas would.
    pub fixed: u64,
}

/// The ids a draft's frames have, and where their logs are.
#[derive(Debug, Clone, Copy)]
pub struct FrameIds<'a> {
    pub tree: &'a TreeId,
    /// By frame index in the draft.
    pub frames: &'a [FrameId],
    /// What the logs' relative paths are shown under (the data directory, absolute), so that
    /// an agent with its own file tools can read them.
    pub log_root: Option<&'a str>,
}

/// What one call sends.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayedCall {
    pub doc: ContextDoc,
    /// The call's frame's id. `doc`'s message ids number the frame's messages: an even id
    /// `2 × (n + 1)` is its `n`-th ([`frame_message_of`]), an odd one a note.
    pub focus: FrameId,
    /// The call made its frame's opening again (the frame had one).
    pub made_again: bool,
}

/// The id of a frame's `n`-th message in a replay.
pub fn frame_message_id(n: usize) -> MessageId {
    MessageId(2 * (n as i64 + 1))
}

/// The frame's message a replay's id names, when it names one (not a note).
pub fn frame_message_of(id: MessageId) -> Option<usize> {
    (id.0 > 0 && id.0 % 2 == 0).then(|| (id.0 / 2 - 1) as usize)
}

/// What a live agent keeps between a session's calls (see the module's comment).
#[derive(Debug)]
pub struct Replayer {
    encoding: Encoding,
    policy: CachePolicy,
    keep: usize,
    contexts: HashMap<String, FrameContext>,
    notes: HashMap<String, Vec<Arc<Message>>>,
    /// What each frame's last call made, kept for its next.
    kept: HashMap<String, FrameKept>,
}

/// What a frame's last call made, kept for its next: a session's calls each send the frame's
/// messages again with a few more, and making each message and each masked result again was
/// most of what a call cost (the gateway makes one before every request it sends).
#[derive(Debug, Default)]
struct FrameKept {
    /// The frame's messages, each beside the draft message it was made from: a message whose
    /// draft message is the same (the same `Arc`) is not made again.
    made: Vec<(Arc<NewMessage>, Arc<Message>)>,
    /// The messages the call was given, notes included: those that open the next call's
    /// messages unchanged (the same `Arc`s) are its settled messages.
    given: Vec<Arc<Message>>,
    /// The masked forms and frame texts `flame_context::next_call` keeps between calls.
    parts: KeptParts,
}

impl Replayer {
    /// A replayer counting in `encoding`, for calls to a provider of `policy`, keeping the
    /// newest `keep` tool results whole.
    pub fn new(encoding: Encoding, policy: CachePolicy, keep: usize) -> Replayer {
        Replayer {
            encoding,
            policy,
            keep,
            contexts: HashMap::new(),
            notes: HashMap::new(),
            kept: HashMap::new(),
        }
    }

    /// The draft's frames with the ids `ids` gives them, or ids made from their keys (which stay
    /// the same as the draft grows): what [`Replayer::call_in`] takes.
    pub fn frames(draft: &Draft, ids: Option<FrameIds<'_>>) -> Result<Vec<Frame>, String> {
        let mut frames = draft.materialise(&mut IdSource::seeded(0))?.frames;
        let (tree, given): (TreeId, Vec<FrameId>) = match ids {
            Some(ids) if ids.frames.len() == frames.len() => {
                (ids.tree.clone(), ids.frames.to_vec())
            }
            Some(_) => return Err("the draft's frames and their ids do not match".to_owned()),
            None => (
                IdSource::seeded(0).tree_id(),
                draft
                    .frames
                    .iter()
                    .map(|d| {
                        let seed = flame_model::prompt_cache::text_hash("frame", &d.key);
                        IdSource::seeded(seed).frame_id()
                    })
                    .collect(),
            ),
        };
        let by_old: HashMap<FrameId, FrameId> =
            frames.iter().map(|f| f.id.clone()).zip(given).collect();
        for f in &mut frames {
            f.tree = tree.clone();
            f.parent = f.parent.as_ref().and_then(|p| by_old.get(p)).cloned();
            f.id = by_old[&f.id].clone();
        }
        Ok(frames)
    }

    /// The request `call` makes, as `flame_context::request` shapes it, for pricing.
    pub fn prompt(&self, call: &ReplayedCall) -> Prompt {
        flame_context::request::prompt(&call.doc, self.encoding, self.policy.conversation)
    }

    /// How long the provider is asked to keep a frame's conversation.
    pub fn conversation(&self) -> flame_model::CacheLifetime {
        self.policy.conversation
    }

    /// What the call at `site` sends (see the module's comment), with the frame's context and
    /// any note it appends kept for the next calls.
    pub fn call(
        &mut self,
        draft: &Draft,
        ids: Option<FrameIds<'_>>,
        site: CallSite,
    ) -> Result<ReplayedCall, String> {
        let frames = Replayer::frames(draft, ids)?;
        self.call_in(draft, &frames, ids.and_then(|i| i.log_root), site)
    }

    /// [`Replayer::call`] with the draft's frames made already ([`Replayer::frames`]), their
    /// logs shown under `log_root`.
    pub fn call_in(
        &mut self,
        draft: &Draft,
        frames: &[Frame],
        log_root: Option<&str>,
        site: CallSite,
    ) -> Result<ReplayedCall, String> {
        let CallSite { frame, before, at, fixed } = site;
        let key =
            draft.frames.get(frame).ok_or("the call's frame is not in the draft")?.key.clone();
        let root = log_root;
        let log_paths: HashMap<FrameId, String> = frames
            .iter()
            .map(|f| {
                let path = f.log_relative_path();
                (f.id.clone(), root.map_or_else(|| path.clone(), |r| format!("{r}/{path}")))
            })
            .collect();
        // The frame's messages before the call, numbered within the frame, with its notes.
        let mut ordinal_of: HashMap<usize, usize> = HashMap::new();
        let mut messages: Vec<Arc<Message>> = Vec::new();
        let focus = frames[frame].id.clone();
        let kept = self.kept.entry(key.clone()).or_default();
        let made = &mut kept.made;
        for (index, m) in draft.messages.iter().enumerate().filter(|(_, m)| m.frame == frame) {
            let n = ordinal_of.len();
            ordinal_of.insert(index, n);
            if n >= before {
                continue;
            }
            let id = frame_message_id(n);
            let kept = made.get(n).filter(|(from, sent)| {
                Arc::ptr_eq(from, &m.message)
                    && sent.id == id
                    && sent.frame == focus
                    && sent.tokens == m.tokens
                    && sent.created_at == m.at
            });
            if let Some((_, sent)) = kept {
                messages.push(sent.clone());
                continue;
            }
            let sent = Arc::new(Message {
                id,
                frame: focus.clone(),
                role: m.message.role,
                content: m.message.content.clone(),
                tool_calls: m.message.tool_calls.clone(),
                tool_result: m.message.tool_result.clone(),
                tokens: m.tokens,
                model: m.message.model.clone(),
                usage: m.message.usage,
                created_at: m.at,
                interrupted: m.message.interrupted,
            });
            made.truncate(n);
            made.push((m.message.clone(), sent.clone()));
            messages.push(sent);
        }
        made.truncate(messages.len());
        let upto = frame_message_id(before);
        for note in self.notes.get(&key).into_iter().flatten().filter(|n| n.id < upto) {
            let at = messages.partition_point(|m| m.id < note.id);
            messages.insert(at, note.clone());
        }
        // The path to the focus and every child of each frame on it, as they stood at the call.
        let mut path = vec![frame];
        while let Some(p) = draft.frames[*path.last().expect("non-empty")].parent {
            path.push(p);
        }
        let mut visible: Vec<usize> = path.clone();
        for &p in &path {
            visible.extend(
                draft
                    .frames
                    .iter()
                    .enumerate()
                    .filter(|(c, f)| f.parent == Some(p) && !path.contains(c))
                    .map(|(c, _)| c),
            );
        }
        let snapshot: Vec<Frame> = visible
            .into_iter()
            .filter(|&i| draft.frames[i].created_at <= at || path.contains(&i))
            .map(|i| {
                let mut f = frames[i].clone();
                let ended = draft.frames[i].ended_at.is_some_and(|e| e <= at);
                if path.contains(&i) || (!ended && f.status != Status::Planned) {
                    f.status = Status::InProgress;
                    f.results = None;
                    f.results_compacted = None;
                    f.status_reason = None;
                    f.ended_at = None;
                }
                f
            })
            .collect();
        let came_before = |f: &DraftFile| {
            if f.frame == frame {
                ordinal_of.get(&f.message).is_some_and(|&n| n < before)
            } else {
                f.at <= at
            }
        };
        let trails: HashMap<FrameId, FileTrail> = draft
            .subtree_trails(came_before)
            .into_iter()
            .map(|(f, trail)| (frames[f].id.clone(), trail))
            .collect();
        // What the frames on the path above the call's touched themselves before it: a
        // subagent's parent segment, before the subagent started.
        let path_trails: HashMap<FrameId, FileTrail> = draft
            .trails(came_before)
            .into_iter()
            .filter(|(f, _)| path[1..].contains(f))
            .map(|(f, trail)| (frames[f].id.clone(), trail))
            .collect();
        let linear_message_tokens =
            draft.messages.iter().map(|m| m.tokens).fold(0, u64::saturating_add);
        let input = ContextInput {
            focus: &focus,
            frames: &snapshot,
            messages: &messages,
            encoding: self.encoding,
            // Everything Flame would show, not a context trimmed to a window.
            budget: Budget { context_window: u64::MAX / 4, reply_reserve: 0, tool_schemas: fixed },
            log_paths: &log_paths,
            linear_message_tokens,
            workspace: None,
            trails: &trails,
            path_trails: &path_trails,
            keep_tool_results: Some(self.keep),
            allowance: None,
            // The agent reads its own project instructions.
            instructions: None,
            read_back: flame_context::ReadBack::CallAgain,
        };
        let rules = CallRules { now: at, policy: self.policy };
        let stored = self.contexts.get(&key);
        let had_context = stored.is_some();
        // The messages the frame's last call was given that open this one's are settled; when
        // one it was given is not among them, a message id may name another message now.
        let settled = messages
            .iter()
            .zip(&kept.given)
            .take_while(|(now, then)| Arc::ptr_eq(now, then))
            .count();
        if settled < kept.given.len() {
            kept.parts.forget_messages();
        }
        let next =
            flame_context::next_call(&input, stored, &rules, Some((&mut kept.parts, settled)))
                .map_err(|e| e.to_string())?;
        kept.given = messages;
        let mut doc = next.doc;
        if let Some(update) = next.update {
            let mut context = update.context;
            if let Some(text) = update.note {
                let note = Arc::new(Message {
                    id: MessageId(upto.0 - 1),
                    frame: focus.clone(),
                    role: Role::Note,
                    tokens: flame_tokens::count(self.encoding, &text),
                    content: text,
                    tool_calls: None,
                    tool_result: None,
                    model: None,
                    usage: None,
                    created_at: at,
                    interrupted: false,
                });
                context.notes.push(note.id);
                // The doc sends the note as not yet stored; from now on it is the frame's.
                if let Some(sent) =
                    doc.messages.iter_mut().find(|m| m.id == flame_context::UNSTORED_NOTE)
                {
                    *sent = note.clone();
                }
                self.notes.entry(key.clone()).or_default().push(note);
            }
            self.contexts.insert(key, context);
        }
        // The agent works with its own tools: its preamble says so (`AGENT_PREAMBLE`), the same
        // in every session.
        doc.system = flame_context::AGENT_PREAMBLE.to_owned();
        doc.system_shared = doc.system.len();
        let made_again = doc.report.opening.made_now && had_context;
        Ok(ReplayedCall { doc, focus, made_again })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a frame's last call made is kept only to be made again faster: a replayer that
    /// forgets it before every call sends the same, call by call, masked results included.
    #[test]
    fn what_is_kept_between_calls_changes_nothing_sent() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/claude-code/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
        let draft =
            crate::import(&path, None, &crate::ImportOptions::default(), &mut |_| {}).unwrap();
        let frames = Replayer::frames(&draft, None).unwrap();
        let policy = CachePolicy::anthropic(None);
        let mut keeping = Replayer::new(Encoding::ClaudeEstimate, policy, 1);
        let mut forgetting = Replayer::new(Encoding::ClaudeEstimate, policy, 1);
        // Each message's place among its frame's messages.
        let mut ordinal = Vec::with_capacity(draft.messages.len());
        let mut counts: HashMap<usize, usize> = HashMap::new();
        for m in &draft.messages {
            let n = counts.entry(m.frame).or_default();
            ordinal.push(*n);
            *n += 1;
        }
        let mut masked = 0;
        for call in &draft.calls {
            let site = CallSite {
                frame: call.frame,
                before: ordinal[call.message],
                at: call.at,
                fixed: 900,
            };
            forgetting.kept.clear();
            let kept = keeping.call_in(&draft, &frames, None, site).unwrap();
            let fresh = forgetting.call_in(&draft, &frames, None, site).unwrap();
            assert_eq!(kept, fresh, "the call at {}", call.at);
            masked += kept.doc.messages.iter().filter(|m| m.content.starts_with("[Flame]")).count();
        }
        assert!(draft.calls.len() > 100, "{} calls", draft.calls.len());
        assert!(masked > 0, "no result was masked");
    }
}
