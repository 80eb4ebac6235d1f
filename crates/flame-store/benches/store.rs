//! The store's speed on a large tree: 100k frames and 1M messages (override with
//! FLAME_BENCH_FRAMES and FLAME_BENCH_MESSAGES). Prints one `BENCH <name> <value> <unit>` line
//! per figure, for `make bench`.
//!
//! Targets (issue "The frame tree"): import ≥ 100k rows/s; one message commit ≤ 1 ms median;
//! loading a whole tree ≤ 100 ms; a frame's ancestors with their children ≤ 1 ms.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::{Duration, Instant};

use flame_model::{Actor, Frame, FrameId, IdSource, NewMessage, Role, Status, Tree};
use flame_store::{Change, ImportedMessage, Store};

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn bench(name: &str, value: f64, unit: &str) {
    println!("BENCH {name} {value:.3} {unit}");
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// A deterministic random tree: a chain of in-progress frames from the root to the focus
/// (depth 12), and completed frames hung under random earlier frames (mean depth ~ln n).
fn generate(frame_count: usize, message_count: usize) -> (Tree, Vec<Frame>, Vec<ImportedMessage>) {
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
                tokens: flame_model::estimate_tokens(&text),
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
    };
    (tree, frames, messages)
}

fn main() {
    let frame_count = env_count("FLAME_BENCH_FRAMES", 100_000);
    let message_count = env_count("FLAME_BENCH_MESSAGES", 1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
    let (tree, frames, messages) = generate(frame_count, message_count);
    let change = Change { actor: Actor::Cli, at: 1 };

    let started = Instant::now();
    store.import_tree(change, &tree, &frames, &messages).unwrap();
    let import = started.elapsed();
    bench(
        "store.import_rows_per_s",
        (frame_count + message_count) as f64 / import.as_secs_f64(),
        "rows/s",
    );
    bench("store.import_total", import.as_secs_f64(), "s");

    // One message commit: insert, counters, event and pending-log row, in one transaction.
    let focus: &FrameId = &tree.focus;
    let mut commits = Vec::with_capacity(2000);
    for i in 0..2000 {
        let message = NewMessage::text(
            Role::User,
            format!("message {i} in the focused frame of a large tree"),
        );
        let started = Instant::now();
        store
            .add_message(Change { actor: Actor::Person, at: 10 + i }, focus, &message, 12)
            .unwrap();
        commits.push(started.elapsed());
    }
    commits.sort();
    bench("store.message_commit_median", micros(percentile(&commits, 0.5)), "us");
    bench("store.message_commit_p95", micros(percentile(&commits, 0.95)), "us");

    let mut loads = Vec::new();
    for _ in 0..15 {
        let started = Instant::now();
        let loaded = store.outline_of_tree(&tree.id).unwrap();
        loads.push(started.elapsed());
        assert_eq!(loaded.len(), frame_count);
    }
    loads.sort();
    bench("store.load_tree_outline_median", percentile(&loads, 0.5).as_secs_f64() * 1e3, "ms");
    let started = Instant::now();
    assert_eq!(store.frames_of_tree(&tree.id).unwrap().len(), frame_count);
    bench("store.load_tree_full", started.elapsed().as_secs_f64() * 1e3, "ms");

    // The deepest frame has the longest path, so the most ancestors and children to read.
    let (deepest, depth) = deepest_frame(&frames);
    let mut paths = Vec::new();
    for _ in 0..2000 {
        let started = Instant::now();
        let read = store.path_with_children(&deepest).unwrap();
        paths.push(started.elapsed());
        assert!(!read.is_empty());
    }
    paths.sort();
    bench("store.path_with_children_median", micros(percentile(&paths, 0.5)), "us");
    bench("store.path_with_children_p95", micros(percentile(&paths, 0.95)), "us");
    let read = store.path_with_children(&deepest).unwrap().len();
    eprintln!("(deepest frame: depth {depth}, {read} frames read for its path and their children)");
}

/// The deepest frame and its depth. Frames are generated parents first, so one pass suffices.
fn deepest_frame(frames: &[Frame]) -> (FrameId, usize) {
    let index: std::collections::HashMap<_, _> =
        frames.iter().enumerate().map(|(i, f)| (&f.id, i)).collect();
    let mut depths = vec![0usize; frames.len()];
    for (i, frame) in frames.iter().enumerate() {
        depths[i] = frame.parent.as_ref().map_or(0, |p| depths[index[p]] + 1);
    }
    let (i, depth) = depths.iter().enumerate().max_by_key(|(_, d)| **d).unwrap();
    (frames[i].id.clone(), *depth)
}
