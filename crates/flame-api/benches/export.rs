//! Exporting a 100k-frame, 200k-message tree to a file, as JSON and as Markdown: reading every
//! frame's messages from the store, writing the file beside its target and renaming it. The
//! counts can be lowered with FLAME_BENCH_FRAMES and FLAME_BENCH_MESSAGES. Prints
//! `BENCH export.<name> <value> <unit>` lines.

#![allow(clippy::print_stdout)]

use std::time::Instant;

use flame_api::{DataDir, Env, ExportFormat, ExportScope, Flame, FlameConfig};
use flame_model::Actor;
use flame_store::{Change, Store};

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let frames = env_count("FLAME_BENCH_FRAMES", 100_000);
    let messages = env_count("FLAME_BENCH_MESSAGES", 200_000);
    let dir = tempfile::tempdir().unwrap();
    let (tree, all_frames, all_messages) = flame_store::synthetic::tree(frames, messages);
    {
        let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
        store
            .import_tree(Change { actor: Actor::Cli, at: 1 }, &tree, &all_frames, &all_messages)
            .unwrap();
    }
    drop((all_frames, all_messages));
    // Opening writes the logs of every imported frame once; that is import's cost, not this one's.
    let home = DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
    let flame =
        Flame::open_with(home, FlameConfig::default(), Env::fixed(1_795_307_601_000, 3)).unwrap();

    // Reading alone (the part progress is reported for), to set against the whole export.
    let mut best = f64::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        flame.export(tree.id.as_str(), ExportScope::Tree, &mut |_| {}).unwrap();
        best = best.min(started.elapsed().as_secs_f64());
    }
    println!("BENCH export.tree_{frames}_frames_read {:.0} ms", best * 1e3);

    let out = tempfile::tempdir().unwrap();
    for (name, format) in [("json", ExportFormat::Json), ("markdown", ExportFormat::Markdown)] {
        let path = out.path().join(format!("tree.{name}"));
        // The best of three: the figure is the export, not the neighbours on two shared cores.
        let mut best = f64::MAX;
        let mut reports = 0;
        let mut summary = None;
        for _ in 0..3 {
            reports = 0;
            let started = Instant::now();
            let written = flame
                .export_to_file(tree.id.as_str(), ExportScope::Tree, format, &path, &mut |_| {
                    reports += 1
                })
                .unwrap();
            best = best.min(started.elapsed().as_secs_f64());
            summary = Some(written);
        }
        let summary = summary.unwrap();
        assert_eq!(summary.frames, frames as u64);
        println!("BENCH export.tree_{frames}_frames_{name} {:.0} ms", best * 1e3);
        println!(
            "BENCH export.tree_{frames}_frames_{name}_size {:.1} MB",
            summary.bytes as f64 / 1e6
        );
        println!("BENCH export.tree_{frames}_frames_{name}_progress_reports {reports} reports");
    }
}
