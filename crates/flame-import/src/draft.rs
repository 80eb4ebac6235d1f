//! The importers' common output: a tree of frames addressed by index, with messages, recorded
//! model calls and a report of what was skipped or unreadable. Ids are assigned only when a
//! draft becomes a real tree ([`Draft::materialise`]), from the caller's `IdSource`.

use std::collections::BTreeMap;
use std::sync::Arc;

use flame_model::{
    FileTrail, Frame, FrameTree, IdSource, MAX_DEPTH, MAX_TITLE_CHARS, NewMessage, Status,
    Timestamp, Tree, lifecycle,
};
use flame_tokens::{Encoding, count_message};
use serde::Serialize;

/// How many problems a report lists by name; the rest are only counted. A file of a million
/// bad lines then reads as its first few and "and N more", not as one enormous message.
pub const MAX_LISTED_PROBLEMS: usize = 5;

/// The key of a session's root frame ([`DraftFrame::key`]).
pub const ROOT_KEY: &str = "root";

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
    /// What in the source the frame stands for, the same each time the source is read as it
    /// grows (`root`, a segment's first message, a subagent's call or file): how following a
    /// session finds the frame it already stored. Empty for frames that are never followed.
    pub key: String,
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
            key: String::new(),
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
    /// Shared with the thread it was read from (`thread.rs`).
    pub message: Arc<NewMessage>,
    pub tokens: u64,
    pub at: Timestamp,
}

/// A file one of a frame's tool calls read or changed (`files.rs` says which calls count).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftFile {
    pub frame: usize,
    /// Index into [`Draft::messages`] of the assistant message whose tool call touched it.
    pub message: usize,
    /// When that message was recorded.
    pub at: Timestamp,
    /// Relative to the session's folder when inside it, else as the transcript wrote it.
    pub path: String,
    pub changed: bool,
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
    /// Lines or entries that could not be read, each naming its file and line, and what was
    /// changed to fit Flame's limits; the rest was imported. At most [`MAX_LISTED_PROBLEMS`];
    /// the others are counted in `unlisted_problems`.
    pub problems: Vec<String>,
    /// Problems past the first [`MAX_LISTED_PROBLEMS`], counted only.
    pub unlisted_problems: u64,
    /// Assistant records merged into the response they continue (same `message.id`).
    pub merged_records: u64,
}

impl ImportReport {
    pub fn skip(&mut self, what: impl Into<String>) {
        *self.skipped.entry(what.into()).or_default() += 1;
    }

    /// Records a problem: listed while fewer than [`MAX_LISTED_PROBLEMS`] are, counted after.
    pub fn problem(&mut self, text: impl Into<String>) {
        if self.problems.len() < MAX_LISTED_PROBLEMS {
            self.problems.push(text.into());
        } else {
            self.unlisted_problems = self.unlisted_problems.saturating_add(1);
        }
    }

    /// Every problem recorded, listed or not.
    pub fn problem_count(&self) -> u64 {
        (self.problems.len() as u64).saturating_add(self.unlisted_problems)
    }

    /// Adds `other`'s counts and problems to this report.
    pub fn absorb(&mut self, other: ImportReport) {
        self.records = self.records.saturating_add(other.records);
        self.merged_records = self.merged_records.saturating_add(other.merged_records);
        let unlisted = other.unlisted_problems;
        for problem in other.problems {
            self.problem(problem);
        }
        self.unlisted_problems = self.unlisted_problems.saturating_add(unlisted);
        for (kind, count) in other.skipped {
            let slot = self.skipped.entry(kind).or_default();
            *slot = slot.saturating_add(count);
        }
    }

    /// The listed problems, then "and N more" if some were only counted.
    pub fn problem_lines(&self) -> Vec<String> {
        let mut lines = self.problems.clone();
        if self.unlisted_problems > 0 {
            lines.push(format!("and {} more", self.unlisted_problems));
        }
        lines
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
    /// The files the frames' tool calls touched, in transcript order per frame.
    pub files: Vec<DraftFile>,
    /// The frame to focus; the root when `None`.
    pub focus: Option<usize>,
    pub report: ImportReport,
}

impl Draft {
    /// A draft of one agent's session with its root frame (index 0, keyed [`ROOT_KEY`]), in
    /// progress since `start`: titled by the thread's `first_request`, its criteria naming the
    /// agent (`agent`, "Codex"), the session's `id` and its `folder`.
    pub(crate) fn of_session(
        agent: &str,
        id: &str,
        folder: Option<&str>,
        first_request: &str,
        start: Timestamp,
        report: ImportReport,
    ) -> Draft {
        let mut draft = Draft { title: title_from(first_request), report, ..Draft::default() };
        let mut root = DraftFrame::new(
            None,
            FrameKind::Session,
            first_request,
            &format!(
                "{agent} session {id}{}: {first_request}",
                folder.map(|c| format!(" in {c}")).unwrap_or_default()
            ),
            start,
        );
        root.criteria = root.criteria.trim().to_owned();
        root.key = ROOT_KEY.to_owned();
        draft.push_frame(root);
        draft
    }
}

/// A real tree built from a draft, ready for `Store::import_tree` with the draft's messages
/// (which it does not copy: they are most of an import).
#[derive(Debug, Clone, PartialEq)]
pub struct Materialised {
    pub tree: Tree,
    pub frames: Vec<Frame>,
    /// `(frame index, trail)` of every frame whose tool calls touched a file, by frame index.
    pub trails: Vec<(usize, FileTrail)>,
}

impl Draft {
    /// The file trail of every frame, counting only the touches `counts` keeps; a frame with
    /// none has no entry. Each trail is sorted and deduplicated, a path both read and changed
    /// kept as changed.
    pub fn trails(&self, counts: impl Fn(&DraftFile) -> bool) -> BTreeMap<usize, FileTrail> {
        self.gather(counts, |frame| vec![frame])
    }

    /// Like [`Draft::trails`], but each frame's trail holds its whole subtree's touches: what
    /// the stack-context lists for a finished frame (`flame_context::ContextInput::trails`).
    pub fn subtree_trails(
        &self,
        counts: impl Fn(&DraftFile) -> bool,
    ) -> BTreeMap<usize, FileTrail> {
        self.gather(counts, |frame| {
            let mut holders = vec![frame];
            // Parents come before their children in a draft, so the walk ends.
            while let Some(p) = self.frames[*holders.last().expect("non-empty")].parent {
                if p >= *holders.last().expect("non-empty") {
                    break;
                }
                holders.push(p);
            }
            holders
        })
    }

    /// The trails of the frames `holders` names for each counted touch.
    fn gather(
        &self,
        counts: impl Fn(&DraftFile) -> bool,
        holders: impl Fn(usize) -> Vec<usize>,
    ) -> BTreeMap<usize, FileTrail> {
        let mut paths: BTreeMap<usize, (Vec<String>, Vec<String>)> = BTreeMap::new();
        for f in self.files.iter().filter(|f| counts(f)) {
            for frame in holders(f.frame) {
                let (read, changed) = paths.entry(frame).or_default();
                if f.changed { changed.push(f.path.clone()) } else { read.push(f.path.clone()) }
            }
        }
        paths
            .into_iter()
            .map(|(frame, (read, changed))| (frame, FileTrail::new(read, changed)))
            .collect()
    }

    /// Gives every frame an id from `ids` and positions in creation order among siblings, and
    /// checks the result against the rules live operations follow: every title and criteria
    /// pass `lifecycle::check_identity`, no frame is deeper than [`MAX_DEPTH`], and the tree
    /// meets Flame's invariants. Token sums saturate rather than overflow.
    pub fn materialise(&self, ids: &mut IdSource) -> Result<Materialised, String> {
        if self.frames.is_empty() {
            return Err("the import produced no frames".to_owned());
        }
        lifecycle::check_identity(&self.title, &self.frames[0].criteria)
            .map_err(|e| format!("the tree's title: {e}"))?;
        let mut depths = vec![0usize; self.frames.len()];
        for (i, d) in self.frames.iter().enumerate() {
            lifecycle::check_identity(&d.title, &d.criteria)
                .map_err(|e| format!("frame {i} ({:?}): {e}", cut(&d.title, 40)))?;
            if let Some(p) = d.parent.filter(|&p| p < i) {
                depths[i] = depths[p] + 1;
                if depths[i] > MAX_DEPTH {
                    return Err(too_deep());
                }
            }
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
        if self.files.iter().any(|f| f.frame >= frames.len()) {
            return Err("a file of the trail names a missing frame".to_owned());
        }
        for m in &self.messages {
            let frame = frames.get_mut(m.frame).ok_or("a message names a missing frame")?;
            frame.message_count += 1;
            frame.tokens = frame.tokens.saturating_add(m.tokens);
        }
        let tree = Tree {
            id: tree_id,
            title: self.title.clone(),
            root: frame_ids[0].clone(),
            focus: frame_ids[self.focus.unwrap_or(0)].clone(),
            created_at: self.frames[0].created_at,
            workspace: None,
        };
        let whole = FrameTree::new(tree, frames);
        whole.check_invariants()?;
        let FrameTree { tree, .. } = &whole;
        Ok(Materialised {
            tree: tree.clone(),
            frames: whole.frames().to_vec(),
            trails: self.trails(|_| true).into_iter().collect(),
        })
    }

    /// Adds a frame and returns its index.
    pub fn push_frame(&mut self, frame: DraftFrame) -> usize {
        self.frames.push(frame);
        self.frames.len() - 1
    }

    /// Cuts every message longer than `max_bytes` (the store's cap on a message) to fit, with a
    /// closing line saying so, recounts its tokens and reports it: one oversized message does
    /// not refuse the whole import. The cut falls on a character boundary.
    pub fn cut_long_messages(&mut self, max_bytes: usize) {
        for (n, m) in self.messages.iter_mut().enumerate() {
            let length = m.message.content.len();
            if length <= max_bytes {
                continue;
            }
            let note = format!(
                "\n\n[… message truncated at {max_bytes} bytes by Flame on import, from {length}; the rest was not stored]"
            );
            let mut keep = max_bytes.saturating_sub(note.len());
            while !m.message.content.is_char_boundary(keep) {
                keep -= 1;
            }
            let message = Arc::make_mut(&mut m.message);
            message.content.truncate(keep);
            message.content.push_str(&note);
            m.tokens = count_message(LIVE_ENCODING, &m.message);
            self.report.problem(format!(
                "message {} of frame {:?}: {length} bytes, cut to {max_bytes}",
                n + 1,
                cut(self.frames.get(m.frame).map_or("", |f| f.title.as_str()), 40)
            ));
        }
    }
}

/// The encoding Flame's live operations count messages in (`flame_api::DEFAULT_ENCODING`),
/// used when an import has to count a message again.
pub const LIVE_ENCODING: Encoding = Encoding::O200kBase;

/// The error for a tree deeper than [`MAX_DEPTH`].
pub(crate) fn too_deep() -> String {
    format!(
        "the tree is deeper than {MAX_DEPTH} levels below its root; Flame imports trees up to {MAX_DEPTH} levels deep"
    )
}

/// `text` cut to `chars` characters, for naming a frame in a message.
fn cut(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        text.to_owned()
    } else {
        format!("{}…", text.chars().take(chars - 1).collect::<String>())
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

/// A title that live operations accept (`lifecycle::check_identity`), made from the one an
/// export or another tool stated: a blank title becomes "Untitled", one of several lines keeps its first
/// non-empty line, and one over [`MAX_TITLE_CHARS`] is cut with an ellipsis. A title that is
/// already acceptable is kept exactly. Returns, for the report, what changed.
pub fn fit_title(text: &str) -> (String, Option<String>) {
    if text.trim().is_empty() {
        return ("Untitled".to_owned(), Some("empty title replaced by \"Untitled\"".to_owned()));
    }
    let mut changes = Vec::new();
    let mut title = text;
    if text.contains(['\n', '\r']) {
        title =
            text.split(['\n', '\r']).map(str::trim).find(|l| !l.is_empty()).unwrap_or("Untitled");
        changes.push("title of several lines: its first line kept".to_owned());
    }
    let chars = title.chars().count();
    let title = if chars > MAX_TITLE_CHARS {
        changes.push(format!("title of {chars} characters cut to {MAX_TITLE_CHARS}"));
        format!("{}…", title.chars().take(MAX_TITLE_CHARS - 1).collect::<String>())
    } else {
        title.to_owned()
    };
    (title, (!changes.is_empty()).then(|| changes.join("; ")))
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
    fn a_subtree_trail_holds_every_descendants_touches_and_a_trail_only_its_own() {
        let mut draft = Draft { title: "t".into(), ..Draft::default() };
        let root = draft.push_frame(DraftFrame::new(None, FrameKind::Session, "root", "c", 1));
        let segment =
            draft.push_frame(DraftFrame::new(Some(root), FrameKind::Segment, "s", "c", 2));
        let agent =
            draft.push_frame(DraftFrame::new(Some(segment), FrameKind::Subagent, "a", "c", 3));
        let touch = |frame, path: &str, changed| DraftFile {
            frame,
            message: 0,
            at: 4,
            path: path.to_owned(),
            changed,
        };
        draft.files = vec![
            touch(agent, "lib.rs", true),
            touch(segment, "lib.rs", false),
            touch(segment, "README.md", false),
            touch(agent, "late.rs", true),
        ];
        let early = |f: &DraftFile| f.path != "late.rs";
        let own = draft.trails(early);
        assert_eq!(own[&segment], FileTrail::new(["lib.rs".into(), "README.md".into()], []));
        assert_eq!(own[&agent], FileTrail::new([], ["lib.rs".into()]));
        let whole = draft.subtree_trails(early);
        let expected = FileTrail::new(["README.md".into()], ["lib.rs".into()]);
        assert_eq!((&whole[&root], &whole[&segment]), (&expected, &expected));
        assert_eq!(whole[&agent], own[&agent]);
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

    #[test]
    fn token_sums_saturate_instead_of_overflowing() {
        let mut draft = Draft { title: "t".into(), ..Draft::default() };
        draft.push_frame(DraftFrame::new(None, FrameKind::Session, "root", "c", 1));
        for _ in 0..2 {
            draft.messages.push(DraftMessage {
                frame: 0,
                message: NewMessage::text(flame_model::Role::User, "hi").into(),
                tokens: u64::MAX,
                at: 1,
            });
        }
        let tree = draft.materialise(&mut IdSource::seeded(1)).unwrap();
        assert_eq!(tree.frames[0].tokens, u64::MAX);
    }

    #[test]
    fn materialise_applies_the_live_identity_rules_and_the_depth_limit() {
        let chain = |depth: usize| {
            let mut draft = Draft { title: "t".into(), ..Draft::default() };
            draft.push_frame(DraftFrame::new(None, FrameKind::Session, "root", "c", 1));
            for i in 0..depth {
                draft.push_frame(DraftFrame::new(Some(i), FrameKind::Segment, "step", "c", 1));
            }
            draft
        };
        assert!(chain(MAX_DEPTH).materialise(&mut IdSource::seeded(1)).is_ok());
        let err = chain(MAX_DEPTH + 1).materialise(&mut IdSource::seeded(1)).unwrap_err();
        assert!(err.contains(&format!("deeper than {MAX_DEPTH} levels")), "{err}");

        let mut draft = chain(1);
        draft.frames[1].title = "x".repeat(MAX_TITLE_CHARS + 1);
        let err = draft.materialise(&mut IdSource::seeded(1)).unwrap_err();
        assert!(err.contains("frame 1") && err.contains("at most 200 characters"), "{err}");
        let mut draft = chain(1);
        draft.title = "a\nb".into();
        assert!(draft.materialise(&mut IdSource::seeded(1)).unwrap_err().contains("one line"));
    }

    #[test]
    fn titles_are_fitted_to_the_live_rules_and_kept_when_they_already_fit() {
        assert_eq!(fit_title("  Fix  it "), ("  Fix  it ".to_owned(), None));
        let (title, why) = fit_title(&"é".repeat(100_000));
        assert_eq!(title.chars().count(), MAX_TITLE_CHARS);
        assert_eq!(why.unwrap(), "title of 100000 characters cut to 200");
        let (title, why) = fit_title("\n first \nsecond");
        assert_eq!(title, "first");
        assert!(why.unwrap().contains("several lines"));
        assert_eq!(fit_title(" \t").0, "Untitled");
        for text in ["a", &"b".repeat(500), "x\ry", ""] {
            let (title, _) = fit_title(text);
            lifecycle::check_identity(&title, "c").unwrap();
        }
    }

    #[test]
    fn long_messages_are_cut_to_the_cap_on_a_character_boundary_with_a_note() {
        let mut draft = Draft { title: "t".into(), ..Draft::default() };
        draft.push_frame(DraftFrame::new(None, FrameKind::Session, "root", "c", 1));
        for text in ["short", &"€".repeat(400)] {
            draft.messages.push(DraftMessage {
                frame: 0,
                message: NewMessage::text(flame_model::Role::User, text).into(),
                tokens: 1,
                at: 1,
            });
        }
        draft.cut_long_messages(1000);
        assert_eq!(draft.messages[0].message.content, "short");
        let cut = &draft.messages[1].message.content;
        assert!(cut.len() <= 1000, "{}", cut.len());
        assert!(cut.starts_with("€€") && cut.ends_with("the rest was not stored]"), "{cut}");
        assert!(cut.contains("from 1200"), "{cut}");
        assert_eq!(
            draft.messages[1].tokens,
            count_message(LIVE_ENCODING, &draft.messages[1].message)
        );
        assert_eq!(draft.report.problems, ["message 2 of frame \"root\": 1200 bytes, cut to 1000"]);
    }
}
