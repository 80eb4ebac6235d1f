//! The frame operations every front end calls. Each one runs one store transaction (retrying
//! with a fresh id in the rare case a random id is taken), then brings the touched frames'
//! logs up to date.
//!
//! `Flame::frame_detail` is a frame with its `FrameActions` and its `FileTrail`.
//! `Flame::frame_view(frame, after)` is the window's one read of a frame: the detail, the event seq
//! it was read at, and the frame's messages after `after`. The window keeps the messages it holds
//! up to `kept_through`, puts `messages` after them, and passes `settled_through` as `after` next
//! time; `settled_through` stops before the frame's first open reply, because an open reply grows
//! and is finished in place under the same id. A view whose `after` is not one of the frame's
//! messages, or is at or after an open reply, starts over (`kept_through` null). Messages are read
//! before the open replies, and an interrupted row that is no longer open is read again, so an
//! unfinished copy is never reported as settled. A view that starts over holds only the newest
//! `MESSAGE_PAGE` messages (from the first open reply on if that is further back) and how many come
//! before them (`earlier`); `Flame::earlier_messages(frame, before, reach)` reads those a page at a
//! time, or with `reach` every one from half a page before a given message (a search hit), so the
//! window always holds one unbroken run of messages ending at the newest. `Flame::delete_tree`
//! deletes a tree and then its log folder.

use flame_model::lifecycle::{FrameActions, PopStatus};
use flame_model::{
    Actor, Event, FileTrail, Frame, FrameError, FrameId, FrameOutline, FrameTree, Message,
    MessageId, NewMessage, Role, Status, Tree, TreeId,
};
use flame_store::{Change, PlanItem, Pop, Store, StoreError};
use serde::{Deserialize, Serialize};

use std::borrow::Cow;
use std::collections::HashMap;

use flame_context::Budget;
use flame_tokens::Encoding;

use crate::process::{Probe, writer_is_gone};
use crate::{ApiError, Env, Flame, frame_log};

/// How messages are counted and contexts sized until model settings exist: `o200k_base`, the
/// encoding of current OpenAI models and the closest public one for the rest.
pub const DEFAULT_ENCODING: Encoding = Encoding::O200kBase;
/// The budget until model settings exist: a 128k-token window with 8k kept for the reply.
pub const DEFAULT_BUDGET: Budget =
    Budget { context_window: 128_000, reply_reserve: 8_000, tool_schemas: 0 };

/// How many fresh ids a creation tries before giving up; with 50-bit ids a second try is
/// already a one-in-a-trillion event.
const ID_TRIES: usize = 4;

/// A tree with every frame, as the status command and the flame graph read it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct TreeStatus {
    pub tree: Tree,
    /// The focused frame (also in `tree.focus`), repeated for scripts.
    pub focus: FrameId,
    /// Every frame, depth first: each parent before its children, siblings in position order.
    pub frames: Vec<FrameEntry>,
}

/// A tree in the narrow form the flame graph draws, with the newest event seq so the caller
/// can follow later changes with [`Flame::events_since`].
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct TreeOutline {
    pub tree: Tree,
    /// Every frame, in no particular order.
    pub frames: Vec<FrameOutline>,
    /// The newest event in the data directory when the outline was read.
    pub seq: i64,
    /// What each frame's own replies cost at the prices in use, in micro-dollars (the priced
    /// part: tokens of a model with no known price count nothing), for the frames where that is
    /// more than nothing: the flame graph's widths by cost. Another frame's whole cost — its
    /// subtree's, the unpriced tokens, its usage by model — is read for one frame at a time
    /// ([`Flame::frame_cost`]): at 100k frames every frame's whole cost was two thirds of the
    /// outline's bytes.
    #[serde(skip_serializing_if = "HashMap::is_empty")]
    pub own_costs: HashMap<FrameId, u64>,
    /// The focused frame's whole cost (what the chat pane's header and the context inspector
    /// show), read with the outline so it follows every change and new prices; left out when
    /// its subtree recorded no usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus_cost: Option<flame_model::cost::FrameCost>,
    /// The tree's budgeted frames, each with its budget, its subtree's spend and what it has
    /// left: the graph's colours by budget used and its mark on a spent one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub budgets: Vec<crate::BudgetView>,
}

/// A frame as the window's chat pane reads it: its entry, and what may be done with it now, as
/// the lifecycle rules decide (the window shows these and checks no rule itself).
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct FrameDetail {
    #[serde(flatten)]
    pub entry: FrameEntry,
    pub actions: FrameActions,
    /// The files the frame's own tool calls read and changed.
    pub files: FileTrail,
}

/// A frame and where its log is.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct FrameEntry {
    #[serde(flatten)]
    pub frame: Frame,
    /// The frame's Markdown log, absolute.
    pub log_path: String,
}

/// A frame as the window shows it, with the part of its conversation the window does not hold
/// yet: what [`Flame::frame_view`] returns.
///
/// The window keeps the messages it holds with ids up to `kept_through` (none when it is
/// `None`), drops the rest, and puts `messages` after them. Next time it passes
/// `settled_through` as `after`. A message is *settled* once its content can no longer change:
/// every message is, except a reply still open (being streamed, or left by a writer that has
/// not been found gone yet), whose content grows and is finished in place under the same id.
/// So `settled_through` stops before the frame's first open reply, and the next view returns
/// that reply again, finished or grown.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct FrameView {
    /// The frame, with what may be done with it now.
    pub frame: FrameDetail,
    /// The newest event in the data directory when the view was read: a change announced with
    /// this seq or an older one is already in the view.
    pub seq: i64,
    /// The held messages to keep: those with ids up to this one; `None` means none, so
    /// `messages` is the whole conversation (the first read, or a reset).
    pub kept_through: Option<MessageId>,
    /// The messages after `kept_through`, oldest first.
    pub messages: Vec<Message>,
    /// What to pass as `after` next time: the last message before the frame's first open
    /// reply, or its last message if none is open; `None` when the window holds no such
    /// message (there is none, or a view that started over begins with the open reply), and
    /// the next view starts over.
    pub settled_through: Option<MessageId>,
    /// How many of the frame's messages come before `messages` and are not in them: when the
    /// view starts over it holds only the newest [`MESSAGE_PAGE`] (and every open reply), and
    /// the window reads older ones a page at a time with [`Flame::earlier_messages`] as the
    /// person scrolls up to them. Always 0 when `kept_through` is set.
    pub earlier: u64,
}

/// How many messages a view that starts over returns, and an earlier page holds. The window
/// draws at most 120 at once (`ui/src/chat/message-window.ts`); sending all of a long frame's
/// messages (4,938 on the 100k-frame tree: 4.5 MB of JSON, about 28 MiB kept in the
/// page) cost hundreds of milliseconds and memory for messages rarely scrolled to.
pub const MESSAGE_PAGE: u32 = 200;

/// A page of a frame's older messages, read as the window scrolls up to them: what
/// [`Flame::earlier_messages`] returns.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct EarlierMessages {
    /// The messages, oldest first; they end just before the message the page was read before.
    pub messages: Vec<Message>,
    /// How many of the frame's messages come before these.
    pub earlier: u64,
}

/// A tree as the tree list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct TreeListEntry {
    pub tree: Tree,
    pub root_status: Status,
    pub frame_count: u64,
    /// The tree commands act on when they name none.
    pub current: bool,
}

/// What deleting a tree removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct DeletedTree {
    pub tree: TreeId,
    pub title: String,
    pub frames: u64,
    pub messages: u64,
}

/// A planned frame to create, with its planned children.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, specta::Type)]
pub struct PlanSpec {
    pub title: String,
    pub success_criteria: String,
    /// A budget for the frame, out of what the frame it is planned under has left.
    #[serde(default)]
    pub budget: Option<flame_model::budget::FrameBudget>,
    #[serde(default)]
    pub children: Vec<PlanSpec>,
}

/// What to record when popping a frame.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, specta::Type)]
pub struct PopRequest {
    pub status: PopStatus,
    pub results: Option<String>,
    pub results_compacted: Option<String>,
    #[serde(default)]
    pub artifacts: Vec<String>,
    #[serde(default)]
    pub decisions: Vec<String>,
    pub reason: Option<String>,
}

impl PopRequest {
    fn to_pop(&self) -> Pop {
        Pop {
            status: self.status,
            results: self.results.clone(),
            results_compacted: self.results_compacted.clone(),
            artifacts: self.artifacts.clone(),
            decisions: self.decisions.clone(),
            reason: self.reason.clone(),
        }
    }
}

impl Flame {
    /// Every tree, oldest first.
    pub fn trees(&self) -> Result<Vec<TreeListEntry>, ApiError> {
        let store = self.store();
        let current = store.current_tree()?;
        Ok(store
            .trees()?
            .into_iter()
            .map(|s| TreeListEntry {
                current: current.as_ref() == Some(&s.tree.id),
                tree: s.tree,
                root_status: s.root_status,
                frame_count: s.frame_count,
            })
            .collect())
    }

    /// Deletes a tree with all its frames, messages and logs — the one operation that removes
    /// history, for a person who asks explicitly (see `Store::delete_tree`). The newest
    /// remaining tree becomes current if this one was.
    pub fn delete_tree(&self, actor: Actor, id: &TreeId) -> Result<DeletedTree, ApiError> {
        let (title, counts, checkpoints) = self.write(actor, |store, change, _| {
            let title = store.tree(id)?.title;
            let checkpoints = store.checkpoints_of_tree(id)?;
            Ok((title, store.delete_tree(change, id)?, checkpoints))
        })?;
        self.collect_deleted(checkpoints);
        let logs = frame_log::tree_log_folder(self.data_dir.path(), id);
        match std::fs::remove_dir_all(&logs) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            // The tree is gone from the database; a log folder left behind is only clutter.
            Err(err) => tracing::warn!("could not remove the logs in {}: {err}", logs.display()),
        }
        Ok(DeletedTree {
            tree: id.clone(),
            title,
            frames: counts.frames,
            messages: counts.messages,
        })
    }

    /// A tree (the current one if `tree` is `None`) with all its frames, depth first.
    pub fn status(&self, tree: Option<&TreeId>) -> Result<TreeStatus, ApiError> {
        let store = self.store();
        let id = resolve_tree(&store, tree)?;
        let tree = store.tree(&id)?;
        let frames = FrameTree::new(tree.clone(), store.frames_of_tree(&id)?);
        let mut ordered = Vec::with_capacity(frames.frames().len());
        let mut stack: Vec<&Frame> = frames.root().into_iter().collect();
        while let Some(frame) = stack.pop() {
            ordered.push(self.entry(frame.clone()));
            let children: Vec<&Frame> = frames.children(&frame.id).collect();
            stack.extend(children.into_iter().rev());
        }
        Ok(TreeStatus { focus: tree.focus.clone(), tree, frames: ordered })
    }

    /// One tree's row (title, root, focus, workspace) without its frames.
    pub fn tree(&self, id: &TreeId) -> Result<Tree, ApiError> {
        Ok(self.store().tree(id)?)
    }

    /// A tree (the current one if `tree` is `None`) in the narrow form drawing needs.
    pub fn outline(&self, tree: Option<&TreeId>) -> Result<TreeOutline, ApiError> {
        let store = self.store();
        let (tree, frames, seq) = outline_rows(&store, tree)?;
        self.priced_outline(&store, tree, frames, seq)
    }

    /// The outline of `tree`'s `frames` read at `seq`, with their costs and budgets read now.
    pub(crate) fn priced_outline(
        &self,
        store: &Store,
        tree: Tree,
        frames: Vec<FrameOutline>,
        seq: i64,
    ) -> Result<TreeOutline, ApiError> {
        let costs = self.costs_of_outline(store, &tree.id, &frames, &tree.focus)?;
        let budgets = self.budgets_of(store, &tree.id)?;
        Ok(TreeOutline {
            tree,
            frames,
            seq,
            own_costs: costs.own,
            focus_cost: costs.focus,
            budgets,
        })
    }

    /// The newest event's seq in the data directory (0 when there is none): where to start
    /// following changes from.
    pub fn latest_seq(&self) -> Result<i64, ApiError> {
        Ok(self.store().latest_event_seq()?)
    }

    /// Events after `after_seq`, oldest first, at most `limit`: how a front end follows changes
    /// made by itself, the agent, or other processes on the same data directory.
    pub fn events_since(&self, after_seq: i64, limit: u32) -> Result<Vec<Event>, ApiError> {
        Ok(self.store().events_since(after_seq, limit)?)
    }

    /// One frame.
    pub fn frame(&self, id: &FrameId) -> Result<FrameEntry, ApiError> {
        let store = self.store();
        Ok(self.logged_entry(&store, store.frame(id)?))
    }

    /// Frame `id` and its messages after `after` (the newest of them when `after` is `None`),
    /// as the window shows them; see [`FrameView`] for how the window combines views.
    ///
    /// The view starts over, with `kept_through` `None`, when `after` is `None` or not one of
    /// the frame's messages (the window's copy belongs to something else) or a reply at or
    /// before `after` is open (the window holds an unfinished copy of it). Since ids only grow
    /// and a closed message never changes, a window that passes back the `settled_through` it
    /// was given holds exactly what the frame has up to there.
    ///
    /// A view that starts over returns the newest [`MESSAGE_PAGE`] messages, and from the first
    /// open reply on if one is older, with how many come before them (`earlier`). So every
    /// message before those is closed, and stays as it is: the window reads them later with
    /// [`Flame::earlier_messages`], and keeps them across the views that follow.
    pub fn frame_view(
        &self,
        id: &FrameId,
        after: Option<MessageId>,
    ) -> Result<FrameView, ApiError> {
        let store = self.store();
        // The seq is read first, so a change made while the view is read is announced again
        // with a newer seq rather than taken for one the view already holds.
        let seq = store.latest_event_seq()?;
        let frame = FrameDetail {
            entry: self.logged_entry(&store, store.frame(id)?),
            actions: store.frame_actions(id)?,
            files: store.file_trail(id)?,
        };
        let mut from = after;
        let (rows, open, kept_through) = loop {
            let mut rows = match from {
                Some(after) => store.messages_between(id, after, MessageId(i64::MAX))?,
                None => store.messages_before(id, MessageId(i64::MAX), MESSAGE_PAGE)?,
            };
            // Read after the messages: a reply open when its row was read is either still open
            // here, or closed with its final content, which the re-read below picks up.
            let open: Vec<MessageId> = store
                .open_replies()?
                .into_iter()
                .filter(|reply| &reply.frame == id)
                .map(|reply| reply.id)
                .collect();
            match from {
                None => {
                    // A reply left open further back than the page (a writer not found gone
                    // yet) is returned with everything after it, so that every message the
                    // window reads later, before the view's first, is closed.
                    let first_open = open.iter().min().copied();
                    if let Some(first_open) = first_open
                        && rows.first().is_some_and(|m| m.id > first_open)
                    {
                        rows = store.messages_between(id, first_open, MessageId(i64::MAX))?;
                    }
                    break (rows, open, None);
                }
                Some(after)
                    if rows.first().is_some_and(|m| m.id == after)
                        && open.iter().all(|open| *open > after) =>
                {
                    rows.remove(0);
                    break (rows, open, Some(after));
                }
                Some(_) => from = None,
            }
        };
        let first_open = open.iter().min().copied();
        let mut messages = Vec::with_capacity(rows.len());
        let mut settled_through = kept_through;
        for row in rows {
            // An open reply's row is stored as interrupted until it is finished, so only such a
            // row can have been read unfinished. One that is not open now has its final content
            // since: read it again.
            let row = if row.interrupted && !open.contains(&row.id) {
                store.messages_by_id(&[row.id])?.pop().unwrap_or(row)
            } else {
                row
            };
            if first_open.is_none_or(|open| row.id < open) {
                settled_through = Some(row.id);
            }
            messages.push(row);
        }
        let earlier = match (kept_through, messages.first()) {
            (None, Some(first)) => store.message_count_through(id, first.id)? - 1,
            _ => 0,
        };
        Ok(FrameView { frame, seq, kept_through, messages, settled_through, earlier })
    }

    /// A page of frame `id`'s messages before message `before` (the oldest one the window
    /// holds): the newest [`MESSAGE_PAGE`] of them, with how many come before those.
    ///
    /// With `reach` (a message the window is asked to show, such as a search hit), the page
    /// runs from [`MESSAGE_PAGE`]` / 2` messages before `reach` up to `before`, however many
    /// that is, so the window holds it with some context on both sides and still holds one
    /// unbroken run of messages; when `reach` is not one of the frame's messages before
    /// `before`, the page is empty. Every message before the first of a view that started over
    /// is closed (see [`Flame::frame_view`]), so a page never needs reading again.
    pub fn earlier_messages(
        &self,
        id: &FrameId,
        before: MessageId,
        reach: Option<MessageId>,
    ) -> Result<EarlierMessages, ApiError> {
        let store = self.store();
        // A frame that does not exist is an error, not an empty conversation.
        store.frame(id)?;
        let messages = match reach {
            None => store.messages_before(id, before, MESSAGE_PAGE)?,
            // Looked up alone first: a message of another frame reads nothing more.
            Some(reach)
                if reach < before && !store.messages_between(id, reach, reach)?.is_empty() =>
            {
                let mut page = store.messages_before(id, reach, MESSAGE_PAGE / 2)?;
                page.extend(store.messages_between(id, reach, MessageId(before.0 - 1))?);
                page
            }
            Some(_) => Vec::new(),
        };
        let earlier = match messages.first() {
            Some(first) => store.message_count_through(id, first.id)? - 1,
            None => 0,
        };
        Ok(EarlierMessages { messages, earlier })
    }

    /// Pushes an in-progress child under `parent` (default: the focused frame of the current
    /// tree) and focuses it.
    pub fn push(
        &self,
        actor: Actor,
        parent: Option<&FrameId>,
        title: &str,
        criteria: &str,
    ) -> Result<Frame, ApiError> {
        self.push_with_budget(actor, parent, title, criteria, None)
    }

    /// Plans frames, with nested planned children, under `parent` (default: the focused frame)
    /// at `position` (default: last).
    pub fn plan(
        &self,
        actor: Actor,
        parent: Option<&FrameId>,
        position: Option<u32>,
        specs: &[PlanSpec],
    ) -> Result<Vec<Frame>, ApiError> {
        let parent = default_to_focus(&self.store(), parent)?;
        self.check_planned_budgets(&parent, specs)?;
        self.write(actor, |store, change, env| {
            with_fresh_ids(|| {
                let items = plan_items(specs, &mut env.ids);
                store.plan(change, &parent, position, &items)
            })
        })
    }

    /// Changes a planned frame's title and/or criteria.
    pub fn edit(
        &self,
        actor: Actor,
        id: &FrameId,
        title: Option<&str>,
        criteria: Option<&str>,
    ) -> Result<Frame, ApiError> {
        self.write(actor, |store, change, _| store.edit(change, id, title, criteria))
    }

    /// Moves a planned frame among its siblings or under another frame.
    pub fn move_frame(
        &self,
        actor: Actor,
        id: &FrameId,
        parent: Option<&FrameId>,
        position: Option<u32>,
    ) -> Result<Frame, ApiError> {
        self.write(actor, |store, change, _| store.move_frame(change, id, parent, position))
    }

    /// Deletes a planned frame (and its planned subtree) that has no messages.
    pub fn delete(&self, actor: Actor, id: &FrameId) -> Result<Vec<FrameId>, ApiError> {
        self.write(actor, |store, change, _| store.delete(change, id))
    }

    /// Starts a planned frame (and its planned ancestors) and focuses it.
    pub fn start(&self, actor: Actor, id: &FrameId) -> Result<Frame, ApiError> {
        let frame = self.write(actor, |store, change, _| store.start(change, id))?;
        self.checkpoint_started(&frame);
        Ok(frame)
    }

    /// Pops a frame (default: the focused frame of the current tree).
    pub fn pop(
        &self,
        actor: Actor,
        id: Option<&FrameId>,
        request: &PopRequest,
    ) -> Result<Frame, ApiError> {
        let pop = request.to_pop();
        self.write(actor, |store, change, _| {
            let id = default_to_focus(store, id)?;
            store.pop(change, &id, &pop)
        })
    }

    /// Pops the focus of `expected`'s tree, which the caller names: refused, with nothing
    /// changed and the frame focused now named, when `expected` is no longer the focus. Front
    /// ends that act on "the focus" (the command line, MCP clients) use it so that two of them
    /// popping at once cannot pop a parent neither meant.
    pub fn pop_focused(
        &self,
        actor: Actor,
        expected: &FrameId,
        request: &PopRequest,
    ) -> Result<Frame, ApiError> {
        let pop = request.to_pop();
        self.write(actor, |store, change, _| store.pop_focused(change, expected, &pop))
    }

    /// Resumes a blocked frame and focuses it.
    pub fn resume(&self, actor: Actor, id: &FrameId) -> Result<Frame, ApiError> {
        self.write(actor, |store, change, _| store.resume(change, id))
    }

    /// Retries a failed frame as a new in-progress sibling, and focuses it.
    pub fn retry(&self, actor: Actor, id: &FrameId) -> Result<Frame, ApiError> {
        let frame = self.write(actor, |store, change, env| {
            with_fresh_ids(|| store.retry(change, id, &env.ids.frame_id()))
        })?;
        self.checkpoint_started(&frame);
        Ok(frame)
    }

    /// Invalidates a frame and its open descendants; returns every frame invalidated.
    pub fn invalidate(
        &self,
        actor: Actor,
        id: &FrameId,
        reason: Option<&str>,
    ) -> Result<Vec<FrameId>, ApiError> {
        self.write(actor, |store, change, _| store.invalidate(change, id, reason))
    }

    /// Focuses a frame and makes its tree current.
    pub fn focus(&self, actor: Actor, id: &FrameId) -> Result<Frame, ApiError> {
        self.write(actor, |store, change, _| store.focus(change, id))
    }

    /// Adds a message to a frame without calling a model. Its tokens are counted here, once.
    pub fn append(
        &self,
        actor: Actor,
        id: &FrameId,
        role: Role,
        text: &str,
    ) -> Result<Message, ApiError> {
        let message = NewMessage::text(role, text);
        let tokens = flame_tokens::count(DEFAULT_ENCODING, text);
        self.write(actor, |store, change, _| store.add_message(change, id, &message, tokens))
    }

    /// Adds a message of any kind (a tool's result, a note with structured data) to a frame;
    /// its tokens are counted here, once.
    pub fn add_message(
        &self,
        actor: Actor,
        id: &FrameId,
        message: &NewMessage,
    ) -> Result<Message, ApiError> {
        let tokens = count_message(message);
        self.write(actor, |store, change, _| store.add_message(change, id, message, tokens))
    }

    /// Opens a reply a model is about to stream into frame `id` (see `Store::begin_reply`).
    pub fn begin_reply(
        &self,
        actor: Actor,
        id: &FrameId,
        model: Option<&str>,
    ) -> Result<MessageId, ApiError> {
        self.write(actor, |store, change, env| store.begin_reply(change, id, model, env.writer))
    }

    /// Stores what has arrived of an open reply, so a crash keeps it. Past
    /// [`flame_store::MAX_MESSAGE_BYTES`] only the beginning is kept, with a note saying so.
    pub fn update_reply(&self, id: MessageId, content: &str) -> Result<(), ApiError> {
        let at = self.env().now();
        Ok(self.store().update_reply(id, content, at)?)
    }

    /// Finishes an open reply with its final content; its tokens are counted here, once. A reply
    /// past [`flame_store::MAX_MESSAGE_BYTES`] keeps its beginning and ends with a note saying
    /// it was cut, rather than failing the turn: the model has already spent it.
    pub fn finish_reply(
        &self,
        actor: Actor,
        id: MessageId,
        reply: &NewMessage,
    ) -> Result<Message, ApiError> {
        let fitted;
        let reply = match flame_store::fit_reply(&reply.content) {
            Cow::Borrowed(_) => reply,
            Cow::Owned(content) => {
                tracing::warn!(
                    message = %id,
                    bytes = reply.content.len(),
                    "a reply past the message cap was cut to fit"
                );
                fitted = NewMessage { content, ..reply.clone() };
                &fitted
            }
        };
        let tokens = count_message(reply);
        self.write(actor, |store, change, _| store.finish_reply(change, id, reply, tokens))
    }

    /// Merges `text` into section `section` of an in-progress frame's partial results.
    pub fn update_results(
        &self,
        actor: Actor,
        id: &FrameId,
        section: &str,
        text: &str,
    ) -> Result<Frame, ApiError> {
        self.write(actor, |store, change, _| store.update_results(change, id, section, text))
    }

    /// Sets a frame's compacted success criteria.
    pub fn set_criteria_compacted(
        &self,
        actor: Actor,
        id: &FrameId,
        compacted: &str,
    ) -> Result<(), ApiError> {
        self.write(actor, |store, change, _| store.set_criteria_compacted(change, id, compacted))
    }

    /// A frame's messages, oldest first.
    pub fn messages(&self, id: &FrameId) -> Result<Vec<Message>, ApiError> {
        let store = self.store();
        store.frame(id)?;
        Ok(store.messages(id)?)
    }

    /// The frame's full Markdown log, brought up to date first.
    pub fn log(&self, id: &FrameId) -> Result<String, ApiError> {
        let store = self.store();
        let frame = store.frame(id)?;
        frame_log::sync(&store, self.data_dir.path(), &frame.tree, id)
            .map_err(|e| ApiError::internal("write the frame's log", format!("{e:#}")))?;
        let path = frame_log::log_path(self.data_dir.path(), &frame.tree, id);
        std::fs::read_to_string(&path)
            .map_err(|e| ApiError::internal(&format!("read {}", path.display()), e))
    }

    /// One frame with what may be done with it now: what the window's chat pane reads.
    pub fn frame_detail(&self, id: &FrameId) -> Result<FrameDetail, ApiError> {
        let store = self.store();
        let entry = self.logged_entry(&store, store.frame(id)?);
        Ok(FrameDetail { entry, actions: store.frame_actions(id)?, files: store.file_trail(id)? })
    }

    fn entry(&self, frame: Frame) -> FrameEntry {
        let log_path =
            frame_log::log_path(self.data_dir.path(), &frame.tree, &frame.id).display().to_string();
        FrameEntry { frame, log_path }
    }

    /// One frame's entry, its log written first if it has none yet (an imported frame's), so
    /// the path it hands out names a file holding the frame's history.
    fn logged_entry(&self, store: &Store, frame: Frame) -> FrameEntry {
        frame_log::ensure_or_warn(store, self.data_dir.path(), &frame.tree, &frame.id);
        self.entry(frame)
    }

    /// Runs one write with the time and ids of `env`, then writes the logs it left behind.
    pub(crate) fn write<T>(
        &self,
        actor: Actor,
        op: impl FnOnce(&mut Store, Change, &mut Env) -> Result<T, StoreError>,
    ) -> Result<T, ApiError> {
        let mut store = self.store();
        let mut env = self.env();
        let change = Change { actor, at: env.now() };
        let result = op(&mut store, change, &mut env)?;
        if let Err(err) = frame_log::sync_pending(&mut store, self.data_dir.path()) {
            // The change is committed; the log catches up on the next operation or start.
            tracing::warn!("frame logs are behind the database: {err:#}");
        }
        Ok(result)
    }
}

/// A message's tokens in the live encoding, by the one rule imports use too.
pub(crate) fn count_message(message: &NewMessage) -> u64 {
    flame_tokens::count_message(DEFAULT_ENCODING, message)
}

/// Finishes, as interrupted, every open reply whose writer is gone (`probe` says what the
/// system knows of a process id), keeping what arrived. Replies other processes are streaming
/// are left to them. Returns how many were finished.
pub(crate) fn close_open_replies(
    store: &mut Store,
    at: flame_model::Timestamp,
    probe: impl Fn(u32) -> Probe,
) -> Result<usize, StoreError> {
    let mut closed = 0;
    for open in store.open_replies()? {
        let probed = open.owner.map_or(Probe::Unknown, |owner| probe(owner.pid));
        if !writer_is_gone(&open, probed, at) {
            continue;
        }
        let mut reply = NewMessage::text(Role::Assistant, open.content);
        reply.interrupted = true;
        let change = Change { actor: Actor::Agent, at };
        match store.finish_reply(change, open.id, &reply, count_message(&reply)) {
            Ok(_) => closed += 1,
            // Another process opening at the same time finished it first.
            Err(StoreError::Frame(FrameError::Invalid(_))) => {}
            Err(err) => return Err(err),
        }
    }
    Ok(closed)
}

/// The current tree, or `tree` if given (which must exist).
/// A tree (the current one if `tree` is `None`), its frames' outlines, and the newest event's seq
/// before they were read: the part of [`Flame::outline`] that reads the frames' own rows.
pub(crate) fn outline_rows(
    store: &Store,
    tree: Option<&TreeId>,
) -> Result<(Tree, Vec<FrameOutline>, i64), StoreError> {
    // The seq is read first, so a change made while the frames are read is reported again by
    // `events_since` rather than missed.
    let seq = store.latest_event_seq()?;
    let id = resolve_tree(store, tree)?;
    let frames = store.outline_of_tree(&id)?;
    Ok((store.tree(&id)?, frames, seq))
}

pub(crate) fn resolve_tree(store: &Store, tree: Option<&TreeId>) -> Result<TreeId, StoreError> {
    match tree {
        Some(id) => Ok(store.tree(id)?.id),
        None => store.current_tree()?.ok_or(StoreError::Frame(FrameError::NoCurrentTree)),
    }
}

/// `id`, or the focused frame of the current tree.
pub(crate) fn default_to_focus(store: &Store, id: Option<&FrameId>) -> Result<FrameId, StoreError> {
    match id {
        Some(id) => Ok(id.clone()),
        None => Ok(store.tree(&resolve_tree(store, None)?)?.focus),
    }
}

/// Runs `create` again with fresh ids while it reports a taken id.
pub(crate) fn with_fresh_ids<T>(
    mut create: impl FnMut() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let mut tries = 1;
    loop {
        match create() {
            Err(StoreError::IdTaken(id)) if tries < ID_TRIES => {
                tracing::debug!(%id, "a new id was taken; trying another");
                tries += 1;
            }
            other => return other,
        }
    }
}

fn plan_items(specs: &[PlanSpec], ids: &mut flame_model::IdSource) -> Vec<PlanItem> {
    specs
        .iter()
        .map(|spec| PlanItem {
            id: ids.frame_id(),
            title: spec.title.clone(),
            success_criteria: spec.success_criteria.clone(),
            budget: spec.budget,
            children: plan_items(&spec.children, ids),
        })
        .collect()
}
