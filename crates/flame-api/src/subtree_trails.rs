//! The files each finished frame's subtree touched, as context assembly lists them, kept between
//! assemblies.
//!
//! A context shows every finished child of the frames on the focus's path, and each lists the
//! files its whole subtree read and changed. Those subtrees together are most of a large tree:
//! in a 100k-frame tree, `Store::subtree_file_trails` walks about every frame and every trail row,
//! close to a second, while the rest of an assembly takes a fraction of a millisecond. A chat
//! assembles a context before every model call, and a finished frame's subtree seldom changes,
//! so the subtree trails of the tree last asked about are kept with the event seq they were read
//! at.
//!
//! Every write to the store records events in the same transaction, so the events since the seq
//! say what may have changed, in this process or another. A trail row is written only with a
//! message (`add_tool_result`, recording `message_added` on its frame) or by an import or a
//! deletion of a whole tree; a frame joins a subtree only by being created under a frame, which
//! records an event on it. So an event on frame X can change only the subtrees of X and its
//! ancestors, and those are read again when next asked. Events that move or delete frames, or
//! name a frame that is gone, start over, as do more events than [`MAX_EVENTS_FOLLOWED`].

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

use flame_model::{EventKind, FileTrail, FrameId, TreeId};
use flame_store::{Store, StoreError};

use crate::MAX_EVENTS_FOLLOWED;
use crate::path_frames::Followed;

/// How many frames' subtree trails are kept; past it they are read again from the start.
const MAX_KEPT_FRAMES: usize = 10_000;

/// The subtree trails of the tree last asked about, kept up to date.
#[derive(Debug, Default)]
pub(crate) struct SubtreeTrails(Mutex<Option<KeptTrails>>);

#[derive(Debug)]
struct KeptTrails {
    tree: TreeId,
    /// Every event up to this one is reflected in `by_frame`.
    seq: i64,
    /// Each frame asked about, with its subtree's trail (empty when the subtree touched no file).
    by_frame: HashMap<FrameId, FileTrail>,
}

impl KeptTrails {
    fn new(store: &Store, tree: &TreeId) -> Result<KeptTrails, StoreError> {
        // Read before any trail, so a change made meanwhile is followed next time, not missed.
        let seq = store.latest_event_seq()?;
        Ok(KeptTrails { tree: tree.clone(), seq, by_frame: HashMap::new() })
    }
}

impl SubtreeTrails {
    /// Runs `with` on the subtree trails of `frames` (frames of tree `tree`) as the store has
    /// them now: a map holding an entry for each of them (and maybe other frames, which the
    /// caller ignores), an empty trail for a subtree that touched no file. The same as
    /// `Store::subtree_file_trails(frames)` but for those empty entries.
    ///
    /// `followed`, when given, holds every event after some seq, which the trails follow
    /// instead of reading them again when they were read at that seq.
    pub(crate) fn with<T>(
        &self,
        store: &Store,
        tree: &TreeId,
        frames: &[FrameId],
        followed: Option<&Followed>,
        with: impl FnOnce(&HashMap<FrameId, FileTrail>) -> T,
    ) -> Result<T, StoreError> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut trails = match kept.take() {
            Some(trails) if trails.tree == *tree => follow(store, trails, followed)?,
            _ => KeptTrails::new(store, tree)?,
        };
        let missing: Vec<FrameId> =
            frames.iter().filter(|f| !trails.by_frame.contains_key(*f)).cloned().collect();
        if !missing.is_empty() {
            if trails.by_frame.len() + missing.len() > MAX_KEPT_FRAMES {
                trails.by_frame.clear();
            }
            let mut read = store.subtree_file_trails(&missing)?;
            for frame in missing {
                let trail = read.remove(&frame).unwrap_or_default();
                trails.by_frame.insert(frame, trail);
            }
        }
        let result = with(&trails.by_frame);
        *kept = Some(trails);
        Ok(result)
    }
}

/// `trails` brought up to date with the events since they were read: the kept frames an event
/// may have changed are forgotten, to be read again when asked.
fn follow(
    store: &Store,
    mut trails: KeptTrails,
    followed: Option<&Followed>,
) -> Result<KeptTrails, StoreError> {
    let read;
    let events = match followed {
        Some(followed) if followed.after == trails.seq => &followed.events,
        _ => {
            read = store.events_since(trails.seq, MAX_EVENTS_FOLLOWED + 1)?;
            &read
        }
    };
    if events.len() > MAX_EVENTS_FOLLOWED as usize {
        return KeptTrails::new(store, &trails.tree);
    }
    let Some(last) = events.last().map(|e| e.seq) else { return Ok(trails) };
    let mut named: HashSet<&FrameId> = HashSet::new();
    for event in events.iter().filter(|e| e.tree == trails.tree) {
        match event.kind {
            // A frame left its parent, or frames left the tree: the subtrees they were under
            // are no longer known from the frames that remain.
            EventKind::Moved
            | EventKind::Deleted
            | EventKind::TreeDeleted
            | EventKind::Imported => {
                return KeptTrails::new(store, &trails.tree);
            }
            _ => {
                named.insert(&event.frame);
            }
        }
    }
    if !trails.by_frame.is_empty() {
        for frame in named {
            // A frame on the focus's path has the rest of the path as its ancestors, as they
            // are now (`Followed`); others are read.
            let on_path = followed.and_then(|f| f.path.iter().position(|id| id == frame));
            let ids = match (on_path, followed) {
                (Some(at), Some(followed)) => followed.path[at..].to_vec(),
                _ => store.frame_and_ancestor_ids(frame)?,
            };
            if ids.is_empty() {
                return KeptTrails::new(store, &trails.tree);
            }
            for id in &ids {
                trails.by_frame.remove(id);
            }
        }
    }
    trails.seq = last;
    Ok(trails)
}
