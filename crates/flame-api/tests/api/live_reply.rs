//! A reply belongs to the process writing it: another process opening the same data directory
//! (as `flame status` or `flame mcp` do while the window streams) leaves it open, and only a
//! writer that is gone has its reply finished as interrupted.
//!
//! The writer is this same test binary, started again to run the ignored `child_streamer` test
//! with the data directory in an environment variable. It opens a reply and saves it one chunk
//! at a time, printing `saved N` after each save and then waiting for a line on its standard
//! input, so the parent opens the store between saves at known points rather than at moments a
//! timer picks.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use flame_model::{Actor, FrameId, NewMessage, Role};

use crate::{Scratch, home};

const HOME_VAR: &str = "FLAME_LIVE_REPLY_TEST_HOME";
const FRAME_VAR: &str = "FLAME_LIVE_REPLY_TEST_FRAME";
/// How many chunks the writer streams.
const CHUNKS: usize = 30;
/// How long the parent waits for the child's next line; only a broken child takes this long.
const PATIENCE: Duration = Duration::from_secs(120);

fn chunk(n: usize) -> String {
    format!("chunk {n:02} of the streamed reply\n")
}

#[test]
#[ignore = "run only as the child of the live reply tests"]
fn child_streamer() {
    let (Some(dir), Some(frame)) = (std::env::var_os(HOME_VAR), std::env::var(FRAME_VAR).ok())
    else {
        return;
    };
    let flame =
        flame_api::Flame::open(home(std::path::Path::new(&dir)), flame_api::FlameConfig::default())
            .unwrap();
    let frame = FrameId::parse(&frame).unwrap();
    let reply = flame.begin_reply(Actor::Agent, &frame, Some("m")).unwrap();
    let mut text = String::new();
    let mut go = std::io::stdin().lines();
    for n in 0..CHUNKS {
        text.push_str(&chunk(n));
        flame.update_reply(reply, &text).unwrap();
        say(&format!("saved {n}"));
        if go.next().is_none() {
            return;
        }
    }
    let done =
        flame.finish_reply(Actor::Agent, reply, &NewMessage::text(Role::Assistant, text)).unwrap();
    say(&format!("finished {}", done.id));
}

/// The child's one way of reporting: a line on its standard output.
fn say(line: &str) {
    #[allow(clippy::print_stdout)]
    {
        println!("{line}");
    }
}

struct Streamer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Streamer {
    fn start(s: &Scratch, frame: &FrameId) -> Streamer {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "live_reply::child_streamer",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(HOME_VAR, s.dir.path())
            .env(FRAME_VAR, frame.as_str())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        Streamer { child, stdin, lines }
    }

    /// Waits for the child's next report containing `word`, and returns what follows it. libtest's
    /// "test live_reply::child_streamer ... " has no newline, so the first report shares its line.
    fn expect(&self, word: &str) -> Option<String> {
        loop {
            let line = self.lines.recv_timeout(PATIENCE).ok()?;
            if let Some((_, rest)) = line.rsplit_once(word) {
                return Some(rest.trim().to_owned());
            }
        }
    }

    fn go_on(&mut self) {
        // A child that has already failed no longer reads; its exit status tells why.
        let _ = writeln!(self.stdin, "go");
        let _ = self.stdin.flush();
    }
}

#[test]
fn another_process_opening_the_store_leaves_a_running_writers_reply_open() {
    let s = Scratch::new(51);
    let tree = s.flame.create_tree(Actor::Person, "Live", "a reply survives", None).unwrap();
    let mut writer = Streamer::start(&s, &tree.root);
    for n in 0..CHUNKS {
        assert_eq!(writer.expect("saved ").as_deref(), Some(n.to_string().as_str()));
        // Another process opens the data directory, as `flame status` would, while the writer
        // streams; then it looks at the reply.
        let other = s.reopen(52 + n as u64);
        let so_far = other.messages(&tree.root).unwrap().pop().unwrap();
        assert!(so_far.content.ends_with(&chunk(n)), "after chunk {n}: {:?}", so_far.content);
        drop(other);
        writer.go_on();
    }
    let finished = writer.expect("finished ");
    let status = writer.child.wait().unwrap();
    let stored = s.flame.messages(&tree.root).unwrap().pop().unwrap();
    let lost = (0..CHUNKS).filter(|&n| !stored.content.contains(&chunk(n))).count();
    assert_eq!(lost, 0, "{lost} of {CHUNKS} chunks lost; the writer exited with {status}");
    assert!(status.success(), "the writer failed: {status}");
    assert_eq!(finished, Some(stored.id.to_string()));
    assert!(!stored.interrupted);
    assert_eq!(s.flame.frame(&tree.root).unwrap().frame.message_count, 1);
}

#[test]
fn a_killed_writers_reply_is_finished_as_interrupted_by_the_next_opening() {
    let s = Scratch::new(61);
    let tree = s.flame.create_tree(Actor::Person, "Killed", "its reply is kept", None).unwrap();
    let mut writer = Streamer::start(&s, &tree.root);
    for n in 0..3 {
        assert_eq!(writer.expect("saved ").as_deref(), Some(n.to_string().as_str()));
        if n < 2 {
            writer.go_on();
        }
    }
    // SIGKILL on Unix: the writer gets no chance to finish anything.
    writer.child.kill().unwrap();
    writer.child.wait().unwrap();
    assert_eq!(s.flame.frame(&tree.root).unwrap().frame.message_count, 0, "still open");

    let reopened = s.reopen(62);
    let kept = reopened.messages(&tree.root).unwrap().pop().unwrap();
    assert_eq!(kept.content, format!("{}{}{}", chunk(0), chunk(1), chunk(2)));
    assert!(kept.interrupted);
    assert!(kept.tokens > 0);
    assert_eq!(reopened.frame(&tree.root).unwrap().frame.message_count, 1, "finished");
}
