//! Any bytes as OpenCode's `opencode.db`, read by `flame_store::foreign` as an import reads it:
//! the read refuses the file or returns rows within its limits (rows per table, bytes in all),
//! and either way within its deadline, whatever the file's schema and pages hold. The limits are
//! the stated ones but for the deadline, which is a second so that libFuzzer's own timeout (30 s)
//! never fires first.
#![no_main]

use std::time::{Duration, Instant};

use flame_store::foreign::{ForeignLimits, read_opencode_db_within};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = flame_fuzz::scratch_file("opencode.db", data);
    let limits = ForeignLimits { time: Duration::from_secs(1), ..ForeignLimits::default() };
    let started = Instant::now();
    let read = read_opencode_db_within(&path, limits);
    // The deadline is checked while SQLite works; what is left after it is Rust's sorting.
    assert!(started.elapsed() < limits.time * 5, "the read took {:?}", started.elapsed());
    if let Ok(rows) = read {
        for count in [rows.sessions.len(), rows.messages.len(), rows.parts.len()] {
            assert!(count <= limits.rows, "{count} rows read past the limit");
        }
        let bytes: usize = rows.messages.iter().chain(&rows.parts).map(|r| r.data.len()).sum();
        assert!(bytes <= limits.bytes, "{bytes} bytes read past the limit");
    }
    // SQLite may leave a journal or WAL beside a file it thought was a database in WAL mode.
    for suffix in ["-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(path.with_file_name(format!("opencode.db{suffix}")));
    }
});
