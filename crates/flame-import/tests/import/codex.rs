//! Codex rollouts made by the real Codex CLI (`tests/fixtures/codex/`): the session, its
//! subagent's thread as a child frame, and Codex's token counts with their cached input.

use flame_import::{Format, FrameKind, ImportOptions, ROOT_KEY};
use flame_model::{IdSource, Role, Status};

use crate::codex_fixture;

#[test]
fn a_codex_session_is_a_tree_with_its_subagent_under_the_segment_that_spawned_it() {
    let path = codex_fixture(codex_fixture::MAIN);
    assert_eq!(flame_import::detect(&path).unwrap(), Format::Codex);
    let draft = crate::import(&path);
    let outline: Vec<String> = draft
        .frames
        .iter()
        .map(|f| format!("{:?} {:?} {} <- {:?}", f.kind, f.status, f.title, f.parent))
        .collect();
    // The root, one segment per request, and the subagent under the first.
    assert_eq!(outline.len(), 4, "{outline:#?}");
    assert_eq!(draft.frames[0].key, ROOT_KEY);
    let segments: Vec<_> = draft.frames.iter().filter(|f| f.kind == FrameKind::Segment).collect();
    assert_eq!(segments[0].title, "Look at this folder and tell me about notes.txt");
    assert_eq!(segments[0].status, Status::Completed);
    assert_eq!(segments[1].title, "What is the first line of notes.txt?");
    let at = draft.frames.iter().position(|f| f.kind == FrameKind::Subagent).unwrap();
    let sub = &draft.frames[at];
    assert_eq!(draft.frames[sub.parent.unwrap()].title, segments[0].title);
    assert!(
        sub.title.ends_with(": Count the lines of notes.txt and report the number."),
        "{}",
        sub.title
    );
    assert_eq!(sub.status, Status::Completed);
    assert_eq!(sub.results.as_deref(), Some("notes.txt has 3 lines."));
    // The subagent's own thread is in its frame: the message it was given, its command and
    // answer.
    let mine: Vec<_> = draft.messages.iter().filter(|m| m.frame == at).collect();
    let asked = mine
        .iter()
        .find(|m| m.message.content == "Count the lines of notes.txt and report the number.");
    assert!(asked.is_some(), "{mine:#?}");
    assert!(
        mine.iter()
            .any(|m| m.message.role == Role::Tool && m.message.content.contains("3 notes.txt"))
    );
    assert_eq!(draft.report.problems, Vec::<String>::new());
    draft.materialise(&mut IdSource::seeded(1)).unwrap();
}

#[test]
fn every_call_carries_codex_s_usage_with_its_cached_input_apart() {
    let draft = crate::import(&codex_fixture(codex_fixture::MAIN));
    let replies: Vec<_> =
        draft.messages.iter().filter(|m| m.message.role == Role::Assistant).collect();
    // Eight calls: four and two in the main thread's two turns, two in the subagent's.
    assert_eq!(replies.len(), 8, "{replies:#?}");
    for r in &replies {
        let usage = r.message.usage.expect("every call states its usage");
        assert!(usage.output_tokens > 20, "{usage:?}");
        assert_eq!(r.message.model.as_deref(), Some("gpt-5-mini"));
    }
    let cached: u64 = replies.iter().map(|r| r.message.usage.unwrap().cache_read_tokens).sum();
    assert!(cached > 0, "some calls read cached input");
    // Each recorded call's context is its fresh and cached input together.
    assert_eq!(draft.calls.len(), replies.len());
    for call in &draft.calls {
        let u = draft.messages[call.message].message.usage.unwrap();
        assert_eq!(call.input_tokens, u.input_tokens + u.cache_read_tokens + u.cache_write_tokens);
    }
}

#[test]
fn a_subagent_s_rollout_alone_is_a_session_of_its_own() {
    let draft = flame_import::import(
        &codex_fixture(codex_fixture::CHILD),
        None,
        &ImportOptions::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(draft.frames[0].title, "Count the lines of notes.txt and report the number.");
}
