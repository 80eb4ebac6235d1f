//! Following a session as its agent writes it (`Flame::run_follower`): how long a line written
//! to a followed Claude Code session takes to be stored (from the write to the follower's
//! report of the read that stored it: the file-system notification, the read of the new line,
//! the session's draft made again, the transaction), median and worst of 20; and the processor
//! time the follower spends while 50 followed sessions are idle, which is none when it waits on
//! notifications rather than polling. Prints `BENCH <name> <value> <unit>` lines.

#![allow(clippy::print_stdout)]

use std::io::Write;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use flame_api::{
    Agent, AgentHomes, DataDir, Env, Flame, FlameConfig, FollowOutcome, FollowerNews, WatchSignal,
};
use flame_model::Actor;

/// A real session to follow the growth of (vendored), so each read makes a draft of its size.
const SESSION: &str = "4d5611e5-241a-462a-8d15-5122611a9569";

fn line(n: usize) -> String {
    serde_json::json!({"type": "assistant", "sessionId": SESSION, "timestamp": format!("2026-02-13T10:00:{:02}.000Z", n % 60),
        "message": {"id": format!("bench-{n}"), "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": format!("bench line {n}")}],
            "usage": {"input_tokens": 3, "cache_read_input_tokens": 1000, "output_tokens": 9}}})
    .to_string()
}

/// Processor time this process has used, from `/proc/self/stat` (user and system, in ticks of
/// 10 ms).
fn cpu_ms() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    (fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()) * 10
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let flame = Flame::open_with(
        DataDir::resolve(Some(dir.path().join("flame").as_os_str()), None, None).unwrap(),
        FlameConfig::default(),
        Env::fixed(1_795_307_601_000, 7),
    )
    .unwrap();
    let project = dir.path().join("projects/-work");
    std::fs::create_dir_all(&project).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/claude-code");
    let path = project.join(format!("{SESSION}.jsonl"));
    std::fs::copy(fixtures.join(format!("{SESSION}.jsonl")), &path).unwrap();
    let mut ids = vec![flame.follow(Actor::Cli, Agent::ClaudeCode, &path, SESSION).unwrap().id];
    // 49 more sessions, small and idle.
    for n in 0..49 {
        let other = project.join(format!("idle-{n}.jsonl"));
        let record = serde_json::json!({"type": "user", "sessionId": format!("idle-{n}"), "timestamp": "2026-02-13T09:00:00.000Z",
            "message": {"role": "user", "content": format!("idle session {n}")}});
        std::fs::write(&other, format!("{record}\n")).unwrap();
        ids.push(
            flame.follow(Actor::Cli, Agent::ClaudeCode, &other, &format!("idle-{n}")).unwrap().id,
        );
    }
    let homes = AgentHomes {
        claude_code: dir.path().join("projects"),
        codex: dir.path().join("none"),
        opencode: dir.path().join("none"),
    };
    let (sender, signals) = mpsc::channel();
    let (reads, heard) = mpsc::channel::<(Instant, FollowOutcome)>();
    let stop = sender.clone();
    let flame = &flame;
    std::thread::scope(|scope| {
        scope.spawn(move || {
            flame
                .run_follower(Actor::Cli, &homes, sender, &signals, &mut |news| {
                    if let FollowerNews::Read(o) = news {
                        let _ = reads.send((Instant::now(), o.clone()));
                    }
                })
                .unwrap()
        });
        // The first round reads all 50.
        for _ in 0..50 {
            heard.recv_timeout(Duration::from_secs(60)).unwrap();
        }
        // Idle: nothing is written for three seconds.
        std::thread::sleep(Duration::from_millis(500));
        let (cpu, wall) = (cpu_ms(), Instant::now());
        std::thread::sleep(Duration::from_secs(3));
        let idle = (cpu_ms() - cpu) as f64 / wall.elapsed().as_secs_f64();
        println!("BENCH follow.idle_50_sessions_cpu {idle:.1} ms/s");

        let mut times: Vec<Duration> = Vec::new();
        for n in 0..20 {
            let written = Instant::now();
            let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
            file.write_all(format!("{}\n", line(n)).as_bytes()).unwrap();
            drop(file);
            loop {
                let (at, outcome) = heard.recv_timeout(Duration::from_secs(60)).unwrap();
                if outcome.id == ids[0] && outcome.messages > 0 {
                    times.push(at - written);
                    break;
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        stop.send(WatchSignal::Stop).unwrap();
        times.sort();
        println!(
            "BENCH follow.line_stored_median {:.1} ms",
            times[times.len() / 2].as_secs_f64() * 1e3
        );
        println!(
            "BENCH follow.line_stored_max {:.1} ms",
            times[times.len() - 1].as_secs_f64() * 1e3
        );
    });
    ids.clear();
}
