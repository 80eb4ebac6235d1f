//! Trees, frames, their statuses, and the events that record every operation.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{EventDetail, FrameId, Timestamp, TreeId};

/// Where a frame is in its lifecycle (see [`crate::lifecycle`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Defined but not started.
    Planned,
    /// Being worked on.
    InProgress,
    /// Finished with results. Terminal.
    Completed,
    /// Attempted and did not succeed; may be retried as a new sibling.
    Failed,
    /// Cannot go on without outside input; may be resumed.
    Blocked,
    /// No longer relevant. Terminal.
    Invalidated,
}

impl Status {
    pub const ALL: [Status; 6] = [
        Status::Planned,
        Status::InProgress,
        Status::Completed,
        Status::Failed,
        Status::Blocked,
        Status::Invalidated,
    ];

    /// The name used in the store, the command line and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Planned => "planned",
            Status::InProgress => "in_progress",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Blocked => "blocked",
            Status::Invalidated => "invalidated",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// `completed` and `invalidated` never change again.
    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Completed | Status::Invalidated)
    }

    /// Finished frames report to their parent with results or a reason.
    pub fn is_finished(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Blocked)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One piece of work with one root frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Tree {
    pub id: TreeId,
    pub title: String,
    pub root: FrameId,
    /// The frame the chat talks in; always a frame of this tree.
    pub focus: FrameId,
    pub created_at: Timestamp,
    /// The folder the agent's workspace tools work in, absolute; a tree without one offers
    /// them not.
    pub workspace: Option<String>,
}

/// A frame: a subtask with an identity, a status, and (once finished) its hand-off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Frame {
    pub id: FrameId,
    pub tree: TreeId,
    pub parent: Option<FrameId>,
    /// Order among siblings, dense from 0.
    pub position: u32,
    pub title: String,
    pub success_criteria: String,
    /// A dense form of the criteria for context displays; absent until generated.
    pub success_criteria_compacted: Option<String>,
    pub status: Status,
    /// Why the frame failed, is blocked or was invalidated, as given.
    pub status_reason: Option<String>,
    pub results: Option<String>,
    pub results_compacted: Option<String>,
    pub artifacts: Vec<String>,
    pub decisions: Vec<String>,
    /// The failed frame this one retries.
    pub retry_of: Option<FrameId>,
    pub created_at: Timestamp,
    pub started_at: Option<Timestamp>,
    pub ended_at: Option<Timestamp>,
    /// How many messages the frame itself has.
    pub message_count: u64,
    /// The tokens of the frame's own messages.
    pub tokens: u64,
    /// When the files the frame changed were last put back as they were when it started.
    pub rolled_back_at: Option<Timestamp>,
}

impl Frame {
    /// A frame with the given place, identity and status, created and (unless planned) started
    /// at `at`, with no results, messages or history yet: the starting point for imports.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: FrameId,
        tree: TreeId,
        parent: Option<FrameId>,
        position: u32,
        title: impl Into<String>,
        success_criteria: impl Into<String>,
        status: Status,
        at: Timestamp,
    ) -> Frame {
        Frame {
            id,
            tree,
            parent,
            position,
            title: title.into(),
            success_criteria: success_criteria.into(),
            success_criteria_compacted: None,
            status,
            status_reason: None,
            results: None,
            results_compacted: None,
            artifacts: Vec::new(),
            decisions: Vec::new(),
            retry_of: None,
            created_at: at,
            started_at: (status != Status::Planned).then_some(at),
            ended_at: None,
            message_count: 0,
            tokens: 0,
            rolled_back_at: None,
        }
    }

    /// The frame's log file, relative to the data directory.
    pub fn log_relative_path(&self) -> String {
        log_relative_path(&self.tree, &self.id)
    }
}

/// What drawing a frame in the flame graph needs: its place, identity, status and totals, but
/// not its full criteria, results or lists, which are read when a frame is opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct FrameOutline {
    pub id: FrameId,
    pub parent: Option<FrameId>,
    pub position: u32,
    pub title: String,
    pub status: Status,
    pub success_criteria_compacted: Option<String>,
    pub retry_of: Option<FrameId>,
    pub started_at: Option<Timestamp>,
    pub ended_at: Option<Timestamp>,
    pub message_count: u64,
    pub tokens: u64,
    /// When the frame's changes were last rolled back; the graph marks it.
    pub rolled_back_at: Option<Timestamp>,
}

/// `logs/<tree>/<frame>.md`: where a frame's human-readable log lives in the data directory.
pub fn log_relative_path(tree: &TreeId, frame: &FrameId) -> String {
    format!("{}/{frame}.md", log_relative_folder(tree))
}

/// The folder of a tree's frame logs, relative to the data directory.
pub fn log_relative_folder(tree: &TreeId) -> String {
    format!("logs/{tree}")
}

/// Who did something: recorded on every event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    /// A person in the app.
    Person,
    /// A model through the frame tools.
    Agent,
    /// The `flame` command line.
    Cli,
}

impl Actor {
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Person => "person",
            Actor::Agent => "agent",
            Actor::Cli => "cli",
        }
    }

    pub fn parse(text: &str) -> Option<Actor> {
        [Actor::Person, Actor::Agent, Actor::Cli].into_iter().find(|a| a.as_str() == text)
    }
}

/// What an operation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    TreeCreated,
    Pushed,
    Planned,
    Edited,
    Moved,
    Deleted,
    Started,
    Popped,
    Resumed,
    Retried,
    Invalidated,
    Focused,
    MessageAdded,
    /// The frame and its messages were imported in bulk (from another tool's transcript).
    Imported,
    /// A section of an in-progress frame's partial results was written.
    ResultsUpdated,
    /// The whole tree was deleted; the event names its root frame, which no longer exists.
    TreeDeleted,
    /// The tree's workspace folder was set, changed or cleared; recorded on its root frame.
    WorkspaceSet,
    /// The files the frame (and its descendants) changed were put back as they were when it
    /// started.
    RolledBack,
    /// The frame's success criteria were compacted (generated after it was created).
    CriteriaCompacted,
    /// The frame's budget was set, changed or cleared.
    BudgetSet,
}

impl EventKind {
    pub const ALL: [EventKind; 20] = [
        EventKind::TreeCreated,
        EventKind::Pushed,
        EventKind::Planned,
        EventKind::Edited,
        EventKind::Moved,
        EventKind::Deleted,
        EventKind::Started,
        EventKind::Popped,
        EventKind::Resumed,
        EventKind::Retried,
        EventKind::Invalidated,
        EventKind::Focused,
        EventKind::MessageAdded,
        EventKind::Imported,
        EventKind::ResultsUpdated,
        EventKind::TreeDeleted,
        EventKind::WorkspaceSet,
        EventKind::RolledBack,
        EventKind::CriteriaCompacted,
        EventKind::BudgetSet,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::TreeCreated => "tree_created",
            EventKind::Pushed => "pushed",
            EventKind::Planned => "planned",
            EventKind::Edited => "edited",
            EventKind::Moved => "moved",
            EventKind::Deleted => "deleted",
            EventKind::Started => "started",
            EventKind::Popped => "popped",
            EventKind::Resumed => "resumed",
            EventKind::Retried => "retried",
            EventKind::Invalidated => "invalidated",
            EventKind::Focused => "focused",
            EventKind::MessageAdded => "message_added",
            EventKind::Imported => "imported",
            EventKind::ResultsUpdated => "results_updated",
            EventKind::TreeDeleted => "tree_deleted",
            EventKind::WorkspaceSet => "workspace_set",
            EventKind::RolledBack => "rolled_back",
            EventKind::CriteriaCompacted => "criteria_compacted",
            EventKind::BudgetSet => "budget_set",
        }
    }

    pub fn parse(text: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// One recorded operation on one frame (or on the tree, for `tree_created`).
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct Event {
    /// Increases with every event in the database, across trees and processes.
    pub seq: i64,
    pub tree: TreeId,
    pub frame: FrameId,
    pub kind: EventKind,
    pub actor: Actor,
    pub at: Timestamp,
    /// What changed, in the kind's own shape (for example the new status and reason).
    pub detail: EventDetail,
}
