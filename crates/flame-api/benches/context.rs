//! Context assembly for the deepest in-progress frame of a 100k-frame, 1M-message tree with a
//! 128k budget (issue "Context assembly": p95 ≤ 5 ms). The tree's counts can be lowered with
//! FLAME_BENCH_FRAMES and FLAME_BENCH_MESSAGES. Prints `BENCH <name> <value> <unit>` lines.

#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use flame_api::{Budget, DataDir, Env, Flame};
use flame_model::{Actor, NewMessage, Role};
use flame_store::{Change, Store};

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
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
        // A focused frame with a real conversation: 200 messages of a few hundred tokens.
        for i in 0..200 {
            let text = format!(
                "message {i}: {}",
                "the work in this frame goes on, step by step. ".repeat(40)
            );
            let tokens = flame_tokens::count(flame_tokens::Encoding::O200kBase, &text);
            store
                .add_message(
                    Change { actor: Actor::Agent, at: 2 + i },
                    &focus,
                    &NewMessage::text(Role::Assistant, text),
                    tokens,
                )
                .unwrap();
        }
    }
    drop(all_messages);
    // Opening writes the logs of every imported frame once; that is import's cost, not this one's.
    let home = DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
    let flame = Flame::open_with(home, Env::fixed(1_795_307_601_000, 3)).unwrap();
    flame_tokens::warm_up();

    let budget = Budget { context_window: 128_000, reply_reserve: 0, tool_schemas: 0 };
    let mut times: Vec<Duration> = (0..300)
        .map(|_| {
            let started = Instant::now();
            let doc = flame.context(Some(&focus), Some(budget)).unwrap();
            let elapsed = started.elapsed();
            assert!(doc.report.fits);
            elapsed
        })
        .collect();
    times.sort();
    let at = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e3;
    println!("BENCH context.assemble_100k_median {:.3} ms", at(0.5));
    println!("BENCH context.assemble_100k_p95 {:.3} ms", at(0.95));

    let tight = Budget { context_window: 20_000, reply_reserve: 0, tool_schemas: 0 };
    let started = Instant::now();
    let doc = flame.context(Some(&focus), Some(tight)).unwrap();
    println!("BENCH context.assemble_tight_budget {:.3} ms", started.elapsed().as_secs_f64() * 1e3);
    println!(
        "BENCH context.saving_ratio {:.1} x",
        doc.report.linear_tokens as f64 / doc.report.total_tokens.max(1) as f64
    );
}
