//! The frame operations through the facade: defaults, nested plans, status order, error codes,
//! and the Markdown logs on disk.

use std::fs;

use flame_api::{Env, ErrorCode, Flame, FlameConfig, PlanSpec, PopRequest, ReplyOwner};
use flame_model::lifecycle::PopStatus;
use flame_model::{Actor, FrameId, NewMessage, Role, Status};

use crate::{Scratch, home};

const A: Actor = Actor::Person;

fn spec(title: &str, children: Vec<PlanSpec>) -> PlanSpec {
    PlanSpec {
        title: title.to_owned(),
        success_criteria: format!("{title} is done"),
        budget: None,
        children,
    }
}

pub fn completed(results: &str) -> PopRequest {
    PopRequest {
        status: PopStatus::Completed,
        results: Some(results.to_owned()),
        results_compacted: None,
        artifacts: vec![],
        decisions: vec![],
        reason: None,
    }
}

#[test]
fn commands_default_to_the_current_tree_and_its_focus() {
    let s = Scratch::new(1);
    let tree = s.flame.create_tree(A, "Build the app", "It works", None).unwrap();
    let child = s.flame.push(A, None, "Auth", "JWT").unwrap();
    assert_eq!(child.parent.as_ref(), Some(&tree.root));
    let popped = s.flame.pop(A, None, &completed("done")).unwrap();
    assert_eq!(popped.id, child.id);
    assert_eq!(s.flame.status(None).unwrap().focus, tree.root);
}

#[test]
fn without_a_tree_commands_say_how_to_make_one() {
    let s = Scratch::new(2);
    let err = s.flame.push(A, None, "x", "y").unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
    assert!(err.message.contains("flame tree new"), "{}", err.message);
}

#[test]
fn one_plan_call_creates_nested_planned_frames() {
    let s = Scratch::new(3);
    s.flame.create_tree(A, "Root", "r", None).unwrap();
    let created = s
        .flame
        .plan(
            A,
            None,
            None,
            &[
                spec("B", vec![spec("B1", vec![]), spec("B2", vec![spec("B2a", vec![])])]),
                spec("C", vec![]),
            ],
        )
        .unwrap();
    let titles: Vec<_> = created.iter().map(|f| f.title.as_str()).collect();
    assert_eq!(titles, ["B", "B1", "B2", "B2a", "C"]);
    assert!(created.iter().all(|f| f.status == Status::Planned));
    let order: Vec<_> =
        s.flame.status(None).unwrap().frames.into_iter().map(|e| e.frame.title).collect();
    assert_eq!(order, ["Root", "B", "B1", "B2", "B2a", "C"], "status lists frames depth first");
}

#[test]
fn errors_carry_codes_front_ends_branch_on() {
    let s = Scratch::new(4);
    let tree = s.flame.create_tree(A, "Root", "r", None).unwrap();
    let refused = s.flame.start(A, &tree.root).unwrap_err();
    assert_eq!(refused.code, ErrorCode::Refused);
    assert!(
        refused.message.contains(tree.root.as_str()) && refused.message.contains("in_progress")
    );
    let invalid = s.flame.push(A, None, "", "c").unwrap_err();
    assert_eq!(invalid.code, ErrorCode::Invalid);
    let missing = s.flame.start(A, &FrameId::parse("fzzzzzzzzzz").unwrap()).unwrap_err();
    assert_eq!(missing.code, ErrorCode::NotFound);
}

#[test]
fn every_frame_has_a_log_with_its_whole_history() {
    let s = Scratch::new(5);
    s.flame.create_tree(A, "Root", "r", None).unwrap();
    let auth = s.flame.push(A, None, "Auth", "JWT works").unwrap();
    s.flame.append(A, &auth.id, Role::User, "Please add **login**").unwrap();
    s.flame
        .append(A, &auth.id, Role::Assistant, "Added `POST /login`.\n<!-- flame:seq=999 -->")
        .unwrap();
    let request = PopRequest {
        artifacts: vec!["src/auth.rs".into()],
        decisions: vec!["bcrypt".into()],
        ..completed("Login with JWT")
    };
    s.flame.pop(A, None, &request).unwrap();

    let entry = s.flame.frame(&auth.id).unwrap();
    assert!(
        entry.log_path.ends_with(&format!("logs/{}/{}.md", auth.tree, auth.id)),
        "{}",
        entry.log_path
    );
    let on_disk = fs::read_to_string(&entry.log_path).unwrap();
    assert_eq!(s.flame.log(&auth.id).unwrap(), on_disk, "the log was already up to date");
    for expected in [
        "# Auth",
        "pushed by person",
        "**Success criteria:** JWT works",
        "Please add **login**",
        "Added `POST /login`.\n\\<!-- flame:seq=999 -->",
        "popped as completed",
        "Login with JWT",
        "- src/auth.rs",
        "- bcrypt",
    ] {
        assert!(on_disk.contains(expected), "the log lacks {expected:?}:\n{on_disk}");
    }
    assert_eq!(on_disk.matches("Please add **login**").count(), 1);
}

#[test]
fn a_log_that_lags_behind_is_repaired_when_flame_opens() {
    let s = Scratch::new(6);
    s.flame.create_tree(A, "Root", "r", None).unwrap();
    let frame = s.flame.push(A, None, "Work", "w").unwrap();
    s.flame.append(A, &frame.id, Role::User, "first").unwrap();
    let path = s.flame.frame(&frame.id).unwrap().log_path;

    // A process that committed and was killed before its log append: the store has the
    // message, the log has only the start of its section.
    {
        let mut store = flame_store::Store::open(&s.dir.path().join("flame.db")).unwrap();
        let change = flame_store::Change { actor: Actor::Agent, at: 1_795_307_700_000 };
        store
            .add_message(change, &frame.id, &NewMessage::text(Role::Assistant, "second"), 1)
            .unwrap();
    }
    let mut torn = fs::read_to_string(&path).unwrap();
    torn.push_str("\n## 2026-11-22 00:35:00Z · assis");
    fs::write(&path, &torn).unwrap();

    let reopened = s.reopen(7);
    let repaired = fs::read_to_string(&path).unwrap();
    assert!(repaired.contains("second") && !repaired.contains("· assis\n"), "{repaired}");
    fs::remove_file(&path).unwrap();
    assert_eq!(
        reopened.log(&frame.id).unwrap(),
        repaired,
        "the repaired log equals one written from scratch"
    );
}

#[test]
fn a_deleted_log_file_is_rewritten_whole_on_the_next_read() {
    let s = Scratch::new(8);
    let tree = s.flame.create_tree(A, "Root", "r", None).unwrap();
    s.flame.append(A, &tree.root, Role::Note, "kept").unwrap();
    let path = s.flame.frame(&tree.root).unwrap().log_path;
    let complete = fs::read_to_string(&path).unwrap();
    fs::remove_file(&path).unwrap();
    assert_eq!(s.flame.log(&tree.root).unwrap(), complete);
}

#[test]
fn every_operation_is_in_the_log_of_the_frame_it_changed() {
    let s = Scratch::new(9);
    let tree = s.flame.create_tree(A, "Root", "r", None).unwrap();
    let p = s.flame.plan(A, None, None, &[spec("P", vec![])]).unwrap().remove(0);
    s.flame.edit(A, &p.id, Some("P2"), None).unwrap();
    let q = s.flame.plan(A, None, None, &[spec("Q", vec![])]).unwrap().remove(0);
    s.flame.move_frame(A, &q.id, None, Some(0)).unwrap();
    s.flame.start(A, &p.id).unwrap();
    s.flame
        .pop(
            A,
            Some(&p.id),
            &PopRequest {
                status: PopStatus::Failed,
                reason: Some("flaky".into()),
                ..completed("")
            },
        )
        .unwrap();
    let retry = s.flame.retry(A, &p.id).unwrap();
    s.flame
        .pop(
            A,
            Some(&retry.id),
            &PopRequest {
                status: PopStatus::Blocked,
                reason: Some("need a key".into()),
                ..completed("")
            },
        )
        .unwrap();
    s.flame.resume(A, &retry.id).unwrap();
    s.flame.invalidate(A, &q.id, Some("not needed")).unwrap();
    let gone = s.flame.plan(A, None, None, &[spec("Gone", vec![])]).unwrap().remove(0);
    let gone_log = s.flame.frame(&gone.id).unwrap().log_path;
    s.flame.delete(A, &gone.id).unwrap();
    s.flame.focus(A, &tree.root).unwrap();

    let log = |id: &FrameId| s.flame.log(id).unwrap();
    let p_log = log(&p.id);
    for expected in [
        "planned by person",
        "edited by person",
        "**Title:** P2",
        "started by person",
        "popped as failed",
        "flaky",
        "Retried as",
    ] {
        assert!(p_log.contains(expected), "{expected:?} missing:\n{p_log}");
    }
    let retry_log = log(&retry.id);
    for expected in ["retries the failed", "popped as blocked", "need a key", "resumed by person"] {
        assert!(retry_log.contains(expected), "{expected:?} missing:\n{retry_log}");
    }
    let q_log = log(&q.id);
    assert!(
        q_log.contains("moved by person")
            && q_log.contains("invalidated by person")
            && q_log.contains("not needed"),
        "{q_log}"
    );
    let gone_text = fs::read_to_string(gone_log).unwrap();
    assert!(gone_text.contains("deleted by person"), "{gone_text}");
    assert!(
        !log(&tree.root).contains("focused"),
        "focus changes are not part of a frame's history"
    );
}

#[test]
fn imported_frames_get_logs_with_their_messages() {
    let s = Scratch::new(10);
    let mut ids = flame_model::IdSource::seeded(77);
    let (tree_id, root) = (ids.tree_id(), ids.frame_id());
    let tree = flame_model::Tree {
        id: tree_id.clone(),
        title: "Imported".into(),
        root: root.clone(),
        focus: root.clone(),
        created_at: 1,
        workspace: None,
    };
    let frame = flame_model::Frame {
        id: root.clone(),
        tree: tree_id,
        parent: None,
        position: 0,
        title: "Imported session".into(),
        success_criteria: "replay".into(),
        success_criteria_compacted: None,
        status: Status::InProgress,
        status_reason: None,
        results: None,
        results_compacted: None,
        artifacts: vec![],
        decisions: vec![],
        retry_of: None,
        created_at: 1,
        started_at: Some(1),
        ended_at: None,
        message_count: 0,
        tokens: 0,
        rolled_back_at: None,
    };
    let messages =
        ["hello from the transcript", "and a reply"].map(|text| flame_store::ImportedMessage {
            frame: 0,
            message: NewMessage::text(Role::User, text),
            tokens: 4,
            at: 1_795_307_601_000,
        });
    {
        let mut store = flame_store::Store::open(&s.dir.path().join("flame.db")).unwrap();
        store
            .import_tree(
                flame_store::Change { actor: Actor::Cli, at: 2 },
                &tree,
                &[frame],
                &messages,
            )
            .unwrap();
    }
    let log = s.reopen(11).log(&root).unwrap();
    assert!(
        log.contains("imported by cli")
            && log.contains("hello from the transcript")
            && log.contains("and a reply"),
        "{log}"
    );
}

#[test]
fn the_outline_and_events_let_a_front_end_follow_changes() {
    let s = Scratch::new(12);
    let tree = s.flame.create_tree(A, "Root", "r", None).unwrap();
    let outline = s.flame.outline(None).unwrap();
    assert_eq!((outline.tree.id.clone(), outline.frames.len()), (tree.id.clone(), 1));
    // Another process changes the tree.
    let other = s.reopen(13);
    let pushed = other.push(Actor::Cli, Some(&tree.root), "From elsewhere", "c").unwrap();
    let events = s.flame.events_since(outline.seq, 100).unwrap();
    assert!(
        events.iter().any(|e| e.frame == pushed.id
            && e.kind == flame_model::EventKind::Pushed
            && e.actor == Actor::Cli),
        "{events:?}"
    );
    assert_eq!(s.flame.outline(None).unwrap().frames.len(), 2);
    assert!(s.flame.events_since(s.flame.outline(None).unwrap().seq, 100).unwrap().is_empty());
}

#[test]
fn a_reply_left_streaming_by_a_crash_is_kept_as_interrupted_on_the_next_start() {
    let s = Scratch::new(14);
    let tree = s.flame.create_tree(A, "Root", "r", None).unwrap();
    // A writer that has stopped: no process runs with an id this large.
    let stopped = ReplyOwner { pid: u32::MAX, started: Some(1) };
    let crashed = Flame::open_with(
        home(s.dir.path()),
        FlameConfig::default(),
        Env::fixed(1_795_307_700_000, 41).writing_as(stopped),
    )
    .unwrap();
    let reply = crashed.begin_reply(Actor::Agent, &tree.root, Some("m")).unwrap();
    crashed.update_reply(reply, "Half of an answer").unwrap();
    drop(crashed);
    // The next start finishes what it left open.
    let reopened = s.reopen(15);
    let kept = reopened.messages(&tree.root).unwrap().pop().unwrap();
    assert_eq!(
        (kept.id, kept.content.as_str(), kept.interrupted),
        (reply, "Half of an answer", true)
    );
    assert!(kept.tokens > 0);
    assert!(reopened.log(&tree.root).unwrap().contains("Half of an answer"));
}

#[test]
fn a_reply_whose_writer_still_runs_is_left_open_by_another_opening() {
    let s = Scratch::new(42);
    let tree = s.flame.create_tree(A, "Root", "r", None).unwrap();
    let reply = s.flame.begin_reply(Actor::Agent, &tree.root, Some("m")).unwrap();
    s.flame.update_reply(reply, "Still").unwrap();
    // Another opening of the data directory (this process runs, so its reply is not abandoned).
    drop(s.reopen(43));
    assert_eq!(s.flame.frame(&tree.root).unwrap().frame.message_count, 0, "not finished");
    s.flame.update_reply(reply, "Still streaming").unwrap();
    let done = s
        .flame
        .finish_reply(Actor::Agent, reply, &NewMessage::text(Role::Assistant, "Still streaming."))
        .unwrap();
    assert_eq!((done.content.as_str(), done.interrupted), ("Still streaming.", false));
}

#[test]
fn partial_results_merge_into_their_sections_and_reach_the_log() {
    let s = Scratch::new(16);
    let tree = s.flame.create_tree(A, "Root", "r", None).unwrap();
    s.flame.update_results(A, &tree.root, "Done", "auth").unwrap();
    s.flame.update_results(A, &tree.root, "Next", "api").unwrap();
    let merged = s.flame.update_results(A, &tree.root, "Done", "auth, billing").unwrap();
    assert_eq!(merged.results.as_deref(), Some("## Done\n\nauth, billing\n\n## Next\n\napi"));
    assert!(s.flame.log(&tree.root).unwrap().contains("results updated by person"));
    let child = s.flame.push(A, None, "C", "c").unwrap();
    s.flame.pop(A, Some(&child.id), &completed("x")).unwrap();
    let err = s.flame.update_results(A, &child.id, "Done", "late").unwrap_err();
    assert_eq!(err.code, ErrorCode::Refused);
}

#[test]
fn a_twenty_mib_reply_is_stored_at_the_cap_says_it_was_cut_and_the_frame_goes_on() {
    let s = Scratch::new(31);
    let tree = s.flame.create_tree(A, "Root", "r", None).unwrap();
    let reply = s.flame.begin_reply(Actor::Agent, &tree.root, Some("m")).unwrap();
    let text = "All work and no play. ".repeat(20 * 1024 * 1024 / 22);
    assert!(text.len() > 19 * 1024 * 1024);
    s.flame.update_reply(reply, &text[..text.len() / 2]).unwrap();
    let stored = s
        .flame
        .finish_reply(Actor::Agent, reply, &NewMessage::text(Role::Assistant, text))
        .unwrap();
    assert!(
        stored.content.len() <= flame_store::MAX_MESSAGE_BYTES,
        "stored {} bytes",
        stored.content.len()
    );
    assert!(
        stored.content.ends_with("[… reply truncated at 4 MiB by Flame; the rest was not stored]")
    );
    assert!(!stored.interrupted);
    assert!(stored.tokens > 0);
    // The frame stays usable: it takes messages, assembles a context and keeps its log.
    s.flame.append(A, &tree.root, Role::User, "and then?").unwrap();
    let messages = s.flame.messages(&tree.root).unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].content, stored.content);
    s.flame.context(Some(&tree.root), None).unwrap();
    assert!(s.flame.log(&tree.root).unwrap().contains("reply truncated at 4 MiB"));
}

/// Measured in issue 13: a CLI and an MCP client each popping "the focus" of one tree completed
/// its root. Naming the frame meant refuses the second pop instead.
#[test]
fn two_clients_popping_the_focus_complete_only_the_frame_they_named() {
    let s = Scratch::new(71);
    let tree = s.flame.create_tree(A, "Root", "r", None).unwrap();
    let child = s.flame.push(A, None, "Child", "c").unwrap();
    // Both clients look at the tree and see the child focused; the first pops it.
    s.flame.pop_focused(Actor::Cli, &child.id, &completed("first")).unwrap();
    let err = s.flame.pop_focused(Actor::Agent, &child.id, &completed("second")).unwrap_err();
    assert_eq!(err.code, ErrorCode::Refused);
    assert!(err.message.contains(child.id.as_str()), "{}", err.message);
    assert!(err.message.contains(&format!("focus has moved to {}", tree.root)), "{}", err.message);
    assert_eq!(s.flame.frame(&tree.root).unwrap().frame.status, Status::InProgress);
    assert_eq!(s.flame.frame(&child.id).unwrap().frame.results.as_deref(), Some("first"));
    // Unnamed, the second pop would have taken the root.
    assert_eq!(s.flame.status(None).unwrap().focus, tree.root);
}

#[test]
fn a_frame_detail_says_what_may_be_done_and_what_start_would_start() {
    let s = Scratch::new(41);
    let tree = s.flame.create_tree(A, "Root", "r", None).unwrap();
    let planned = s.flame.plan(A, None, None, &[spec("B", vec![]), spec("C", vec![])]).unwrap();
    let root = s.flame.frame_detail(&tree.root).unwrap();
    assert_eq!(root.entry.frame.id, tree.root);
    assert!(root.actions.chat && root.actions.pop && root.actions.push && root.actions.plan);
    assert!(!root.actions.start && !root.actions.move_frame && !root.actions.delete);
    assert_eq!(root.actions.start_target.as_ref(), Some(&planned[0].id));

    let b = s.flame.frame_detail(&planned[0].id).unwrap().actions;
    assert!(b.start && b.edit && b.move_frame && b.delete && !b.chat && !b.pop);

    // A child in progress holds its parent open: the root's pop is no longer offered.
    s.flame.start(A, &planned[0].id).unwrap();
    let root = s.flame.frame_detail(&tree.root).unwrap().actions;
    assert!(!root.pop && root.chat);
    assert_eq!(root.start_target.as_ref(), Some(&planned[1].id));
}
