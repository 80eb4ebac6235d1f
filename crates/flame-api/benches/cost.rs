//! Frame costs on a large tree: a 100k-frame, 1M-message tree (half the messages replies with
//! usage, over three models), lowered with FLAME_BENCH_FRAMES and FLAME_BENCH_MESSAGES. The
//! outline the graph reloads after every change carries every frame's own cost, worked out with
//! the rest of each frame's cost (kept for the frames' costs read one at a time): measured read
//! whole (the first time, or after many changes) and brought up to date after one reply (every
//! time after); and the outline by columns as the window receives it, made and written as JSON,
//! with its size. Prints `BENCH <name> <value> <unit>` lines.

#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use flame_api::{DataDir, Env, Flame};
use flame_model::{Actor, NewMessage, Role, Usage};
use flame_store::{Change, Store};

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
    let open = || Flame::open_with(home.clone(), Env::fixed(1_795_307_601_000, 5)).unwrap();
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
}
