//! Synthetic trees for benchmarks: large, deterministic, and valid by construction; and one
//! write behind the events' back, for tests of what front ends keep between reads.

use flame_model::{Frame, FrameId, IdSource, NewMessage, Role, Status, Tree, Usage};

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
            // About four bytes a token: the generated text only needs plausible counts.
            let tokens = (text.len() as u64).div_ceil(4);
            let mut message =
                NewMessage::text(if i % 2 == 0 { Role::User } else { Role::Assistant }, text);
            // Replies record usage, as a model's do, so costs have something to add up; taken
            // from the index, not the generator, so the trees are the same as before they had it.
            if i % 2 == 1 {
                message.model =
                    Some(["claude-sonnet-4-5", "gpt-4o", "llama3.1:8b"][i / 2 % 3].to_owned());
                message.usage = Some(Usage {
                    input_tokens: 1_000 + (i as u64 % 997),
                    output_tokens: tokens,
                    cache_read_tokens: 20_000 + (i as u64 % 7_919),
                    cache_write_tokens: i as u64 % 1_009,
                    ..Usage::default()
                });
            }
            ImportedMessage { frame: rng.usize(0..frame_count), tokens, message, at: i as i64 }
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

/// Sets frame `id`'s title in the database at `path` without recording an event, which nothing
/// in Flame does: a test can then tell a read kept from before the write (which shows the old
/// title) from a fresh one.
pub fn retitle_without_event(
    path: &std::path::Path,
    id: &FrameId,
    title: &str,
) -> Result<(), crate::StoreError> {
    let connection = rusqlite::Connection::open(path)?;
    connection.execute("UPDATE frames SET title = ?1 WHERE id = ?2", (title, id.as_str()))?;
    Ok(())
}

/// Another program's hold on an SQLite database, for tests of reading a database its owner has
/// locked (OpenCode writing or migrating `opencode.db`): a connection in an exclusive
/// transaction, released when dropped.
#[derive(Debug)]
pub struct HeldDatabase {
    conn: rusqlite::Connection,
}

impl HeldDatabase {
    /// Takes an exclusive lock on the database at `path`: no other connection reads it until
    /// this is dropped.
    pub fn exclusive(path: &std::path::Path) -> rusqlite::Result<HeldDatabase> {
        let conn = rusqlite::Connection::open(path)?;
        conn.execute_batch(
            "PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = DELETE; BEGIN EXCLUSIVE;",
        )?;
        Ok(HeldDatabase { conn })
    }

    /// Runs `sql` on the database at `path` (a test making a database in another program's
    /// shape, or half-migrated).
    pub fn run(path: &std::path::Path, sql: &str) -> rusqlite::Result<()> {
        rusqlite::Connection::open(path)?.execute_batch(sql)
    }
}

impl Drop for HeldDatabase {
    fn drop(&mut self) {
        // The lock goes with the connection anyway.
        let _ = self.conn.execute_batch("ROLLBACK;");
    }
}
