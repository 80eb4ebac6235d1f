//! How long counting a megabyte of hostile text takes (the issue asks for each under 100 ms),
//! and ordinary prose for comparison. Prints `BENCH <name> <value> <unit>` lines.

#![allow(clippy::print_stdout)]

use std::time::Instant;

use flame_tokens::{Encoding, count, warm_up};

fn main() {
    warm_up();
    let megabyte = 1 << 20;
    let mut rng = fastrand::Rng::with_seed(5);
    let random: Vec<u8> = (0..megabyte).map(|_| rng.u8(..)).collect();
    let cases = [
        ("spaces", " ".repeat(megabyte)),
        ("a", "a".repeat(megabyte)),
        ("cjk", "上下文窗口的令牌预算".repeat(megabyte / 30)),
        ("random_bytes", String::from_utf8_lossy(&random).into_owned()),
        (
            "prose",
            "The frame's results are handed to its parent and its siblings. ".repeat(megabyte / 64),
        ),
    ];
    for (name, text) in &cases {
        let runs: Vec<f64> = (0..5)
            .map(|_| {
                let started = Instant::now();
                std::hint::black_box(count(Encoding::O200kBase, text));
                started.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        let worst = runs.iter().copied().fold(0.0, f64::max);
        println!("BENCH tokens.count_1mb_{name}_max {worst:.3} ms");
    }
}
