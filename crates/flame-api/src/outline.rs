//! The outline as the window receives it: [`TreeOutline`] one column per field.
//!
//! The web view's IPC costs time for every byte it carries (WebKitGTK hands a response to the
//! page in 8 KiB pieces), and an outline of one object per frame repeats every field's name for
//! every frame: at 100k frames the objects were 31 MB of JSON where the columns are about a
//! quarter of that (8.1 MB). The window turns the columns back into the same [`TreeOutline`]
//! (`ui/src/outline.ts`), so nothing is lost on the way.
//!
//! Numbers are sent as small as they can be told exactly. A time since 1970 in milliseconds is
//! 13 digits; the outline's times lie within months of each other and a frame's end within
//! minutes of its start, so each start is sent as an offset from the earliest time, each end as
//! an offset from its start, both in seconds when every time is a whole second (as imports
//! record them): at 100k frames the two columns went from 2.8 MB to about 1 MB. The frames with
//! an own cost are sent as steps from one to the next rather than whole indexes.
//!
//! `Flame::read_outline_ahead` reads the current tree's outline, and with it its usage into the
//! cost cache; the desktop shell calls it on a thread while its window starts, and the page's first
//! `outline_columns(None)` takes that outline (waiting if it is still being read) when no event was
//! recorded and the facade was not reconfigured since, else reads afresh (`OutlineAhead`).
//!
//! A large tree's whole outline takes the window most of a second to receive, lay out and draw
//! (100k frames: 8 MB through the IPC), while what the opening view can show of it is its top
//! rows: below them its frames are narrower than a pixel. So the read-ahead also makes an
//! [`OutlinePreview`] of a tree of [`PREVIEW_FROM_FRAMES`] frames or more, as soon as the frames'
//! rows are read and before their usage is priced: the tree's top levels, whole, each frame
//! whose children it leaves out carrying what their subtrees weigh, so that every frame in it is
//! laid out exactly where the whole outline puts it. The window draws it until the whole outline
//! comes (`Flame::outline_preview`).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use flame_model::cost::FrameCost;
use flame_model::{FrameId, FrameOutline, Status, Timestamp, Tree, TreeId};
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::frames::{TreeOutline, outline_rows};
use crate::{ApiError, Flame};

/// Trees of at least this many frames get an [`OutlinePreview`] at opening; a smaller tree's
/// whole outline comes in about the time an empty one's does.
pub const PREVIEW_FROM_FRAMES: usize = 20_000;

/// The most frames a preview holds. The opening view is at most some 2,000 pixels wide, so a
/// level of more frames than that is mostly frames too narrow to draw one by one.
pub const PREVIEW_MAX_FRAMES: usize = 5_000;

/// The top of a tree, for the window to draw while the whole outline comes: every frame of the
/// tree's first levels (whole levels, as many as fit in [`PREVIEW_MAX_FRAMES`]), as
/// [`OutlineColumns`] without costs or budgets, which are read after it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct OutlinePreview {
    pub columns: OutlineColumns,
    /// How many frames the whole tree has.
    pub whole_frames: u32,
    pub folded: FoldedSubtrees,
}

/// The frames of a preview whose children it leaves out, and what those children's subtrees
/// weigh together in the flame graph's additive width modes: `frames[k]`, `tokens[k]` and
/// `messages[k]` belong to the frame at `index[k]` of the preview's columns. (Wall time and cost
/// are not additive over a subtree as the graph weighs them, or are not read yet: the window
/// draws no preview by them.)
#[derive(Debug, Clone, Default, PartialEq, Serialize, specta::Type)]
pub struct FoldedSubtrees {
    pub index: Vec<u32>,
    pub frames: Vec<u32>,
    pub tokens: Vec<u64>,
    pub messages: Vec<u64>,
}

/// A tree's outline by columns: frame `i` is `id[i]`, its title `title[i]`, and so on. Fields
/// that few frames have are listed as `(index, value)` pairs of those frames only.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct OutlineColumns {
    pub tree: Tree,
    /// The newest event in the data directory when the outline was read.
    pub seq: i64,
    pub id: Vec<FrameId>,
    /// The parent's index in these columns; -1 for the root. A parent that is not in the tree
    /// (which the store's invariants forbid) is given as the frame's own index, so no walk from
    /// the root reaches the frame.
    pub parent: Vec<i32>,
    pub position: Vec<u32>,
    pub title: Vec<String>,
    /// Each frame's status, as an index into `statuses`.
    pub status: Vec<u8>,
    /// The statuses `status` indexes.
    pub statuses: Vec<Status>,
    /// The times below are `time_base + value * time_unit` milliseconds: `time_base` is the
    /// earliest start or end (0 when no frame has one).
    pub time_base: Timestamp,
    /// 1000 when every start and end is a whole second, else 1.
    pub time_unit: i64,
    /// When each frame started, in time units after `time_base`.
    pub started_after_base: Vec<Option<i64>>,
    /// When each frame ended, in time units after it started; for a frame with an end and no
    /// start, after `time_base`.
    pub ended_after_start: Vec<Option<i64>>,
    pub message_count: Vec<u64>,
    pub tokens: Vec<u64>,
    pub success_criteria_compacted: Vec<(u32, String)>,
    pub retry_of: Vec<(u32, FrameId)>,
    pub rolled_back_at: Vec<(u32, Timestamp)>,
    /// The frames of [`TreeOutline::own_costs`] (whose own replies cost more than nothing at
    /// known prices), in index order, as steps: the first is the first frame's index, each next
    /// one how far past the previous frame the next is.
    pub own_cost_steps: Vec<u32>,
    /// Those frames' own costs, in micro-dollars, in the same order.
    pub own_costs: Vec<u64>,
    /// The focused frame's whole cost; null when its subtree recorded no usage.
    pub focus_cost: Option<FrameCost>,
    /// The tree's budgeted frames (few), as [`TreeOutline::budgets`].
    pub budgets: Vec<crate::BudgetView>,
}

/// The current tree's outline read while the window starts ([`Flame::read_outline_ahead`]),
/// for its first ask. On a large tree the read is most of the way to the first frame drawn (100k
/// frames: about a third of a second, with the usage it prices), and the window can only ask
/// once its page has loaded, a third of a second after the process started.
#[derive(Debug, Default)]
pub(crate) struct OutlineAhead {
    /// Held while the outline is read ahead, so that a first ask made meanwhile waits for it
    /// rather than reading it a second time.
    kept: Mutex<Option<OutlineColumns>>,
    /// Held while the frames are read ahead, until the preview is made of them.
    preview: Mutex<Option<OutlinePreview>>,
    /// Whether the first ask came; an outline read after it would never be taken.
    asked: AtomicBool,
}

impl OutlineAhead {
    /// What was read ahead, once: to the first ask only.
    pub(crate) fn take(&self) -> Option<OutlineColumns> {
        if self.asked.swap(true, Ordering::SeqCst) {
            return None;
        }
        self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take()
    }

    /// Drops what was read ahead (waiting if it is being read), for a change no event records.
    pub(crate) fn forget(&self) {
        self.preview.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
        self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
    }
}

impl Flame {
    /// [`Flame::outline`] by columns, as the window receives it (see [`OutlineColumns`]).
    pub fn outline_columns(&self, tree: Option<&TreeId>) -> Result<OutlineColumns, ApiError> {
        if tree.is_none()
            && let Some(ahead) = self.outline_ahead.take()
            && ahead.seq == self.latest_seq()?
        {
            return Ok(ahead);
        }
        Ok(self.outline(tree)?.into())
    }

    /// The preview of the current tree read ahead ([`OutlinePreview`]), once; `None` when the
    /// tree is smaller than [`PREVIEW_FROM_FRAMES`], nothing was read ahead, or it was taken.
    /// Waits while the frames are read ahead, not while their usage is priced. The preview is
    /// not checked against changes made since, as the whole outline is: it is drawn only until
    /// the whole outline, asked for beside it, comes.
    pub fn outline_preview(&self) -> Option<OutlinePreview> {
        self.outline_ahead.preview.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// Reads the current tree's outline (and the usage it prices) ahead of the window's first
    /// ask for it, `outline_columns(None)`, which takes it if nothing was recorded since, and
    /// makes its preview first (`outline_preview`). A front end calls this as its window starts.
    /// Nothing is read when there is no current tree or the first ask came already.
    pub fn read_outline_ahead(&self) -> Result<(), ApiError> {
        let mut kept = self.outline_ahead.kept.lock().unwrap_or_else(|p| p.into_inner());
        let mut preview = self.outline_ahead.preview.lock().unwrap_or_else(|p| p.into_inner());
        if self.outline_ahead.asked.load(Ordering::SeqCst) || self.store().current_tree()?.is_none()
        {
            return Ok(());
        }
        // The store is let go between the frames and their pricing, so that the preview's ask
        // and the window's other first reads need not wait for the pricing.
        let (tree, frames, seq) = outline_rows(&self.store(), None)?;
        if frames.len() >= PREVIEW_FROM_FRAMES {
            *preview = OutlinePreview::of(&tree, &frames, seq, PREVIEW_MAX_FRAMES);
        }
        drop(preview);
        let outline = self.priced_outline(&self.store(), tree, frames, seq)?;
        *kept = Some(outline.into());
        Ok(())
    }
}

impl OutlinePreview {
    /// The top levels of `tree`, whose `frames` were read at `seq`: whole levels from the root
    /// down while they hold at most `max_frames` frames. `None` when not even the root's children
    /// fit, or when every frame would (then there is nothing to preview). The root is the first
    /// frame without a parent, as the window's layout takes it; frames the root does not reach
    /// are left out, as the layout leaves them out.
    pub fn of(
        tree: &Tree,
        frames: &[FrameOutline],
        seq: i64,
        max_frames: usize,
    ) -> Option<OutlinePreview> {
        let n = frames.len();
        let index: FxHashMap<&FrameId, usize> =
            frames.iter().enumerate().map(|(i, f)| (&f.id, i)).collect();
        let parent: Vec<Option<usize>> =
            frames.iter().map(|f| f.parent.as_ref().and_then(|p| index.get(p).copied())).collect();
        let root = frames.iter().position(|f| f.parent.is_none())?;
        // Children as compressed rows, each in the frames' order.
        let mut start = vec![0usize; n + 1];
        for p in parent.iter().flatten() {
            start[p + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut children = vec![0usize; start[n]];
        for (i, p) in parent.iter().enumerate() {
            if let Some(p) = *p {
                children[fill[p]] = i;
                fill[p] += 1;
            }
        }
        // Breadth first from the root, level by level; `levels[d]` is where level `d` ends.
        let mut order = vec![root];
        let mut levels = vec![1];
        let mut at = 0;
        while at < order.len() {
            let end = order.len();
            for k in at..end {
                let f = order[k];
                order.extend_from_slice(&children[start[f]..start[f + 1]]);
            }
            at = end;
            if order.len() > end {
                levels.push(order.len());
            }
        }
        // The deepest level whose frames and all above them fit; level 0 alone is no preview.
        let depth = levels.iter().rposition(|&end| end <= max_frames)?;
        if depth == 0 || depth + 1 == levels.len() {
            return None;
        }
        // Each subtree's weights, children before parents (the reverse of breadth first).
        let mut weights: Vec<(u32, u64, u64)> =
            frames.iter().map(|f| (1, f.tokens, f.message_count)).collect();
        for &f in order.iter().rev() {
            if let Some(p) = parent[f] {
                let (frames, tokens, messages) = weights[f];
                let sum = &mut weights[p];
                *sum = (sum.0 + frames, sum.1 + tokens, sum.2 + messages);
            }
        }
        // The frames kept, in the frames' order, so siblings of equal position keep their order.
        let mut kept: Vec<usize> = order[..levels[depth]].to_vec();
        kept.sort_unstable();
        let mut deepest = vec![false; n];
        for &f in &order[levels[depth - 1]..levels[depth]] {
            deepest[f] = true;
        }
        let mut folded = FoldedSubtrees::default();
        let mut columns_of_kept = Vec::with_capacity(kept.len());
        for (k, &f) in kept.iter().enumerate() {
            columns_of_kept.push(frames[f].clone());
            if deepest[f] && start[f + 1] > start[f] {
                let (whole, own) = (weights[f], &frames[f]);
                folded.index.push(k as u32);
                folded.frames.push(whole.0 - 1);
                folded.tokens.push(whole.1 - own.tokens);
                folded.messages.push(whole.2 - own.message_count);
            }
        }
        let outline = TreeOutline {
            tree: tree.clone(),
            frames: columns_of_kept,
            seq,
            own_costs: Default::default(),
            focus_cost: None,
            budgets: Vec::new(),
        };
        Some(OutlinePreview { columns: outline.into(), whole_frames: n as u32, folded })
    }
}

impl From<TreeOutline> for OutlineColumns {
    fn from(outline: TreeOutline) -> OutlineColumns {
        let TreeOutline { tree, frames, seq, own_costs, focus_cost, budgets } = outline;
        let n = frames.len();
        // Frame ids are Flame's own, not an attacker's, so the map need not resist chosen keys:
        // hashing 100k ids with std's SipHash was a third of this conversion (60 ms -> 37).
        let index: FxHashMap<&FrameId, usize> =
            frames.iter().enumerate().map(|(i, f)| (&f.id, i)).collect();
        let parent = frames
            .iter()
            .enumerate()
            .map(|(i, f)| match &f.parent {
                None => -1,
                Some(p) => index.get(p).copied().unwrap_or(i) as i32,
            })
            .collect();
        let mut statuses: Vec<Status> = Vec::new();
        let status = frames
            .iter()
            .map(|f| match statuses.iter().position(|s| *s == f.status) {
                Some(k) => k as u8,
                None => {
                    statuses.push(f.status);
                    (statuses.len() - 1) as u8
                }
            })
            .collect();
        let mut own: Vec<(u32, u64)> = own_costs
            .iter()
            .filter_map(|(id, micro)| index.get(id).map(|&i| (i as u32, *micro)))
            .collect();
        own.sort_unstable();
        let sparse = |pick: &dyn Fn(&FrameOutline) -> bool| -> Vec<u32> {
            frames.iter().enumerate().filter(|(_, f)| pick(f)).map(|(i, _)| i as u32).collect()
        };
        let times = TimeColumns::new(&frames);
        let criteria = sparse(&|f| f.success_criteria_compacted.is_some());
        let retries = sparse(&|f| f.retry_of.is_some());
        let rolled_back = sparse(&|f| f.rolled_back_at.is_some());
        let mut columns = OutlineColumns {
            tree,
            seq,
            id: Vec::with_capacity(n),
            parent,
            position: frames.iter().map(|f| f.position).collect(),
            title: Vec::with_capacity(n),
            status,
            statuses,
            time_base: times.base,
            time_unit: times.unit,
            started_after_base: times.started,
            ended_after_start: times.ended,
            message_count: frames.iter().map(|f| f.message_count).collect(),
            tokens: frames.iter().map(|f| f.tokens).collect(),
            success_criteria_compacted: Vec::with_capacity(criteria.len()),
            retry_of: Vec::with_capacity(retries.len()),
            rolled_back_at: Vec::with_capacity(rolled_back.len()),
            own_cost_steps: own
                .iter()
                .scan(0, |previous, &(i, _)| Some(i - std::mem::replace(previous, i)))
                .collect(),
            own_costs: own.iter().map(|&(_, micro)| micro).collect(),
            focus_cost,
            budgets,
        };
        drop(index);
        for (i, frame) in frames.into_iter().enumerate() {
            let i = i as u32;
            if let Some(text) = frame.success_criteria_compacted {
                columns.success_criteria_compacted.push((i, text));
            }
            if let Some(retried) = frame.retry_of {
                columns.retry_of.push((i, retried));
            }
            if let Some(at) = frame.rolled_back_at {
                columns.rolled_back_at.push((i, at));
            }
            columns.id.push(frame.id);
            columns.title.push(frame.title);
        }
        columns
    }
}

/// The outline's starts and ends as [`OutlineColumns`] sends them.
struct TimeColumns {
    base: Timestamp,
    unit: i64,
    started: Vec<Option<i64>>,
    ended: Vec<Option<i64>>,
}

impl TimeColumns {
    fn new(frames: &[FrameOutline]) -> TimeColumns {
        let times = || frames.iter().flat_map(|f| [f.started_at, f.ended_at]).flatten();
        let base = times().min().unwrap_or(0);
        let unit = if times().all(|t| t % 1000 == 0) { 1000 } else { 1 };
        // Every time is `base` plus a whole number of units, so the difference of any two is a
        // whole number of units too. Differences are taken saturating: only times some 2^62 ms
        // apart would overflow, far past the 2^53 the window's numbers hold exactly.
        let after = |t: Timestamp, from: Timestamp| t.saturating_sub(from) / unit;
        TimeColumns {
            base,
            unit,
            started: frames.iter().map(|f| f.started_at.map(|t| after(t, base))).collect(),
            ended: frames
                .iter()
                .map(|f| f.ended_at.map(|t| after(t, f.started_at.unwrap_or(base))))
                .collect(),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::HashMap;

    use super::*;

    /// A frame of an outline, under `parent`; `cost.rs`'s tests build theirs with it too.
    pub(crate) fn frame(
        id: &str,
        parent: Option<&str>,
        position: u32,
        status: Status,
    ) -> FrameOutline {
        FrameOutline {
            id: FrameId::from_trusted(id.to_owned()),
            parent: parent.map(|p| FrameId::from_trusted(p.to_owned())),
            position,
            title: format!("Title of {id}"),
            status,
            success_criteria_compacted: None,
            retry_of: None,
            started_at: None,
            ended_at: None,
            message_count: 0,
            tokens: 0,
            rolled_back_at: None,
        }
    }

    fn outline(frames: Vec<FrameOutline>) -> TreeOutline {
        let tree = Tree {
            id: TreeId::from_trusted("t0000000000".to_owned()),
            title: "Tree".to_owned(),
            root: frames[0].id.clone(),
            focus: frames[0].id.clone(),
            created_at: 1_000,
            workspace: None,
        };
        TreeOutline {
            tree,
            frames,
            seq: 7,
            own_costs: HashMap::new(),
            focus_cost: Some(FrameCost::default()),
            budgets: Vec::new(),
        }
    }

    #[test]
    fn every_field_goes_into_its_column_in_the_frames_order() {
        let mut child = frame("f0000000002", Some("f0000000001"), 1, Status::Failed);
        child.success_criteria_compacted = Some("short criteria".to_owned());
        child.started_at = Some(2_000);
        child.ended_at = Some(3_000);
        child.message_count = 4;
        child.tokens = 500;
        child.rolled_back_at = Some(4_000);
        let mut retry = frame("f0000000003", Some("f0000000001"), 2, Status::InProgress);
        retry.retry_of = Some(child.id.clone());
        let root = frame("f0000000001", None, 0, Status::InProgress);
        let mut tree = outline(vec![child, root, retry]);
        tree.own_costs.insert(FrameId::from_trusted("f0000000003".to_owned()), 1_250);

        let columns = OutlineColumns::from(tree.clone());
        assert_eq!(columns.seq, 7);
        assert_eq!(columns.tree, tree.tree);
        let ids: Vec<&str> = columns.id.iter().map(FrameId::as_str).collect();
        assert_eq!(ids, ["f0000000002", "f0000000001", "f0000000003"]);
        assert_eq!(columns.parent, [1, -1, 1]);
        assert_eq!(columns.position, [1, 0, 2]);
        assert_eq!(columns.title[2], "Title of f0000000003");
        let statuses: Vec<Status> =
            columns.status.iter().map(|&k| columns.statuses[k as usize]).collect();
        assert_eq!(statuses, [Status::Failed, Status::InProgress, Status::InProgress]);
        assert_eq!(columns.statuses.len(), 2, "each status is listed once");
        assert_eq!(
            starts_and_ends(&columns),
            [(Some(2_000), Some(3_000)), (None, None), (None, None)]
        );
        assert_eq!(columns.message_count, [4, 0, 0]);
        assert_eq!(columns.tokens, [500, 0, 0]);
        assert_eq!(columns.success_criteria_compacted, [(0, "short criteria".to_owned())]);
        assert_eq!(columns.retry_of, [(2, FrameId::from_trusted("f0000000002".to_owned()))]);
        assert_eq!(columns.rolled_back_at, [(0, 4_000)]);
        assert_eq!(own_costs(&columns), [(2, 1_250)]);
        assert_eq!(columns.focus_cost, tree.focus_cost);
    }

    /// Each frame's start and end as the window reads them back from the columns.
    fn starts_and_ends(columns: &OutlineColumns) -> Vec<(Option<Timestamp>, Option<Timestamp>)> {
        let at = |from: Timestamp, units: i64| from + units * columns.time_unit;
        columns
            .started_after_base
            .iter()
            .zip(&columns.ended_after_start)
            .map(|(started, ended)| {
                let started = started.map(|s| at(columns.time_base, s));
                (started, ended.map(|e| at(started.unwrap_or(columns.time_base), e)))
            })
            .collect()
    }

    /// The own costs as (index, micro-dollars), as the window reads them back from the columns.
    fn own_costs(columns: &OutlineColumns) -> Vec<(u32, u64)> {
        let mut index = 0;
        columns
            .own_cost_steps
            .iter()
            .zip(&columns.own_costs)
            .map(|(step, micro)| {
                index += step;
                (index, *micro)
            })
            .collect()
    }

    #[test]
    fn times_are_offsets_in_seconds_when_every_time_is_a_whole_second() {
        let mut frames = Vec::new();
        let times = [
            (Some(1_767_225_600_000), Some(1_767_225_606_000)),
            (Some(1_767_225_000_000), None),
            (None, Some(1_767_225_700_000)),
            (None, None),
            (Some(1_767_225_601_000), Some(1_767_225_599_000)),
        ];
        for (i, (started, ended)) in times.iter().enumerate() {
            let mut f = frame(&format!("f{i:010}"), None, 0, Status::Completed);
            f.started_at = *started;
            f.ended_at = *ended;
            frames.push(f);
        }
        let columns = OutlineColumns::from(outline(frames.clone()));
        assert_eq!((columns.time_base, columns.time_unit), (1_767_225_000_000, 1_000));
        assert_eq!(columns.started_after_base, [Some(600), Some(0), None, None, Some(601)]);
        assert_eq!(columns.ended_after_start, [Some(6), None, Some(700), None, Some(-2)]);
        assert_eq!(starts_and_ends(&columns), times);

        // One time with milliseconds makes every time milliseconds.
        frames[3].ended_at = Some(1_767_225_000_001);
        let columns = OutlineColumns::from(outline(frames));
        assert_eq!((columns.time_base, columns.time_unit), (1_767_225_000_000, 1));
        assert_eq!(columns.started_after_base[0], Some(600_000));
        assert_eq!(columns.ended_after_start[3], Some(1));
        assert_eq!(starts_and_ends(&columns)[..3], times[..3]);
    }

    #[test]
    fn an_outline_without_times_has_a_base_of_zero() {
        let columns =
            OutlineColumns::from(outline(vec![frame("f0000000001", None, 0, Status::Planned)]));
        assert_eq!(columns.time_base, 0);
        assert_eq!(starts_and_ends(&columns), [(None, None)]);
    }

    #[test]
    fn own_costs_are_steps_from_one_costed_frame_to_the_next() {
        let mut frames = vec![frame("f0000000000", None, 0, Status::InProgress)];
        for i in 1..10u32 {
            frames.push(frame(&format!("f{i:010}"), Some("f0000000000"), i, Status::Completed));
        }
        let mut tree = outline(frames);
        for (i, micro) in [(7, 70), (2, 20), (3, 30), (0, 1)] {
            tree.own_costs.insert(FrameId::from_trusted(format!("f{i:010}")), micro);
        }
        let columns = OutlineColumns::from(tree);
        assert_eq!(columns.own_cost_steps, [0, 2, 1, 4]);
        assert_eq!(columns.own_costs, [1, 20, 30, 70]);
        assert_eq!(own_costs(&columns), [(0, 1), (2, 20), (3, 30), (7, 70)]);
    }

    #[test]
    fn a_parent_missing_from_the_tree_becomes_the_frame_itself() {
        let root = frame("f0000000001", None, 0, Status::InProgress);
        let lost = frame("f0000000002", Some("f000000000z"), 0, Status::Planned);
        let columns = OutlineColumns::from(outline(vec![root, lost]));
        assert_eq!(columns.parent, [-1, 1]);
    }

    #[test]
    fn the_columns_are_far_smaller_than_one_object_per_frame() {
        let mut frames = vec![frame("f0000000000", None, 0, Status::InProgress)];
        for i in 1..2_000u32 {
            let mut f = frame(&format!("f{i:010}"), Some("f0000000000"), i - 1, Status::Completed);
            f.started_at = Some(1_500);
            f.ended_at = Some(2_500);
            f.tokens = 1_234;
            frames.push(f);
        }
        let tree = outline(frames);
        let objects = serde_json::to_string(&tree).unwrap().len();
        let columns = serde_json::to_string(&OutlineColumns::from(tree)).unwrap().len();
        assert!(columns * 2 < objects, "{columns} bytes as columns, {objects} as objects");
    }

    /// A tree of `parents.len()` frames, frame `i` under `parents[i]`, at position `i` from the
    /// end (so siblings come in the reverse of their frames' order), weighing `i` tokens and
    /// `2 * i` messages.
    fn tree_of(parents: &[Option<usize>]) -> TreeOutline {
        let id = |i: usize| format!("f{i:010}");
        let frames = parents
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let parent = p.map(id);
                let mut f =
                    frame(&id(i), parent.as_deref(), (parents.len() - i) as u32, Status::Completed);
                f.tokens = i as u64;
                f.message_count = 2 * i as u64;
                f
            })
            .collect();
        outline(frames)
    }

    fn preview_of(tree: &TreeOutline, max_frames: usize) -> Option<OutlinePreview> {
        OutlinePreview::of(&tree.tree, &tree.frames, tree.seq, max_frames)
    }

    #[test]
    fn a_preview_holds_the_whole_levels_that_fit_and_folds_what_is_under_them() {
        // 0 ─┬─ 1 ─┬─ 3 ── 5
        //    │     └─ 4
        //    └─ 2 ── 6 ── 7
        // And 8, under a frame that is not in the tree, which no walk from the root reaches.
        let mut tree =
            tree_of(&[None, Some(0), Some(0), Some(1), Some(1), Some(3), Some(2), Some(6), None]);
        tree.frames[8].parent = Some(FrameId::from_trusted("f000000000z".to_owned()));
        // Levels end after 1, 3, 6 and 8 frames: at most 5 frames keep levels 0 and 1.
        let preview = preview_of(&tree, 5).unwrap();
        let ids: Vec<&str> = preview.columns.id.iter().map(FrameId::as_str).collect();
        assert_eq!(ids, ["f0000000000", "f0000000001", "f0000000002"], "in the frames' order");
        assert_eq!(preview.columns.parent, [-1, 0, 0]);
        assert_eq!(preview.columns.tokens, [0, 1, 2], "each frame's own tokens");
        assert_eq!(preview.whole_frames, 9);
        assert_eq!(preview.columns.seq, 7);
        assert_eq!(preview.folded.index, [1, 2]);
        assert_eq!(preview.folded.frames, [3, 2], "3, 4 and 5 under 1; 6 and 7 under 2");
        assert_eq!(preview.folded.tokens, [3 + 4 + 5, 6 + 7]);
        assert_eq!(preview.folded.messages, [2 * (3 + 4 + 5), 2 * (6 + 7)]);

        // At most 6 frames keep a level more: only 3 and 6 have children left out.
        let preview = preview_of(&tree, 6).unwrap();
        assert_eq!(preview.columns.id.len(), 6);
        assert_eq!(preview.folded.index, [3, 5], "frames 3 and 6, by index in the preview");
        assert_eq!((preview.folded.frames, preview.folded.tokens), (vec![1, 1], vec![5, 7]));
    }

    #[test]
    fn there_is_no_preview_of_the_root_alone_nor_of_a_tree_that_fits_whole() {
        let tree = tree_of(&[None, Some(0), Some(0), Some(1)]);
        assert_eq!(preview_of(&tree, 2), None, "the root's children do not fit");
        assert_eq!(preview_of(&tree, 4), None, "every frame fits");
        assert!(preview_of(&tree, 3).is_some());
        assert_eq!(preview_of(&tree_of(&[Some(0)]), 10), None, "no root");
    }

    /// The window lays a preview out with its folded weights added to the frames they hang from
    /// (`ui/src/outline.ts`), and must put every frame of it where the whole outline's layout puts
    /// it. Both sides check `ui/src/outline-preview.cases.json`: this test writes a tree's whole
    /// columns and its preview (with `FLAME_BLESS` set, as `make bless` runs it) or fails when the
    /// file says otherwise, and the window's test lays both out and compares.
    #[test]
    fn the_window_s_preview_cases_are_what_rust_writes() {
        #[derive(Serialize)]
        struct Case {
            whole: OutlineColumns,
            preview: OutlinePreview,
        }
        // A tree of 120 frames, each under one of the frames before it, with some siblings at
        // the same position, as a tree whose frames were moved may have them.
        let mut seed = 7u64;
        let mut next = |below: usize| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as usize % below
        };
        let parents: Vec<Option<usize>> =
            (0..120).map(|i| (i > 0).then(|| if i < 4 { i - 1 } else { next(i) })).collect();
        let mut tree = tree_of(&parents);
        for f in &mut tree.frames {
            f.position = next(4) as u32;
            f.tokens = (next(1_000) * next(3)) as u64;
            f.message_count = next(7) as u64;
        }
        let preview = preview_of(&tree, 40).unwrap();
        assert!(!preview.folded.index.is_empty());
        let case = Case { whole: tree.into(), preview };
        let written = serde_json::to_string(&case).unwrap() + "\n";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../ui/src/outline-preview.cases.json");
        if std::env::var_os("FLAME_BLESS").is_some() {
            std::fs::write(&path, &written).unwrap();
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            kept == written,
            "{} is not what Rust writes (run `make bless` if the change is intended)",
            path.display()
        );
    }
}
