//! kill -9 during `write_file` leaves the old file or the new one, whole. This test re-runs its
//! own binary as the writer (with an environment variable saying so): the child writes two large
//! contents in turn, for ever, and the parent kills it with SIGKILL at varied moments, then
//! checks the file. It has no test harness, so the child needs no test filter to find its part.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use flame_workspace::Workspace;

/// Set in the child: the workspace folder to write in.
const CHILD_VARIABLE: &str = "KILL_WRITE_CHILD_WORKSPACE";
const TARGET: &str = "target.txt";
const KILLS: u64 = 12;

/// The two contents, 8 MB each, so a write takes long enough to be killed in the middle.
fn contents() -> [String; 2] {
    ["old line of text\n".repeat(500_000), "NEW LINE OF TEXT\n".repeat(500_000)]
}

fn main() {
    if let Some(folder) = std::env::var_os(CHILD_VARIABLE) {
        write_for_ever(Path::new(&folder));
    }
    let folder = tempfile::TempDir::new().expect("temporary folder");
    let workspace = Workspace::open(folder.path()).expect("open");
    let [old, new] = contents();
    workspace.write_file(TARGET, old.clone()).expect("the first write");

    let mut seen = [0u64; 2];
    let mut interrupted = 0u64;
    for kill in 0..KILLS {
        let mut child = Command::new(std::env::current_exe().expect("this binary"))
            .env(CHILD_VARIABLE, folder.path())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the writer");
        let mut ready = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut ready)
            .expect("the writer says it is writing");
        assert_eq!(ready, "writing\n");
        // Varied moments, so kills land at different points of a write; no timing is asserted.
        std::thread::sleep(Duration::from_millis(kill * 37 % 300));
        child.kill().expect("SIGKILL");
        child.wait().expect("reaped");

        // A kill in the middle of a write leaves its temporary file behind (the next write
        // removes it); counting them shows how many kills landed mid-write. That varies with
        // the machine's speed, so it is reported, not asserted.
        let left = std::fs::read_dir(folder.path())
            .expect("read dir")
            .filter(|entry| {
                entry.as_ref().is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            })
            .count();
        interrupted += u64::from(left > 0);
        let on_disk = std::fs::read(folder.path().join(TARGET)).expect("the file is there");
        if on_disk == old.as_bytes() {
            seen[0] += 1;
        } else if on_disk == new.as_bytes() {
            seen[1] += 1;
        } else {
            panic!("after kill {kill} the file is neither content whole ({} bytes)", on_disk.len());
        }
    }
    let mut out = std::io::stdout();
    writeln!(
        out,
        "kill_write: {KILLS} kills, {interrupted} in the middle of a write; the file was whole each time (old {}, new {})",
        seen[0], seen[1]
    )
    .expect("stdout");
}

/// The child: alternately writes the two contents until it is killed.
fn write_for_ever(folder: &Path) -> ! {
    let workspace = Workspace::open(folder).expect("open");
    let both = contents();
    for turn in 0usize.. {
        workspace.write_file(TARGET, both[(turn + 1) % 2].clone()).expect("write");
        // Announced after the first write, so the file is already the new content and a kill
        // lands in a later write (or between two).
        if turn == 0 {
            let mut out = std::io::stdout();
            out.write_all(b"writing\n").and_then(|()| out.flush()).expect("stdout");
        }
    }
    unreachable!("the writer is killed")
}
