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

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use flame_model::cost::FrameCost;
use flame_model::{FrameId, FrameOutline, Status, Timestamp, Tree, TreeId};
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::frames::TreeOutline;
use crate::{ApiError, Flame};

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

    /// Reads the current tree's outline (and the usage it prices) ahead of the window's first
    /// ask for it, `outline_columns(None)`, which takes it if nothing was recorded since. A front
    /// end calls this as its window starts. Nothing is read when there is no current tree or the
    /// first ask came already.
    pub fn read_outline_ahead(&self) -> Result<(), ApiError> {
        let mut kept = self.outline_ahead.kept.lock().unwrap_or_else(|p| p.into_inner());
        if self.outline_ahead.asked.load(Ordering::SeqCst) || self.store().current_tree()?.is_none()
        {
            return Ok(());
        }
        *kept = Some(self.outline(None)?.into());
        Ok(())
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
}
