//! Opening and migrating the database, and refusing files it must not touch.

use std::fs;

use flame_model::{Actor, IdSource};
use flame_store::{Change, LATEST_SCHEMA_VERSION, MAX_DAMAGE_LISTED, OpenError, Store, StoreError};

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

/// Zeroes the page in the middle of the database at `path` (pages of `size` bytes); returns the
/// damaged file's bytes, which nothing may change.
fn damage_a_middle_page(path: &std::path::Path, size: usize) -> Vec<u8> {
    let pages = fs::metadata(path).unwrap().len() as usize / size;
    zero_page(path, pages / 2, size);
    fs::read(path).unwrap()
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
    let damaged = damage_a_middle_page(&path, size);

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

/// Opened with its quick check aside, a damaged database is read at once, but nothing is ever
/// written to it: each write waits for the check and is refused with what it found — through
/// `Store::write`, through a statement of its own, and on a second connection held to the same
/// check — and the file is left as it was.
#[test]
fn a_damaged_database_opened_with_its_check_aside_is_read_but_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flame.db");
    let size = filled_database(&path);
    let damaged = damage_a_middle_page(&path, size);

    let mut store = Store::open_checking_aside(&path).unwrap();
    let check = store.damage_check().clone();
    assert!(check.outcome().is_none(), "the check is the caller's to run");
    assert_eq!(store.current_tree().unwrap(), None, "reads need not wait");
    let found = check.run().unwrap_err();
    assert!(found.to_string().contains("is damaged; SQLite found:"), "{found}");

    let mut ids = IdSource::seeded(1);
    let change = Change { actor: Actor::Person, at: 1 };
    let refused = store.create_tree(change, &ids.tree_id(), &ids.frame_id(), "A", "b", None);
    match refused.unwrap_err() {
        StoreError::Unusable(err) => assert!(matches!(*err, OpenError::Damaged { .. })),
        other => panic!("expected Unusable, got {other:?}"),
    }
    // A statement outside `Store::write`: its commit is rolled back.
    let raw = store.update_reply(flame_model::MessageId(1), "text", 2).unwrap_err();
    assert!(raw.to_string().contains("constraint failed"), "{raw}");
    let mut another = Store::open_another(&path, &check).unwrap();
    assert!(another.create_tree(change, &ids.tree_id(), &ids.frame_id(), "A", "b", None).is_err());
    drop((store, another));
    assert_eq!(fs::read(&path).unwrap(), damaged, "the file must not be changed");
}

/// A file a migration would change is checked before it opens, even with the check aside.
#[test]
fn a_damaged_database_of_an_older_version_is_refused_at_open_even_with_the_check_aside() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flame.db");
    let size = filled_database(&path);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", LATEST_SCHEMA_VERSION - 1).unwrap();
    drop(conn);
    let damaged = damage_a_middle_page(&path, size);
    let err = Store::open_checking_aside(&path).unwrap_err();
    assert!(matches!(err, OpenError::Damaged { .. }), "{err:?}");
    assert_eq!(fs::read(&path).unwrap(), damaged, "the file must not be changed");
}

/// Opened with its check aside, a whole database is written once the check has passed.
#[test]
fn a_whole_database_opened_with_its_check_aside_is_written_once_checked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flame.db");
    filled_database(&path);
    let mut store = Store::open_checking_aside(&path).unwrap();
    let check = store.damage_check().clone();
    let writer = std::thread::spawn(move || check.run());
    let mut ids = IdSource::seeded(2);
    let change = Change { actor: Actor::Person, at: 1 };
    let tree = store.create_tree(change, &ids.tree_id(), &ids.frame_id(), "A", "b", None).unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(store.current_tree().unwrap(), Some(tree.id));
}
