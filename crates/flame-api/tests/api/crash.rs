//! A writer killed with SIGKILL at arbitrary moments loses no committed message, and the next
//! open repairs its logs.
//!
//! The writer is this same test binary, started again to run the ignored `child_writer` test
//! with the data directory in an environment variable: it appends messages as fast as it can
//! and prints each one's id once `append` has returned (so the commit is done).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use flame_model::{Actor, FrameId, Role};

use crate::{Scratch, home};

const HOME_VAR: &str = "FLAME_CRASH_TEST_HOME";
const FRAME_VAR: &str = "FLAME_CRASH_TEST_FRAME";

#[test]
#[ignore = "run only as the child of killed_writers_lose_no_committed_message"]
fn child_writer() {
    let (Some(dir), Some(frame)) = (std::env::var_os(HOME_VAR), std::env::var(FRAME_VAR).ok())
    else {
        return;
    };
    let flame =
        flame_api::Flame::open(home(std::path::Path::new(&dir)), flame_api::FlameConfig::default())
            .unwrap();
    let frame = FrameId::parse(&frame).unwrap();
    for n in 0.. {
        let text = format!(
            "process {} message {n} {}",
            std::process::id(),
            "with some body text ".repeat(n % 50)
        );
        let message = flame.append(Actor::Agent, &frame, Role::Assistant, &text).unwrap();
        // The parent reads these lines; printing is this child's whole way of reporting.
        #[allow(clippy::print_stdout)]
        {
            println!("committed {}", message.id);
        }
    }
}

#[test]
fn killed_writers_lose_no_committed_message() {
    let s = Scratch::new(11);
    let tree = s.flame.create_tree(Actor::Person, "Crash", "survive", None).unwrap();
    // A seeded sequence of kill delays: the moments differ from run to run only by scheduling.
    let mut delays = fastrand::Rng::with_seed(2026);
    let mut committed = Vec::new();
    for _round in 0..6 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "crash::child_writer",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(HOME_VAR, s.dir.path())
            .env(FRAME_VAR, tree.root.as_str())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, received) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            // libtest's "test crash::child_writer ... " has no newline, so the first id of a
            // round shares its line.
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(id) =
                    line.rsplit_once("committed ").and_then(|(_, id)| id.parse::<i64>().ok())
                {
                    let _ = sender.send(id);
                }
            }
        });
        // Kill at a random moment while it writes: after its first commit (however long a busy
        // machine takes to get there), plus a seeded delay.
        let first = received
            .recv_timeout(Duration::from_secs(120))
            .expect("the writer committed nothing in two minutes");
        std::thread::sleep(Duration::from_millis(delays.u64(0..250)));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();
        reader.join().unwrap();
        let ids: Vec<i64> = std::iter::once(first).chain(received.try_iter()).collect();
        committed.extend(ids);
    }

    let reopened = s.reopen(12);
    let stored = reopened.messages(&tree.root).unwrap();
    let stored_ids: Vec<i64> = stored.iter().map(|m| m.id.0).collect();
    for id in &committed {
        assert!(stored_ids.contains(id), "committed message {id} was lost");
    }
    // A message may have committed just before its id was printed; at most one per kill.
    assert!(
        stored.len() <= committed.len() + 6,
        "{} stored, {} reported",
        stored.len(),
        committed.len()
    );

    let log = std::fs::read_to_string(reopened.frame(&tree.root).unwrap().log_path).unwrap();
    let mut lines: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for line in log.lines() {
        *lines.entry(line).or_default() += 1;
    }
    for message in &stored {
        let head = message.content.lines().next().unwrap();
        assert_eq!(
            lines.get(head),
            Some(&1),
            "message {} is not in the log exactly once",
            message.id
        );
    }
    assert!(log.trim_end().ends_with("-->"), "the log ends with a torn section");
}
