//! The outline as the window receives it: [`TreeOutline`] one column per field.
//!
//! The web view's IPC costs time for every byte it carries (WebKitGTK hands a response to the
//! page in 8 KiB pieces), and an outline of one object per frame repeats every field's name for
//! every frame: at 100k frames the objects were 31 MB of JSON where the columns are about a
//! third of that. The window turns the columns back into the same [`TreeOutline`]
//! (`ui/src/outline.ts`), so nothing is lost on the way.

use std::collections::HashMap;

use flame_model::cost::FrameCost;
use flame_model::{FrameId, FrameOutline, Status, Timestamp, Tree};
use serde::Serialize;

use crate::frames::TreeOutline;

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
    pub started_at: Vec<Option<Timestamp>>,
    pub ended_at: Vec<Option<Timestamp>>,
    pub message_count: Vec<u64>,
    pub tokens: Vec<u64>,
    pub success_criteria_compacted: Vec<(u32, String)>,
    pub retry_of: Vec<(u32, FrameId)>,
    pub rolled_back_at: Vec<(u32, Timestamp)>,
    /// [`TreeOutline::own_costs`]: what each frame's own replies cost at known prices, in
    /// micro-dollars, for the frames where that is more than nothing.
    pub own_costs: Vec<(u32, u64)>,
    /// The focused frame's whole cost; null when its subtree recorded no usage.
    pub focus_cost: Option<FrameCost>,
}

impl From<TreeOutline> for OutlineColumns {
    fn from(outline: TreeOutline) -> OutlineColumns {
        let TreeOutline { tree, frames, seq, own_costs, focus_cost } = outline;
        let n = frames.len();
        let index: HashMap<&FrameId, usize> =
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
            started_at: frames.iter().map(|f| f.started_at).collect(),
            ended_at: frames.iter().map(|f| f.ended_at).collect(),
            message_count: frames.iter().map(|f| f.message_count).collect(),
            tokens: frames.iter().map(|f| f.tokens).collect(),
            success_criteria_compacted: Vec::with_capacity(criteria.len()),
            retry_of: Vec::with_capacity(retries.len()),
            rolled_back_at: Vec::with_capacity(rolled_back.len()),
            own_costs: own,
            focus_cost,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(id: &str, parent: Option<&str>, position: u32, status: Status) -> FrameOutline {
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
            id: flame_model::TreeId::from_trusted("t0000000000".to_owned()),
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
        assert_eq!(columns.started_at, [Some(2_000), None, None]);
        assert_eq!(columns.ended_at, [Some(3_000), None, None]);
        assert_eq!(columns.message_count, [4, 0, 0]);
        assert_eq!(columns.tokens, [500, 0, 0]);
        assert_eq!(columns.success_criteria_compacted, [(0, "short criteria".to_owned())]);
        assert_eq!(columns.retry_of, [(2, FrameId::from_trusted("f0000000002".to_owned()))]);
        assert_eq!(columns.rolled_back_at, [(0, 4_000)]);
        assert_eq!(columns.own_costs, [(2, 1_250)]);
        assert_eq!(columns.focus_cost, tree.focus_cost);
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
