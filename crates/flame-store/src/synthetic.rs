//! Synthetic trees for benchmarks: large, deterministic, and valid by construction.

use flame_model::{Frame, FrameId, IdSource, NewMessage, Role, Status, Tree};

use crate::ImportedMessage;

/// A deterministic random tree: a chain of in-progress frames from the root to the focus
/// (depth 12), and completed frames hung under random earlier frames (mean depth ~ln n).
pub fn tree(frame_count: usize, message_count: usize) -> (Tree, Vec<Frame>, Vec<ImportedMessage>) {
    let mut ids = IdSource::seeded(2026);
    let mut rng = fastrand::Rng::with_seed(11);
    let tree_id = ids.tree_id();
    let mut frames: Vec<Frame> = Vec::with_capacity(frame_count);
    let mut child_counts: Vec<u32> = Vec::with_capacity(frame_count);
    let chain = 12.min(frame_count);
    for i in 0..frame_count {
        let parent = match i {
            0 => None,
            i if i < chain => Some(i - 1),
            i => Some(rng.usize(0..i)),
        };
        let position = parent.map_or(0, |p| {
            child_counts[p] += 1;
            child_counts[p] - 1
        });
        child_counts.push(0);
        let in_progress = i < chain;
        let mut frame = Frame::new(
            ids.frame_id(),
            tree_id.clone(),
            parent.map(|p| frames[p].id.clone()),
            position,
            format!("Frame {i}"),
            format!("Criteria of frame {i}, concrete and verifiable"),
            if in_progress { Status::InProgress } else { Status::Completed },
            i as i64,
        );
        frame.results = (!in_progress).then(|| format!("Results of frame {i}"));
        frames.push(frame);
    }
    let words = [
        "frame", "context", "token", "stack", "result", "criteria", "model", "tree", "push", "pop",
    ];
    let messages = (0..message_count)
        .map(|i| {
            let text: Vec<&str> = (0..30).map(|_| words[rng.usize(0..words.len())]).collect();
            let text = text.join(" ");
            ImportedMessage {
                frame: rng.usize(0..frame_count),
                // About four bytes a token: the generated text only needs plausible counts.
                tokens: (text.len() as u64).div_ceil(4),
                message: NewMessage::text(
                    if i % 2 == 0 { Role::User } else { Role::Assistant },
                    text,
                ),
                at: i as i64,
            }
        })
        .collect();
    let focus = frames[chain - 1].id.clone();
    let tree = Tree {
        id: tree_id,
        title: "Bench".into(),
        root: frames[0].id.clone(),
        focus,
        created_at: 0,
        workspace: None,
    };
    (tree, frames, messages)
}

/// The deepest frame and its depth. Frames come parents first, so one pass suffices.
pub fn deepest_frame(frames: &[Frame]) -> (FrameId, usize) {
    let index: std::collections::HashMap<_, _> =
        frames.iter().enumerate().map(|(i, f)| (&f.id, i)).collect();
    let mut depths = vec![0usize; frames.len()];
    for (i, frame) in frames.iter().enumerate() {
        depths[i] = frame.parent.as_ref().map_or(0, |p| depths[index[p]] + 1);
    }
    let (i, depth) = depths.iter().enumerate().max_by_key(|(_, d)| **d).expect("a tree has a root");
    (frames[i].id.clone(), *depth)
}
