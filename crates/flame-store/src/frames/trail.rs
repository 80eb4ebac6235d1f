//! The file trail: the workspace-relative paths a frame's own tool calls read and changed
//! (`frame_files`), recorded with the tool result that reports them, in one transaction.
//!
//! A frame's trail holds at most `MAX_TRAIL_PATHS` paths of at most `MAX_TRAIL_PATH_BYTES` bytes;
//! further paths are left out while the tool result is still stored.

use std::collections::HashMap;

use flame_model::{FileTrail, FrameError, FrameId, Message, NewMessage};
use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError};

use super::Change;
use super::messages::check_message_size;
use super::writer::Writer;

/// The most paths one frame's trail records, read and changed together. A frame's own tool
/// calls touch far fewer; past it, new paths are left out of the trail (the tool results and
/// the frame's log still name them), while a recorded read path that is then changed is still
/// marked changed.
pub const MAX_TRAIL_PATHS: usize = 10_000;

/// The longest path a trail records, in bytes (Linux's `PATH_MAX`); a longer one is left out.
pub const MAX_TRAIL_PATH_BYTES: usize = 4096;

/// How many frames' trails one statement reads, well under SQLite's limit on bound values.
const FRAMES_PER_QUERY: usize = 500;

/// A tool result as stored, and how many of its trail's paths were not recorded because of
/// [`MAX_TRAIL_PATHS`] or [`MAX_TRAIL_PATH_BYTES`].
#[derive(Debug, Clone, PartialEq)]
pub struct StoredToolResult {
    pub message: Message,
    pub paths_left_out: usize,
}

impl Store {
    /// Adds a tool result to an in-progress frame and records the files its call read and
    /// changed in the frame's trail, in one transaction: both are stored or neither. A path
    /// changed is recorded as changed (a read of it recorded earlier becomes a change); a path
    /// already recorded as changed stays changed when it is read later.
    pub fn add_tool_result(
        &mut self,
        change: Change,
        frame: &FrameId,
        message: &NewMessage,
        tokens: u64,
        trail: &FileTrail,
    ) -> Result<StoredToolResult, StoreError> {
        if message.tool_result.is_none() {
            return Err(FrameError::Invalid(
                "a file trail is recorded only with a tool result, and this message answers no tool call".to_owned(),
            )
            .into());
        }
        check_message_size(message)?;
        self.write(change, |w| {
            let message = w.insert_message(frame, message, tokens)?;
            let paths_left_out = w.record_trail(frame, trail)?;
            Ok(StoredToolResult { message, paths_left_out })
        })
    }

    /// The files frame `id`'s own tool calls read and changed, each list sorted.
    pub fn file_trail(&self, id: &FrameId) -> Result<FileTrail, StoreError> {
        self.frame(id)?;
        let mut trails = self.file_trails(std::slice::from_ref(id))?;
        Ok(trails.remove(id).unwrap_or_default())
    }

    /// The trails of `frames`, each list sorted; a frame whose calls touched no file (or that
    /// does not exist) has no entry.
    pub fn file_trails(
        &self,
        frames: &[FrameId],
    ) -> Result<HashMap<FrameId, FileTrail>, StoreError> {
        let mut trails: HashMap<FrameId, FileTrail> = HashMap::new();
        self.each_trail_path(
            frames,
            |marks| {
                format!(
                    "SELECT frame_id, changed, path FROM frame_files WHERE frame_id IN ({marks})
                     ORDER BY frame_id, changed, path"
                )
            },
            |frame, changed, path| {
                let trail = trails.entry(frame).or_default();
                if changed { trail.changed.push(path) } else { trail.read.push(path) }
            },
        )?;
        Ok(trails)
    }

    /// For each of `frames`, the files it and every frame under it read and changed: what a
    /// finished frame's work touched, whichever of its descendants made the calls. A path
    /// changed anywhere in the subtree is listed as changed. A frame whose subtree touched no
    /// file (or that does not exist) has no entry.
    pub fn subtree_file_trails(
        &self,
        frames: &[FrameId],
    ) -> Result<HashMap<FrameId, FileTrail>, StoreError> {
        let mut paths: HashMap<FrameId, (Vec<String>, Vec<String>)> = HashMap::new();
        self.each_trail_path(
            frames,
            |marks| {
                format!(
                    "WITH RECURSIVE under(root, id) AS (
                         SELECT id, id FROM frames WHERE id IN ({marks})
                         UNION ALL
                         SELECT under.root, frames.id FROM frames JOIN under ON frames.parent_id = under.id
                     )
                     SELECT under.root, frame_files.changed, frame_files.path
                     FROM under JOIN frame_files ON frame_files.frame_id = under.id"
                )
            },
            |frame, changed, path| {
                let (read, written) = paths.entry(frame).or_default();
                if changed { written.push(path) } else { read.push(path) }
            },
        )?;
        Ok(paths
            .into_iter()
            .map(|(frame, (read, changed))| (frame, FileTrail::new(read, changed)))
            .collect())
    }

    /// Runs the query `sql` makes for a list of placeholders over `frames`, at most
    /// [`FRAMES_PER_QUERY`] at a time, and hands each `(frame, changed, path)` row it reads to
    /// `each`.
    fn each_trail_path(
        &self,
        frames: &[FrameId],
        sql: impl Fn(&str) -> String,
        mut each: impl FnMut(FrameId, bool, String),
    ) -> Result<(), StoreError> {
        for chunk in frames.chunks(FRAMES_PER_QUERY) {
            let mut stmt = self.conn.prepare(&sql(&vec!["?"; chunk.len()].join(", ")))?;
            let rows = stmt.query_map(
                rusqlite::params_from_iter(chunk.iter().map(FrameId::as_str)),
                |row| Ok((row.get::<_, String>(0)?, row.get::<_, bool>(1)?, row.get(2)?)),
            )?;
            for row in rows {
                let (frame, changed, path) = row?;
                each(FrameId::from_trusted(frame), changed, path);
            }
        }
        Ok(())
    }
}

impl Writer<'_> {
    /// Adds `trail`'s paths to frame `frame`'s trail; returns how many were left out (too long,
    /// or new past [`MAX_TRAIL_PATHS`]).
    pub(super) fn record_trail(
        &self,
        frame: &FrameId,
        trail: &FileTrail,
    ) -> Result<usize, StoreError> {
        let mut recorded: usize = self
            .tx
            .prepare_cached("SELECT count(*) FROM frame_files WHERE frame_id = ?1")?
            .query_row([frame.as_str()], |row| row.get::<_, i64>(0))?
            .try_into()
            .unwrap_or(usize::MAX);
        let mut left_out = 0;
        let lookup = |path: &str| -> Result<Option<bool>, StoreError> {
            Ok(self
                .tx
                .prepare_cached(
                    "SELECT max(changed) FROM frame_files WHERE frame_id = ?1 AND path = ?2",
                )?
                .query_row(params![frame.as_str(), path], |row| row.get::<_, Option<bool>>(0))
                .optional()?
                .flatten())
        };
        let insert = |path: &str, changed: bool| -> Result<(), StoreError> {
            self.tx
                .prepare_cached(
                    "INSERT INTO frame_files (frame_id, changed, path) VALUES (?1, ?2, ?3)",
                )?
                .execute(params![frame.as_str(), changed, path])?;
            Ok(())
        };
        // Changed first, so a path both read and changed in one call is recorded as changed.
        let paths =
            trail.changed.iter().map(|p| (p, true)).chain(trail.read.iter().map(|p| (p, false)));
        for (path, changed) in paths {
            if path.len() > MAX_TRAIL_PATH_BYTES {
                left_out += 1;
                continue;
            }
            match (lookup(path)?, changed) {
                // Already recorded as changed, or read again: nothing new.
                (Some(true), _) | (Some(false), false) => {}
                // Read before and changed now: the same row, now a change.
                (Some(false), true) => {
                    self.tx
                        .prepare_cached("UPDATE frame_files SET changed = 1 WHERE frame_id = ?1 AND changed = 0 AND path = ?2")?
                        .execute(params![frame.as_str(), path])?;
                }
                (None, _) if recorded >= MAX_TRAIL_PATHS => left_out += 1,
                (None, changed) => {
                    insert(path, changed)?;
                    recorded += 1;
                }
            }
        }
        Ok(left_out)
    }

    /// The paths frame `frame`'s own calls changed, sorted.
    pub(super) fn changed_paths(&self, frame: &FrameId) -> Result<Vec<String>, StoreError> {
        let mut stmt = self.tx.prepare_cached(
            "SELECT path FROM frame_files WHERE frame_id = ?1 AND changed = 1 ORDER BY path",
        )?;
        let paths = stmt.query_map([frame.as_str()], |row| row.get(0))?;
        Ok(paths.collect::<Result<_, _>>()?)
    }
}
