//! Whole trees: creating one, deleting one (the one operation that removes history), which
//! tree is current and which frame it focuses, and the first start's question.

use flame_model::lifecycle;
use flame_model::{
    EventDetail, EventKind, Frame, FrameError, FrameId, Status, ToolKind, Tree, TreeId,
};
use rusqlite::{OptionalExtension, TransactionBehavior, params};

use crate::{Store, StoreError};

use super::Change;

/// A tree as the tree list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeSummary {
    pub tree: Tree,
    pub root_status: Status,
    pub frame_count: u64,
}

/// What deleting a tree removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeletedTree {
    pub frames: u64,
    pub messages: u64,
}

impl Store {
    /// Creates a tree whose root frame starts `in_progress` and focused, and makes it current.
    /// `workspace` is the folder its workspace tools work in, as the caller checked it (the
    /// store takes it as given).
    pub fn create_tree(
        &mut self,
        change: Change,
        id: &TreeId,
        root: &FrameId,
        title: &str,
        criteria: &str,
        workspace: Option<&str>,
    ) -> Result<Tree, StoreError> {
        lifecycle::check_identity(title, criteria)?;
        self.write(change, |w| {
            w.tx.execute(
                "INSERT INTO trees (id, title, root_id, focus_id, created_at, workspace) VALUES (?1, ?2, ?3, ?3, ?4, ?5)",
                params![id.as_str(), title, root.as_str(), change.at, workspace],
            )
            .map_err(|e| StoreError::taken_or(e, id.as_str()))?;
            w.insert_frame(root, id, None, 0, title, criteria, Status::InProgress, None)?;
            let detail = EventDetail::TreeCreated {
                title: title.to_owned(),
                success_criteria: criteria.to_owned(),
                workspace: workspace.map(str::to_owned),
            };
            w.event(id, root, EventKind::TreeCreated, &detail)?;
            w.set_current_tree(id)?;
            w.tree(id)
        })
    }

    /// Sets (or, with `None`, clears) a tree's workspace folder, recorded as a `workspace_set`
    /// event on its root frame. The kinds of tool call allowed for the rest of the tree, and the
    /// network for its sandboxed commands, are cleared with it: the person allowed them for the
    /// folder they were working in then.
    pub fn set_workspace(
        &mut self,
        change: Change,
        id: &TreeId,
        workspace: Option<&str>,
    ) -> Result<Tree, StoreError> {
        self.write(change, |w| {
            let tree = w.tree(id)?;
            w.tx.execute(
                "UPDATE trees SET workspace = ?2 WHERE id = ?1",
                params![id.as_str(), workspace],
            )?;
            w.tx.execute("DELETE FROM tree_allowed_kinds WHERE tree_id = ?1", [id.as_str()])?;
            w.tx.execute("DELETE FROM tree_network_allowed WHERE tree_id = ?1", [id.as_str()])?;
            w.event(
                id,
                &tree.root,
                EventKind::WorkspaceSet,
                &EventDetail::WorkspaceSet {
                    workspace: workspace.map(str::to_owned),
                    previous: tree.workspace,
                },
            )?;
            w.tree(id)
        })
    }

    /// The kinds of workspace tool call the person allowed for the rest of tree `id`, in
    /// [`ToolKind`]'s order.
    pub fn allowed_kinds(&self, id: &TreeId) -> Result<Vec<ToolKind>, StoreError> {
        self.tree(id)?;
        let mut stmt =
            self.conn.prepare_cached("SELECT kind FROM tree_allowed_kinds WHERE tree_id = ?1")?;
        let names = stmt.query_map([id.as_str()], |row| row.get::<_, String>(0))?;
        let mut kinds = Vec::new();
        for name in names {
            // The table's CHECK admits only the names `ToolKind` has.
            kinds.extend(ToolKind::parse(&name?));
        }
        kinds.sort();
        Ok(kinds)
    }

    /// Allows every later workspace tool call of `kind` in tree `id` without asking, until its
    /// workspace changes. Allowing a kind already allowed changes nothing.
    pub fn allow_kind(
        &mut self,
        change: Change,
        id: &TreeId,
        kind: ToolKind,
    ) -> Result<(), StoreError> {
        self.write(change, |w| {
            w.tree(id)?;
            w.tx.execute(
                "INSERT INTO tree_allowed_kinds (tree_id, kind) VALUES (?1, ?2)
                 ON CONFLICT (tree_id, kind) DO NOTHING",
                params![id.as_str(), kind.as_str()],
            )?;
            Ok(())
        })
    }

    /// Whether the person allowed tree `id`'s sandboxed commands the network.
    pub fn network_allowed(&self, id: &TreeId) -> Result<bool, StoreError> {
        self.tree(id)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM tree_network_allowed WHERE tree_id = ?1)",
        )?;
        Ok(stmt.query_row([id.as_str()], |row| row.get(0))?)
    }

    /// Lets every later sandboxed command in tree `id` use the network, until its workspace
    /// changes. Allowing it again changes nothing.
    pub fn allow_network(&mut self, change: Change, id: &TreeId) -> Result<(), StoreError> {
        self.write(change, |w| {
            w.tree(id)?;
            w.tx.execute(
                "INSERT INTO tree_network_allowed (tree_id) VALUES (?1) ON CONFLICT DO NOTHING",
                [id.as_str()],
            )?;
            Ok(())
        })
    }

    /// Deletes a tree with its frames, messages, events and pending logs. It is the one
    /// operation that removes history, so only a person asks for it, explicitly (the window
    /// confirms first; neither the agent's tools nor the command line offer it). Refused while a
    /// reply is being written into one of its frames. One `tree_deleted` event, naming the gone
    /// root, tells other processes. When it was the current tree, the newest remaining tree
    /// becomes current.
    pub fn delete_tree(&mut self, change: Change, id: &TreeId) -> Result<DeletedTree, StoreError> {
        self.write(change, |w| {
            let tree = w.tree(id)?;
            let streaming: Option<String> = w
                .tx
                .query_row(
                    "SELECT m.frame_id FROM messages m JOIN frames f ON f.id = m.frame_id
                     WHERE f.tree_id = ?1 AND m.open = 1 LIMIT 1",
                    [id.as_str()],
                    |row| row.get(0),
                )
                .optional()?;
            if let Some(frame) = streaming {
                return Err(FrameError::Invalid(format!(
                    "cannot delete the tree {id} \"{}\" while a reply is being written in its frame {frame}; stop the reply first",
                    tree.title
                ))
                .into());
            }
            let in_tree = "SELECT id FROM frames WHERE tree_id = ?1";
            let messages = w.tx.execute(
                &format!("DELETE FROM messages WHERE frame_id IN ({in_tree})"),
                [id.as_str()],
            )?;
            w.tx.execute(
                &format!("DELETE FROM log_pending WHERE frame_id IN ({in_tree})"),
                [id.as_str()],
            )?;
            w.tx.execute(
                &format!("DELETE FROM frame_files WHERE frame_id IN ({in_tree})"),
                [id.as_str()],
            )?;
            for table in ["frame_contexts", "frame_openings"] {
                w.tx.execute(
                    &format!("DELETE FROM {table} WHERE frame_id IN ({in_tree})"),
                    [id.as_str()],
                )?;
            }
            w.tx.execute("DELETE FROM frame_budgets WHERE tree_id = ?1", [id.as_str()])?;
            w.tx.execute("DELETE FROM tree_allowed_kinds WHERE tree_id = ?1", [id.as_str()])?;
            w.tx.execute("DELETE FROM tree_network_allowed WHERE tree_id = ?1", [id.as_str()])?;
            // The snapshots themselves are pruned by the facade, which read them first.
            w.tx.execute(
                "DELETE FROM checkpoint_files WHERE checkpoint_id IN (SELECT id FROM checkpoints WHERE tree_id = ?1)",
                [id.as_str()],
            )?;
            w.tx.execute("DELETE FROM checkpoints WHERE tree_id = ?1", [id.as_str()])?;
            // One statement, so the frames' references to each other (parent, retry) are
            // checked only once they are all gone.
            let frames = w.tx.execute("DELETE FROM frames WHERE tree_id = ?1", [id.as_str()])?;
            w.tx.execute("DELETE FROM events WHERE tree_id = ?1", [id.as_str()])?;
            w.tx.execute("DELETE FROM trees WHERE id = ?1", [id.as_str()])?;
            // Not `event`: there is no frame left whose log could record it.
            w.tx.execute(
                "INSERT INTO events (tree_id, frame_id, kind, actor, at, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    id.as_str(),
                    tree.root.as_str(),
                    EventKind::TreeDeleted.as_str(),
                    w.change.actor.as_str(),
                    w.change.at,
                    EventDetail::TreeDeleted { title: tree.title, frames: frames as u64, messages: messages as u64 }.to_json()
                ],
            )?;
            let current: Option<String> = w
                .tx
                .query_row("SELECT value FROM store_meta WHERE key = 'current_tree'", [], |row| {
                    row.get(0)
                })
                .optional()?;
            if current.as_deref() == Some(id.as_str()) {
                let newest: Option<String> = w
                    .tx
                    .query_row(
                        "SELECT id FROM trees ORDER BY created_at DESC, id DESC LIMIT 1",
                        [],
                        |row| row.get(0),
                    )
                    .optional()?;
                match newest {
                    Some(newest) => w.set_current_tree(&TreeId::from_trusted(newest))?,
                    None => {
                        w.tx.execute("DELETE FROM store_meta WHERE key = 'current_tree'", [])?;
                    }
                }
            }
            Ok(DeletedTree { frames: frames as u64, messages: messages as u64 })
        })
    }

    /// Whether the sample tree should be made: true the first time this is asked of a store
    /// that holds no tree, and never again (it is remembered in `store_meta`), so the sample
    /// appears on a new data directory's first start and does not come back once deleted.
    pub fn claim_first_start(&mut self) -> Result<bool, StoreError> {
        // Every start but the first only reads: a write waits for the file's quick check
        // (`damage_check.rs`), which a window opening on a large store must not wait for.
        let claimed: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM store_meta WHERE key = 'first_start_done')",
            [],
            |row| row.get(0),
        )?;
        if claimed {
            return Ok(false);
        }
        self.check.wait().map_err(StoreError::Unusable)?;
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let inserted = tx.execute(
            "INSERT INTO store_meta (key, value) VALUES ('first_start_done', '1')
             ON CONFLICT (key) DO NOTHING",
            [],
        )?;
        let empty: bool =
            tx.query_row("SELECT NOT EXISTS (SELECT 1 FROM trees)", [], |row| row.get(0))?;
        tx.commit()?;
        Ok(inserted == 1 && empty)
    }

    /// Makes `id` the focused frame of its tree, and its tree the current one.
    pub fn focus(&mut self, change: Change, id: &FrameId) -> Result<Frame, StoreError> {
        self.write(change, |w| {
            let frame = w.frame(id)?;
            w.set_focus(&frame.tree, id)?;
            w.set_current_tree(&frame.tree)?;
            Ok(frame)
        })
    }
}
