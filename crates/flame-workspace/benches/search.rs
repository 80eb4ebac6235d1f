//! `search` over a generated workspace of 50,000 files: the first search (the walk and the
//! files not yet in the process's reach; the page cache is warm from generating them, since
//! dropping it needs root) and a repeated one.

use std::io::Write;
use std::time::Instant;

use flame_workspace::{SearchQuery, Workspace};

const FILES: usize = 50_000;
const FILES_PER_FOLDER: usize = 500;

fn main() {
    let folder = tempfile::TempDir::new().expect("temporary folder");
    generate(folder.path());
    let workspace = Workspace::open(folder.path()).expect("open");
    let query = SearchQuery {
        pattern: r"fn handle_\d+_7\b".into(),
        glob: None,
        context_lines: 2,
        case_insensitive: false,
    };

    let start = Instant::now();
    let cold = workspace.search(&query).expect("search");
    let cold_ms = start.elapsed().as_secs_f64() * 1000.0;
    let start = Instant::now();
    let warm = workspace.search(&query).expect("search");
    let warm_ms = start.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(cold.hits, warm.hits);
    assert_eq!(cold.total_matches, (FILES / 10) as u64);

    let mut out = std::io::stdout();
    writeln!(out, "BENCH workspace.search_50k_cold {cold_ms:.0} ms").expect("stdout");
    writeln!(out, "BENCH workspace.search_50k_warm {warm_ms:.0} ms").expect("stdout");
}

/// 50,000 source-like files of about 1.5 KB in folders of 500, a `.gitignore`d folder of
/// 5,000 more that must not be searched, and a match in every tenth file.
fn generate(root: &std::path::Path) {
    std::fs::write(root.join(".gitignore"), "build/\n").expect("write");
    for index in 0..FILES {
        let folder = root.join(format!("src/m{:03}", index / FILES_PER_FOLDER));
        if index % FILES_PER_FOLDER == 0 {
            std::fs::create_dir_all(&folder).expect("folder");
        }
        let mut text = String::with_capacity(1_600);
        for function in 0..30 {
            let number = if index % 10 == 0 && function == 7 { 7 } else { function + 100 };
            text.push_str(&format!("fn handle_{index}_{number}(x: u32) -> u32 {{ x + 1 }}\n"));
        }
        std::fs::write(folder.join(format!("f{index}.rs")), text).expect("write");
    }
    let ignored = root.join("build");
    std::fs::create_dir_all(&ignored).expect("folder");
    for index in 0..5_000 {
        std::fs::write(ignored.join(format!("g{index}.rs")), "fn handle_1_7() {}\n")
            .expect("write");
    }
}
