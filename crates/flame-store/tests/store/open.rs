//! Opening and migrating the database, and refusing files it must not touch.

use std::fs;

use flame_store::{LATEST_SCHEMA_VERSION, OpenError, Store};

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
