//! The importers against the real shared Claude Code sessions and small hostile fixtures.

mod claude_code;
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
