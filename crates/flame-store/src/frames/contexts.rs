//! Each frame's context as its calls send it (`flame_model::FrameContext`): its opening and what
//! followed it, kept so that every later request in the frame repeats it byte for byte, in any
//! process. Written before a call when the call changes it (an opening made, a note appended, a
//! batch of tool results masked), with the note in the same transaction. The opening is kept
//! apart (`frame_openings`) and written only when a new one is made: it is most of the context,
//! and most calls change only the rest.
//!
//! Every save takes the next number of a counter kept in `store_meta` as the row's `version`
//! (migration 18): a process that keeps a frame's context parsed asks only for that column
//! ([`Store::frame_context_version`]) to know whether another process saved it since. Numbers are
//! never given twice, so a row deleted with its tree and made again is never taken for the one a
//! process kept.

use flame_model::{FrameContext, FrameId, Message, NewMessage};
use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError};

use super::Change;
use super::messages::check_message_size;

/// A frame's context as stored, and which save of it that is.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionedContext {
    /// The save's number ([`Store::frame_context_version`]); `None` before the frame's first.
    pub version: Option<i64>,
    /// What the frame's calls send; `None` before its first call, or when the row cannot be
    /// read (see [`Store::frame_context`]).
    pub context: Option<FrameContext>,
}

/// A context saved: the note appended with it, the save's number, and the context as
/// [`Store::frame_context`] reads it back (the note's id added to its notes).
#[derive(Debug, Clone, PartialEq)]
pub struct SavedContext {
    pub note: Option<Message>,
    pub version: i64,
    pub context: FrameContext,
}

impl Store {
    /// What frame `frame`'s calls send, as its last call kept it; `None` before its first call.
    /// A row that cannot be read (written by a newer Flame, or damaged) is no context: the
    /// next call makes a new opening, which costs a cache miss and loses nothing.
    pub fn frame_context(&self, frame: &FrameId) -> Result<Option<FrameContext>, StoreError> {
        Ok(self.versioned_frame_context(frame)?.context)
    }

    /// Which save of frame `frame`'s context is stored (`None`: none is): one column of one
    /// row, so that a context kept parsed is known to be current without reading it.
    pub fn frame_context_version(&self, frame: &FrameId) -> Result<Option<i64>, StoreError> {
        Ok(self
            .conn
            .prepare_cached("SELECT version FROM frame_contexts WHERE frame_id = ?1")?
            .query_row([frame.as_str()], |r| r.get(0))
            .optional()?)
    }

    /// [`Store::frame_context`] with the number of the save it is, read together.
    pub fn versioned_frame_context(&self, frame: &FrameId) -> Result<VersionedContext, StoreError> {
        let row: Option<(i64, String, Option<u32>, Option<String>)> = self
            .conn
            .prepare_cached(
                "SELECT c.version, c.state, o.generation, o.opening
                 FROM frame_contexts c LEFT JOIN frame_openings o USING (frame_id)
                 WHERE c.frame_id = ?1",
            )?
            .query_row([frame.as_str()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .optional()?;
        let Some((version, state, generation, opening)) = row else {
            return Ok(VersionedContext { version: None, context: None });
        };
        let context = match (serde_json::from_str::<FrameContext>(&state), generation.zip(opening))
        {
            (Ok(context), Some((generation, opening))) if context.generation == generation => {
                Some(FrameContext { opening, ..context })
            }
            (Ok(context), kept) => {
                let kept = kept.map_or_else(|| "none".to_owned(), |(g, _)| g.to_string());
                tracing::warn!(%frame, "the frame's stored context is of opening {} but the stored opening is {kept}, so a new opening will be made", context.generation);
                None
            }
            (Err(err), _) => {
                tracing::warn!(%frame, "the frame's stored context is unreadable, so a new opening will be made: {err}");
                None
            }
        };
        Ok(VersionedContext { version: Some(version), context })
    }

    /// Keeps `context` as frame `frame`'s, after appending `note` (of `tokens` tokens) to the
    /// frame's messages when there is one, its id added to the context's notes: one
    /// transaction. Returns the note as stored, the save's number and the context as stored.
    pub fn save_frame_context(
        &mut self,
        change: Change,
        frame: &FrameId,
        mut context: FrameContext,
        note: Option<(&NewMessage, u64)>,
    ) -> Result<SavedContext, StoreError> {
        if let Some((note, _)) = note {
            check_message_size(note)?;
        }
        self.write(change, |w| {
            w.frame(frame)?;
            let stored = match note {
                Some((note, tokens)) => Some(w.insert_message(frame, note, tokens)?),
                None => None,
            };
            let kept: Option<u32> =
                w.tx.prepare_cached("SELECT generation FROM frame_openings WHERE frame_id = ?1")?
                    .query_row([frame.as_str()], |r| r.get(0))
                    .optional()?;
            if kept != Some(context.generation) {
                w.tx.prepare_cached(
                    "INSERT INTO frame_openings (frame_id, generation, opening) VALUES (?1, ?2, ?3)
                     ON CONFLICT (frame_id) DO UPDATE
                     SET generation = excluded.generation, opening = excluded.opening",
                )?
                .execute(params![
                    frame.as_str(),
                    context.generation,
                    context.opening
                ])?;
            }
            context.notes.extend(stored.as_ref().map(|m| m.id));
            // The opening is kept apart: the state is written without it, and it is not copied.
            let opening = std::mem::take(&mut context.opening);
            let state = serde_json::to_string(&context).expect("a frame's context serialises");
            context.opening = opening;
            let version = next_version(w.tx)?;
            w.tx.prepare_cached(
                "INSERT INTO frame_contexts (frame_id, state, version) VALUES (?1, ?2, ?3)
                 ON CONFLICT (frame_id) DO UPDATE SET state = excluded.state,
                     version = excluded.version",
            )?
            .execute(params![frame.as_str(), state, version])?;
            Ok(SavedContext { note: stored, version, context })
        })
    }

    /// Asks for frame `frame`'s opening to be made again at its next call: the person's
    /// request. Returns whether the frame had one; a frame without one makes it at its next
    /// call anyway.
    pub fn ask_context_rebuild(
        &mut self,
        change: Change,
        frame: &FrameId,
    ) -> Result<bool, StoreError> {
        self.write(change, |w| {
            w.frame(frame)?;
            let text: Option<String> =
                w.tx.prepare_cached("SELECT state FROM frame_contexts WHERE frame_id = ?1")?
                    .query_row([frame.as_str()], |r| r.get(0))
                    .optional()?;
            let Some(mut context) =
                text.and_then(|t| serde_json::from_str::<FrameContext>(&t).ok())
            else {
                return Ok(false);
            };
            context.rebuild_asked = true;
            let state = serde_json::to_string(&context).expect("a frame's context serialises");
            let version = next_version(w.tx)?;
            w.tx.prepare_cached(
                "UPDATE frame_contexts SET state = ?2, version = ?3 WHERE frame_id = ?1",
            )?
            .execute(params![frame.as_str(), state, version])?;
            Ok(true)
        })
    }
}

/// The next save's number: one more than the last given, in any frame.
fn next_version(conn: &rusqlite::Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "INSERT INTO store_meta (key, value) VALUES ('context_version', '1')
         ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
         RETURNING CAST(value AS INTEGER)",
    )?
    .query_row([], |r| r.get(0))
}
