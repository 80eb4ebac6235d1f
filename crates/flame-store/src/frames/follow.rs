//! Followed sessions: other agents' sessions kept in step with their files, each in a tree of
//! its own (migration 15: `followed_sessions`, `follow_files`, `follow_frames`,
//! `followed_agents`).
//!
//! A session's first read that holds a message is stored as an import (`import_followed`),
//! with its rows; every later read is one transaction (`follow_update`) that adds the frames
//! and messages read since, changes the frames whose status, results or identity the source
//! changed, and moves the files' cursors. Messages are only ever added: what a followed frame
//! already holds is counted in `follow_frames.messages`, and a message the count says is stored
//! is skipped, so two processes following one session store each message once. The tree is
//! checked against `FrameTree::check_invariants` before the transaction commits; a read that
//! would break it stores nothing.

use std::collections::HashMap;

use flame_model::{
    EventDetail, EventKind, FileTrail, Frame, FrameError, FrameId, FrameTree, NewMessage, Status,
    Timestamp, Tree, TreeId,
};
use rusqlite::{OptionalExtension, params};

use crate::rows::{FRAME_COLUMNS, MessageRow, insert_messages_sql};
use crate::{ImportCounts, ImportedMessage, Store, StoreError, rows};

use super::Change;
use super::reads::read_tree;
use super::writer::Writer;

/// A followed session as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowedSession {
    /// `<agent>:<the agent's id of the session>`.
    pub id: String,
    pub agent: String,
    pub session: String,
    /// The session's main file, or the OpenCode database that holds it.
    pub source: String,
    /// Its tree, once it held a message.
    pub tree: Option<TreeId>,
    /// How many times its files were read again from their start.
    pub generation: u32,
    pub followed_at: Timestamp,
    /// When a read last went well.
    pub synced_at: Option<Timestamp>,
    /// What the last read could not do.
    pub problem: Option<String>,
}

/// Where a file of a followed session was read up to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowCursor {
    pub path: String,
    pub device: u64,
    pub inode: u64,
    pub offset: u64,
}

/// The frame a part of a followed session became, and how many of its messages are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowedFrame {
    pub key: String,
    pub frame: FrameId,
    pub messages: u64,
}

/// A new frame of a followed session: placed last among its parent's children. A root (no
/// parent) must be the tree's root, which then only gets the key.
#[derive(Debug, Clone, PartialEq)]
pub struct FollowNewFrame {
    pub key: String,
    /// Its id, parent, identity, status and times; its position and counts are the store's.
    pub frame: Frame,
}

/// A followed frame whose source changed what it says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowFrameChange {
    pub frame: FrameId,
    pub title: String,
    pub criteria: String,
    pub status: Status,
    pub status_reason: Option<String>,
    pub results: Option<String>,
    pub ended_at: Option<Timestamp>,
}

/// A message of a followed frame: the `ordinal`-th of the part keyed `key`.
#[derive(Debug, Clone, PartialEq)]
pub struct FollowMessage {
    pub key: String,
    pub frame: FrameId,
    pub ordinal: u64,
    pub message: NewMessage,
    pub tokens: u64,
    pub at: Timestamp,
}

/// One read of a followed session whose tree exists.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FollowUpdate {
    pub session: String,
    pub tree: Option<TreeId>,
    /// The files were read again from their start: the session's new generation.
    pub generation: Option<u32>,
    /// Parents before their children.
    pub new_frames: Vec<FollowNewFrame>,
    pub changed_frames: Vec<FollowFrameChange>,
    pub messages: Vec<FollowMessage>,
    /// The files the new messages' tool calls touched, by frame.
    pub trails: Vec<(FrameId, FileTrail)>,
    pub cursors: Vec<FollowCursor>,
    /// The frame the session works in now (its newest segment), which becomes the tree's focus;
    /// the tree does not become the current one.
    pub focus: Option<FrameId>,
}

/// What a read stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FollowStored {
    pub frames: u64,
    pub changed: u64,
    pub messages: u64,
}

const SESSION_COLUMNS: &str =
    "id, agent, session, source, tree_id, generation, followed_at, synced_at, problem";

fn session_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<FollowedSession> {
    Ok(FollowedSession {
        id: row.get(0)?,
        agent: row.get(1)?,
        session: row.get(2)?,
        source: row.get(3)?,
        tree: row.get::<_, Option<String>>(4)?.map(TreeId::from_trusted),
        generation: row.get(5)?,
        followed_at: row.get(6)?,
        synced_at: row.get(7)?,
        problem: row.get(8)?,
    })
}

impl Store {
    /// Starts following a session (nothing changes when it is followed already); returns
    /// whether it was new.
    pub fn follow_session(
        &mut self,
        at: Timestamp,
        id: &str,
        agent: &str,
        session: &str,
        source: &str,
    ) -> Result<bool, StoreError> {
        let added = self
            .conn
            .prepare_cached(
                "INSERT OR IGNORE INTO followed_sessions (id, agent, session, source, followed_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![id, agent, session, source, at])?;
        Ok(added > 0)
    }

    /// Stops following a session; its tree is kept. Returns whether it was followed.
    pub fn unfollow_session(&mut self, id: &str) -> Result<bool, StoreError> {
        Ok(self.conn.execute("DELETE FROM followed_sessions WHERE id = ?1", [id])? > 0)
    }

    /// Every followed session, oldest followed first.
    pub fn followed_sessions(&self) -> Result<Vec<FollowedSession>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM followed_sessions ORDER BY followed_at, id"
        ))?;
        let rows = stmt.query_map([], session_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One followed session.
    pub fn followed_session(&self, id: &str) -> Result<Option<FollowedSession>, StoreError> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT {SESSION_COLUMNS} FROM followed_sessions WHERE id = ?1"
            ))?
            .query_row([id], session_row)
            .optional()?)
    }

    /// Where each file of a followed session was read up to.
    pub fn follow_cursors(&self, id: &str) -> Result<Vec<FollowCursor>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT path, device, inode, offset FROM follow_files WHERE session_id = ?1 ORDER BY path",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok(FollowCursor {
                path: r.get(0)?,
                device: r.get::<_, i64>(1)? as u64,
                inode: r.get::<_, i64>(2)? as u64,
                offset: r.get::<_, i64>(3)? as u64,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The frames of a followed session, by key.
    pub fn followed_frames(&self, id: &str) -> Result<Vec<FollowedFrame>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT key, frame_id, messages FROM follow_frames WHERE session_id = ?1 ORDER BY key",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok(FollowedFrame {
                key: r.get(0)?,
                frame: FrameId::from_trusted(r.get(1)?),
                messages: r.get::<_, i64>(2)? as u64,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Records how the last read of a followed session went: `problem` (none when it went well,
    /// which is then its `synced_at`).
    pub fn set_follow_problem(
        &mut self,
        id: &str,
        at: Timestamp,
        problem: Option<&str>,
    ) -> Result<(), StoreError> {
        self.conn
            .prepare_cached(
                "UPDATE followed_sessions
                 SET problem = ?3, synced_at = CASE WHEN ?3 IS NULL THEN ?2 ELSE synced_at END
                 WHERE id = ?1",
            )?
            .execute(params![id, at, problem])?;
        Ok(())
    }

    /// Follows every new session of `agent` from `since` on, or (with `None`) no longer.
    pub fn set_followed_agent(
        &mut self,
        agent: &str,
        since: Option<Timestamp>,
    ) -> Result<(), StoreError> {
        match since {
            Some(since) => self.conn.execute(
                "INSERT INTO followed_agents (agent, since) VALUES (?1, ?2)
                 ON CONFLICT (agent) DO NOTHING",
                params![agent, since],
            )?,
            None => self.conn.execute("DELETE FROM followed_agents WHERE agent = ?1", [agent])?,
        };
        Ok(())
    }

    /// The agents whose every new session is followed, with when that began.
    pub fn followed_agents(&self) -> Result<Vec<(String, Timestamp)>, StoreError> {
        let mut stmt =
            self.conn.prepare_cached("SELECT agent, since FROM followed_agents ORDER BY agent")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Stores a followed session's first read as a tree, in one transaction with its keys
    /// (`keys`: each frame's key and how many of its messages are stored, by frame index), its
    /// files' cursors and the tree on the session's row. Unlike an import, the tree does not
    /// become the current one: the person is looking at another. Refused, storing nothing, when
    /// the session has a tree already (another process stored it first).
    #[allow(clippy::too_many_arguments)]
    pub fn import_followed(
        &mut self,
        change: Change,
        session: &str,
        tree: &Tree,
        frames: &[Frame],
        messages: &[ImportedMessage],
        trails: &[(usize, FileTrail)],
        keys: &[(String, u64)],
        cursors: &[FollowCursor],
    ) -> Result<ImportCounts, StoreError> {
        if keys.len() != frames.len() {
            return Err(FrameError::Invalid(format!(
                "a followed session's {} frames came with {} keys",
                frames.len(),
                keys.len()
            ))
            .into());
        }
        let current = self.current_tree()?;
        self.import_tree_then(change, tree, frames, messages, trails, |tx| {
            if let Some(current) = &current {
                tx.prepare_cached("UPDATE store_meta SET value = ?1 WHERE key = 'current_tree'")?
                    .execute([current.as_str()])?;
            }
            let taken = tx
                .prepare_cached(
                    "UPDATE followed_sessions SET tree_id = ?2, problem = NULL, synced_at = ?3
                     WHERE id = ?1 AND tree_id IS NULL",
                )?
                .execute(params![session, tree.id.as_str(), change.at])?;
            if taken == 0 {
                return Err(FrameError::Invalid(format!(
                    "the followed session {session} has a tree already, or is no longer followed"
                ))
                .into());
            }
            let mut key = tx.prepare_cached(
                "INSERT INTO follow_frames (session_id, key, frame_id, messages) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for ((k, count), frame) in keys.iter().zip(frames) {
                key.execute(params![session, k, frame.id.as_str(), *count as i64])?;
            }
            write_cursors(tx, session, cursors)
        })
    }

    /// Stores one later read of a followed session in one transaction (see the module's notes).
    pub fn follow_update(
        &mut self,
        change: Change,
        update: &FollowUpdate,
    ) -> Result<FollowStored, StoreError> {
        self.write(change, |w| {
            let session = &update.session;
            let tree_id = update.tree.as_ref().ok_or_else(|| {
                FrameError::Invalid(format!("the followed session {session} has no tree yet"))
            })?;
            let tree = read_tree(w.tx, tree_id)?;
            let mut stored = FollowStored::default();
            if let Some(generation) = update.generation {
                w.tx.prepare_cached("UPDATE followed_sessions SET generation = ?2 WHERE id = ?1")?
                    .execute(params![session, generation])?;
            }
            for new in &update.new_frames {
                w.insert_followed_frame(&tree, session, new)?;
                stored.frames += u64::from(new.frame.parent.is_some());
            }
            for change in &update.changed_frames {
                stored.changed += u64::from(w.change_followed_frame(&tree, change)?);
            }
            let mut counts: HashMap<&str, u64> = HashMap::new();
            let mut count = w.tx.prepare_cached(
                "SELECT messages FROM follow_frames WHERE session_id = ?1 AND key = ?2",
            )?;
            for m in &update.messages {
                let held = match counts.get(m.key.as_str()) {
                    Some(n) => *n,
                    None => count
                        .query_row(params![session, m.key], |r| r.get::<_, i64>(0))
                        .optional()?
                        .ok_or_else(|| {
                            FrameError::Invalid(format!("the followed frame {} is not stored", m.key))
                        })? as u64,
                };
                if m.ordinal < held {
                    // Stored by another process following the same session.
                    counts.insert(&m.key, held);
                    continue;
                }
                if m.ordinal > held {
                    return Err(FrameError::Invalid(format!(
                        "message {} of the followed frame {} comes after the {held} stored: read the session again",
                        m.ordinal, m.key
                    ))
                    .into());
                }
                w.insert_followed_message(&tree.id, m)?;
                counts.insert(&m.key, held + 1);
                stored.messages += 1;
            }
            let mut set_count = w.tx.prepare_cached(
                "UPDATE follow_frames SET messages = ?3 WHERE session_id = ?1 AND key = ?2",
            )?;
            for (key, n) in &counts {
                set_count.execute(params![session, key, *n as i64])?;
            }
            for (frame, trail) in &update.trails {
                w.record_trail(frame, trail)?;
            }
            write_cursors(w.tx, session, &update.cursors)?;
            if let Some(focus) = &update.focus {
                w.set_focus(&tree.id, focus)?;
            }
            w.tx.prepare_cached(
                "UPDATE followed_sessions SET problem = NULL, synced_at = ?2 WHERE id = ?1",
            )?
            .execute(params![session, change.at])?;
            w.check_tree(&tree)?;
            Ok(stored)
        })
    }
}

fn write_cursors(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    cursors: &[FollowCursor],
) -> Result<(), StoreError> {
    let mut write = tx.prepare_cached(
        "INSERT INTO follow_files (session_id, path, device, inode, offset) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (session_id, path) DO UPDATE
         SET device = excluded.device, inode = excluded.inode, offset = excluded.offset",
    )?;
    for c in cursors {
        write.execute(params![
            session,
            c.path,
            c.device as i64,
            c.inode as i64,
            c.offset as i64
        ])?;
    }
    Ok(())
}

impl Writer<'_> {
    fn insert_followed_frame(
        &self,
        tree: &Tree,
        session: &str,
        new: &FollowNewFrame,
    ) -> Result<(), StoreError> {
        let f = &new.frame;
        let key = |frame: &FrameId| -> Result<(), StoreError> {
            self.tx
                .prepare_cached(
                    "INSERT INTO follow_frames (session_id, key, frame_id, messages) VALUES (?1, ?2, ?3, 0)",
                )?
                .execute(params![session, new.key, frame.as_str()])?;
            Ok(())
        };
        // The root stays the tree's root when the session is read again from its start: its
        // new key counts the messages that reading puts in it.
        let Some(parent) = f.parent.as_ref() else {
            if f.id != tree.root {
                return Err(FrameError::Invalid(format!(
                    "the followed frame {} has no parent",
                    new.key
                ))
                .into());
            }
            return key(&f.id);
        };
        let position = self.child_count(parent)?;
        self.tx
            .prepare_cached(
                "INSERT INTO frames (id, tree_id, parent_id, position, title, success_criteria,
                     status, status_reason, results, created_at, started_at, ended_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )?
            .execute(params![
                f.id.as_str(),
                tree.id.as_str(),
                parent.as_str(),
                position,
                f.title,
                f.success_criteria,
                f.status.as_str(),
                f.status_reason,
                f.results,
                f.created_at,
                f.started_at,
                f.ended_at,
            ])
            .map_err(|e| StoreError::taken_or(e, f.id.as_str()))?;
        key(&f.id)?;
        self.event(
            &tree.id,
            &f.id,
            EventKind::Imported,
            &EventDetail::Imported {
                title: f.title.clone(),
                success_criteria: f.success_criteria.clone(),
                first_message: None,
                last_message: None,
            },
        )?;
        Ok(())
    }

    /// Writes a followed frame's new identity, status and results; returns whether anything
    /// differed. A status that changed is recorded as a pop, an identity as an edit.
    fn change_followed_frame(
        &self,
        tree: &Tree,
        c: &FollowFrameChange,
    ) -> Result<bool, StoreError> {
        let before = self.frame(&c.frame)?;
        let identity = before.title != c.title || before.success_criteria != c.criteria;
        let ending = before.status != c.status
            || before.status_reason != c.status_reason
            || before.results != c.results
            || before.ended_at != c.ended_at;
        if !identity && !ending {
            return Ok(false);
        }
        self.tx
            .prepare_cached(
                "UPDATE frames SET title = ?2, success_criteria = ?3, status = ?4, status_reason = ?5,
                     results = ?6, ended_at = ?7 WHERE id = ?1",
            )?
            .execute(params![
                c.frame.as_str(),
                c.title,
                c.criteria,
                c.status.as_str(),
                c.status_reason,
                c.results,
                c.ended_at
            ])?;
        if identity {
            self.event(
                &tree.id,
                &c.frame,
                EventKind::Edited,
                &EventDetail::Edited {
                    title: c.title.clone(),
                    success_criteria: c.criteria.clone(),
                },
            )?;
        }
        if ending {
            self.event(
                &tree.id,
                &c.frame,
                EventKind::Popped,
                &EventDetail::Popped {
                    status: c.status,
                    results: c.results.clone(),
                    results_compacted: None,
                    artifacts: Vec::new(),
                    decisions: Vec::new(),
                    reason: c.status_reason.clone(),
                },
            )?;
        }
        Ok(true)
    }

    fn insert_followed_message(&self, tree: &TreeId, m: &FollowMessage) -> Result<(), StoreError> {
        super::messages::check_message_size(&m.message)?;
        let row = MessageRow::of(m.frame.as_str(), &m.message, m.tokens, m.at);
        self.tx.prepare_cached(&insert_messages_sql(1))?.execute(&row.values()[..])?;
        let id = flame_model::MessageId(self.tx.last_insert_rowid());
        self.tx
            .prepare_cached("UPDATE frames SET message_count = message_count + 1, tokens = tokens + ?2 WHERE id = ?1")?
            .execute(params![m.frame.as_str(), m.tokens as i64])?;
        self.tx
            .prepare_cached("UPDATE trees SET message_tokens = message_tokens + ?2 WHERE id = ?1")?
            .execute(params![tree.as_str(), m.tokens as i64])?;
        self.spend_reply(tree, &m.frame, id)?;
        self.event(
            tree,
            &m.frame,
            EventKind::MessageAdded,
            &EventDetail::MessageAdded { message: id },
        )?;
        Ok(())
    }

    /// Refuses the transaction when the tree no longer meets Flame's invariants.
    fn check_tree(&self, tree: &Tree) -> Result<(), StoreError> {
        let mut stmt = self
            .tx
            .prepare_cached(&format!("SELECT {FRAME_COLUMNS} FROM frames WHERE tree_id = ?1"))?;
        let frames: Vec<Frame> =
            stmt.query_map([tree.id.as_str()], rows::frame)?.collect::<Result<_, _>>()?;
        FrameTree::new(tree.clone(), frames).check_invariants().map_err(|broken| {
            FrameError::Invalid(format!(
                "this read of the session would break the tree ({broken}); nothing of it was stored"
            ))
            .into()
        })
    }
}
