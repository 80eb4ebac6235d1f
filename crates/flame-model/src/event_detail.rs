//! What each kind of [`Event`](crate::Event) recorded, typed.
//!
//! The store keeps an event's detail as a JSON object of the variant's fields alone, because the
//! kind is a column of its own. That is the shape events were written in before the detail had a
//! type, so every stored event reads back; one this version cannot read (hand-edited, or from a
//! newer Flame) becomes [`EventDetail::Unreadable`] rather than an error, so one odd row never
//! stops a tree from loading.

use serde::{Deserialize, Serialize};

use crate::budget::FrameBudget;
use crate::{EventKind, FrameId, MessageId, Status};

/// What an event recorded, in its kind's own shape.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(untagged)]
pub enum EventDetail {
    /// `tree_created`: the root frame's identity and the tree's workspace folder.
    TreeCreated { title: String, success_criteria: String, workspace: Option<String> },
    /// `pushed` or `planned`: a new frame, where it was placed and its identity.
    Placed { parent: FrameId, position: u32, title: String, success_criteria: String },
    /// `edited`: a planned frame's new identity.
    Edited { title: String, success_criteria: String },
    /// `moved`: a planned frame's old and new place.
    Moved { from_parent: FrameId, from_position: u32, to_parent: FrameId, to_position: u32 },
    /// `deleted`: the title of the planned frame that is gone.
    Deleted { title: String },
    /// `popped`: how the frame ended and what it returned.
    Popped {
        status: Status,
        results: Option<String>,
        results_compacted: Option<String>,
        artifacts: Vec<String>,
        decisions: Vec<String>,
        reason: Option<String>,
    },
    /// `retried`, on the failed frame: the new frame that retries it.
    RetriedAs { retried_as: FrameId },
    /// `retried`, on the new frame: the failed frame it retries and the identity it took over.
    RetryOf { retry_of: FrameId, title: String, success_criteria: String },
    /// `invalidated`: why.
    Invalidated { reason: String },
    /// `focused`: the frame the focus left.
    Focused { from: FrameId },
    /// `message_added`: the message, which the messages table holds.
    MessageAdded { message: MessageId },
    /// `imported`: the frame's identity and the range of its imported messages (none when it
    /// had no messages).
    Imported {
        title: String,
        success_criteria: String,
        first_message: Option<MessageId>,
        last_message: Option<MessageId>,
    },
    /// `results_updated`: one section of an in-progress frame's partial results.
    ResultsUpdated { section: String, text: String },
    /// `tree_deleted`: what went with the tree.
    TreeDeleted { title: String, frames: u64, messages: u64 },
    /// `workspace_set`: the new folder (none when cleared) and the one before.
    WorkspaceSet { workspace: Option<String>, previous: Option<String> },
    /// `criteria_compacted`: the frame's success criteria as compacted.
    CriteriaCompacted { success_criteria_compacted: String },
    /// `rolled_back`: which files were put back.
    RolledBack(RollbackRecord),
    /// `budget_set`: the frame's new budget (none when cleared) and the one before.
    BudgetSet { budget: Option<FrameBudget>, previous_budget: Option<FrameBudget> },
    /// `started` and `resumed`, which need nothing beyond their kind.
    Nothing {},
    /// A stored detail that does not have its kind's shape, kept as its JSON text.
    Unreadable { text: String },
}

/// What a rollback did, as its event records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct RollbackRecord {
    /// Files written back as they were.
    pub restored: Vec<String>,
    /// Files the frame had created, removed.
    pub deleted: Vec<String>,
    /// Files that could not be put back (not snapshotted when the frame started).
    pub not_restored: Vec<String>,
}

/// Every field any kind stores, each optional, so one parse reads any stored detail and the kind
/// then says which fields it must have.
#[derive(Deserialize, Default)]
#[serde(default)]
struct StoredFields {
    title: Option<String>,
    success_criteria: Option<String>,
    workspace: Option<String>,
    previous: Option<String>,
    parent: Option<FrameId>,
    position: Option<u32>,
    from_parent: Option<FrameId>,
    from_position: Option<u32>,
    to_parent: Option<FrameId>,
    to_position: Option<u32>,
    status: Option<Status>,
    results: Option<String>,
    results_compacted: Option<String>,
    artifacts: Option<Vec<String>>,
    decisions: Option<Vec<String>>,
    reason: Option<String>,
    retried_as: Option<FrameId>,
    retry_of: Option<FrameId>,
    from: Option<FrameId>,
    message: Option<MessageId>,
    first_message: Option<MessageId>,
    last_message: Option<MessageId>,
    section: Option<String>,
    text: Option<String>,
    frames: Option<u64>,
    messages: Option<u64>,
    restored: Option<Vec<String>>,
    deleted: Option<Vec<String>>,
    not_restored: Option<Vec<String>>,
    success_criteria_compacted: Option<String>,
    budget: Option<FrameBudget>,
    previous_budget: Option<FrameBudget>,
}

impl EventDetail {
    /// Reads a stored detail of kind `kind`. Text that is not a JSON object with the kind's
    /// fields comes back as [`EventDetail::Unreadable`].
    pub fn read(kind: EventKind, text: &str) -> EventDetail {
        let unreadable = || EventDetail::Unreadable { text: text.to_owned() };
        match serde_json::from_str::<StoredFields>(text) {
            Ok(fields) => fields.into_detail(kind).unwrap_or_else(unreadable),
            Err(_) => unreadable(),
        }
    }

    /// The JSON text the store keeps: the variant's fields as an object (an unreadable detail
    /// keeps the text it was read from).
    pub fn to_json(&self) -> String {
        match self {
            EventDetail::Unreadable { text } => text.clone(),
            // Strings, ids, numbers and lists of strings always serialise.
            detail => serde_json::to_string(detail).unwrap_or_default(),
        }
    }

    /// The title a frame's first event (creation, import or retry) gave it.
    pub fn created_title(&self) -> Option<&str> {
        match self {
            EventDetail::TreeCreated { title, .. }
            | EventDetail::Placed { title, .. }
            | EventDetail::RetryOf { title, .. }
            | EventDetail::Imported { title, .. } => Some(title),
            _ => None,
        }
    }
}

impl StoredFields {
    fn into_detail(self, kind: EventKind) -> Option<EventDetail> {
        Some(match kind {
            EventKind::TreeCreated => EventDetail::TreeCreated {
                title: self.title?,
                success_criteria: self.success_criteria?,
                workspace: self.workspace,
            },
            EventKind::Pushed | EventKind::Planned => EventDetail::Placed {
                parent: self.parent?,
                position: self.position?,
                title: self.title?,
                success_criteria: self.success_criteria?,
            },
            EventKind::Edited => {
                EventDetail::Edited { title: self.title?, success_criteria: self.success_criteria? }
            }
            EventKind::Moved => EventDetail::Moved {
                from_parent: self.from_parent?,
                from_position: self.from_position?,
                to_parent: self.to_parent?,
                to_position: self.to_position?,
            },
            EventKind::Deleted => EventDetail::Deleted { title: self.title? },
            EventKind::Popped => EventDetail::Popped {
                status: self.status?,
                results: self.results,
                results_compacted: self.results_compacted,
                artifacts: self.artifacts.unwrap_or_default(),
                decisions: self.decisions.unwrap_or_default(),
                reason: self.reason,
            },
            EventKind::Retried => match (self.retried_as, self.retry_of) {
                (Some(retried_as), None) => EventDetail::RetriedAs { retried_as },
                (None, Some(retry_of)) => EventDetail::RetryOf {
                    retry_of,
                    title: self.title?,
                    success_criteria: self.success_criteria?,
                },
                _ => return None,
            },
            EventKind::Invalidated => EventDetail::Invalidated { reason: self.reason? },
            EventKind::Focused => EventDetail::Focused { from: self.from? },
            EventKind::MessageAdded => EventDetail::MessageAdded { message: self.message? },
            EventKind::Imported => EventDetail::Imported {
                title: self.title?,
                success_criteria: self.success_criteria?,
                first_message: self.first_message,
                last_message: self.last_message,
            },
            EventKind::ResultsUpdated => {
                EventDetail::ResultsUpdated { section: self.section?, text: self.text? }
            }
            EventKind::TreeDeleted => EventDetail::TreeDeleted {
                title: self.title?,
                frames: self.frames?,
                messages: self.messages?,
            },
            EventKind::WorkspaceSet => {
                EventDetail::WorkspaceSet { workspace: self.workspace, previous: self.previous }
            }
            EventKind::RolledBack => EventDetail::RolledBack(RollbackRecord {
                restored: self.restored?,
                deleted: self.deleted?,
                not_restored: self.not_restored?,
            }),
            EventKind::CriteriaCompacted => EventDetail::CriteriaCompacted {
                success_criteria_compacted: self.success_criteria_compacted?,
            },
            EventKind::BudgetSet => EventDetail::BudgetSet {
                budget: self.budget,
                previous_budget: self.previous_budget,
            },
            EventKind::Started | EventKind::Resumed => EventDetail::Nothing {},
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(n: u32) -> FrameId {
        FrameId::parse(&format!("f000000000{n}")).unwrap()
    }

    /// One detail of every kind, with the kind it is recorded under.
    fn every_kind() -> Vec<(EventKind, EventDetail)> {
        let (title, success_criteria) = ("Fix the parser".to_owned(), "tests pass".to_owned());
        vec![
            (
                EventKind::TreeCreated,
                EventDetail::TreeCreated {
                    title: title.clone(),
                    success_criteria: success_criteria.clone(),
                    workspace: Some("/home/me/project".into()),
                },
            ),
            (
                EventKind::Pushed,
                EventDetail::Placed {
                    parent: frame(1),
                    position: 2,
                    title: title.clone(),
                    success_criteria: success_criteria.clone(),
                },
            ),
            (
                EventKind::Edited,
                EventDetail::Edited {
                    title: title.clone(),
                    success_criteria: success_criteria.clone(),
                },
            ),
            (
                EventKind::Moved,
                EventDetail::Moved {
                    from_parent: frame(1),
                    from_position: 0,
                    to_parent: frame(2),
                    to_position: 3,
                },
            ),
            (EventKind::Deleted, EventDetail::Deleted { title: title.clone() }),
            (
                EventKind::Popped,
                EventDetail::Popped {
                    status: Status::Failed,
                    results: Some("half".into()),
                    results_compacted: None,
                    artifacts: vec!["src/a.rs".into()],
                    decisions: vec![],
                    reason: Some("no disk".into()),
                },
            ),
            (EventKind::Retried, EventDetail::RetriedAs { retried_as: frame(3) }),
            (
                EventKind::Retried,
                EventDetail::RetryOf {
                    retry_of: frame(4),
                    title: title.clone(),
                    success_criteria: success_criteria.clone(),
                },
            ),
            (EventKind::Invalidated, EventDetail::Invalidated { reason: "moot".into() }),
            (EventKind::Focused, EventDetail::Focused { from: frame(5) }),
            (EventKind::MessageAdded, EventDetail::MessageAdded { message: MessageId(42) }),
            (
                EventKind::Imported,
                EventDetail::Imported {
                    title: title.clone(),
                    success_criteria: success_criteria.clone(),
                    first_message: Some(MessageId(7)),
                    last_message: Some(MessageId(9)),
                },
            ),
            (
                EventKind::ResultsUpdated,
                EventDetail::ResultsUpdated { section: "Found".into(), text: "a bug".into() },
            ),
            (EventKind::TreeDeleted, EventDetail::TreeDeleted { title, frames: 12, messages: 340 }),
            (
                EventKind::WorkspaceSet,
                EventDetail::WorkspaceSet { workspace: None, previous: Some("/srv".into()) },
            ),
            (
                EventKind::RolledBack,
                EventDetail::RolledBack(RollbackRecord {
                    restored: vec!["a".into()],
                    deleted: vec![],
                    not_restored: vec!["b".into()],
                }),
            ),
            (
                EventKind::CriteriaCompacted,
                EventDetail::CriteriaCompacted { success_criteria_compacted: "passes".into() },
            ),
            (
                EventKind::BudgetSet,
                EventDetail::BudgetSet {
                    budget: Some(FrameBudget { tool_calls: Some(5), ..FrameBudget::default() }),
                    previous_budget: None,
                },
            ),
            (EventKind::Started, EventDetail::Nothing {}),
            (EventKind::Resumed, EventDetail::Nothing {}),
        ]
    }

    #[test]
    fn every_kind_reads_back_what_it_wrote() {
        for (kind, detail) in every_kind() {
            assert_eq!(EventDetail::read(kind, &detail.to_json()), detail, "{kind:?}");
        }
    }

    #[test]
    fn details_written_before_they_were_typed_still_read() {
        // Exactly as the store's `json!` writers wrote them.
        let pushed = r#"{"parent":"f0000000001","position":0,"title":"T","success_criteria":"C"}"#;
        assert!(matches!(
            EventDetail::read(EventKind::Pushed, pushed),
            EventDetail::Placed { position: 0, .. }
        ));
        let popped = r#"{"status":"completed","results":null,"results_compacted":null,"artifacts":[],"decisions":["d"],"reason":null}"#;
        assert!(matches!(
            EventDetail::read(EventKind::Popped, popped),
            EventDetail::Popped { status: Status::Completed, ref decisions, .. } if decisions == &["d"]
        ));
        assert_eq!(EventDetail::read(EventKind::Started, "{}"), EventDetail::Nothing {});
        let imported =
            r#"{"title":"T","success_criteria":"","first_message":null,"last_message":null}"#;
        assert!(matches!(
            EventDetail::read(EventKind::Imported, imported),
            EventDetail::Imported { first_message: None, .. }
        ));
    }

    #[test]
    fn a_detail_without_its_kinds_fields_is_kept_as_text() {
        for text in ["not json", "null", r#"{"message":"seven"}"#, r#"{"title":"T"}"#, "[]"] {
            let detail = EventDetail::read(EventKind::MessageAdded, text);
            assert_eq!(detail, EventDetail::Unreadable { text: text.to_owned() });
            assert_eq!(detail.to_json(), text, "written back unchanged");
        }
        // A retry names either the new frame or the old one, never both.
        let both = r#"{"retried_as":"f0000000001","retry_of":"f0000000002","title":"T","success_criteria":""}"#;
        assert!(matches!(
            EventDetail::read(EventKind::Retried, both),
            EventDetail::Unreadable { .. }
        ));
    }

    #[test]
    fn the_created_title_is_the_title_a_frame_began_with() {
        let titled: Vec<EventKind> = every_kind()
            .into_iter()
            .filter(|(_, detail)| detail.created_title() == Some("Fix the parser"))
            .map(|(kind, _)| kind)
            .collect();
        // A retry's new frame takes over the failed frame's title; a deleted frame's title is
        // not the one a frame began with.
        let expected =
            [EventKind::TreeCreated, EventKind::Pushed, EventKind::Retried, EventKind::Imported];
        assert_eq!(titled, expected);
    }
}
