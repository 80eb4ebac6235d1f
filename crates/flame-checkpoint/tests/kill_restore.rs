//! kill -9 during `restore` leaves every file either as it was or restored, never torn, and a
//! second restore finishes the job. This test re-runs its own binary as the restorer (with an
//! environment variable saying so): the child restores 300 files of about 100 KB from one
//! snapshot, then from another, for ever; the parent kills it with SIGKILL at varied moments and
//! checks every file. It has no test harness, so the child needs no test filter to find its part.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use flame_checkpoint::{CommitId, Shadow};

/// Set in the child: the workspace, the shadow and the two snapshots, separated by newlines.
const CHILD_VARIABLE: &str = "KILL_RESTORE_CHILD";
const FILES: usize = 300;
const FILE_BYTES: usize = 100_000;
const KILLS: u64 = 10;

fn content(index: usize, version: u8) -> Vec<u8> {
    let line = format!("file {index:03} version {version} ");
    line.as_bytes().iter().copied().cycle().take(FILE_BYTES + index).collect()
}

fn path(index: usize) -> String {
    format!("folder{}/file{index:03}.txt", index % 7)
}

fn main() {
    if let Some(arguments) = std::env::var_os(CHILD_VARIABLE) {
        restore_for_ever(&arguments.to_string_lossy());
    }
    let folder = tempfile::TempDir::new().expect("temporary folder");
    let base = folder.path().canonicalize().expect("canonical");
    let workspace = base.join("workspace");
    let shadow_dir = base.join("shadow");
    for index in 0..FILES {
        let file = workspace.join(path(index));
        std::fs::create_dir_all(file.parent().expect("parent")).expect("folder");
        std::fs::write(file, content(index, 0)).expect("write");
    }
    let shadow = Shadow::open(&shadow_dir, &workspace).expect("open");
    let old = shadow.snapshot("old", 0).expect("snapshot").commit;
    for index in 0..FILES {
        std::fs::write(workspace.join(path(index)), content(index, 1)).expect("write");
    }
    let new = shadow.snapshot("new", 1000).expect("snapshot").commit;
    let paths: Vec<String> = (0..FILES).map(path).collect();

    let mut mixed = 0;
    for kill in 0..KILLS {
        let mut child = Command::new(std::env::current_exe().expect("this binary"))
            .env(
                CHILD_VARIABLE,
                format!("{}\n{}\n{old}\n{new}", workspace.display(), shadow_dir.display()),
            )
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the restorer");
        let mut ready = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut ready)
            .expect("the restorer says it is restoring");
        assert_eq!(ready, "restoring\n");
        // Varied moments, so kills land at different points of a restore; no timing is asserted.
        std::thread::sleep(Duration::from_millis(kill * 53 % 400));
        child.kill().expect("SIGKILL");
        child.wait().expect("reaped");

        let mut versions = [0usize; 2];
        for index in 0..FILES {
            let on_disk = std::fs::read(workspace.join(path(index))).expect("every file is there");
            if on_disk == content(index, 0) {
                versions[0] += 1;
            } else if on_disk == content(index, 1) {
                versions[1] += 1;
            } else {
                panic!("after kill {kill}, {} is torn ({} bytes)", path(index), on_disk.len());
            }
        }
        mixed += usize::from(versions[0] > 0 && versions[1] > 0);
    }
    // Whatever state the kills left, one restore finishes the job, and leaves no temporary file.
    let restored = shadow.restore(&old, &paths).expect("restore after the kills");
    assert_eq!(restored.written.len() + restored.unchanged.len(), FILES);
    for index in 0..FILES {
        assert_eq!(std::fs::read(workspace.join(path(index))).expect("read"), content(index, 0));
    }
    let leftovers = count_temporaries(&workspace);
    assert_eq!(leftovers, 0, "temporary files were left behind");
    let again = shadow.restore(&old, &paths).expect("restore again");
    assert_eq!(again.unchanged.len(), FILES);
    let mut out = std::io::stdout();
    writeln!(
        out,
        "kill_restore: {KILLS} kills, {mixed} in the middle of a restore; every file was whole each time, and a restore after them finished the job"
    )
    .expect("stdout");
}

fn count_temporaries(workspace: &Path) -> usize {
    let mut count = 0;
    let mut pending: Vec<PathBuf> = vec![workspace.to_path_buf()];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(folder).expect("list").flatten() {
            if entry.path().is_dir() {
                pending.push(entry.path());
            } else if entry.file_name().to_string_lossy().contains(".flame-restore-") {
                count += 1;
            }
        }
    }
    count
}

/// The child: restores the old snapshot, then the new one, until it is killed.
fn restore_for_ever(arguments: &str) -> ! {
    let parts: Vec<&str> = arguments.split('\n').collect();
    let [workspace, shadow_dir, old, new] = parts[..] else { panic!("four arguments") };
    let shadow = Shadow::open(Path::new(shadow_dir), Path::new(workspace)).expect("open");
    let commits = [CommitId::parse(old).expect("old"), CommitId::parse(new).expect("new")];
    let paths: Vec<String> = (0..FILES).map(path).collect();
    for turn in 0usize.. {
        shadow.restore(&commits[turn % 2], &paths).expect("restore");
        // Announced after the first restore, so kills land in later ones (or between two).
        if turn == 0 {
            let mut out = std::io::stdout();
            out.write_all(b"restoring\n").and_then(|()| out.flush()).expect("stdout");
        }
    }
    unreachable!("the restorer is killed")
}
