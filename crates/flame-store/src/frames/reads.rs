//! Reads: frames, trees, messages and events, the path context assembly reads, and the
//! bookkeeping of logs that lag behind.

use flame_model::cost::ModelUsage;
use flame_model::lifecycle::{self, FrameActions};
use flame_model::{
    Event, Frame, FrameError, FrameId, FrameOutline, Message, MessageId, Status, Tree, TreeId,
    Usage,
};
use rusqlite::{OptionalExtension, params};

use crate::rows::{self, FRAME_COLUMNS, TREE_COLUMNS};
use crate::{Store, StoreError};

use super::TreeSummary;

impl Store {
    /// One frame.
    pub fn frame(&self, id: &FrameId) -> Result<Frame, StoreError> {
        read_frame(&self.conn, id)
    }

    /// One tree.
    pub fn tree(&self, id: &TreeId) -> Result<Tree, StoreError> {
        read_tree(&self.conn, id)
    }

    /// Every tree, oldest first.
    pub fn trees(&self) -> Result<Vec<TreeSummary>, StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {TREE_COLUMNS}, (SELECT status FROM frames WHERE id = trees.root_id),
                    (SELECT count(*) FROM frames WHERE tree_id = trees.id)
             FROM trees ORDER BY created_at, id"
        ))?;
        let summaries = stmt.query_map([], |row| {
            let status: String = row.get(6)?;
            Ok(TreeSummary {
                tree: rows::tree(row)?,
                root_status: Status::parse(&status).unwrap_or(Status::Invalidated),
                frame_count: row.get::<_, i64>(7)? as u64,
            })
        })?;
        Ok(summaries.collect::<Result<_, _>>()?)
    }

    /// The tree last created or focused, if any.
    pub fn current_tree(&self) -> Result<Option<TreeId>, StoreError> {
        let id: Option<String> = self
            .conn
            .query_row("SELECT value FROM store_meta WHERE key = 'current_tree'", [], |row| {
                row.get(0)
            })
            .optional()?;
        Ok(id.map(TreeId::from_trusted))
    }

    /// Every frame of a tree, in no particular order.
    pub fn frames_of_tree(&self, tree: &TreeId) -> Result<Vec<Frame>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {FRAME_COLUMNS} FROM frames WHERE tree_id = ?1"))?;
        let frames = stmt.query_map([tree.as_str()], rows::frame)?;
        Ok(frames.collect::<Result<_, _>>()?)
    }

    /// Every frame of a tree in the narrow form drawing needs, in no particular order: the
    /// flame graph's load, read from the `frames_outline` index alone.
    pub fn outline_of_tree(&self, tree: &TreeId) -> Result<Vec<FrameOutline>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&outline_of_tree_sql())?;
        let frames = stmt.query_map([tree.as_str()], rows::outline)?;
        Ok(frames.collect::<Result<_, _>>()?)
    }

    /// `id`'s children in position order.
    pub fn children(&self, id: &FrameId) -> Result<Vec<Frame>, StoreError> {
        read_children(&self.conn, id)
    }

    /// A frame's messages, oldest first.
    pub fn messages(&self, frame: &FrameId) -> Result<Vec<Message>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {} FROM messages WHERE frame_id = ?1 ORDER BY id",
            rows::MESSAGE_COLUMNS
        ))?;
        let messages = stmt.query_map([frame.as_str()], rows::message)?;
        Ok(messages.collect::<Result<_, _>>()?)
    }

    /// The messages with the given ids, in id order.
    pub fn messages_by_id(&self, ids: &[MessageId]) -> Result<Vec<Message>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {} FROM messages WHERE id = ?1",
            rows::MESSAGE_COLUMNS
        ))?;
        let mut found = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(message) = stmt.query_row([id.0], rows::message).optional()? {
                found.push(message);
            }
        }
        Ok(found)
    }

    /// A frame's messages with ids from `first` to `last`, oldest first.
    pub fn messages_between(
        &self,
        frame: &FrameId,
        first: MessageId,
        last: MessageId,
    ) -> Result<Vec<Message>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {} FROM messages WHERE frame_id = ?1 AND id BETWEEN ?2 AND ?3 ORDER BY id",
            rows::MESSAGE_COLUMNS
        ))?;
        let messages = stmt.query_map(params![frame.as_str(), first.0, last.0], rows::message)?;
        Ok(messages.collect::<Result<_, _>>()?)
    }

    /// The newest `limit` of a frame's messages with ids before `before`, oldest first: a page
    /// of a long conversation, read backwards along the `messages_by_frame` index.
    pub fn messages_before(
        &self,
        frame: &FrameId,
        before: MessageId,
        limit: u32,
    ) -> Result<Vec<Message>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {} FROM messages WHERE frame_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3",
            rows::MESSAGE_COLUMNS
        ))?;
        let messages = stmt.query_map(params![frame.as_str(), before.0, limit], rows::message)?;
        let mut messages: Vec<Message> = messages.collect::<Result<_, _>>()?;
        messages.reverse();
        Ok(messages)
    }

    /// A frame's events after `after_seq`, oldest first.
    pub fn frame_events(&self, frame: &FrameId, after_seq: i64) -> Result<Vec<Event>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {} FROM events WHERE frame_id = ?1 AND seq > ?2 ORDER BY seq",
            rows::EVENT_COLUMNS
        ))?;
        let events = stmt.query_map(params![frame.as_str(), after_seq], rows::event)?;
        Ok(events.collect::<Result<_, _>>()?)
    }

    /// The tokens of every message in a tree.
    pub fn tree_message_tokens(&self, tree: &TreeId) -> Result<u64, StoreError> {
        let tokens: i64 = self
            .conn
            .prepare_cached("SELECT message_tokens FROM trees WHERE id = ?1")?
            .query_row([tree.as_str()], |r| r.get(0))
            .optional()?
            .ok_or_else(|| FrameError::NoSuchTree(tree.clone()))?;
        Ok(tokens as u64)
    }

    /// Every frame's recorded usage in tree `tree`, added up by model: one aggregate over the
    /// tree's replies, their usage counts read in SQL rather than every message loaded. What frame
    /// costs are computed from (`flame_model::cost::frame_costs`). The shapes earlier versions
    /// stored (Anthropic's cache-count names) are read too; a count that is not a whole number
    /// counts as 0, and one above 2^32 (more than any provider reports) as 2^32, so no sum
    /// overflows; usage that is not JSON is left out.
    pub fn usage_by_frame_and_model(
        &self,
        tree: &TreeId,
    ) -> Result<Vec<(FrameId, ModelUsage)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(USAGE_BY_FRAME_AND_MODEL)?;
        let rows = stmt.query_map([tree.as_str()], |row| {
            Ok((FrameId::from_trusted(row.get(0)?), model_usage(row, 1)?))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One frame's recorded usage, added up by model: [`Store::usage_by_frame_and_model`] for a
    /// single frame, for bringing a tree's costs up to date after a change.
    pub fn usage_by_model(&self, frame: &FrameId) -> Result<Vec<ModelUsage>, StoreError> {
        let mut stmt = self.conn.prepare_cached(USAGE_BY_MODEL)?;
        let rows = stmt.query_map([frame.as_str()], |row| model_usage(row, 0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The newest event's seq, or 0 when there are none.
    pub fn latest_event_seq(&self) -> Result<i64, StoreError> {
        Ok(self.conn.query_row("SELECT coalesce(max(seq), 0) FROM events", [], |r| r.get(0))?)
    }

    /// Every event after `after_seq`, oldest first, at most `limit` of them: how other
    /// processes' changes are followed.
    pub fn events_since(&self, after_seq: i64, limit: u32) -> Result<Vec<Event>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&events_since_sql())?;
        let events = stmt.query_map(params![after_seq, limit], rows::event)?;
        Ok(events.collect::<Result<_, _>>()?)
    }

    /// The frames on the path from the root to `id`, and every child of each of them: what
    /// context assembly reads. Written so that SQLite walks the parent index (see the
    /// `EXPLAIN QUERY PLAN` test) instead of scanning every frame.
    pub fn path_with_children(&self, id: &FrameId) -> Result<Vec<Frame>, StoreError> {
        let mut stmt = self.conn.prepare_cached(PATH_WITH_CHILDREN)?;
        let frames = stmt.query_map([id.as_str()], rows::frame)?;
        let frames: Vec<Frame> = frames.collect::<Result<_, _>>()?;
        if frames.is_empty() {
            return Err(FrameError::NoSuchFrame(id.clone()).into());
        }
        Ok(frames)
    }

    /// Frame `frame`'s messages with ids after `after`, oldest first, each with whether it is an
    /// open reply (one whose content may still change), read in one statement so that the two
    /// agree.
    pub fn messages_after(
        &self,
        frame: &FrameId,
        after: MessageId,
    ) -> Result<Vec<(Message, bool)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&messages_after_sql())?;
        let messages = stmt.query_map(params![frame.as_str(), after.0], |row| {
            Ok((rows::message(row)?, row.get::<_, bool>(rows::MESSAGE_COLUMN_COUNT)?))
        })?;
        Ok(messages.collect::<Result<_, _>>()?)
    }

    /// How many of frame `frame`'s messages have ids up to `through`.
    pub fn message_count_through(
        &self,
        frame: &FrameId,
        through: MessageId,
    ) -> Result<u64, StoreError> {
        let count: i64 = self
            .conn
            .prepare_cached("SELECT count(*) FROM messages WHERE frame_id = ?1 AND id <= ?2")?
            .query_row(params![frame.as_str(), through.0], |row| row.get(0))?;
        Ok(count as u64)
    }

    /// Frame `id` and its ancestors' ids, `id` first and the root last; empty when there is no
    /// such frame. Walks the primary key, one row per level.
    pub fn frame_and_ancestor_ids(&self, id: &FrameId) -> Result<Vec<FrameId>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "WITH RECURSIVE up(id, parent_id, depth) AS (
                 SELECT id, parent_id, 0 FROM frames WHERE id = ?1
                 UNION ALL
                 SELECT f.id, f.parent_id, up.depth + 1 FROM frames f JOIN up ON f.id = up.parent_id
             )
             SELECT id FROM up ORDER BY depth",
        )?;
        let ids = stmt.query_map([id.as_str()], |row| Ok(FrameId::from_trusted(row.get(0)?)))?;
        Ok(ids.collect::<Result<_, _>>()?)
    }

    /// What may be done with frame `id` now, and what `/start` would start in it, as
    /// `flame_model::lifecycle::allowed_actions` decides from its open ancestors and children.
    pub fn frame_actions(&self, id: &FrameId) -> Result<FrameActions, StoreError> {
        let frame = read_frame(&self.conn, id)?;
        let ancestors = read_open_ancestors(&self.conn, &frame)?;
        let children = read_children(&self.conn, id)?;
        Ok(lifecycle::allowed_actions(&frame, &ancestors, &children))
    }

    /// Frames whose log files lag behind, with the event they must reach.
    pub fn pending_logs(&self) -> Result<Vec<(TreeId, FrameId, i64)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT e.tree_id, p.frame_id, p.through_seq FROM log_pending p
             JOIN events e ON e.seq = p.through_seq ORDER BY p.through_seq",
        )?;
        let pending = stmt.query_map([], |row| {
            Ok((TreeId::from_trusted(row.get(0)?), FrameId::from_trusted(row.get(1)?), row.get(2)?))
        })?;
        Ok(pending.collect::<Result<_, _>>()?)
    }

    /// Records that `frame`'s log has every event up to `through_seq`.
    pub fn log_written(&mut self, frame: &FrameId, through_seq: i64) -> Result<(), StoreError> {
        self.conn
            .prepare_cached("DELETE FROM log_pending WHERE frame_id = ?1 AND through_seq <= ?2")?
            .execute(params![frame.as_str(), through_seq])?;
        Ok(())
    }

    /// Drops the pending log rows that `tree`'s import left, whose last event is the frame's
    /// `imported` event, without writing any log: an imported frame's log is written whole when
    /// it is first read or when the frame next changes (`flame_api::frame_log`). A row a later
    /// event moved on is kept. Returns how many rows were dropped.
    pub fn defer_imported_logs(&mut self, tree: &TreeId) -> Result<usize, StoreError> {
        let dropped = self
            .conn
            .prepare_cached(
                "DELETE FROM log_pending
                 WHERE frame_id IN (SELECT id FROM frames WHERE tree_id = ?1)
                   AND (SELECT kind FROM events WHERE seq = log_pending.through_seq) = 'imported'",
            )?
            .execute([tree.as_str()])?;
        Ok(dropped)
    }
}

/// One usage count of the replies, summed: a column of migration 13, which holds it capped at
/// 2^32 (none when a reply recorded no usage, which adds 0), as the `messages_usage` index does,
/// so that SQLite reads it from the index.
macro_rules! usage_count {
    ($column:literal) => {
        concat!("sum(coalesce(", $column, ", 0))")
    };
}

/// The model and the five summed counts, in [`model_usage`]'s order.
macro_rules! usage_columns {
    () => {
        concat!(
            "model, ",
            usage_count!("usage_input"),
            ", ",
            usage_count!("usage_output"),
            ", ",
            usage_count!("usage_cache_read"),
            ", ",
            usage_count!("usage_cache_write"),
            ", ",
            usage_count!("usage_cache_write_long"),
        )
    };
}

/// Frame ?1's messages with ids after ?2, oldest first, each followed by whether it is open.
fn messages_after_sql() -> String {
    format!(
        "SELECT {}, open FROM messages WHERE frame_id = ?1 AND id > ?2 ORDER BY id",
        rows::MESSAGE_COLUMNS
    )
}

/// Events after seq ?1, oldest first, at most ?2 of them.
fn events_since_sql() -> String {
    format!("SELECT {} FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2", rows::EVENT_COLUMNS)
}

/// The outline of tree ?1: the columns of `rows::OUTLINE_COLUMNS`, every one of them in the
/// `frames_outline` index (migration 12), so SQLite reads that index and no frame row (see the
/// `EXPLAIN QUERY PLAN` test).
fn outline_of_tree_sql() -> String {
    format!("SELECT {} FROM frames WHERE tree_id = ?1", rows::OUTLINE_COLUMNS)
}

/// Usage of ?1's frames by frame and model, read from indexes alone (see the `EXPLAIN QUERY
/// PLAN` test): the tree's frames from `frames_outline`, then each frame's replies from
/// `messages_usage`. Only replies record usage. Columns are named without their table, as the index
/// names them; a reply that recorded none adds zeros, which cost nothing.
pub(crate) const USAGE_BY_FRAME_AND_MODEL: &str = concat!(
    "SELECT frame_id, ",
    usage_columns!(),
    " FROM frames f JOIN messages m ON m.frame_id = f.id
     WHERE f.tree_id = ?1 AND role = 'assistant'
     GROUP BY frame_id, model"
);

/// Usage of frame ?1 by model, from the same index.
pub(crate) const USAGE_BY_MODEL: &str = concat!(
    "SELECT ",
    usage_columns!(),
    " FROM messages WHERE frame_id = ?1 AND role = 'assistant' GROUP BY model"
);

/// A model and its summed counts, from the columns at `first` onwards.
pub(super) fn model_usage(row: &rusqlite::Row, first: usize) -> rusqlite::Result<ModelUsage> {
    let count = |i: usize| row.get::<_, i64>(first + i).map(|n| n.max(0) as u64);
    Ok(ModelUsage {
        model: row.get(first)?,
        usage: Usage {
            input_tokens: count(1)?,
            output_tokens: count(2)?,
            cache_read_tokens: count(3)?,
            cache_write_tokens: count(4)?,
            cache_write_long_tokens: count(5)?,
        },
    })
}

/// Ancestors of ?1 (itself included), then all their children. The `IN (SELECT …)` form is what
/// lets SQLite search `frames_by_parent` once per ancestor. Every frame on the path but the root
/// is a child of the one before it, so the root and the path's children are the path and its
/// children, each once, without a third look at the path for each child (a third faster).
pub(crate) const PATH_WITH_CHILDREN: &str = "
    WITH RECURSIVE path(id, parent_id) AS (
        SELECT id, parent_id FROM frames WHERE id = ?1
        UNION ALL
        SELECT f.id, f.parent_id FROM frames f JOIN path ON f.id = path.parent_id
    )
    SELECT id, tree_id, parent_id, position, title, success_criteria, success_criteria_compacted,
           status, status_reason, results, results_compacted, artifacts, decisions, retry_of,
           created_at, started_at, ended_at, message_count, tokens, rolled_back_at
    FROM frames WHERE id = (SELECT id FROM path WHERE parent_id IS NULL)
    UNION ALL
    SELECT id, tree_id, parent_id, position, title, success_criteria, success_criteria_compacted,
           status, status_reason, results, results_compacted, artifacts, decisions, retry_of,
           created_at, started_at, ended_at, message_count, tokens, rolled_back_at
    FROM frames WHERE parent_id IN (SELECT id FROM path)";

pub(super) fn read_frame(conn: &rusqlite::Connection, id: &FrameId) -> Result<Frame, StoreError> {
    conn.prepare_cached(&format!("SELECT {FRAME_COLUMNS} FROM frames WHERE id = ?1"))?
        .query_row([id.as_str()], rows::frame)
        .optional()?
        .ok_or_else(|| FrameError::NoSuchFrame(id.clone()).into())
}

pub(super) fn read_message(
    conn: &rusqlite::Connection,
    id: MessageId,
) -> Result<Message, StoreError> {
    Ok(conn
        .prepare_cached(&format!("SELECT {} FROM messages WHERE id = ?1", rows::MESSAGE_COLUMNS))?
        .query_row([id.0], rows::message)?)
}

pub(super) fn read_tree(conn: &rusqlite::Connection, id: &TreeId) -> Result<Tree, StoreError> {
    conn.prepare_cached(&format!("SELECT {TREE_COLUMNS} FROM trees WHERE id = ?1"))?
        .query_row([id.as_str()], rows::tree)
        .optional()?
        .ok_or_else(|| FrameError::NoSuchTree(id.clone()).into())
}

/// `frame`'s ancestors, nearest first, up to and including the first that is not planned (see
/// `flame_model::lifecycle::OpenAncestors`): what the rules over a start, a push, a resume and
/// a retry read.
pub(super) fn read_open_ancestors(
    conn: &rusqlite::Connection,
    frame: &Frame,
) -> Result<Vec<Frame>, StoreError> {
    let mut ancestors: Vec<Frame> = Vec::new();
    let mut next = frame.parent.clone();
    while let Some(id) = next {
        let ancestor = read_frame(conn, &id)?;
        next = (ancestor.status == Status::Planned).then(|| ancestor.parent.clone()).flatten();
        ancestors.push(ancestor);
    }
    Ok(ancestors)
}

pub(super) fn read_children(
    conn: &rusqlite::Connection,
    id: &FrameId,
) -> Result<Vec<Frame>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {FRAME_COLUMNS} FROM frames WHERE parent_id = ?1 ORDER BY position"
    ))?;
    let children = stmt.query_map([id.as_str()], rows::frame)?;
    Ok(children.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite scans every frame for the ancestors-and-children query unless it is written to
    /// search the parent index (measured: 7.7–10.7 ms against 16–251 µs on 100k frames).
    #[test]
    fn path_with_children_searches_the_parent_index() {
        let plan = crate::query_plan(PATH_WITH_CHILDREN, ["f0000000000"]);
        assert!(plan.contains("frames_by_parent (parent_id=?)"), "{plan}");
        assert!(!plan.contains("SCAN frames"), "a full scan of frames:\n{plan}");
    }

    /// The statements a chat's round runs between two context assemblies (a model's reply and a
    /// tool result with its trail, written; the path, the focus's new messages and the tree's
    /// tokens, read) are more than rusqlite keeps prepared by default (16): the least recently
    /// used were dropped, and `events_since`, which each assembly runs once, was prepared again
    /// every time. Run counts are per prepared statement, so a statement prepared again would
    /// count fewer runs than it had; SQLite counts the times it prepared one again itself (a
    /// bound `LIMIT`, and a bound range on the messages' ids, made it do so at every run).
    #[test]
    fn statements_stay_prepared_across_a_round_of_a_chat() {
        use flame_model::{Actor, FileTrail, IdSource, NewMessage, Role, ToolResult};
        use rusqlite::StatementStatus;

        use crate::Change;

        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
        let mut ids = IdSource::seeded(5);
        let (tree, root) = (ids.tree_id(), ids.frame_id());
        let change = Change { actor: Actor::Agent, at: 1 };
        store.create_tree(change, &tree, &root, "Chat", "c", None).unwrap();
        let rounds = 3;
        for round in 0..rounds {
            store.events_since(round, 100).unwrap();
            store.path_with_children(&root).unwrap();
            store.messages_after(&root, MessageId(round)).unwrap();
            store.tree_message_tokens(&tree).unwrap();
            store.latest_event_seq().unwrap();
            let mut reply = NewMessage::text(Role::Assistant, "reading");
            reply.model = Some("m".into());
            store.add_message(change, &root, &reply, 1).unwrap();
            let result = NewMessage {
                tool_result: Some(ToolResult {
                    detail: None,
                    is_error: false,
                    name: Some("read_file".into()),
                    tool_call_id: format!("c{round}"),
                }),
                ..NewMessage::text(Role::Tool, "1 line")
            };
            let trail = FileTrail::new([format!("src/{round}.rs")], []);
            store.add_tool_result(change, &root, &result, 1, &trail).unwrap();
            store.file_trail(&root).unwrap();
            store.frame_actions(&root).unwrap();
            store.messages(&root).unwrap();
            store.pending_logs().unwrap();
            store.usage_by_model(&root).unwrap();
        }
        for sql in [events_since_sql(), messages_after_sql()] {
            let stmt = store.conn.prepare_cached(&sql).unwrap();
            assert_eq!(stmt.get_status(StatementStatus::Run), rounds as i32, "{sql}");
            assert_eq!(stmt.get_status(StatementStatus::RePrepare), 0, "prepared once: {sql}");
        }
    }

    /// A tree's outline is read from the `frames_outline` index alone: no frame row, which
    /// holds long texts the outline does not name.
    #[test]
    fn the_outline_reads_the_outline_index_alone() {
        let plan = crate::query_plan(&outline_of_tree_sql(), ["t0000000000"]);
        assert!(plan.contains("COVERING INDEX frames_outline (tree_id=?)"), "{plan}");
    }

    /// The usage aggregate reads one tree's frames and their replies' usage from indexes alone:
    /// not every message, and no frame or message row.
    #[test]
    fn the_usage_aggregate_searches_the_tree_and_frame_indexes() {
        let plan = crate::query_plan(USAGE_BY_FRAME_AND_MODEL, ["t0000000000"]);
        assert!(plan.contains("COVERING INDEX frames_outline (tree_id=?)"), "{plan}");
        assert!(plan.contains("COVERING INDEX messages_usage (frame_id=?)"), "{plan}");
        assert!(!plan.contains("SCAN m"), "a full scan of messages:\n{plan}");
        let plan = crate::query_plan(USAGE_BY_MODEL, ["f0000000000"]);
        assert!(plan.contains("COVERING INDEX messages_usage (frame_id=?)"), "{plan}");
    }
}
