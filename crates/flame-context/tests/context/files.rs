//! The workspace in a context: the preamble's sentence about the tree's folder, the files a
//! finished frame's own tool calls read and changed, listed where its results are, and the files
//! the frames on the path above the focus touched themselves.

use std::collections::HashMap;

use flame_context::{MAX_LISTED_FILES, PREAMBLE, SectionKind, SectionState, preamble};
use flame_model::{FileTrail, FrameId};

use crate::spec_tree::{names, spec_tree};
use crate::{context_with_files, log_paths};

fn id(name: &str) -> FrameId {
    FrameId::parse(names().iter().find(|(n, _)| *n == name).unwrap().1).unwrap()
}

fn trail(read: &[&str], changed: &[&str]) -> FileTrail {
    FileTrail::new(read.iter().map(|s| s.to_string()), changed.iter().map(|s| s.to_string()))
}

/// Trails on A (finished), A1 (finished, below A) and B1 (in progress).
fn trails() -> HashMap<FrameId, FileTrail> {
    HashMap::from([
        (
            id("a"),
            trail(
                &["docs/<notes & plans>.md", "Cargo.toml"],
                &["src/auth.rs", "artifact-f00000000a0", "src/login.rs"],
            ),
        ),
        (id("a1"), trail(&["a1-read.md"], &["a1-changed.rs"])),
        (id("b1"), trail(&["b1-read.md"], &["b1-changed.rs"])),
    ])
}

#[test]
fn the_preamble_says_where_the_workspace_is_or_that_there_is_none() {
    let frames = spec_tree();
    let focus = id("b");
    let none = context_with_files(&frames, &focus, &[], 100_000, None, &HashMap::new());
    assert!(none.system.starts_with(PREAMBLE));
    assert!(none.system.contains("has no workspace folder"), "{}", none.system);
    assert!(none.system.contains("ask the person to choose a workspace folder"));

    let some =
        context_with_files(&frames, &focus, &[], 100_000, Some("/home/me/app"), &HashMap::new());
    assert!(some.system.starts_with(&preamble(Some("/home/me/app"))));
    // The folder comes after the start every tree with a workspace shares.
    assert!(some.system.starts_with(&flame_context::shared_preamble(true)));
    assert!(!flame_context::shared_preamble(true).contains("/home/me/app"));
    assert!(some.system.contains("workspace is the folder /home/me/app"), "{}", some.system);
    assert!(some.system.contains("run_command"));
    assert!(!some.system.contains("no workspace folder"));
    // The sentence is part of the preamble's section, so the budget counts it.
    let tokens = |doc: &flame_context::ContextDoc| {
        doc.report.sections.iter().find(|s| s.kind == SectionKind::Preamble).unwrap().tokens
    };
    assert!(tokens(&some) > flame_tokens::count(flame_tokens::Encoding::O200kBase, PREAMBLE));
    assert_eq!(
        tokens(&some),
        flame_tokens::count(flame_tokens::Encoding::O200kBase, &preamble(Some("/home/me/app")))
    );
}

#[test]
fn golden_documents_with_files() {
    let frames = spec_tree();
    let trails = trails();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/context/golden");
    let bless = std::env::var_os("FLAME_BLESS").is_some();
    // B: A is a sibling; B1: A is a relative (an uncle); A: A1 and A2 are its children.
    for name in ["b", "b1", "a"] {
        let doc = context_with_files(&frames, &id(name), &[], 100_000, Some("/w"), &trails);
        let path = dir.join(format!("files-{name}.xml"));
        if bless {
            std::fs::write(&path, &doc.xml).unwrap();
            continue;
        }
        let golden = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            golden == doc.xml,
            "{} differs from the assembled context (run `make bless` if the change is intended):\n{}",
            path.display(),
            doc.xml
        );
    }
}

#[test]
fn a_finished_frame_lists_its_files_once_escaped_and_an_open_one_does_not() {
    let frames = spec_tree();
    let doc = context_with_files(&frames, &id("b"), &[], 100_000, None, &trails());
    let xml = &doc.xml;
    assert!(
        xml.contains("<changed>src/auth.rs, src/login.rs</changed>"),
        "the changed files not already among the artifacts:\n{xml}"
    );
    assert!(xml.contains("<read>Cargo.toml, docs/&lt;notes &amp; plans&gt;.md</read>"), "{xml}");
    assert_eq!(xml.matches("artifact-f00000000a0").count(), 1, "{xml}");
    // B1 is in progress and A1 is below an off-path frame: neither lists files.
    for hidden in ["b1-read.md", "b1-changed.rs", "a1-read.md", "a1-changed.rs"] {
        assert!(!xml.contains(hidden), "{hidden}:\n{xml}");
    }
    // A's children list theirs when A is the focus.
    let doc = context_with_files(&frames, &id("a"), &[], 100_000, None, &trails());
    assert!(doc.xml.contains("<read>a1-read.md</read>"), "{}", doc.xml);
}

#[test]
fn nothing_left_to_list_means_no_files_element() {
    let frames = spec_tree();
    let only_artifacts = HashMap::from([
        (id("a"), trail(&[], &["artifact-f00000000a0"])),
        (id("a2"), trail(&[], &[])),
    ]);
    let doc = context_with_files(&frames, &id("a1"), &[], 100_000, None, &only_artifacts);
    assert!(!doc.xml.contains("<files>"), "{}", doc.xml);
}

#[test]
fn long_lists_are_cut_with_a_count_of_the_rest() {
    let frames = spec_tree();
    let read: Vec<String> = (0..MAX_LISTED_FILES + 7).map(|i| format!("f{i:03}.md")).collect();
    let changed: Vec<String> = (0..MAX_LISTED_FILES).map(|i| format!("c{i:03}.rs")).collect();
    let trails = HashMap::from([(id("a"), FileTrail::new(read, changed))]);
    let doc = context_with_files(&frames, &id("b"), &[], 100_000, None, &trails);
    let xml = &doc.xml;
    let listed = format!("f{:03}.md", MAX_LISTED_FILES - 1);
    let first_left_out = format!("f{:03}.md", MAX_LISTED_FILES);
    assert!(xml.contains(&format!("{listed}, and 7 more</read>")), "{xml}");
    assert!(!xml.contains(&first_left_out), "{xml}");
    // Exactly at the cap: every path, and no count.
    assert!(xml.contains(&format!("c{:03}.rs</changed>", MAX_LISTED_FILES - 1)), "{xml}");
    assert!(!xml.contains("more</changed>"), "{xml}");
}

#[test]
fn a_frame_shrunk_to_its_title_loses_its_files_too() {
    let frames = spec_tree();
    let trails = trails();
    let full = context_with_files(&frames, &id("b"), &[], 100_000, None, &trails);
    let sibling = |doc: &flame_context::ContextDoc| {
        doc.report.sections.iter().find(|s| s.frame.as_ref() == Some(&id("a"))).unwrap().clone()
    };
    assert_eq!(sibling(&full).state, SectionState::Full);
    // A budget just short of everything: the sibling is the first to give way.
    let tight =
        context_with_files(&frames, &id("b"), &[], full.report.total_tokens - 1, None, &trails);
    assert_eq!(sibling(&tight).state, SectionState::TitleOnly);
    assert!(!tight.xml.contains("<files>"), "{}", tight.xml);
    assert!(tight.xml.contains("title-f00000000a0"));
}

/// The frames on the path above the focus list what their own work touched, so that the focus
/// knows where the work that led to it happened (issue 39); the focus lists none of its own.
#[test]
fn the_frames_above_the_focus_list_what_they_touched_themselves() {
    let frames = spec_tree();
    let logs = log_paths(&frames);
    let path_trails = HashMap::from([
        (id("root"), trail(&["README.md"], &[])),
        (id("b"), trail(&["src/api.rs"], &["src/routes.rs"])),
        (id("b1"), trail(&["b1-own.rs"], &[])),
    ]);
    let input = flame_context::ContextInput {
        focus: &id("b1"),
        frames: &frames,
        messages: &[],
        encoding: flame_tokens::Encoding::O200kBase,
        budget: flame_context::Budget::of(100_000),
        log_paths: &logs,
        linear_message_tokens: 0,
        workspace: None,
        trails: &HashMap::new(),
        path_trails: &path_trails,
        keep_tool_results: None,
        allowance: None,
        instructions: None,
        read_back: flame_context::ReadBack::FrameLog,
    };
    let xml = flame_context::assemble(&input).unwrap().xml;
    let b = xml.find(&format!("id=\"{}\"", id("b"))).unwrap();
    let b1 = xml.find(&format!("id=\"{}\"", id("b1"))).unwrap();
    let root_files = xml.find("<read>README.md</read>").expect(&xml);
    let b_changed = xml.find("<changed>src/routes.rs</changed>").expect(&xml);
    let b_read = xml.find("<read>src/api.rs</read>").expect(&xml);
    assert!(
        root_files < b && b < b_changed && b_changed < b_read && b_read < b1,
        "each in its own element:\n{xml}"
    );
    assert!(!xml.contains("b1-own.rs"), "{xml}");
}
