//! The importers' common output: a tree of frames addressed by index, with messages, recorded
//! model calls and a report of what was skipped or unreadable. Ids are assigned only when a
//! draft becomes a real tree ([`Draft::materialise`]), from the caller's `IdSource`.

use std::collections::BTreeMap;

use flame_model::{
    Frame, FrameTree, IdSource, MAX_TITLE_CHARS, NewMessage, Status, Timestamp, Tree,
};
use serde::Serialize;

/// What kind of thing in the source a frame stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameKind {
    /// The whole session.
    Session,
    /// A stretch of the main thread (see `segment.rs`).
    Segment,
    /// A subagent, started by a tool call of its parent.
    Subagent,
    /// The model call that wrote a compaction summary.
    Compaction,
    /// A frame read back from Flame's own export.
    Exported,
}

/// A frame before it has an id.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftFrame {
    pub parent: Option<usize>,
    pub kind: FrameKind,
    pub title: String,
    pub criteria: String,
    pub status: Status,
    pub status_reason: Option<String>,
    pub results: Option<String>,
    pub results_compacted: Option<String>,
    pub success_criteria_compacted: Option<String>,
    pub artifacts: Vec<String>,
    pub decisions: Vec<String>,
    /// Index of the failed frame this one retries.
    pub retry_of: Option<usize>,
    pub created_at: Timestamp,
    pub started_at: Option<Timestamp>,
    pub ended_at: Option<Timestamp>,
}

impl DraftFrame {
    /// An in-progress frame started at `at`, with a title cut to what Flame accepts.
    pub fn new(
        parent: Option<usize>,
        kind: FrameKind,
        title: &str,
        criteria: &str,
        at: Timestamp,
    ) -> DraftFrame {
        DraftFrame {
            parent,
            kind,
            title: title_from(title),
            criteria: if criteria.trim().is_empty() {
                "(the source states no criteria)".to_owned()
            } else {
                criteria.to_owned()
            },
            status: Status::InProgress,
            status_reason: None,
            results: None,
            results_compacted: None,
            success_criteria_compacted: None,
            artifacts: Vec::new(),
            decisions: Vec::new(),
            retry_of: None,
            created_at: at,
            started_at: Some(at),
            ended_at: None,
        }
    }
}

/// A message before it has a frame id.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftMessage {
    pub frame: usize,
    pub message: NewMessage,
    pub tokens: u64,
    pub at: Timestamp,
}

/// One model call as the transcript recorded it: the context the agent sent, in the provider's
/// own token count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ModelCall {
    pub frame: usize,
    /// Index into [`Draft::messages`] of the first message the call produced; every earlier
    /// message of the frame was in its context.
    pub message: usize,
    pub at: Timestamp,
    /// Input tokens including cache reads and cache writes.
    pub input_tokens: u64,
}

/// What an import read, skipped and could not read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// Records read, over every file.
    pub records: u64,
    /// Records that carry no message, by type (`progress:hook_progress`, `file-history-snapshot`…).
    pub skipped: BTreeMap<String, u64>,
    /// Lines or entries that could not be read, each naming its file and line; the rest was
    /// imported.
    pub problems: Vec<String>,
    /// Assistant records merged into the response they continue (same `message.id`).
    pub merged_records: u64,
}

impl ImportReport {
    pub fn skip(&mut self, what: impl Into<String>) {
        *self.skipped.entry(what.into()).or_default() += 1;
    }
}

/// A whole imported tree, before ids.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Draft {
    pub title: String,
    /// Frame 0 is the root; parents come before their children.
    pub frames: Vec<DraftFrame>,
    /// Messages in the order they were recorded, per frame.
    pub messages: Vec<DraftMessage>,
    pub calls: Vec<ModelCall>,
    /// The frame to focus; the root when `None`.
    pub focus: Option<usize>,
    pub report: ImportReport,
}

/// A real tree built from a draft, ready for `Store::import_tree`.
#[derive(Debug, Clone, PartialEq)]
pub struct Materialised {
    pub tree: Tree,
    pub frames: Vec<Frame>,
    /// `(frame index, message, tokens, time)` in the draft's order.
    pub messages: Vec<DraftMessage>,
}

impl Draft {
    /// Gives every frame an id from `ids` and positions in creation order among siblings, and
    /// checks the result against Flame's tree invariants.
    pub fn materialise(&self, ids: &mut IdSource) -> Result<Materialised, String> {
        if self.frames.is_empty() {
            return Err("the import produced no frames".to_owned());
        }
        let tree_id = ids.tree_id();
        let frame_ids: Vec<_> = self.frames.iter().map(|_| ids.frame_id()).collect();
        let mut next_position = vec![0u32; self.frames.len()];
        let mut frames = Vec::with_capacity(self.frames.len());
        for (i, d) in self.frames.iter().enumerate() {
            let position = match d.parent {
                Some(p) if p < i => {
                    next_position[p] += 1;
                    next_position[p] - 1
                }
                Some(p) => return Err(format!("frame {i} comes before its parent {p}")),
                None => 0,
            };
            let mut frame = Frame::new(
                frame_ids[i].clone(),
                tree_id.clone(),
                d.parent.map(|p| frame_ids[p].clone()),
                position,
                d.title.clone(),
                d.criteria.clone(),
                d.status,
                d.created_at,
            );
            frame.status_reason = d.status_reason.clone();
            frame.results = d.results.clone();
            frame.results_compacted = d.results_compacted.clone();
            frame.success_criteria_compacted = d.success_criteria_compacted.clone();
            frame.artifacts = d.artifacts.clone();
            frame.decisions = d.decisions.clone();
            frame.retry_of = d.retry_of.map(|r| frame_ids[r].clone());
            frame.started_at = d.started_at;
            frame.ended_at = d.ended_at;
            frames.push(frame);
        }
        for m in &self.messages {
            let frame = frames.get_mut(m.frame).ok_or("a message names a missing frame")?;
            frame.message_count += 1;
            frame.tokens += m.tokens;
        }
        let tree = Tree {
            id: tree_id,
            title: self.title.clone(),
            root: frame_ids[0].clone(),
            focus: frame_ids[self.focus.unwrap_or(0)].clone(),
            created_at: self.frames[0].created_at,
        };
        let whole = FrameTree::new(tree, frames);
        whole.check_invariants()?;
        let FrameTree { tree, .. } = &whole;
        Ok(Materialised {
            tree: tree.clone(),
            frames: whole.frames().to_vec(),
            messages: self.messages.clone(),
        })
    }

    /// Adds a frame and returns its index.
    pub fn push_frame(&mut self, frame: DraftFrame) -> usize {
        self.frames.push(frame);
        self.frames.len() - 1
    }
}

/// A frame title from free text: its first non-empty line, white space collapsed, cut to Flame's
/// limit with an ellipsis.
pub fn title_from(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("Untitled");
    let line: String = line.split_whitespace().collect::<Vec<_>>().join(" ");
    const LIMIT: usize = 80;
    const { assert!(LIMIT <= MAX_TITLE_CHARS) };
    if line.chars().count() <= LIMIT {
        line
    } else {
        let cut: String = line.chars().take(LIMIT - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_one_short_line() {
        assert_eq!(title_from("\n  Fix   the\tbug \nmore"), "Fix the bug");
        assert_eq!(title_from("   "), "Untitled");
        let long = title_from(&"word ".repeat(100));
        assert_eq!(long.chars().count(), 80);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn materialise_assigns_positions_and_checks_the_tree() {
        let mut draft = Draft { title: "t".into(), ..Draft::default() };
        let root = draft.push_frame(DraftFrame::new(None, FrameKind::Session, "root", "c", 1));
        let mut done = DraftFrame::new(Some(root), FrameKind::Segment, "a", "c", 2);
        done.status = Status::Completed;
        done.results = Some("r".into());
        draft.push_frame(done);
        let open = draft.push_frame(DraftFrame::new(Some(root), FrameKind::Segment, "b", "c", 3));
        draft.focus = Some(open);
        let tree = draft.materialise(&mut IdSource::seeded(1)).unwrap();
        assert_eq!(tree.frames.iter().map(|f| f.position).collect::<Vec<_>>(), [0, 0, 1]);
        assert_eq!(tree.tree.focus, tree.frames[2].id);

        // An in-progress frame under a completed one breaks an invariant and is refused.
        draft.frames[0].status = Status::Completed;
        assert!(draft.materialise(&mut IdSource::seeded(1)).is_err());
    }
}
