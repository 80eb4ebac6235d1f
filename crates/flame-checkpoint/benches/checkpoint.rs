//! Checkpoints of a generated workspace of 50,000 files (about 500 MB): the first snapshot, an
//! incremental snapshot after a one-file edit, a rollback of 100 files, and the shadow's size
//! after 1,000 snapshots of one-file edits, before and after `collect`.
//!
//! `FLAME_BENCH_CHECKPOINT_FILES` scales the workspace down for a quick run (the bytes per file
//! stay the same). Prints `BENCH <name> <value> <unit>` lines; progress goes to standard error.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use flame_checkpoint::{CommitId, Shadow};

const DEFAULT_FILES: usize = 50_000;
const FILES_PER_FOLDER: usize = 100;
/// File sizes run from 2 KB to 18 KB, 10 KB on average: 50,000 files make about 500 MB.
const MIN_FILE_BYTES: usize = 2_000;
const SPREAD_FILE_BYTES: usize = 16_000;
const INCREMENTAL_RUNS: usize = 50;
const ROLLBACK_FILES: usize = 100;
const STORE_SNAPSHOTS: usize = 1_000;

fn main() {
    let files = std::env::var("FLAME_BENCH_CHECKPOINT_FILES")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(DEFAULT_FILES);
    let folder = tempfile::TempDir::new().expect("temporary folder");
    let base = folder.path().canonicalize().expect("canonical");
    let workspace = base.join("workspace");
    let started = Instant::now();
    let bytes = generate(&workspace, files);
    note(&format!(
        "generated {files} files, {} MB, in {:.1} s",
        bytes / 1_000_000,
        started.elapsed().as_secs_f64()
    ));
    let shadow = Shadow::open(&base.join("shadow"), &workspace).expect("open");
    let mut clock = 1_700_000_000_000_i64;
    let mut tick = || {
        clock += 1000;
        clock
    };

    let started = Instant::now();
    let first = shadow.snapshot("first", tick()).expect("first snapshot");
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(first.files, files + 1);
    bench("checkpoint.first_50k", &format!("{seconds:.2}"), "s");

    let mut times = Vec::new();
    for run in 0..INCREMENTAL_RUNS {
        edit(&workspace, run * 7919 % files, run);
        let started = Instant::now();
        shadow.snapshot("edit", tick()).expect("snapshot");
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let p95 = times[(times.len() * 95).div_ceil(100) - 1];
    note(&format!(
        "incremental: median {:.0} ms, max {:.0} ms",
        times[times.len() / 2],
        times[times.len() - 1]
    ));
    bench("checkpoint.incremental_p95", &format!("{p95:.0}"), "ms");

    let base_commit = shadow.snapshot("before the frame", tick()).expect("snapshot").commit;
    let paths: Vec<String> = (0..ROLLBACK_FILES.min(files))
        .map(|n| {
            let index = n * (files / ROLLBACK_FILES.min(files));
            edit(&workspace, index, 1_000 + n);
            relative(index)
        })
        .collect();
    shadow.snapshot("after the frame", tick()).expect("snapshot");
    let started = Instant::now();
    let restored = shadow.restore(&base_commit, &paths).expect("restore");
    let milliseconds = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(restored.written.len(), paths.len());
    bench("checkpoint.rollback_100_files", &format!("{milliseconds:.0}"), "ms");

    let started = Instant::now();
    let mut kept: Vec<CommitId> = Vec::new();
    for run in 0..STORE_SNAPSHOTS {
        edit(&workspace, run * 104_729 % files, 10_000 + run);
        kept.push(shadow.snapshot("edit", tick()).expect("snapshot").commit);
    }
    note(&format!("{STORE_SNAPSHOTS} snapshots in {:.1} s", started.elapsed().as_secs_f64()));
    let size = shadow.size_on_disk().expect("size");
    bench("checkpoint.store_after_1000_mb", &format!("{:.1}", size as f64 / 1e6), "MB");
    let started = Instant::now();
    let collected = shadow.collect().expect("collect");
    note(&format!("collect took {:.1} s", started.elapsed().as_secs_f64()));
    bench(
        "checkpoint.store_after_1000_collected_mb",
        &format!("{:.1}", collected as f64 / 1e6),
        "MB",
    );
}

fn bench(name: &str, value: &str, unit: &str) {
    let mut out = std::io::stdout();
    writeln!(out, "BENCH {name} {value} {unit}").expect("stdout");
}

fn note(text: &str) {
    let mut err = std::io::stderr();
    writeln!(err, "checkpoint bench: {text}").expect("stderr");
}

fn relative(index: usize) -> String {
    format!("dir{:04}/file{index:06}.txt", index / FILES_PER_FOLDER)
}

/// Writes the workspace: `files` text files in folders of 100, and a `.gitignore` with an
/// ignored build folder. Content is cut from one pool of pseudo-random words at varied offsets,
/// so every file differs; returns the bytes written.
fn generate(workspace: &Path, files: usize) -> u64 {
    let pool = word_pool(SPREAD_FILE_BYTES + MIN_FILE_BYTES + 1_000_000);
    std::fs::create_dir_all(workspace.join("target")).expect("workspace");
    std::fs::write(workspace.join(".gitignore"), "target/\n*.log\n").expect("write");
    std::fs::write(workspace.join("target/ignored.o"), &pool[..100_000]).expect("write");
    let mut total = 0;
    let mut buffer = Vec::with_capacity(MIN_FILE_BYTES + SPREAD_FILE_BYTES + 100);
    for index in 0..files {
        if index % FILES_PER_FOLDER == 0 {
            std::fs::create_dir_all(workspace.join(format!("dir{:04}", index / FILES_PER_FOLDER)))
                .expect("folder");
        }
        let length = MIN_FILE_BYTES + (index * 7_919) % SPREAD_FILE_BYTES;
        let offset = (index * 104_729) % 1_000_000;
        buffer.clear();
        buffer.extend_from_slice(format!("file {index}\n").as_bytes());
        buffer.extend_from_slice(&pool[offset..offset + length]);
        std::fs::write(workspace.join(relative(index)), &buffer).expect("write");
        total += buffer.len() as u64;
    }
    total
}

/// Appends a line to one file, as an agent's edit would change it.
fn edit(workspace: &Path, index: usize, run: usize) {
    let path = workspace.join(relative(index));
    let mut file = std::fs::OpenOptions::new().append(true).open(path).expect("open");
    writeln!(file, "edit {run}").expect("append");
}

/// Text of words from a fixed list, chosen by xorshift64, in lines of about 60 characters.
fn word_pool(length: usize) -> Vec<u8> {
    const WORDS: [&str; 24] = [
        "fn", "let", "mut", "self", "match", "return", "struct", "impl", "where", "value", "index",
        "count", "path", "error", "result", "string", "vector", "frame", "tree", "token",
        "context", "budget", "snapshot", "restore",
    ];
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut pool = Vec::with_capacity(length + 64);
    let mut line = 0;
    while pool.len() < length {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let word = WORDS[(state % WORDS.len() as u64) as usize];
        pool.extend_from_slice(word.as_bytes());
        line += word.len() + 1;
        if line > 60 {
            pool.push(b'\n');
            line = 0;
        } else {
            pool.push(b' ');
        }
        if state.is_multiple_of(97) {
            pool.extend_from_slice(format!("{} ", state % 100_000).as_bytes());
        }
    }
    pool.truncate(length);
    pool
}
