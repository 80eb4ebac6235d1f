//! Export to a file through the facade: scopes, progress, the atomic write, clear errors for
//! paths that cannot be written, and the assembled context.

use std::path::Path;

use flame_api::{ErrorCode, ExportFormat, ExportScope};
use flame_model::{Actor, FrameId, Role};
use serde_json::Value;

use crate::Scratch;
use crate::frames::completed;
use crate::import::without_ids;

const A: Actor = Actor::Person;

/// Root > A (completed, with A1 under it) and B (in progress, focused); a message in each.
fn small_tree(s: &Scratch) -> (FrameId, FrameId, FrameId, FrameId) {
    let tree = s.flame.create_tree(A, "Ship it", "It ships", None).unwrap();
    s.flame.append(A, &tree.root, Role::User, "message-root").unwrap();
    let a = s.flame.push(A, None, "A", "auth").unwrap().id;
    s.flame.append(A, &a, Role::User, "message-A").unwrap();
    let a1 = s.flame.push(A, None, "A1", "login").unwrap().id;
    s.flame.append(A, &a1, Role::Assistant, "message-A1").unwrap();
    s.flame.pop(A, None, &completed("results-A1")).unwrap();
    s.flame.pop(A, None, &completed("results-A")).unwrap();
    let b = s.flame.push(A, None, "B", "api").unwrap().id;
    s.flame.append(A, &b, Role::User, "message-B").unwrap();
    (tree.root, a, a1, b)
}

fn titles(export: &Value) -> Vec<&str> {
    export["frames"].as_array().unwrap().iter().map(|f| f["title"].as_str().unwrap()).collect()
}

#[test]
fn a_scope_counts_from_the_frame_named() {
    let s = Scratch::new(21);
    let (root, a, _, _) = small_tree(&s);
    let json = |id: &FrameId, scope| -> Value {
        serde_json::from_str(&s.flame.export_text(id.as_str(), scope, ExportFormat::Json).unwrap())
            .unwrap()
    };
    let alone = json(&a, ExportScope::Frame);
    assert_eq!(titles(&alone), ["A"]);
    assert_eq!(alone["frames"][0]["parent"], Value::Null);
    assert_eq!(alone["frames"][0]["messages"][0]["content"], "message-A");
    assert_eq!(titles(&json(&a, ExportScope::Subtree)), ["A", "A1"]);
    let whole = json(&a, ExportScope::Tree);
    assert_eq!(titles(&whole), ["Ship it", "A", "A1", "B"]);
    assert_eq!(whole["frames"][0]["id"], root.as_str());
    assert!(whole["tree"]["focus"].is_string(), "the focus is in the whole tree");
    assert_eq!(json(&a, ExportScope::Subtree)["tree"]["focus"], Value::Null);
}

#[test]
fn a_file_export_is_the_text_export_with_progress_to_the_last_frame() {
    let s = Scratch::new(22);
    let (root, ..) = small_tree(&s);
    let file = s.dir.path().join("tree.json");
    let mut seen = Vec::new();
    let summary = s
        .flame
        .export_to_file(root.as_str(), ExportScope::Tree, ExportFormat::Json, &file, &mut |p| {
            seen.push((p.frames_done, p.frames_total))
        })
        .unwrap();
    let written = std::fs::read_to_string(&file).unwrap();
    let text = s.flame.export_text(root.as_str(), ExportScope::Tree, ExportFormat::Json).unwrap();
    assert_eq!(written, text);
    assert_eq!(seen, [(1, 4), (2, 4), (3, 4), (4, 4)]);
    assert_eq!((summary.frames, summary.messages), (4, 4));
    assert_eq!(summary.bytes, written.len() as u64);
    assert_eq!(summary.path, file.display().to_string());

    // Markdown nests one section per frame under the tree's title.
    let md = s.dir.path().join("tree.md");
    s.flame
        .export_to_file(root.as_str(), ExportScope::Tree, ExportFormat::Markdown, &md, &mut |_| {})
        .unwrap();
    let md = std::fs::read_to_string(md).unwrap();
    let headings: Vec<&str> = md.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(
        headings,
        [
            "# Ship it",
            "## Ship it (in_progress)",
            "### A (completed)",
            "#### A1 (completed)",
            "### B (in_progress)"
        ]
    );
    assert!(md.contains("```text\nmessage-A1\n```"), "{md}");
    assert_only_files(s.dir.path(), &["tree.json", "tree.md"]);
}

/// The regular files directly in `dir`, besides the data directory's own, are exactly `names`:
/// no temporary file was left behind.
fn assert_only_files(dir: &Path, names: &[&str]) {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("flame.db") && n != "logs" && n != "diagnostics")
        .collect();
    found.sort();
    assert_eq!(found, names);
}

#[test]
fn a_path_that_cannot_be_written_is_a_clear_error_and_leaves_nothing() {
    let s = Scratch::new(23);
    let (root, ..) = small_tree(&s);
    let export = |path: &Path| {
        s.flame
            .export_to_file(root.as_str(), ExportScope::Tree, ExportFormat::Json, path, &mut |_| {})
            .unwrap_err()
    };
    let missing = export(&s.dir.path().join("no-such-folder/tree.json"));
    assert_eq!(missing.code, ErrorCode::Invalid);
    assert!(missing.message.contains("no-such-folder does not exist"), "{}", missing.message);
    let folder = export(s.dir.path());
    assert!(folder.message.contains("is a folder"), "{}", folder.message);
    std::fs::write(s.dir.path().join("plain"), "x").unwrap();
    let under_a_file = export(&s.dir.path().join("plain/tree.json"));
    assert!(under_a_file.message.contains("is not a folder"), "{}", under_a_file.message);
    let relative = export(Path::new("tree.json"));
    assert!(relative.message.contains("full path"), "{}", relative.message);
    // sysfs refuses new files even to root, so this holds whoever runs the tests.
    let unwritable = export(Path::new("/sys/flame-export.json"));
    assert_eq!(unwritable.code, ErrorCode::Invalid);
    assert!(unwritable.message.contains("cannot be written"), "{}", unwritable.message);
    assert!(!Path::new("/sys/flame-export.json").exists());
    assert_only_files(s.dir.path(), &["plain"]);
}

#[test]
fn an_export_of_an_unknown_frame_leaves_an_existing_file_as_it_was() {
    let s = Scratch::new(24);
    small_tree(&s);
    let file = s.dir.path().join("keep.json");
    std::fs::write(&file, "precious").unwrap();
    let err = s
        .flame
        .export_to_file("f0000000000", ExportScope::Subtree, ExportFormat::Json, &file, &mut |_| {})
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound, "{err:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");
    assert_only_files(s.dir.path(), &["keep.json"]);
}

#[test]
fn the_assembled_context_is_exported_as_the_model_receives_it() {
    let s = Scratch::new(25);
    let (_, _, _, b) = small_tree(&s);
    let file = s.dir.path().join("context.md");
    let summary = s.flame.export_context_to_file(&b, None, &file).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let doc = s.flame.context(Some(&b), None).unwrap();
    assert!(text.starts_with("# Context of B\n"), "{text}");
    assert!(text.contains(doc.system.trim_end()), "the system prompt, verbatim");
    assert!(text.contains("<stack-context"), "{text}");
    assert!(text.contains("results-A"), "a finished sibling's results");
    assert!(!text.contains("message-A1"), "never another frame's conversation");
    assert!(text.contains("### 1. user"), "{text}");
    assert!(text.contains("message-B"));
    assert!(text.contains(&format!("{} of {} tokens", doc.report.total_tokens, doc.report.budget)));
    assert_eq!(summary.messages, 1);
    assert!(summary.frames >= 3, "the root, A and B at least: {summary:?}");
    assert_eq!(summary.bytes, text.len() as u64);
}

#[test]
fn a_subtree_and_a_lone_frame_import_back_losslessly() {
    let first = Scratch::new(26);
    let (_, a, ..) = small_tree(&first);
    let second = Scratch::new(27);
    for scope in [ExportScope::Subtree, ExportScope::Frame] {
        let file = first.dir.path().join("part.json");
        first
            .flame
            .export_to_file(a.as_str(), scope, ExportFormat::Json, &file, &mut |_| {})
            .unwrap();
        let exported = std::fs::read_to_string(&file).unwrap();
        let summary = second.flame.import_file(A, &file, None, true, None, &mut |_| {}).unwrap();
        let again = second
            .flame
            .export_text(summary.tree.id.as_str(), ExportScope::Tree, ExportFormat::Json)
            .unwrap();
        let mut expected = without_ids(&exported);
        // The tree's focus (B) is outside A's subtree, so the export says null and the import
        // focuses the root, as docs/export-format.md says; everything else comes back as it was.
        assert_eq!(expected["tree"]["focus"], Value::Null);
        expected["tree"]["focus"] = Value::from("frame-0");
        assert_eq!(expected, without_ids(&again), "{scope:?}");
    }
}
