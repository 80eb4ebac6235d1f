//! Bulk import of a whole tree in one transaction, for transcripts from other tools.

use flame_model::{
    EventKind, FileTrail, Frame, FrameError, FrameTree, NewMessage, Timestamp, Tree,
};
use rusqlite::{TransactionBehavior, params};
use serde_json::json;

use crate::frames::{Change, MAX_MESSAGE_BYTES, MAX_TRAIL_PATH_BYTES, MAX_TRAIL_PATHS};
use crate::{Store, StoreError, rows};

/// The most message tokens an imported tree may hold in all. Far above any real tree (a million
/// messages of a full context window each), and far below `i64::MAX`, so the sums the store
/// keeps in SQLite's 64-bit integers can grow by live messages afterwards without overflowing.
pub const MAX_IMPORTED_TREE_TOKENS: u64 = 1 << 48;

/// A message to import, with its frame, its time and its counted tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedMessage {
    /// Index into the imported frames.
    pub frame: usize,
    pub message: NewMessage,
    pub tokens: u64,
    pub at: Timestamp,
}

/// How many rows an import wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportCounts {
    pub frames: u64,
    pub messages: u64,
    /// Paths of the frames' trails recorded, and left out for [`MAX_TRAIL_PATHS`] or
    /// [`MAX_TRAIL_PATH_BYTES`].
    pub trail_paths: u64,
    pub trail_paths_left_out: u64,
}

impl Store {
    /// Imports a whole tree: its frames (which must form a valid tree, checked first) and their
    /// messages, with one `imported` event per frame. All of it or none of it is written. A
    /// message over [`MAX_MESSAGE_BYTES`] or a tree over [`MAX_IMPORTED_TREE_TOKENS`] is refused
    /// (the facade cuts long messages to fit before it gets here).
    pub fn import_tree(
        &mut self,
        change: Change,
        tree: &Tree,
        frames: &[Frame],
        messages: &[ImportedMessage],
    ) -> Result<ImportCounts, StoreError> {
        self.import_tree_with_trails(change, tree, frames, messages, &[])
    }

    /// [`Store::import_tree`], with the file trails of the frames: `(frame index, trail)`, each
    /// written to `frame_files` in the same transaction. As with live tool results, a path over
    /// [`MAX_TRAIL_PATH_BYTES`] and the paths of a frame past [`MAX_TRAIL_PATHS`] (changed ones
    /// first) are left out and counted; a trail naming a frame that is not imported refuses the
    /// import.
    pub fn import_tree_with_trails(
        &mut self,
        change: Change,
        tree: &Tree,
        frames: &[Frame],
        messages: &[ImportedMessage],
        trails: &[(usize, FileTrail)],
    ) -> Result<ImportCounts, StoreError> {
        if let Some((frame, _)) = trails.iter().find(|(frame, _)| *frame >= frames.len()) {
            return Err(FrameError::Invalid(format!(
                "an imported file trail names frame {frame} of {}",
                frames.len()
            ))
            .into());
        }
        let whole = FrameTree::new(tree.clone(), frames.to_vec());
        whole.check_invariants().map_err(|broken| {
            FrameError::Invalid(format!("the imported tree is not valid: {broken}"))
        })?;
        let mut counts = vec![(0u64, 0u64); frames.len()];
        for m in messages {
            let slot = counts.get_mut(m.frame).ok_or_else(|| {
                FrameError::Invalid(format!(
                    "an imported message names frame {} of {}",
                    m.frame,
                    frames.len()
                ))
            })?;
            if m.message.content.len() > MAX_MESSAGE_BYTES {
                return Err(FrameError::Invalid(format!(
                    "an imported message of {} bytes is over the {MAX_MESSAGE_BYTES}-byte limit",
                    m.message.content.len()
                ))
                .into());
            }
            slot.0 += 1;
            slot.1 = slot.1.saturating_add(m.tokens);
        }
        // Every frame's total is at most the tree's, so bounding the tree bounds them all.
        let message_tokens = counts.iter().map(|c| c.1).fold(0, u64::saturating_add);
        if message_tokens > MAX_IMPORTED_TREE_TOKENS {
            return Err(FrameError::Invalid(format!(
                "the imported messages state {message_tokens} tokens in all, over the limit of {MAX_IMPORTED_TREE_TOKENS}"
            ))
            .into());
        }

        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO trees (id, title, root_id, focus_id, created_at, message_tokens) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![tree.id.as_str(), tree.title, tree.root.as_str(), tree.focus.as_str(), tree.created_at, message_tokens as i64],
        )
        .map_err(|e| StoreError::taken_or(e, tree.id.as_str()))?;
        // The search index takes the tree's rows in one statement each at the end (see
        // `index_imported`), not row by row from the triggers.
        tx.execute("INSERT INTO search_deferred (only) VALUES (1)", [])?;
        {
            let mut insert_frame = tx.prepare(
                "INSERT INTO frames (id, tree_id, parent_id, position, title, success_criteria,
                     success_criteria_compacted, status, status_reason, results, results_compacted,
                     artifacts, decisions, retry_of, created_at, started_at, ended_at, message_count, tokens)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
            )?;
            // Parents before children, so every parent row exists when its child is written.
            let mut order: Vec<usize> = Vec::with_capacity(frames.len());
            let index: std::collections::HashMap<_, _> =
                frames.iter().enumerate().map(|(i, f)| (&f.id, i)).collect();
            let mut stack = vec![index[&tree.root]];
            let children = children_by_parent(frames, &index);
            while let Some(i) = stack.pop() {
                order.push(i);
                stack.extend(children[i].iter().copied());
            }
            for &i in &order {
                let f = &frames[i];
                let (message_count, tokens) = counts[i];
                insert_frame
                    .execute(params![
                        f.id.as_str(),
                        tree.id.as_str(),
                        f.parent.as_ref().map(|p| p.as_str()),
                        f.position,
                        f.title,
                        f.success_criteria,
                        f.success_criteria_compacted,
                        f.status.as_str(),
                        f.status_reason,
                        f.results,
                        f.results_compacted,
                        rows::json_list(&f.artifacts),
                        rows::json_list(&f.decisions),
                        // Set below, once every frame exists: a retry may come before the
                        // attempt it retries in this order.
                        None::<&str>,
                        f.created_at,
                        f.started_at,
                        f.ended_at,
                        message_count as i64,
                        tokens as i64,
                    ])
                    .map_err(|e| StoreError::taken_or(e, f.id.as_str()))?;
            }
            let mut set_retry = tx.prepare("UPDATE frames SET retry_of = ?1 WHERE id = ?2")?;
            for f in frames {
                if let Some(original) = &f.retry_of {
                    set_retry.execute(params![original.as_str(), f.id.as_str()])?;
                }
            }
        }
        let mut ranges: Vec<Option<(i64, i64)>> = vec![None; frames.len()];
        {
            let mut insert_message = tx.prepare(
                "INSERT INTO messages (frame_id, role, content, tool_calls, tool_result, tokens, model, usage, created_at, interrupted)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            for m in messages {
                insert_message.execute(params![
                    frames[m.frame].id.as_str(),
                    m.message.role.as_str(),
                    m.message.content,
                    rows::payload_text(&m.message.tool_calls),
                    rows::payload_text(&m.message.tool_result),
                    m.tokens as i64,
                    m.message.model,
                    rows::payload_text(&m.message.usage),
                    m.at,
                    m.message.interrupted,
                ])?;
                let id = tx.last_insert_rowid();
                let range = ranges[m.frame].get_or_insert((id, id));
                range.1 = id;
            }
        }
        {
            let mut insert_event = tx.prepare(
                "INSERT INTO events (tree_id, frame_id, kind, actor, at, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            let mut pending = tx.prepare(
                "INSERT OR REPLACE INTO log_pending (frame_id, through_seq) VALUES (?1, ?2)",
            )?;
            for (f, range) in frames.iter().zip(&ranges) {
                let detail = json!({
                    "title": f.title,
                    "success_criteria": f.success_criteria,
                    "first_message": range.map(|r| r.0),
                    "last_message": range.map(|r| r.1),
                });
                insert_event.execute(params![
                    tree.id.as_str(),
                    f.id.as_str(),
                    EventKind::Imported.as_str(),
                    change.actor.as_str(),
                    change.at,
                    detail.to_string()
                ])?;
                pending.execute(params![f.id.as_str(), tx.last_insert_rowid()])?;
            }
        }
        let (mut trail_paths, mut trail_paths_left_out) = (0u64, 0u64);
        {
            // `OR IGNORE`: a path listed twice, or a frame listed twice, keeps one row.
            let mut insert_path = tx.prepare(
                "INSERT OR IGNORE INTO frame_files (frame_id, changed, path) VALUES (?1, ?2, ?3)",
            )?;
            let mut recorded = vec![0usize; frames.len()];
            for (frame, trail) in trails {
                // A path both read and changed is recorded as changed only, as live results do.
                let changed: std::collections::HashSet<&String> = trail.changed.iter().collect();
                let paths =
                    trail.changed.iter().map(|p| (p, true)).chain(
                        trail.read.iter().filter(|p| !changed.contains(p)).map(|p| (p, false)),
                    );
                for (path, changed) in paths {
                    if path.len() > MAX_TRAIL_PATH_BYTES || recorded[*frame] >= MAX_TRAIL_PATHS {
                        trail_paths_left_out += 1;
                        continue;
                    }
                    if insert_path.execute(params![frames[*frame].id.as_str(), changed, path])? > 0
                    {
                        recorded[*frame] += 1;
                        trail_paths += 1;
                    }
                }
            }
        }
        index_imported(&tx, &tree.id, &ranges)?;
        tx.execute(
            "INSERT INTO store_meta (key, value) VALUES ('current_tree', ?1)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [tree.id.as_str()],
        )?;
        tx.commit()?;
        Ok(ImportCounts {
            frames: frames.len() as u64,
            messages: messages.len() as u64,
            trail_paths,
            trail_paths_left_out,
        })
    }
}

/// Adds an imported tree's frames and messages to the search indexes, in the import's transaction:
/// one statement per index. FTS5 writes the terms it holds to disk at the start of each statement
/// that changes it, so the triggers' row-by-row indexing (which `search_deferred` held back while
/// the rows were written) would leave a sliver of index per row to merge later: an import of a
/// million messages took several times as long. `messages` are the ranges of message ids written.
fn index_imported(
    tx: &rusqlite::Transaction<'_>,
    tree: &flame_model::TreeId,
    messages: &[Option<(i64, i64)>],
) -> Result<(), StoreError> {
    tx.execute("DELETE FROM search_deferred", [])?;
    tx.execute(
        "INSERT INTO frame_search_rows (frame_id) SELECT id FROM frames WHERE tree_id = ?1",
        [tree.as_str()],
    )?;
    tx.execute(
        "INSERT INTO frame_search (rowid, title, results, tree)
         SELECT id, title, results, tree FROM frame_search_text WHERE tree = ?1",
        [tree.as_str()],
    )?;
    // The import holds the write lock, so its messages' ids run without a gap.
    let written = messages.iter().flatten();
    if let (Some(first), Some(last)) =
        (written.clone().map(|r| r.0).min(), written.map(|r| r.1).max())
    {
        tx.execute(
            "INSERT INTO message_search (rowid, content, calls, tree)
             SELECT id, content, calls, tree FROM message_search_text WHERE id BETWEEN ?1 AND ?2",
            params![first, last],
        )?;
    }
    Ok(())
}

fn children_by_parent(
    frames: &[Frame],
    index: &std::collections::HashMap<&flame_model::FrameId, usize>,
) -> Vec<Vec<usize>> {
    let mut children = vec![Vec::new(); frames.len()];
    for (i, f) in frames.iter().enumerate() {
        if let Some(parent) = &f.parent {
            children[index[parent]].push(i);
        }
    }
    children
}

#[cfg(test)]
mod tests {
    use flame_model::{Actor, IdSource, Role, Status};

    use super::*;

    /// A root with one in-progress child, and a message of `tokens` tokens in the child per
    /// count.
    fn tree_stating(seed: u64, counts: &[u64]) -> (Tree, Vec<Frame>, Vec<ImportedMessage>) {
        let mut ids = IdSource::seeded(seed);
        let (id, root, child) = (ids.tree_id(), ids.frame_id(), ids.frame_id());
        let tree = Tree {
            id: id.clone(),
            title: "t".into(),
            root: root.clone(),
            focus: child.clone(),
            created_at: 1,
            workspace: None,
        };
        let frames = vec![
            Frame::new(root.clone(), id.clone(), None, 0, "t", "c", Status::InProgress, 1),
            Frame::new(child, id, Some(root), 0, "u", "c", Status::InProgress, 1),
        ];
        let messages = counts
            .iter()
            .map(|&tokens| ImportedMessage {
                frame: 1,
                message: NewMessage::text(Role::User, "x"),
                tokens,
                at: 2,
            })
            .collect();
        (tree, frames, messages)
    }

    #[test]
    fn a_tree_over_the_token_limit_is_refused_and_one_at_it_stays_readable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flame.db");
        let mut store = Store::open(&path).unwrap();
        let change = Change { actor: Actor::Cli, at: 9 };
        // Two counts whose sum overflows u64, and a sum just past the limit.
        for counts in [[u64::MAX, u64::MAX], [MAX_IMPORTED_TREE_TOKENS, 1]] {
            let (tree, frames, messages) = tree_stating(6, &counts);
            let err = store.import_tree(change, &tree, &frames, &messages).unwrap_err();
            assert!(err.to_string().contains("over the limit"), "{err}");
            assert!(store.trees().unwrap().is_empty());
        }
        let (tree, frames, messages) = tree_stating(7, &[MAX_IMPORTED_TREE_TOKENS]);
        store.import_tree(change, &tree, &frames, &messages).unwrap();
        let reopened = Store::open(&path).unwrap();
        assert_eq!(reopened.frame(&frames[1].id).unwrap().tokens, MAX_IMPORTED_TREE_TOKENS);
        assert_eq!(reopened.tree_message_tokens(&tree.id).unwrap(), MAX_IMPORTED_TREE_TOKENS);
    }

    #[test]
    fn trails_are_written_with_the_tree_within_the_store_caps() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
        let change = Change { actor: Actor::Cli, at: 9 };
        let (tree, frames, messages) = tree_stating(8, &[1]);
        // A frame index past the frames refuses the whole import.
        let stray = [(2, FileTrail::new(["a".to_owned()], []))];
        let err =
            store.import_tree_with_trails(change, &tree, &frames, &messages, &stray).unwrap_err();
        assert!(err.to_string().contains("names frame 2 of 2"), "{err}");
        assert!(store.trees().unwrap().is_empty());

        // One path too long, and one more path than a frame may hold, read ones last.
        let long = "x".repeat(MAX_TRAIL_PATH_BYTES + 1);
        let read: Vec<String> = (0..MAX_TRAIL_PATHS).map(|i| format!("r/{i:05}")).collect();
        let trails = [
            (0, FileTrail::new(["README.md".to_owned()], [])),
            (1, FileTrail::new(read.iter().cloned().chain([long]), ["src/a.rs".to_owned()])),
        ];
        let counts =
            store.import_tree_with_trails(change, &tree, &frames, &messages, &trails).unwrap();
        assert_eq!(counts.trail_paths, 1 + MAX_TRAIL_PATHS as u64);
        assert_eq!(counts.trail_paths_left_out, 2);
        assert_eq!(store.file_trail(&frames[0].id).unwrap().read, ["README.md"]);
        let child = store.file_trail(&frames[1].id).unwrap();
        assert_eq!(child.changed, ["src/a.rs"]);
        assert_eq!(child.read.len(), MAX_TRAIL_PATHS - 1);
        assert!(child.read.iter().all(|p| p.len() <= MAX_TRAIL_PATH_BYTES));
    }
}
