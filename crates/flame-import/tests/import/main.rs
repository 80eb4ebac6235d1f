//! The importers against the real shared Claude Code sessions and small hostile fixtures.

mod claude_code;
mod codex;
mod hostile;
mod opencode;
mod replay;
mod trail;

use std::path::PathBuf;

/// The shared transcripts, vendored in `tests/fixtures/claude-code/`.
pub fn shared(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/claude-code").join(name)
}

pub const SESSION_A: &str = "4d5611e5-241a-462a-8d15-5122611a9569.jsonl";
pub const SESSION_B: &str = "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl";

pub fn import(path: &std::path::Path) -> flame_import::Draft {
    flame_import::import(path, None, &flame_import::ImportOptions::default(), &mut |_| {}).unwrap()
}

/// The Codex rollouts made by the real Codex CLI, vendored in `tests/fixtures/codex/`.
pub fn codex_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/codex/sessions/2026/11/26")
        .join(name)
}

pub mod codex_fixture {
    /// The session's main thread.
    pub const MAIN: &str = "rollout-2026-11-26T19-08-51-01a21942-b1d2-7f40-8521-8f71ebf5a2ec.jsonl";
    /// The thread of the subagent it spawned.
    pub const CHILD: &str =
        "rollout-2026-11-26T19-08-51-01a21942-b490-7913-b80f-6e711e23c709.jsonl";
}
