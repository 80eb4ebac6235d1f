//! The frames a context shows (the focus's path and every child of each frame on it), kept
//! between assemblies with the log paths it names.
//!
//! Reading them walks the parent index and decodes a row for each of about a hundred frames,
//! and naming their logs checks a file for each: together most of what an assembly cost once
//! the rest was kept. A chat assembles before every model call, and between two calls the
//! frames seldom change: what a chat writes is messages.
//!
//! Every write to the store records events in the same transaction (`subtree_trails.rs`), and a
//! `message_added` event changes no field of a frame a context shows (a frame's message count
//! and tokens change, which a context does not show) and never the tree's workspace. So the
//! frames of the focus last asked about are kept with the event seq they were read at, and are
//! read again when any other event of their tree has been recorded since, or more events than
//! [`MAX_EVENTS_FOLLOWED`]. Every write that changes what a context shows records an event, a
//! frame's compacted criteria too (`criteria_compacted`).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use flame_model::{Event, EventKind, Frame, FrameError, FrameId, TreeId};
use flame_store::{Store, StoreError};

use crate::{MAX_EVENTS_FOLLOWED, frame_log};

/// The parts of the contexts assembled, kept for the next assembly, with the event seq the
/// frames they were assembled from were read at.
#[derive(Debug, Default)]
pub(crate) struct KeptContext {
    pub parts: flame_context::KeptParts,
    /// The seq of the frames the last assembly was given; `None` after an assembly that failed.
    pub assembled_at: Option<i64>,
}

impl KeptContext {
    /// Tells the kept parts that the frames are those of the last assembly, when they are: the
    /// last assembly was given the frames as they were at `followed.after`, and every event
    /// of the tree since is a message added to the focus, which changes no frame shown (the
    /// focus's own trail is listed by no frame shown: only its ancestors' subtrees hold it).
    pub fn trust_unchanged(&mut self, followed: Option<&Followed>, shown: &ShownFrames) {
        if let Some(followed) = followed
            && self.assembled_at == Some(followed.after)
            && followed.events.iter().all(|e| e.tree != shown.tree || e.frame == shown.focus)
        {
            self.parts.trust_frames_unchanged();
        }
    }
}

/// The frames shown in the context of the focus last asked about, kept up to date.
#[derive(Debug, Default)]
pub(crate) struct PathFrames(Mutex<Option<ShownFrames>>);

/// What a context of `focus` shows of its tree, as the store had it at event `seq`.
#[derive(Debug)]
pub(crate) struct ShownFrames {
    pub focus: FrameId,
    pub tree: TreeId,
    /// Every event up to this one is reflected here.
    pub seq: i64,
    /// The frames on the path from the root to the focus, and every child of each of them.
    pub frames: Vec<Frame>,
    /// The focus and its ancestors' ids, the focus first.
    pub path: Vec<FrameId>,
    /// Those of them that are finished, which list their subtrees' files.
    pub finished: Vec<FrameId>,
    /// The logs of the focus and the finished frames, each written if it was not.
    pub log_paths: HashMap<FrameId, String>,
    /// The tree's workspace folder.
    pub workspace: Option<String>,
}

impl PathFrames {
    /// Runs `with` on what a context of `focus` shows, as the store has it now (the same as
    /// reading it afresh), and the events followed to know it, when they were read.
    pub(crate) fn with<T>(
        &self,
        store: &Store,
        data_dir: &Path,
        focus: &FrameId,
        with: impl FnOnce(&ShownFrames, Option<&Followed>) -> T,
    ) -> Result<T, StoreError> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (shown, followed) = match kept.take() {
            Some(mut shown) if shown.focus == *focus => match follow(store, &mut shown)? {
                Some(followed) => (shown, Some(followed)),
                None => (read(store, data_dir, focus)?, None),
            },
            _ => (read(store, data_dir, focus)?, None),
        };
        let result = with(&shown, followed.as_ref());
        *kept = Some(shown);
        Ok(result)
    }
}

/// Every event after seq `after`, oldest first: what the kept frames were brought up to date
/// with, for the subtree trails to follow too (reading them is most of a call's own cost). None
/// of the tree's events but `message_added`, so no frame moved, and none was deleted.
#[derive(Debug)]
pub(crate) struct Followed {
    pub after: i64,
    pub events: Vec<Event>,
    /// The focus and its ancestors, the focus first and the root last, as they are now.
    pub path: Vec<FrameId>,
}

/// The events since `shown` was read, `shown` brought up to the latest of them, when they
/// leave it what the store holds; `None` when it must be read again.
fn follow(store: &Store, shown: &mut ShownFrames) -> Result<Option<Followed>, StoreError> {
    let events = store.events_since(shown.seq, MAX_EVENTS_FOLLOWED + 1)?;
    // A frame never leaves its tree, so only the tree's own events can change what it shows.
    if events.len() > MAX_EVENTS_FOLLOWED as usize
        || events.iter().any(|e| e.tree == shown.tree && e.kind != EventKind::MessageAdded)
    {
        return Ok(None);
    }
    let after = shown.seq;
    if let Some(last) = events.last() {
        shown.seq = last.seq;
    }
    Ok(Some(Followed { after, events, path: shown.path.clone() }))
}

/// What a context of `focus` shows, read from the store, its logs written where they are not.
fn read(store: &Store, data_dir: &Path, focus: &FrameId) -> Result<ShownFrames, StoreError> {
    // Read before the frames, so a change made meanwhile is seen next time, not missed.
    let seq = store.latest_event_seq()?;
    let frames = store.path_with_children(focus)?;
    let tree = frames
        .iter()
        .find(|f| f.id == *focus)
        .map(|f| f.tree.clone())
        .ok_or_else(|| FrameError::NoSuchFrame(focus.clone()))?;
    // A context names the logs of the focus and of the finished frames it shows. An agent
    // outside Flame may open those paths directly, so a log an import left unwritten is
    // written now (one file check each when it exists); a log once written stays until its
    // tree is deleted, which is an event.
    let log_paths: HashMap<FrameId, String> = frames
        .iter()
        .filter(|f| f.id == *focus || f.status.is_finished())
        .map(|f| {
            frame_log::ensure_or_warn(store, data_dir, &f.tree, &f.id);
            (f.id.clone(), frame_log::log_path(data_dir, &f.tree, &f.id).display().to_string())
        })
        .collect();
    // Only a finished frame lists files, and it lists what its whole subtree touched: the
    // frames under a finished sibling are not shown, and their files would be lost.
    let finished = frames.iter().filter(|f| f.status.is_finished()).map(|f| f.id.clone()).collect();
    let workspace = store.tree(&tree)?.workspace;
    let parents: HashMap<&FrameId, Option<&FrameId>> =
        frames.iter().map(|f| (&f.id, f.parent.as_ref())).collect();
    let mut path = vec![focus.clone()];
    while let Some(Some(parent)) = parents.get(&path[path.len() - 1]) {
        path.push((*parent).clone());
    }
    Ok(ShownFrames {
        focus: focus.clone(),
        tree,
        seq,
        frames,
        path,
        finished,
        log_paths,
        workspace,
    })
}
