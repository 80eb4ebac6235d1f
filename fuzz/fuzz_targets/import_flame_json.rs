//! Any bytes as a Flame export file: the import either refuses it or returns a draft that makes
//! a valid tree.
#![no_main]

use flame_import::{Format, ImportOptions, import};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = flame_fuzz::scratch_file("export.json", data);
    if let Ok(draft) = import(&path, Some(Format::Flame), &ImportOptions::default(), &mut |_| {}) {
        flame_fuzz::check_draft(&draft);
    }
});
