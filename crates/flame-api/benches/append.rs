//! One message through the facade, as a person or agent adds it: the store commit plus the
//! append to the frame's Markdown log. Prints `BENCH <name> <value> <unit>` lines.

#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use flame_api::{DataDir, Env, Flame, FlameConfig};
use flame_model::{Actor, Role};

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let home = DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
    let flame =
        Flame::open_with(home, FlameConfig::default(), Env::fixed(1_795_307_601_000, 7)).unwrap();
    let tree = flame.create_tree(Actor::Person, "Bench", "fast appends", None).unwrap();
    let text =
        "A message of ordinary length, a few sentences about the work in this frame. ".repeat(4);
    let mut times: Vec<Duration> = (0..2000)
        .map(|_| {
            let started = Instant::now();
            flame.append(Actor::Agent, &tree.root, Role::Assistant, &text).unwrap();
            started.elapsed()
        })
        .collect();
    times.sort();
    let at = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e6;
    println!("BENCH api.append_with_log_median {:.3} us", at(0.5));
    println!("BENCH api.append_with_log_p95 {:.3} us", at(0.95));
}
