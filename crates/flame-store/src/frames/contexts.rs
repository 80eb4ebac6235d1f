//! Each frame's context as its calls send it (`flame_model::FrameContext`): its opening and what
//! followed it, kept so that every later request in the frame repeats it byte for byte, in any
//! process. Written before a call when the call changes it (an opening made, a note appended, a
//! batch of tool results masked), with the note in the same transaction. The opening is kept
//! apart (`frame_openings`) and written only when a new one is made: it is most of the context,
//! and most calls change only the rest.

use flame_model::{FrameContext, FrameId, Message, NewMessage};
use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError};

use super::Change;
use super::messages::check_message_size;

impl Store {
    /// What frame `frame`'s calls send, as its last call kept it; `None` before its first call.
    /// A row that cannot be read (written by a newer Flame, or damaged) is no context: the
    /// next call makes a new opening, which costs a cache miss and loses nothing.
    pub fn frame_context(&self, frame: &FrameId) -> Result<Option<FrameContext>, StoreError> {
        let row: Option<(String, u32, String)> = self
            .conn
            .prepare_cached(
                "SELECT c.state, o.generation, o.opening
                 FROM frame_contexts c JOIN frame_openings o USING (frame_id)
                 WHERE c.frame_id = ?1",
            )?
            .query_row([frame.as_str()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        let Some((state, generation, opening)) = row else { return Ok(None) };
        match serde_json::from_str::<FrameContext>(&state) {
            Ok(context) if context.generation == generation => {
                Ok(Some(FrameContext { opening, ..context }))
            }
            Ok(context) => {
                tracing::warn!(%frame, "the frame's stored context is of opening {} but the stored opening is {generation}, so a new opening will be made", context.generation);
                Ok(None)
            }
            Err(err) => {
                tracing::warn!(%frame, "the frame's stored context is unreadable, so a new opening will be made: {err}");
                Ok(None)
            }
        }
    }

    /// Keeps `context` as frame `frame`'s, after appending `note` (of `tokens` tokens) to the
    /// frame's messages when there is one, its id added to the context's notes: one
    /// transaction. Returns the note as stored.
    pub fn save_frame_context(
        &mut self,
        change: Change,
        frame: &FrameId,
        context: &FrameContext,
        note: Option<(&NewMessage, u64)>,
    ) -> Result<Option<Message>, StoreError> {
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
            let mut context = FrameContext { opening: String::new(), ..context.clone() };
            context.notes.extend(stored.as_ref().map(|m| m.id));
            let state = serde_json::to_string(&context).expect("a frame's context serialises");
            w.tx.prepare_cached(
                "INSERT INTO frame_contexts (frame_id, state) VALUES (?1, ?2)
                 ON CONFLICT (frame_id) DO UPDATE SET state = excluded.state",
            )?
            .execute(params![frame.as_str(), state])?;
            Ok(stored)
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
            w.tx.prepare_cached("UPDATE frame_contexts SET state = ?2 WHERE frame_id = ?1")?
                .execute(params![frame.as_str(), state])?;
            Ok(true)
        })
    }
}
