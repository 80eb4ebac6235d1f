//! Opening and migrating the database, and refusing files it must not touch.

use std::fs;

use flame_store::{LATEST_SCHEMA_VERSION, MAX_DAMAGE_LISTED, OpenError, Store};

#[test]
fn opening_creates_a_wal_database_at_the_latest_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flame.db");
    let store = Store::open(&path).unwrap();
    assert_eq!(store.path(), path);
    assert_eq!(store.journal_mode().unwrap(), "wal");
    assert_eq!(store.schema_version().unwrap(), LATEST_SCHEMA_VERSION);
    assert!(path.is_file());
}

#[test]
fn reopening_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flame.db");
    drop(Store::open(&path).unwrap());
    let store = Store::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), LATEST_SCHEMA_VERSION);
}

#[test]
fn a_file_that_is_not_a_database_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flame.db");
    let garbage = b"this is not an SQLite file, but it is somebody's data\n".repeat(200);
    fs::write(&path, &garbage).unwrap();

    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, OpenError::NotADatabase { .. }), "{err:?}");
    assert!(err.to_string().contains(&path.display().to_string()), "{err}");
    assert_eq!(fs::read(&path).unwrap(), garbage, "the file must not be changed");
}

#[test]
fn a_database_from_a_newer_flame_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flame.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", LATEST_SCHEMA_VERSION + 7).unwrap();
    }
    let err = Store::open(&path).unwrap_err();
    match err {
        OpenError::TooNew { found, supported, .. } => {
            assert_eq!(found, LATEST_SCHEMA_VERSION + 7);
            assert_eq!(supported, LATEST_SCHEMA_VERSION);
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
}

#[test]
fn a_missing_folder_cannot_be_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such-folder").join("flame.db");
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, OpenError::CannotOpen { .. }), "{err:?}");
}

/// A database with a few hundred pages of rows, written through to its file (no WAL left).
fn filled_database(path: &std::path::Path) -> usize {
    drop(Store::open(path).unwrap());
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE filler (n INTEGER PRIMARY KEY, text TEXT);
         WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 3000)
         INSERT INTO filler SELECT n, printf('%.*c', 300, 'x') FROM r;
         PRAGMA wal_checkpoint(TRUNCATE);",
    )
    .unwrap();
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
    drop(conn);
    assert!(pages > 100, "{pages} pages");
    usize::try_from(size).unwrap()
}

/// Overwrites page `page` (numbered from 1) of the database file with zeros.
fn zero_page(path: &std::path::Path, page: usize, size: usize) {
    let mut bytes = fs::read(path).unwrap();
    bytes[(page - 1) * size..page * size].fill(0);
    fs::write(path, bytes).unwrap();
}

#[test]
fn a_zeroed_page_is_found_at_open_and_the_file_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flame.db");
    let size = filled_database(&path);
    let pages = fs::metadata(&path).unwrap().len() as usize / size;
    zero_page(&path, pages / 2, size);
    let damaged = fs::read(&path).unwrap();

    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, OpenError::Damaged { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("is damaged; SQLite found:"), "{text}");
    assert_eq!(fs::read(&path).unwrap(), damaged, "the file must not be changed");
}

#[test]
fn past_max_damage_listed_the_rest_of_the_damage_is_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flame.db");
    let size = filled_database(&path);
    let pages = fs::metadata(&path).unwrap().len() as usize / size;
    for page in (pages / 3..pages - 1).step_by(3) {
        zero_page(&path, page, size);
    }
    match Store::open(&path).unwrap_err() {
        OpenError::Damaged { found, .. } => assert_eq!(found.len(), MAX_DAMAGE_LISTED, "{found:?}"),
        other => panic!("expected Damaged, got {other:?}"),
    }
}
