//! Any bytes as a Claude Code session file: the import either refuses it or returns a draft
//! that makes a valid tree, with and without segmenting the main thread.
#![no_main]

use flame_import::{Format, ImportOptions, import};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = flame_fuzz::scratch_file("session.jsonl", data);
    for segment in [true, false] {
        let options = ImportOptions { segment, session: None };
        if let Ok(draft) = import(&path, Some(Format::ClaudeCode), &options, &mut |_| {}) {
            flame_fuzz::check_draft(&draft);
        }
    }
});
