//! The facade's one integration test binary.

mod budget;
mod checkpoints;
mod contention;
mod context;
mod cost;
mod crash;
mod export;
mod follow;
mod frame_view;
mod frames;
mod gateway_frames;
mod import;
mod instructions;
mod live_reply;
mod open;
mod properties;
mod sample;
mod sandbox;
mod search;
mod workspace;
mod workspace_call;

use flame_api::{DataDir, Env, Flame, FlameConfig};

/// A Flame on a fresh temporary data directory with a fixed clock and seeded ids.
#[derive(Debug)]
pub struct Scratch {
    pub flame: Flame,
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new(seed: u64) -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let flame = Flame::open_with(
            home(dir.path()),
            FlameConfig::default(),
            Env::fixed(1_795_307_601_000, seed),
        )
        .unwrap();
        Scratch { flame, dir }
    }

    /// Opens the same data directory again, as a restarted app or another process would.
    pub fn reopen(&self, seed: u64) -> Flame {
        Flame::open_with(
            home(self.dir.path()),
            FlameConfig::default(),
            Env::fixed(1_795_400_000_000, seed),
        )
        .unwrap()
    }
}

pub fn home(path: &std::path::Path) -> DataDir {
    DataDir::resolve(Some(path.as_os_str()), None, None).unwrap()
}
