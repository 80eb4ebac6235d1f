//! Messages and replies: adding a message, and a streamed reply's life — opened, saved as it
//! arrives, finished — with the cap on a message's size.
//!
//! A message from a model longer than `MAX_MESSAGE_BYTES` is cut to fit with a closing note
//! (`fit_reply`).

use std::borrow::Cow;

use flame_model::lifecycle::{self, Operation};
use flame_model::{
    EventDetail, EventKind, Frame, FrameError, FrameId, Message, MessageId, NewMessage, Timestamp,
};
use rusqlite::{OptionalExtension, params};

use crate::rows::{MessageRow, UsageColumns, insert_messages_sql, payload_text, tool_call_count};
use crate::{Store, StoreError};

use super::Change;
use super::reads::read_message;
use super::writer::Writer;

/// The largest message Flame stores, in bytes. Larger content belongs in a file the message
/// names; a message this size already costs a model call most of its context window.
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// What a reply cut at [`MAX_MESSAGE_BYTES`] ends with, inside the cap, so that the person, the
/// model and the log all see that the rest of it was not kept.
pub fn truncation_note() -> String {
    format!(
        "\n\n[… reply truncated at {} MiB by Flame; the rest was not stored]",
        MAX_MESSAGE_BYTES >> 20
    )
}

/// A streamed reply as it is stored: unchanged when it fits in [`MAX_MESSAGE_BYTES`], else as
/// much of its beginning as fits (cut at a character boundary) followed by the
/// [`truncation_note`]. A model is not refused mid-stream the way an added message is: what it
/// has sent is kept, as far as the cap allows.
pub fn fit_reply(content: &str) -> Cow<'_, str> {
    if content.len() <= MAX_MESSAGE_BYTES {
        return Cow::Borrowed(content);
    }
    let note = truncation_note();
    let mut cut = MAX_MESSAGE_BYTES - note.len();
    while !content.is_char_boundary(cut) {
        cut -= 1;
    }
    Cow::Owned(format!("{}{note}", &content[..cut]))
}

/// The process writing an open reply. Whether it still runs is for the caller to find out (the
/// store reads no clock and asks nothing of the system): see [`Store::open_replies`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyOwner {
    /// The operating system's id of the process.
    pub pid: u32,
    /// When that process started, in the system's own units (on Linux, clock ticks since boot),
    /// so that a later process given the same id is told apart; `None` where it cannot be read.
    pub started: Option<u64>,
}

/// A reply still open: what has arrived of it, who is writing it and when it last saved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenReply {
    pub id: MessageId,
    pub frame: FrameId,
    pub content: String,
    /// `None` for a reply opened before owners were recorded.
    pub owner: Option<ReplyOwner>,
    /// When the writer opened or last saved it.
    pub heartbeat_at: Option<Timestamp>,
}

impl Store {
    /// Adds a message to an in-progress (or planned) frame. `tokens` is counted by the caller,
    /// once, and stored.
    pub fn add_message(
        &mut self,
        change: Change,
        frame: &FrameId,
        message: &NewMessage,
        tokens: u64,
    ) -> Result<Message, StoreError> {
        check_message_size(message)?;
        self.write(change, |w| w.insert_message(frame, message, tokens))
    }

    /// Opens a reply that a model is about to stream into `frame`, written by `owner`: an
    /// assistant message with no text yet, marked interrupted until it is finished. It has no
    /// event until then.
    pub fn begin_reply(
        &mut self,
        change: Change,
        frame: &FrameId,
        model: Option<&str>,
        owner: ReplyOwner,
    ) -> Result<MessageId, StoreError> {
        self.write(change, |w| {
            let target = w.frame(frame)?;
            lifecycle::check(Operation::AddMessage, &target.id, &target.title, target.status)?;
            w.tx.prepare_cached(
                "INSERT INTO messages (frame_id, role, content, tokens, model, created_at, interrupted, open,
                                       owner_pid, owner_started, heartbeat_at)
                 VALUES (?1, 'assistant', '', 0, ?2, ?3, 1, 1, ?4, ?5, ?3)",
            )?
            .execute(params![
                frame.as_str(),
                model,
                change.at,
                owner.pid,
                owner.started.map(|s| s as i64)
            ])?;
            Ok(MessageId(w.tx.last_insert_rowid()))
        })
    }

    /// Stores the text of an open reply so far, cut to the cap by [`fit_reply`], and `at` as
    /// the time its writer was last heard from.
    pub fn update_reply(
        &mut self,
        id: MessageId,
        content: &str,
        at: Timestamp,
    ) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "UPDATE messages SET content = ?2, heartbeat_at = ?3 WHERE id = ?1 AND open = 1",
            )?
            .execute(params![id.0, fit_reply(content), at])?;
        Ok(())
    }

    /// Finishes an open reply: its final text (cut to the cap by [`fit_reply`]), tool calls and
    /// usage, its counted tokens, and whether it was cut short; then it counts on its frame and
    /// gets its event.
    pub fn finish_reply(
        &mut self,
        change: Change,
        id: MessageId,
        reply: &NewMessage,
        tokens: u64,
    ) -> Result<Message, StoreError> {
        self.write(change, |w| {
            let frame: Option<String> = w
                .tx
                .prepare_cached("SELECT frame_id FROM messages WHERE id = ?1 AND open = 1")?
                .query_row([id.0], |r| r.get(0))
                .optional()?;
            let frame = FrameId::from_trusted(frame.ok_or_else(|| FrameError::Invalid(format!("message {id} is not an open reply")))?);
            let usage = UsageColumns::of(&reply.usage);
            w.tx.prepare_cached(
                "UPDATE messages SET content = ?2, tool_calls = ?3, usage = ?4, tokens = ?5, interrupted = ?6, open = 0,
                     usage_input = ?7, usage_output = ?8, usage_cache_read = ?9, usage_cache_write = ?10,
                     usage_cache_write_long = ?11, tool_call_count = ?12
                 WHERE id = ?1",
            )?
            .execute(params![id.0, fit_reply(&reply.content), payload_text(&reply.tool_calls), usage.json, tokens as i64, reply.interrupted,
                usage.input, usage.output, usage.cache_read, usage.cache_write, usage.cache_write_long, tool_call_count(reply)])?;
            let target = w.frame(&frame)?;
            w.count_message(&target, tokens)?;
            w.spend_reply(&target.tree, &frame, id)?;
            w.event(&target.tree, &frame, EventKind::MessageAdded, &EventDetail::MessageAdded { message: id })?;
            read_message(w.tx, id)
        })
    }

    /// Every reply still open, oldest first, with its writer: replies being streamed now, and
    /// replies a process that stopped while streaming left behind. Telling them apart is the
    /// caller's (it can ask the system whether the writer still runs).
    pub fn open_replies(&self) -> Result<Vec<OpenReply>, StoreError> {
        let mut stmt = self.conn.prepare_cached(OPEN_REPLIES)?;
        let rows = stmt.query_map([], |r| {
            let pid: Option<i64> = r.get(3)?;
            let started: Option<i64> = r.get(4)?;
            Ok(OpenReply {
                id: MessageId(r.get(0)?),
                frame: FrameId::from_trusted(r.get(1)?),
                content: r.get(2)?,
                owner: pid.and_then(|pid| u32::try_from(pid).ok()).map(|pid| ReplyOwner {
                    pid,
                    started: started.and_then(|s| u64::try_from(s).ok()),
                }),
                heartbeat_at: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// Refuses a message past [`MAX_MESSAGE_BYTES`] before any transaction starts.
pub(super) fn check_message_size(message: &NewMessage) -> Result<(), StoreError> {
    if message.content.len() > MAX_MESSAGE_BYTES {
        return Err(FrameError::Invalid(format!(
            "the message is {:.1} MiB; Flame keeps messages up to {} MiB, so write large content to a file and name the file",
            message.content.len() as f64 / 1_048_576.0,
            MAX_MESSAGE_BYTES / 1_048_576
        ))
        .into());
    }
    Ok(())
}

impl Writer<'_> {
    /// Adds `message` to an in-progress (or planned) frame inside the caller's transaction (see
    /// [`Store::add_message`]).
    pub(super) fn insert_message(
        &self,
        frame: &FrameId,
        message: &NewMessage,
        tokens: u64,
    ) -> Result<Message, StoreError> {
        let target = self.frame(frame)?;
        lifecycle::check(Operation::AddMessage, &target.id, &target.title, target.status)?;
        let row = MessageRow::of(frame.as_str(), message, tokens, self.change.at);
        self.tx.prepare_cached(&insert_messages_sql(1))?.execute(&row.values()[..])?;
        let id = MessageId(self.tx.last_insert_rowid());
        self.count_message(&target, tokens)?;
        self.spend_reply(&target.tree, frame, id)?;
        self.event(
            &target.tree,
            frame,
            EventKind::MessageAdded,
            &EventDetail::MessageAdded { message: id },
        )?;
        Ok(Message {
            id,
            frame: frame.clone(),
            role: message.role,
            content: message.content.clone(),
            tool_calls: message.tool_calls.clone(),
            tool_result: message.tool_result.clone(),
            tokens,
            model: message.model.clone(),
            usage: message.usage,
            created_at: self.change.at,
            interrupted: message.interrupted,
        })
    }

    /// Counts one more message of `tokens` on its frame and tree.
    fn count_message(&self, frame: &Frame, tokens: u64) -> Result<(), StoreError> {
        self.tx
            .prepare_cached("UPDATE frames SET message_count = message_count + 1, tokens = tokens + ?2 WHERE id = ?1")?
            .execute(params![frame.id.as_str(), tokens as i64])?;
        self.tx
            .prepare_cached("UPDATE trees SET message_tokens = message_tokens + ?2 WHERE id = ?1")?
            .execute(params![frame.tree.as_str(), tokens as i64])?;
        Ok(())
    }
}

/// Every open reply with its writer, found by the partial index `messages_open` (migration 12)
/// rather than by scanning every message: it runs when Flame opens and in every frame view.
const OPEN_REPLIES: &str = "SELECT id, frame_id, content, owner_pid, owner_started, heartbeat_at
     FROM messages WHERE open = 1 ORDER BY id";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_replies_are_found_by_their_index() {
        let plan = crate::query_plan(OPEN_REPLIES, []);
        assert!(plan.contains("USING INDEX messages_open"), "{plan}");
    }
}
