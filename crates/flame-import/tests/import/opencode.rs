//! OpenCode's JSON storage layout (the fixtures in `fixtures/opencode/`, written by `make.py`
//! from the documented formats; the database layout is read through `flame-store` and tested
//! in `flame-api`).

use std::path::PathBuf;

use flame_import::{FrameKind, ImportOptions, import};
use flame_model::{IdSource, Role, Status};

fn storage() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/import/fixtures/opencode/storage")
}

#[test]
fn a_session_and_its_child_session_become_a_tree() {
    let draft = import(&storage(), None, &ImportOptions::default(), &mut |_| {}).unwrap();
    let frames: Vec<_> =
        draft.frames.iter().map(|f| (f.kind, f.title.as_str(), f.parent)).collect();
    assert_eq!(
        frames,
        [
            (FrameKind::Session, "Add a health endpoint", None),
            (FrameKind::Segment, "Add a /health endpoint and test it", Some(0)),
            (FrameKind::Segment, "Now document it in the README", Some(0)),
            (FrameKind::Subagent, "Find the router", Some(1)),
        ]
    );
    let child = &draft.frames[3];
    assert_eq!(child.status, Status::Completed);
    assert_eq!(child.results.as_deref(), Some("Routes live in src/routes.ts"));
    assert_eq!(child.criteria, "Where are HTTP routes declared?");
    // Each step is one assistant message and one recorded call; tool outputs follow it.
    let roles: Vec<Role> =
        draft.messages.iter().filter(|m| m.frame == 1).map(|m| m.message.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Assistant, Role::Tool]);
    assert_eq!(
        draft.calls.iter().map(|c| c.input_tokens).collect::<Vec<_>>(),
        [10_200, 11_200, 12_000, 800, 950]
    );
    assert_eq!(draft.report.skipped.get("part:snapshot"), Some(&1));
    draft.materialise(&mut IdSource::seeded(3)).unwrap();
}

#[test]
fn each_segment_has_the_files_its_edit_calls_changed() {
    let draft = import(&storage(), None, &ImportOptions::default(), &mut |_| {}).unwrap();
    let changed: Vec<(usize, Vec<String>)> =
        draft.trails(|_| true).into_iter().map(|(frame, t)| (frame, t.changed)).collect();
    assert_eq!(changed, [(1, vec!["src/routes.ts".to_owned()]), (2, vec!["README.md".to_owned()])]);
}

#[test]
fn a_damaged_file_in_storage_is_reported_and_the_rest_imported() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&storage(), &dir.path().join("storage"));
    let broken = dir.path().join("storage/part/msg_04/prt_04_02.json");
    std::fs::write(&broken, b"{\"type\": \"text\", \"te").unwrap();
    std::fs::write(dir.path().join("storage/part/msg_04/prt_04_09.json"), b"").unwrap();
    let draft = import(dir.path(), None, &ImportOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(draft.report.problems.len(), 2, "{:?}", draft.report.problems);
    assert!(
        draft.report.problems.iter().any(|p| p.contains("prt_04_02.json") && p.contains("EOF"))
    );
    assert!(draft.report.problems.iter().any(|p| p.contains("prt_04_09.json: the file is empty")));
    assert_eq!(draft.frames.len(), 4);
}

#[test]
fn a_file_in_storage_past_the_record_limit_is_reported_not_held() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&storage(), &dir.path().join("storage"));
    let huge = format!(
        "{{\"type\": \"text\", \"text\": \"{}\"}}",
        "x".repeat(flame_import::MAX_RECORD_BYTES)
    );
    std::fs::write(dir.path().join("storage/part/msg_04/prt_04_02.json"), huge).unwrap();
    let draft = import(dir.path(), None, &ImportOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(draft.report.problems.len(), 1, "{:?}", draft.report.problems);
    assert!(
        draft.report.problems[0].contains(&format!(
            "prt_04_02.json: more than the {} bytes a record may be; skipped",
            flame_import::MAX_RECORD_BYTES
        )),
        "{:?}",
        draft.report.problems
    );
    assert_eq!(draft.frames.len(), 4);
}

#[test]
fn a_named_session_that_is_not_there_is_a_clear_error() {
    let options = ImportOptions { segment: true, session: Some("ses_nope".into()) };
    let err = import(&storage(), None, &options, &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("no session ses_nope"), "{err}");
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A session listed as its own ancestor (found by fuzzing: it made the import place the session
/// again and again until memory ran out) is imported once, and the loop is reported.
#[test]
fn a_session_that_is_its_own_ancestor_is_imported_once() {
    use flame_import::opencode::{Rows, SessionRow, from_rows};
    let session = |id: &str, parent: Option<&str>| SessionRow {
        id: id.to_owned(),
        parent_id: parent.map(str::to_owned),
        title: "loop".to_owned(),
        directory: None,
        time_created: 1,
    };
    for (sessions, named) in [
        (vec![session("a", Some("a"))], Some("a")),
        (vec![session("r", None), session("r", Some("r"))], None),
    ] {
        let rows = Rows { sessions, ..Rows::default() };
        let draft = from_rows(rows, named, &ImportOptions::default()).unwrap();
        assert_eq!(draft.frames.len(), 1, "{:?}", draft.frames);
        assert!(
            draft.report.problem_lines().iter().any(|p| p.contains("descendant of itself")),
            "{:?}",
            draft.report.problem_lines()
        );
        draft.materialise(&mut IdSource::seeded(1)).unwrap();
    }
}
