//! Opening Flame: resolving a data directory, one clear `{code, message}` error for every bad
//! location, and diagnostic logging.

use std::ffi::OsStr;
use std::fs;

use flame_api::{DataDir, DataDirSource, ErrorCode, Flame, FlameConfig};

use crate::home as data_dir_at;

#[test]
fn opening_creates_the_directory_and_the_database() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("nested").join("home");
    let flame = Flame::open(data_dir_at(&home), FlameConfig::default()).unwrap();

    let info = flame.info().unwrap();
    assert_eq!(info.data_dir, home.display().to_string());
    assert_eq!(info.data_dir_source, DataDirSource::FlameHome);
    assert_eq!(info.database_path, home.join("flame.db").display().to_string());
    assert_eq!(info.schema_version, flame_store::LATEST_SCHEMA_VERSION);
    assert_eq!(info.version, flame_api::VERSION);
    assert!(home.join("flame.db").is_file());
}

#[test]
fn a_data_directory_that_is_a_file_is_unusable() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("not-a-folder");
    fs::write(&file, "keep me").unwrap();

    let err = Flame::open(data_dir_at(&file), FlameConfig::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::DataDirUnusable);
    assert!(err.message.contains("it is a file, not a folder"), "{}", err.message);
    assert_eq!(fs::read_to_string(&file).unwrap(), "keep me");
}

#[test]
fn a_data_directory_below_a_file_is_unusable() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    fs::write(&file, "").unwrap();

    let err = Flame::open(data_dir_at(&file.join("home")), FlameConfig::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::DataDirUnusable);
    assert!(err.message.contains("set FLAME_HOME"), "{}", err.message);
}

#[test]
fn a_corrupt_database_is_unreadable_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("flame.db");
    fs::write(&db, vec![0xA5; 8192]).unwrap();

    let err = Flame::open(data_dir_at(tmp.path()), FlameConfig::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::DatabaseUnreadable);
    assert!(err.message.contains("move it aside"), "{}", err.message);
    assert_eq!(fs::read(&db).unwrap(), vec![0xA5; 8192]);
}

#[test]
fn errors_serialise_as_code_and_message() {
    let err = DataDir::resolve(Some(OsStr::new("rel")), None, None).unwrap_err();
    let json = serde_json::to_value(&err).unwrap();
    assert_eq!(json["code"], "data_dir_unusable");
    assert!(json["message"].as_str().unwrap().contains("relative path rel"));
    assert_eq!(json.as_object().unwrap().len(), 2);
}

#[test]
fn logging_writes_a_rotating_file_in_the_diagnostics_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = data_dir_at(tmp.path());
    let guard = flame_api::logging::init("info", Some(&dir.diagnostics_dir()));
    tracing::info!("a line that must reach the file");
    drop(guard);

    let files: Vec<_> =
        fs::read_dir(dir.diagnostics_dir()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("flame.") && name.ends_with(".log"), "{name}");
    let text = fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains("a line that must reach the file"), "{text}");
}

/// The window opens with the database's quick check aside (it read every page of a 100k-frame
/// store before the window could show anything): a damaged file is still never written — every
/// write waits for the check and is refused with what it found, as opening refuses it — and
/// once the check has run, the app's info says so too.
#[test]
fn opened_with_its_check_aside_a_damaged_database_is_never_written() {
    use flame_model::{Actor, Role};

    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    {
        let flame = Flame::open(data_dir_at(&home), FlameConfig::default()).unwrap();
        let tree = flame.create_tree(Actor::Person, "Build", "It works", None).unwrap();
        let text = "a message long enough to fill pages of the database. ".repeat(20);
        for _ in 0..30 {
            flame.append(Actor::Person, &tree.root, Role::User, &text).unwrap();
        }
    }
    let database = home.join("flame.db");
    assert!(!home.join("flame.db-wal").exists(), "the log was checkpointed on close");
    let mut bytes = fs::read(&database).unwrap();
    let page = 4096;
    let middle = bytes.len() / page / 2;
    bytes[middle * page..(middle + 1) * page].fill(0);
    fs::write(&database, &bytes).unwrap();

    let flame = Flame::open_checking_aside(data_dir_at(&home), FlameConfig::default()).unwrap();
    let err = flame.create_tree(Actor::Person, "More", "It works", None).unwrap_err();
    assert_eq!(err.code, ErrorCode::DatabaseUnreadable);
    assert!(
        err.message.contains("is damaged; SQLite found:") && err.message.contains("left the file"),
        "{}",
        err.message
    );
    assert_eq!(flame.info().unwrap_err(), err);
    drop(flame);
    assert_eq!(fs::read(&database).unwrap(), bytes, "the damaged file was written");
}
