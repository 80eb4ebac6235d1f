//! The shared sessions become trees: root, segments, subagents tied to their `Task` calls.

use flame_import::{FrameKind, ImportOptions};
use flame_model::{IdSource, Role, Status};

use crate::{SESSION_A, SESSION_B, import, shared};

#[test]
fn session_b_has_its_two_subagents_and_compaction_under_segments() {
    let draft = import(&shared(SESSION_B));
    let outline: Vec<String> = draft
        .frames
        .iter()
        .map(|f| format!("{:?} {:?} {} <- {:?}", f.kind, f.status, f.title, f.parent))
        .collect();
    // The root, 10 segments (5 of them after a commit), 2 subagents and the compaction.
    assert_eq!(outline.len(), 16, "{outline:#?}");
    let subagents: Vec<_> = draft.frames.iter().filter(|f| f.kind == FrameKind::Subagent).collect();
    assert_eq!(
        subagents.iter().map(|f| f.title.as_str()).collect::<Vec<_>>(),
        ["Explore existing codebase", "Explore sync and transcript code"]
    );
    for s in &subagents {
        assert_eq!(s.status, Status::Completed);
        assert!(s.results.as_deref().is_some_and(|r| r.len() > 500), "{}", s.title);
        assert!(
            s.criteria.starts_with("Explore the codebase")
                || s.criteria.starts_with("Read and summarize")
        );
        let parent = s.parent.unwrap();
        assert_eq!(draft.frames[parent].kind, FrameKind::Segment);
    }
    let compactions: Vec<_> =
        draft.frames.iter().filter(|f| f.kind == FrameKind::Compaction).collect();
    assert_eq!(compactions.len(), 1);
    // The compaction hangs under the segment it closed: the last one before the boundary.
    assert_eq!(draft.frames[compactions[0].parent.unwrap()].title, "Work item spotter-a0y.4");
    // Every message of each subagent file is in its frame: the first is the Task prompt.
    let first = draft.frames.iter().position(|f| f.title == "Explore existing codebase").unwrap();
    let mine: Vec<_> = draft.messages.iter().filter(|m| m.frame == first).collect();
    assert_eq!(mine[0].message.role, Role::User);
    assert!(mine[0].message.content.starts_with("Explore the codebase"));
    // 36 assistant records in agent-a93ccab share 11 message ids; its user records hold 25 tool
    // results and the prompt.
    assert_eq!(mine.iter().filter(|m| m.message.role == Role::Assistant).count(), 11);
    assert_eq!(mine.iter().filter(|m| m.message.role == Role::Tool).count(), 25);
    // The compaction boundary is a note, and the segment after it opens with it.
    let note = draft
        .messages
        .iter()
        .position(|m| {
            m.message.role == Role::Note && m.message.content.starts_with("Conversation compacted")
        })
        .unwrap();
    let seg = &draft.frames[draft.messages[note].frame];
    assert!(seg.title.ends_with("(after compaction)"), "{}", seg.title);
    // Records that carry no message are counted by type.
    assert_eq!(draft.report.skipped.get("file-history-snapshot"), Some(&27));
    assert_eq!(draft.report.skipped.get("progress:agent_progress"), Some(&94));
    assert!(draft.report.problems.is_empty(), "{:?}", draft.report.problems);
    // The draft is a valid Flame tree, focused on the last segment, which is in progress.
    let tree = draft.materialise(&mut IdSource::seeded(1)).unwrap();
    let focus = tree.frames.iter().find(|f| f.id == tree.tree.focus).unwrap();
    assert_eq!(focus.status, Status::InProgress);
    assert_eq!(draft.frames.last().map(|f| f.kind), Some(FrameKind::Compaction));
}

#[test]
fn assistant_records_sharing_a_message_id_are_merged() {
    let draft = import(&shared(SESSION_A));
    // 254 assistant records in the main file, 40 in the subagent's, 1 in the compaction's;
    // merged by id they are 139 + 12 + 1 responses (counted with a script over the files).
    let responses = draft.messages.iter().filter(|m| m.message.role == Role::Assistant).count();
    assert_eq!(responses, 139 + 12 + 1);
    assert_eq!(responses as u64 + draft.report.merged_records, 254 + 40 + 1);
    // The subagent's Task call is tied to its transcript.
    let sub = draft.frames.iter().position(|f| f.kind == FrameKind::Subagent).unwrap();
    assert_eq!(draft.frames[sub].title, "Explore transcript rendering codebase");
    // Its file: the prompt, 12 responses and 33 tool results.
    assert_eq!(draft.messages.iter().filter(|m| m.frame == sub).count(), 1 + 12 + 33);
}

#[test]
fn the_main_thread_is_segmented_at_items_requests_compaction_and_commits() {
    for name in [SESSION_A, SESSION_B] {
        let draft = import(&shared(name));
        let segments: Vec<&str> = draft
            .frames
            .iter()
            .filter(|f| f.kind == FrameKind::Segment)
            .map(|f| f.title.as_str())
            .collect();
        let (items, commits) = if name == SESSION_A { (3, 1) } else { (4, 5) };
        // The first request, one segment per work item, "continue", the item after the
        // compaction, and the work after each successful `git commit`.
        assert_eq!(segments.len(), items + 3 + commits, "{segments:#?}");
        assert_eq!(
            segments.iter().filter(|t| t.starts_with("Work item ")).count(),
            items + 1 + commits
        );
        assert_eq!(segments.iter().filter(|t| t.ends_with("(after compaction)")).count(), 1);
        assert_eq!(segments.iter().filter(|t| t.ends_with("(after commit)")).count(), commits);
        assert!(segments.last().unwrap().ends_with("(after commit)"));
        // Unsegmented, the root holds the whole main thread.
        let whole = flame_import::import(
            &shared(name),
            None,
            &ImportOptions { segment: false, session: None },
            &mut |_| {},
        )
        .unwrap();
        assert!(whole.frames.iter().all(|f| f.kind != FrameKind::Segment));
        assert_eq!(whole.messages.len(), draft.messages.len());
    }
}

#[test]
fn the_small_shared_transcripts_import() {
    for name in ["short.jsonl", "tool_heavy.jsonl", "subagent.jsonl"] {
        let draft = import(&shared(name));
        assert!(!draft.messages.is_empty(), "{name}");
        draft.materialise(&mut IdSource::seeded(2)).unwrap();
        if name == "subagent.jsonl" {
            // Not a subagent's own transcript, as the folder's README says, but a main thread
            // (no `isSidechain`, no `agentId`) whose one subagent's file was not shared: its
            // frame is kept, titled from the Task call, and the missing file reported.
            assert_eq!(draft.report.problems.len(), 1, "{:?}", draft.report.problems);
            assert!(draft.report.problems[0].contains("agent-afb92ff.jsonl is missing"));
            let sub = draft.frames.iter().find(|f| f.kind == FrameKind::Subagent).unwrap();
            assert_eq!(sub.status, Status::Completed);
        } else {
            assert!(draft.report.problems.is_empty(), "{name}: {:?}", draft.report.problems);
        }
    }
}
