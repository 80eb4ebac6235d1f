//! Import through the facade: a shared session becomes a stored, logged tree; an export reads
//! back into a fresh data directory and exports again identically apart from ids.

use std::path::PathBuf;

use flame_api::{ExportFormat, ExportScope, ImportFormat};
use flame_model::{Actor, Role, Status};
use serde_json::Value;

use crate::Scratch;

fn shared(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/claude-code").join(name)
}

const SESSION: &str = "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl";

#[test]
fn a_shared_session_is_stored_with_logs_and_progress() {
    let s = Scratch::new(5);
    let mut seen = Vec::new();
    let summary = s
        .flame
        .import_file(Actor::Cli, &shared(SESSION), None, true, None, &mut |p| seen.push(p))
        .unwrap();
    // The root, 10 segments (5 begun by a `git commit`), 2 subagents and the compaction.
    assert_eq!(summary.frames, 16);
    assert!(summary.problems.is_empty(), "{:?}", summary.problems);
    assert!(seen.iter().any(|p| p.bytes_read == p.total_bytes && p.file == SESSION));
    let status = s.flame.status(None).unwrap();
    assert_eq!(status.tree.id, summary.tree.id, "the imported tree becomes current");
    assert_eq!(status.frames.len(), 16);
    let sub = status.frames.iter().find(|f| f.frame.title == "Explore existing codebase").unwrap();
    assert_eq!(sub.frame.status, Status::Completed);
    assert!(sub.frame.tokens > 10_000);
    // Every frame's log reads as the import's, written to its file when first read.
    for f in &status.frames {
        assert!(!std::path::Path::new(&f.log_path).exists(), "not written with the import");
        let log = s.flame.log(&f.frame.id).unwrap();
        assert!(log.contains("imported by cli"), "{}", f.log_path);
        assert_eq!(std::fs::read_to_string(&f.log_path).unwrap(), log);
    }
    // The focused frame's context holds its own messages only, and the subagents' results.
    let context = s.flame.context(None, None).unwrap();
    assert!(context.report.total_tokens < context.report.linear_tokens);
    // The finished segments' file trails were stored with the tree, and the stack-context
    // names them, since imported frames have no artifacts.
    let first = status.frames.iter().find(|f| f.frame.title == "Work item spotter-a0y.1").unwrap();
    let trail = s.flame.file_trail(&first.frame.id).unwrap();
    assert!(!trail.changed.is_empty() && !trail.read.is_empty(), "{trail:?}");
    assert!(trail.changed.iter().chain(&trail.read).all(|p| !p.starts_with("/home/")), "{trail:?}");
    assert!(context.xml.contains("<files>"), "{}", context.xml);
    let compacted =
        status.frames.iter().find(|f| f.frame.title.ends_with("(after compaction)")).unwrap();
    let messages = s.flame.messages(&compacted.frame.id).unwrap();
    assert_eq!(messages[0].role, Role::Note);
    assert!(messages[0].content.starts_with("Conversation compacted"));
}

/// An import leaves its messages to be indexed for search afterwards; `catch_up_search` (which
/// the window runs on a thread of its own) indexes them on its own connection, and a search
/// finds them as it would have found them at once.
#[test]
fn an_imports_messages_are_indexed_for_search_by_the_catch_up() {
    let s = Scratch::new(6);
    let summary =
        s.flame.import_file(Actor::Cli, &shared(SESSION), None, true, None, &mut |_| {}).unwrap();
    let covered = s.flame.catch_up_search().unwrap();
    assert!(covered > 100, "the session's messages were left to index: {covered}");
    assert_eq!(s.flame.catch_up_search().unwrap(), 0, "nothing is left");
    let hits = s.flame.search("commit", Some(&summary.tree.id), None).unwrap();
    assert!(!hits.is_empty());
}

#[test]
fn a_bad_path_or_format_is_a_clear_error_and_writes_nothing() {
    let s = Scratch::new(6);
    let err = s
        .flame
        .import_file(Actor::Cli, &shared("missing.jsonl"), None, true, None, &mut |_| {})
        .unwrap_err();
    assert_eq!(err.code, flame_api::ErrorCode::NotFound, "{err:?}");
    let err = s
        .flame
        .import_file(Actor::Cli, &shared("README.md"), None, true, None, &mut |_| {})
        .unwrap_err();
    assert_eq!(err.code, flame_api::ErrorCode::Invalid, "{err:?}");
    assert!(err.message.contains("--format"));
    let err = s
        .flame
        .import_file(
            Actor::Cli,
            &shared(SESSION),
            Some(ImportFormat::Flame),
            true,
            None,
            &mut |_| {},
        )
        .unwrap_err();
    assert!(err.message.contains("is not a Flame export"), "{err:?}");
    assert!(s.flame.trees().unwrap().is_empty());
}

/// Replaces every id in an export with its order of first appearance, so two exports of the
/// same tree under different ids compare equal.
pub fn without_ids(export: &str) -> Value {
    let mut value: Value = serde_json::from_str(export).unwrap();
    let mut names: std::collections::HashMap<String, String> = Default::default();
    for f in value["frames"].as_array().unwrap() {
        let id = f["id"].as_str().unwrap().to_owned();
        let n = names.len();
        names.entry(id).or_insert_with(|| format!("frame-{n}"));
    }
    let rename = |v: &mut Value, names: &std::collections::HashMap<String, String>| {
        if let Some(id) = v.as_str() {
            *v = Value::String(names[id].clone());
        }
    };
    rename(&mut value["tree"]["focus"], &names);
    for f in value["frames"].as_array_mut().unwrap() {
        for key in ["id", "parent", "retry_of"] {
            rename(&mut f[key], &names);
        }
    }
    value
}

#[test]
fn an_export_imports_back_losslessly() {
    let first = Scratch::new(7);
    first.flame.import_file(Actor::Cli, &shared(SESSION), None, true, None, &mut |_| {}).unwrap();
    // A failed frame and its retry, so retry links round-trip too.
    let tree = first.flame.status(None).unwrap();
    let focus = tree.focus.clone();
    let child = first.flame.push(Actor::Cli, Some(&focus), "Try it", "it works").unwrap();
    first
        .flame
        .pop(
            Actor::Cli,
            Some(&child.id),
            &flame_api::PopRequest {
                status: flame_model::lifecycle::PopStatus::Failed,
                results: None,
                results_compacted: None,
                artifacts: vec!["src/a.rs".into()],
                decisions: vec!["keep it small".into()],
                reason: Some("it did not".into()),
            },
        )
        .unwrap();
    first.flame.retry(Actor::Cli, &child.id).unwrap();
    let exported = first
        .flame
        .export_text(tree.tree.id.as_str(), ExportScope::Subtree, ExportFormat::Json)
        .unwrap();

    let second = Scratch::new(8);
    let file = second.dir.path().join("export.json");
    std::fs::write(&file, &exported).unwrap();
    let summary =
        second.flame.import_file(Actor::Cli, &file, None, true, None, &mut |_| {}).unwrap();
    assert_ne!(summary.tree.id, tree.tree.id, "ids are new");
    let again = second
        .flame
        .export_text(summary.tree.id.as_str(), ExportScope::Subtree, ExportFormat::Json)
        .unwrap();
    assert_eq!(without_ids(&exported), without_ids(&again));

    // A subtree exports on its own, rooted at the frame asked for.
    let sub = tree.frames.iter().find(|f| f.frame.title == "Work item spotter-a0y.1").unwrap();
    let part: Value = serde_json::from_str(
        &first
            .flame
            .export_text(sub.frame.id.as_str(), ExportScope::Subtree, ExportFormat::Json)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(part["frames"].as_array().unwrap().len(), 2);
    assert_eq!(part["frames"][0]["parent"], Value::Null);
    assert_eq!(part["version"], 2);

    let markdown = first
        .flame
        .export_text(tree.tree.id.as_str(), ExportScope::Subtree, ExportFormat::Markdown)
        .unwrap();
    assert!(
        markdown.contains("\n#### Explore existing codebase (completed)\n"),
        "under its segment, under the root"
    );
}

#[test]
fn an_opencode_database_imports_like_its_json_storage() {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../flame-import/tests/import/fixtures/opencode");
    let s = Scratch::new(9);
    let from_db = s
        .flame
        .import_file(Actor::Cli, &fixtures.join("opencode.db"), None, true, None, &mut |_| {})
        .unwrap();
    let from_json = s
        .flame
        .import_file(
            Actor::Cli,
            &fixtures.join("storage"),
            Some(ImportFormat::OpenCode),
            true,
            None,
            &mut |_| {},
        )
        .unwrap();
    assert_eq!((from_db.frames, from_db.messages), (4, 12));
    let db = s
        .flame
        .export_text(from_db.tree.id.as_str(), ExportScope::Subtree, ExportFormat::Json)
        .unwrap();
    let json = s
        .flame
        .export_text(from_json.tree.id.as_str(), ExportScope::Subtree, ExportFormat::Json)
        .unwrap();
    assert_eq!(without_ids(&db), without_ids(&json), "both layouts give the same tree");
    let replay =
        flame_api::replay_file(&fixtures.join("opencode.db"), None, None, &Default::default())
            .unwrap();
    assert_eq!(replay.calls, 5);
    assert_eq!(replay.linear_tokens, 10_200 + 11_200 + 12_000 + 800 + 950);
}

/// A Flame export of a chain of `depth + 1` frames (the root, then each frame under the one
/// before), every frame with one message stating `tokens` tokens; the last frame is the focus.
fn chain_export(depth: usize, tokens: u64) -> Value {
    let id = |i: usize| format!("f{i:010}");
    let frames: Vec<Value> = (0..=depth)
        .map(|i| {
            serde_json::json!({
                "id": id(i), "parent": i.checked_sub(1).map(id), "position": 0,
                "title": format!("Step {i}"), "success_criteria": "it works",
                "success_criteria_compacted": null, "status": "in_progress", "status_reason": null,
                "results": null, "results_compacted": null, "artifacts": [], "decisions": [],
                "retry_of": null, "created_at": 1, "started_at": 1, "ended_at": null,
                "messages": [{
                    "role": "user", "content": "hello there", "tool_calls": null,
                    "tool_result": null, "model": null, "usage": null, "tokens": tokens,
                    "created_at": 2, "interrupted": false
                }]
            })
        })
        .collect();
    serde_json::json!({
        "format": "flame-export", "version": 1,
        "tree": { "title": "Chain", "created_at": 1, "focus": id(depth) },
        "frames": frames
    })
}

fn import_value(
    s: &Scratch,
    export: &Value,
) -> Result<flame_api::ImportSummary, flame_api::ApiError> {
    let file = s.dir.path().join("hostile.json");
    std::fs::write(&file, export.to_string()).unwrap();
    s.flame.import_file(Actor::Cli, &file, Some(ImportFormat::Flame), true, None, &mut |_| {})
}

#[test]
fn absurd_token_counts_are_recounted_and_the_tree_stays_readable() {
    for tokens in [1u64 << 63, u64::MAX] {
        let s = Scratch::new(20);
        // Two frames each claiming `tokens`: their sum overflows u64 when it is u64::MAX.
        let summary = import_value(&s, &chain_export(1, tokens)).unwrap();
        assert!(summary.problems.iter().any(|p| p.contains("recounted")), "{:?}", summary.problems);
        let status = s.flame.status(None).unwrap();
        let root = &status.frames[0].frame;
        assert_eq!(root.tokens, flame_tokens::count(flame_api::DEFAULT_ENCODING, "hello there"));
        // A restart reads the tree back, and the command line can delete it.
        let again = s.reopen(21);
        again.status(None).unwrap();
        again.context(None, None).unwrap();
        again.delete_tree(Actor::Cli, &summary.tree.id).unwrap();
    }
}

#[test]
fn an_overlong_title_is_cut_to_the_limit_with_a_note() {
    let s = Scratch::new(22);
    let mut export = chain_export(0, 1);
    export["frames"][0]["title"] = Value::String("x".repeat(100_000));
    export["tree"]["title"] = Value::String("y".repeat(100_000));
    let summary = import_value(&s, &export).unwrap();
    let status = s.flame.status(None).unwrap();
    let title = &status.frames[0].frame.title;
    assert_eq!(title.chars().count(), flame_model::MAX_TITLE_CHARS);
    assert!(title.ends_with('…'), "{title}");
    assert_eq!(status.tree.title.chars().count(), flame_model::MAX_TITLE_CHARS);
    assert!(
        summary.problems.iter().any(|p| p.contains("title of 100000 characters")),
        "{:?}",
        summary.problems
    );
    flame_model::lifecycle::check_identity(title, &status.frames[0].frame.success_criteria)
        .unwrap();
}

#[test]
fn a_chain_deeper_than_the_limit_is_refused_and_one_at_the_limit_imported() {
    let s = Scratch::new(23);
    let err = import_value(&s, &chain_export(flame_model::MAX_DEPTH + 1, 1)).unwrap_err();
    assert_eq!(err.code, flame_api::ErrorCode::Invalid, "{err:?}");
    assert!(
        err.message.contains(&format!("deeper than {} levels", flame_model::MAX_DEPTH)),
        "{}",
        err.message
    );
    assert!(s.flame.trees().unwrap().is_empty(), "nothing was written");

    let summary = import_value(&s, &chain_export(flame_model::MAX_DEPTH, 1)).unwrap();
    assert_eq!(summary.frames as usize, flame_model::MAX_DEPTH + 1);
    let context = s.flame.context(None, None).unwrap();
    assert!(context.xml.contains(&format!("Step {}", flame_model::MAX_DEPTH)));
}

#[test]
fn a_message_over_the_cap_is_cut_with_a_note_and_the_rest_imported() {
    let s = Scratch::new(24);
    let mut export = chain_export(1, 1);
    let big = "é".repeat(flame_store::MAX_MESSAGE_BYTES / 2 + 10);
    export["frames"][1]["messages"][0]["content"] = Value::String(big);
    let summary = import_value(&s, &export).unwrap();
    assert_eq!(summary.messages, 2);
    assert!(summary.problems.iter().any(|p| p.contains("cut to")), "{:?}", summary.problems);
    let messages = s.flame.messages(&summary.tree.focus).unwrap();
    let content = &messages[0].content;
    assert!(content.len() <= flame_store::MAX_MESSAGE_BYTES, "{}", content.len());
    assert!(content.starts_with("éé"));
    assert!(content.ends_with("the rest was not stored]"), "{}", &content[content.len() - 200..]);
    assert!(messages[0].tokens < flame_store::MAX_MESSAGE_BYTES as u64);
}

/// The frames of an export with their ids, links and costs left out, as sorted JSON texts: what
/// must survive an import and an export again, whatever the ids and the order of siblings' walks.
fn frames_without_ids(export: &flame_import::flame_json::Export) -> Vec<String> {
    let mut frames: Vec<String> = export
        .frames
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.id.clear();
            f.parent = f.parent.map(|_| String::new());
            f.retry_of = f.retry_of.map(|_| String::new());
            f.cost = None;
            serde_json::to_string(&f).unwrap()
        })
        .collect();
    frames.sort();
    frames
}

#[test]
fn a_generated_scale_export_imports_as_one_tree_and_exports_back_the_same() {
    use flame_import::scale::{ScaleSpec, write_export};
    let s = Scratch::new(25);
    let spec = ScaleSpec::new(300, 700, 19);
    let file = s.dir.path().join("scale.json");
    let mut bytes = Vec::new();
    write_export(&spec, &mut bytes).unwrap();
    std::fs::write(&file, &bytes).unwrap();
    let generated: flame_import::flame_json::Export = serde_json::from_slice(&bytes).unwrap();

    let summary = s
        .flame
        .import_file(Actor::Cli, &file, Some(ImportFormat::Flame), true, None, &mut |_| {})
        .unwrap();
    assert_eq!((summary.frames, summary.messages), (300, 700));
    assert!(summary.problems.is_empty(), "{:?}", summary.problems);
    assert_eq!(s.flame.trees().unwrap().len(), 1, "one tree");
    let status = s.flame.status(None).unwrap();
    assert_eq!(status.frames.len(), 300);
    let stored: u64 = status.frames.iter().map(|f| f.frame.message_count).sum();
    assert_eq!(stored, 700);
    let focus = status.frames.iter().find(|f| f.frame.id == status.focus).unwrap();
    assert_eq!(focus.frame.status, Status::InProgress);
    // The focus ends the in-progress chain from the root.
    let mut chain = vec![&focus.frame];
    while let Some(parent) = &chain.last().unwrap().parent {
        chain.push(&status.frames.iter().find(|f| &f.frame.id == parent).unwrap().frame);
    }
    assert_eq!(chain.len(), spec.chain);
    assert!(chain.iter().all(|f| f.status == Status::InProgress));

    let again = s.flame.export(summary.tree.id.as_str(), ExportScope::Tree, &mut |_| {}).unwrap();
    assert_eq!(again.tree.title, generated.tree.title);
    assert_eq!(frames_without_ids(&again), frames_without_ids(&generated));
}

#[test]
fn an_imports_logs_are_written_when_read_or_changed_and_read_as_if_written_at_once() {
    use flame_import::scale::{ScaleSpec, write_export};
    use std::path::Path;
    // Two data directories with the same ids and times import the same export.
    let (now, later) = (Scratch::new(26), Scratch::new(26));
    let file = now.dir.path().join("scale.json");
    write_export(&ScaleSpec::new(60, 150, 5), &mut std::fs::File::create(&file).unwrap()).unwrap();
    for s in [&now, &later] {
        s.flame.import_file(Actor::Cli, &file, None, true, None, &mut |_| {}).unwrap();
    }
    let status = now.flame.status(None).unwrap();
    // The second's frames, with its log paths.
    let theirs = later.flame.status(None).unwrap();
    assert_eq!(status.tree.id, theirs.tree.id);
    let logs = Path::new(&status.frames[0].log_path).parent().unwrap();
    assert!(!logs.exists(), "the import wrote no log");

    // In the first, every log is read at once.
    let at_once: Vec<String> =
        status.frames.iter().map(|f| now.flame.log(&f.frame.id).unwrap()).collect();
    assert!(at_once.iter().all(|log| log.contains("imported by cli")));

    // In the second, the focus gets a message and a planned frame a new title before any log
    // is read: the change writes their logs whole, the import's part as the first wrote it.
    let planned = status.frames.iter().find(|f| f.frame.status == Status::Planned).unwrap();
    later.flame.append(Actor::Cli, &status.focus, Role::User, "after the import").unwrap();
    later.flame.edit(Actor::Cli, &planned.frame.id, Some("Renamed later"), None).unwrap();
    for changed in [&status.focus, &planned.frame.id] {
        let entry = theirs.frames.iter().find(|f| &f.frame.id == changed).unwrap();
        assert!(Path::new(&entry.log_path).exists(), "written by the change");
    }
    // Handing out one frame's entry writes its log, so the path names a file.
    let untouched = theirs.frames.iter().find(|f| f.frame.status == Status::Completed).unwrap();
    assert!(!Path::new(&untouched.log_path).exists());
    let entry = later.flame.frame(&untouched.frame.id).unwrap();
    assert!(Path::new(&entry.log_path).exists());
    for (f, once) in status.frames.iter().zip(&at_once) {
        let log = later.flame.log(&f.frame.id).unwrap();
        if f.frame.id == status.focus || f.frame.id == planned.frame.id {
            assert!(log.starts_with(once.as_str()) && log.len() > once.len(), "{log}");
        } else {
            assert_eq!(&log, once);
        }
    }
    let renamed = later.flame.log(&planned.frame.id).unwrap();
    assert!(renamed.starts_with(&format!("# {}\n", planned.frame.title)), "{renamed}");
    assert!(renamed.contains("**Title:** Renamed later"), "{renamed}");
}

#[test]
fn every_log_an_imported_trees_context_names_exists() {
    use flame_import::scale::{ScaleSpec, write_export};
    let s = Scratch::new(27);
    let file = s.dir.path().join("scale.json");
    write_export(&ScaleSpec::new(60, 150, 5), &mut std::fs::File::create(&file).unwrap()).unwrap();
    s.flame.import_file(Actor::Cli, &file, None, true, None, &mut |_| {}).unwrap();
    // An agent outside Flame reads the `<log>` paths of its context directly, so each must name
    // a file although the import wrote none.
    let xml = s.flame.context(None, None).unwrap().xml;
    let paths: Vec<&str> =
        xml.split("<log>").skip(1).map(|rest| rest.split("</log>").next().unwrap()).collect();
    assert!(paths.len() > 1, "{xml}");
    for path in paths {
        assert!(std::path::Path::new(path).exists(), "{path} is named but missing");
    }
}
