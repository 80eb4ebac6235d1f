//! The cost of the sandbox per command: a trivial command (`true`) run through `run_command`
//! with and without the bubblewrap sandbox, the two runs taken in turn so that the machine's load
//! weighs on both alike. It prints the median of each and the median of the pairs' differences,
//! which is the sandbox's cost; the aim is at most 20 ms. The sandbox hides a data folder as
//! Flame's commands' does, and is checked to start before anything is timed.

use std::io::Write;
use std::time::{Duration, Instant};

use flame_workspace::{
    CancelHandle, CommandRequest, Confinement, Environment, Sandbox, SandboxRules, Workspace,
};

/// Pairs of runs timed.
const PAIRS: usize = 101;

fn main() {
    let folder = tempfile::TempDir::new().expect("temporary folder");
    std::fs::create_dir(folder.path().join("ws")).expect("the workspace");
    std::fs::create_dir(folder.path().join("data")).expect("a data folder");
    let workspace = Workspace::open(folder.path().join("ws")).expect("open");
    let environment = Environment::inherited();
    let sandbox = Sandbox::from_environment(&environment);
    if let Err(unavailable) = sandbox.check() {
        panic!("the sandbox cannot start here (make setup installs bubblewrap): {unavailable}");
    }
    let rules = SandboxRules { hidden: vec![folder.path().join("data")], network: false };
    let request = CommandRequest { command: "true".into(), timeout: None };
    let run = |confinement: Confinement<'_>| {
        let start = Instant::now();
        let outcome = workspace
            .run_command(&request, confinement, &environment, &CancelHandle::new(), &mut Vec::new())
            .expect("the command runs");
        let took = start.elapsed();
        assert_eq!(outcome.exit, flame_workspace::Exit::Code(0), "{}", outcome.render());
        took
    };
    // A few of each first, so neither pays for warming the page cache.
    for _ in 0..5 {
        run(Confinement::None);
        run(Confinement::Sandbox(&sandbox, &rules));
    }
    let (mut plain, mut sandboxed, mut cost) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..PAIRS {
        let outside = run(Confinement::None);
        let inside = run(Confinement::Sandbox(&sandbox, &rules));
        plain.push(outside);
        sandboxed.push(inside);
        cost.push(inside.as_secs_f64() - outside.as_secs_f64());
    }
    let median = |mut times: Vec<Duration>| {
        times.sort();
        times[times.len() / 2].as_secs_f64() * 1000.0
    };
    cost.sort_by(f64::total_cmp);
    let cost_ms = cost[cost.len() / 2] * 1000.0;
    let mut out = std::io::stdout();
    writeln!(out, "BENCH workspace.command_true_plain_median {:.1} ms", median(plain))
        .expect("stdout");
    writeln!(out, "BENCH workspace.command_true_sandboxed_median {:.1} ms", median(sandboxed))
        .expect("stdout");
    writeln!(out, "BENCH workspace.sandbox_cost_median {cost_ms:.1} ms").expect("stdout");
}
