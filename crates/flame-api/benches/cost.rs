//! Frame costs on a large tree: a 100k-frame, 1M-message tree (half the messages replies with
//! usage, over three models), lowered with FLAME_BENCH_FRAMES and FLAME_BENCH_MESSAGES. The
//! outline the graph reloads after every change carries every frame's own cost, worked out with
//! the rest of each frame's cost (kept for the frames' costs read one at a time): measured read
//! whole (the first time, or after many changes) and brought up to date after one reply (every
//! time after); the outline by columns as the window receives it, made and written as JSON,
//! with its size; and the memory a `Flame` keeps once it has read a tree's outline (the tree's
//! usage, kept to follow it) and once it has read a frame's cost (every frame's, kept for the
//! next), counted by this benchmark's allocator; and the preview of the tree's top levels made
//! from its frames' rows, with its size. Prints
//! `BENCH <name> <value> <unit>` lines.

#![allow(clippy::print_stdout)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use flame_api::{DataDir, Env, Flame, FlameConfig, OutlinePreview};
use flame_model::{Actor, NewMessage, Role, Usage};
use flame_store::{Change, Store};

/// The system's allocator, counting the bytes allocated and not yet freed.
struct Counting;

static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to the system's allocator unchanged; only a count is kept.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's promises about `layout` are passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `System` with `layout`, as the caller promises.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

fn main() {
    let frames = env_count("FLAME_BENCH_FRAMES", 100_000);
    let messages = env_count("FLAME_BENCH_MESSAGES", 1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let (tree, all_frames, all_messages) = flame_store::synthetic::tree(frames, messages);
    let focus = tree.focus.clone();
    {
        let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
        store
            .import_tree(Change { actor: Actor::Cli, at: 1 }, &tree, &all_frames, &all_messages)
            .unwrap();
    }
    drop(all_messages);
    let home = DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
    let open = || {
        Flame::open_with(home.clone(), FlameConfig::default(), Env::fixed(1_795_307_601_000, 5))
            .unwrap()
    };
    let flame = open();

    // Read whole: a Flame that has kept nothing, each time.
    let whole: Vec<Duration> = (0..5)
        .map(|_| {
            let fresh = open();
            let started = Instant::now();
            let outline = fresh.outline(Some(&tree.id)).unwrap();
            let elapsed = started.elapsed();
            assert!(!outline.own_costs.is_empty());
            elapsed
        })
        .collect();
    println!("BENCH cost.outline_read_whole_median {:.3} ms", median(whole));

    // What a Flame keeps of a tree it read the outline of, the outline itself dropped: the
    // tree's usage (SQLite's page cache is not counted: SQLite allocates it with C's malloc).
    let fresh = open();
    let before = LIVE_BYTES.load(Ordering::Relaxed);
    drop(fresh.outline(Some(&tree.id)).unwrap());
    let kept = LIVE_BYTES.load(Ordering::Relaxed).saturating_sub(before);
    println!("BENCH cost.kept_after_outline {:.1} MiB", kept as f64 / (1024.0 * 1024.0));
    // And once one frame's whole cost was read (the graph's tooltip), which works out and keeps
    // every frame's.
    fresh.frame_cost(&focus).unwrap();
    let kept = LIVE_BYTES.load(Ordering::Relaxed).saturating_sub(before);
    println!("BENCH cost.kept_after_frame_cost {:.1} MiB", kept as f64 / (1024.0 * 1024.0));
    // A frame's cost once the shape is kept: the root's (its subtree is the whole tree) and the
    // focus's, as the tooltip reads them.
    let root = tree.root.clone();
    for (name, frame) in [("root", &root), ("focus", &focus)] {
        let times: Vec<Duration> = (0..5)
            .map(|_| {
                let started = Instant::now();
                fresh.frame_cost(frame).unwrap();
                started.elapsed()
            })
            .collect();
        println!("BENCH cost.frame_cost_{name}_median {:.3} ms", median(times));
    }
    drop(fresh);

    // After one more reply, as the graph reloads while an agent works.
    flame.outline(Some(&tree.id)).unwrap();
    let followed: Vec<Duration> = (0..50)
        .map(|i| {
            let mut reply = NewMessage::text(Role::Assistant, format!("reply {i}"));
            reply.model = Some("claude-sonnet-4-5".to_owned());
            reply.usage =
                Some(Usage { input_tokens: 1_000, output_tokens: 100, ..Usage::default() });
            flame.add_message(Actor::Agent, &focus, &reply).unwrap();
            let started = Instant::now();
            let outline = flame.outline(Some(&tree.id)).unwrap();
            let elapsed = started.elapsed();
            assert!(outline.own_costs.contains_key(&focus));
            elapsed
        })
        .collect();
    println!("BENCH cost.outline_after_a_reply_median {:.3} ms", median(followed));
    // The outline alone, for comparison: what the costs add to it.
    let plain: Vec<Duration> = (0..15)
        .map(|_| {
            let store = Store::open(&dir.path().join("flame.db")).unwrap();
            let started = Instant::now();
            store.outline_of_tree(&tree.id).unwrap();
            started.elapsed()
        })
        .collect();
    println!("BENCH cost.outline_rows_only_median {:.3} ms", median(plain));
    // What the window receives: the outline by columns, as JSON.
    let mut bytes = 0;
    let json: Vec<Duration> = (0..5)
        .map(|_| {
            let started = Instant::now();
            let columns = flame.outline_columns(Some(&tree.id)).unwrap();
            bytes = serde_json::to_string(&columns).unwrap().len();
            started.elapsed()
        })
        .collect();
    println!("BENCH cost.outline_columns_json_median {:.3} ms", median(json));
    println!("BENCH cost.outline_columns_json_size {:.1} MB", bytes as f64 / 1e6);
    // The preview the window draws while the whole outline comes, made from the frames' rows,
    // and its size as the window receives it.
    let tree_row = flame.tree(&tree.id).unwrap();
    let store = Store::open(&dir.path().join("flame.db")).unwrap();
    let frames = store.outline_of_tree(&tree.id).unwrap();
    let mut bytes = 0;
    let made: Vec<Duration> = (0..15)
        .map(|_| {
            let started = Instant::now();
            let preview =
                OutlinePreview::of(&tree_row, &frames, 0, flame_api::PREVIEW_MAX_FRAMES).unwrap();
            let elapsed = started.elapsed();
            bytes = serde_json::to_string(&preview).unwrap().len();
            elapsed
        })
        .collect();
    println!("BENCH cost.outline_preview_median {:.3} ms", median(made));
    println!("BENCH cost.outline_preview_json_size {:.1} MB", bytes as f64 / 1e6);
}
