//! Contexts read through the real store: the spec's tree, a marker message in every frame, and
//! for every focus only that frame's own messages in its context.

use flame_api::{Budget, PopRequest};
use flame_model::lifecycle::PopStatus;
use flame_model::{Actor, FrameId, Role};

use crate::Scratch;

const A: Actor = Actor::Person;

fn done(results: &str) -> PopRequest {
    PopRequest {
        status: PopStatus::Completed,
        results: Some(results.to_owned()),
        results_compacted: Some(format!("{results} (compact)")),
        artifacts: vec![],
        decisions: vec![],
        reason: None,
    }
}

/// Root; A with A1, A2 completed; B in progress with B1 in progress and B2 planned. Every frame
/// has a message `message-<title>`.
fn spec_tree(s: &Scratch) -> Vec<(String, FrameId)> {
    let tree = s.flame.create_tree(A, "Root", "Complete working app", None).unwrap();
    let say = |id: &FrameId, title: &str| {
        s.flame.append(A, id, Role::User, &format!("message-{title}")).unwrap();
    };
    say(&tree.root, "Root");
    let a = s.flame.push(A, None, "A", "auth").unwrap().id;
    say(&a, "A");
    let a1 = s.flame.push(A, None, "A1", "login").unwrap().id;
    say(&a1, "A1");
    s.flame.pop(A, None, &done("results-A1")).unwrap();
    let a2 = s.flame.push(A, None, "A2", "logout").unwrap().id;
    say(&a2, "A2");
    s.flame.pop(A, None, &done("results-A2")).unwrap();
    s.flame.pop(A, None, &done("results-A")).unwrap();
    let b = s.flame.push(A, None, "B", "api").unwrap().id;
    say(&b, "B");
    let b1 = s.flame.push(A, None, "B1", "crud").unwrap().id;
    say(&b1, "B1");
    let b2 = s
        .flame
        .plan(
            A,
            Some(&b),
            None,
            &[flame_api::PlanSpec {
                title: "B2".into(),
                success_criteria: "pagination".into(),
                budget: None,
                children: vec![],
            }],
        )
        .unwrap()
        .remove(0)
        .id;
    say(&b2, "B2");
    vec![
        ("Root".into(), tree.root),
        ("A".into(), a),
        ("A1".into(), a1),
        ("A2".into(), a2),
        ("B".into(), b),
        ("B1".into(), b1),
        ("B2".into(), b2),
    ]
}

#[test]
fn a_context_never_holds_another_frames_messages() {
    let s = Scratch::new(21);
    let frames = spec_tree(&s);
    for (title, id) in &frames {
        let doc = s.flame.context(Some(id), None).unwrap();
        let text = format!(
            "{}\n{}",
            doc.system,
            doc.messages.iter().map(|m| m.content.clone()).collect::<Vec<_>>().join("\n")
        );
        for (other, _) in &frames {
            let marker = format!("message-{other}\n");
            assert_eq!(
                format!("{text}\n").contains(&marker),
                other == title,
                "focus {title}, marker {marker:?}:\n{text}"
            );
        }
        assert!(doc.report.fits);
    }
}

#[test]
fn the_context_reports_linear_tokens_and_uses_stored_counts() {
    let s = Scratch::new(22);
    let frames = spec_tree(&s);
    let b1 = &frames[5].1;
    let doc = s.flame.context(Some(b1), Some(Budget::of(50_000))).unwrap();
    assert_eq!(doc.report.budget, 50_000);
    let stored: u64 = s.flame.messages(b1).unwrap().iter().map(|m| m.tokens).sum();
    let history =
        doc.report.sections.iter().find(|s| s.kind == flame_context::SectionKind::History).unwrap();
    assert_eq!(history.tokens, stored + flame_context::MESSAGE_OVERHEAD);
    assert!(
        doc.report.linear_tokens > doc.report.sections[0].tokens,
        "every message of the tree counts in the linear total"
    );
    let log = s.flame.frame(b1).unwrap().log_path;
    assert!(doc.xml.contains(&log), "the focus's log path is in its context");
}

fn read_result(call: &str) -> flame_model::NewMessage {
    flame_model::NewMessage {
        tool_result: Some(flame_model::ToolResult {
            detail: None,
            is_error: false,
            name: Some("read_file".into()),
            tool_call_id: call.into(),
        }),
        ..flame_model::NewMessage::text(Role::Tool, "the file's text")
    }
}

fn trail(read: &[&str], changed: &[&str]) -> flame_model::FileTrail {
    flame_model::FileTrail::new(
        read.iter().map(|s| s.to_string()),
        changed.iter().map(|s| s.to_string()),
    )
}

/// What the tests of kept context parts share: a Flame whose contexts keep parts between
/// assemblies, another Flame on the same data directory (another process), and the check that
/// a context is the one a Flame opened just now assembles.
struct Kept {
    s: Scratch,
    other: flame_api::Flame,
    /// The seed of the next Flame opened to assemble afresh.
    seed: std::cell::Cell<u64>,
}

impl Kept {
    fn new(seed: u64) -> Kept {
        let s = Scratch::new(seed);
        let other = s.reopen(seed + 1);
        Kept { s, other, seed: std::cell::Cell::new(seed + 10) }
    }

    /// The context of `focus`, checked against a fresh assembly.
    fn assert_fresh(&self, focus: &FrameId) -> flame_api::ContextDoc {
        self.seed.set(self.seed.get() + 1);
        let at_any_time = |mut doc: flame_api::ContextDoc| {
            // A preview's fresh opening would be made when it is asked for, so two processes'
            // previews differ in that time alone.
            doc.report.opening.made_at = 0;
            doc
        };
        let doc = self.s.flame.context(Some(focus), None).unwrap();
        let fresh = self.s.reopen(self.seed.get()).context(Some(focus), None).unwrap();
        assert_eq!(at_any_time(doc.clone()), at_any_time(fresh));
        doc
    }
}

/// The files of finished frames' subtrees are kept between assemblies; every context must still
/// be the one a Flame opened just now assembles, whatever changed since, here or in another
/// process.
#[test]
fn kept_subtree_files_follow_changes_made_here_and_in_another_process() {
    let kept = Kept::new(31);
    let (s, other) = (&kept.s, &kept.other);
    let assert_fresh = |focus: &FrameId| kept.assert_fresh(focus);
    let tree = s.flame.create_tree(A, "Root", "Done", None).unwrap();
    let a = s.flame.push(A, Some(&tree.root), "A", "a").unwrap().id;
    let a1 = s.flame.push(A, Some(&a), "A1", "a1").unwrap().id;
    s.flame.add_tool_result(A, &a1, &read_result("c1"), &trail(&["a1.rs"], &[])).unwrap();
    s.flame.pop(A, Some(&a1), &done("results-A1")).unwrap();
    s.flame.add_tool_result(A, &a, &read_result("c2"), &trail(&["a.rs"], &[])).unwrap();
    let blocked = PopRequest {
        status: PopStatus::Blocked,
        reason: Some("waits for a key".into()),
        ..done("results-A")
    };
    s.flame.pop(A, Some(&a), &blocked).unwrap();
    let b = s.flame.push(A, Some(&tree.root), "B", "b").unwrap().id;
    let doc = assert_fresh(&b);
    assert!(doc.xml.contains("<read>a.rs, a1.rs</read>"), "{}", doc.xml);

    // Another process resumes A, its calls touch more files, and it is popped again.
    other.resume(A, &a).unwrap();
    other.add_tool_result(A, &a, &read_result("c3"), &trail(&["late.rs"], &["a1.rs"])).unwrap();
    other.pop(A, Some(&a), &done("results-A again")).unwrap();
    other.focus(A, &b).unwrap();
    let doc = assert_fresh(&b);
    assert!(doc.xml.contains("<read>a.rs, late.rs</read>"), "{}", doc.xml);
    assert!(doc.xml.contains("<artifact>a1.rs</artifact>"), "{}", doc.xml);

    // This process: B's own child finishes, and B's context lists its files.
    let c = s.flame.push(A, Some(&b), "C", "c").unwrap().id;
    s.flame.add_tool_result(A, &c, &read_result("c4"), &trail(&["c.rs"], &[])).unwrap();
    let doc = assert_fresh(&b);
    assert!(!doc.xml.contains("c.rs"), "C is in progress: {}", doc.xml);
    s.flame.pop(A, Some(&c), &done("results-C")).unwrap();
    let doc = assert_fresh(&b);
    assert!(doc.xml.contains("<read>c.rs</read>"), "{}", doc.xml);

    // A context of another tree, then this one again.
    let second = s.flame.create_tree(A, "Second", "Done", None).unwrap();
    assert_fresh(&second.root);
    other.add_tool_result(A, &b, &read_result("c5"), &trail(&["b.rs"], &[])).unwrap();
    let doc = assert_fresh(&b);
    assert!(doc.xml.contains("<read>a.rs, late.rs</read>"), "{}", doc.xml);
}

/// A child's context names the files its parent's own work touched before the child began
/// (issue 39): the parent is on the path, so no finished frame lists them. The focus does not
/// list its own, which its messages show; a file its ancestors touch later is in the context
/// the next assembly makes, here or after another process's change.
#[test]
fn a_childs_context_names_what_its_ancestors_touched_themselves() {
    let kept = Kept::new(41);
    let (s, other) = (&kept.s, &kept.other);
    let tree = s.flame.create_tree(A, "Root", "Done", None).unwrap();
    s.flame.add_tool_result(A, &tree.root, &read_result("c1"), &trail(&["root.md"], &[])).unwrap();
    let parent = s.flame.push(A, Some(&tree.root), "Parent", "p").unwrap().id;
    let changed = trail(&["src/lib.rs"], &["src/greet.rs"]);
    s.flame.add_tool_result(A, &parent, &read_result("c2"), &changed).unwrap();
    let doc = kept.assert_fresh(&parent);
    assert!(doc.xml.contains("<read>root.md</read>"), "{}", doc.xml);
    assert!(!doc.xml.contains("greet.rs"), "the focus's own files: {}", doc.xml);
    let child = s.flame.push(A, Some(&parent), "Child", "c").unwrap().id;
    let doc = kept.assert_fresh(&child);
    assert!(doc.xml.contains("<changed>src/greet.rs</changed>"), "{}", doc.xml);
    assert!(doc.xml.contains("<read>src/lib.rs</read>"), "{}", doc.xml);
    assert!(doc.xml.contains("<read>root.md</read>"), "{}", doc.xml);
    other.add_tool_result(A, &parent, &read_result("c3"), &trail(&["late.rs"], &[])).unwrap();
    let doc = kept.assert_fresh(&child);
    assert!(doc.xml.contains("<read>late.rs, src/lib.rs</read>"), "{}", doc.xml);
}

/// The focus's settled messages are kept between assemblies; a reply streaming in, messages
/// from another process and a deleted tree must still give the context a Flame opened just now
/// assembles.
#[test]
fn kept_messages_follow_replies_and_other_processes() {
    let kept = Kept::new(51);
    let (s, other) = (&kept.s, &kept.other);
    let assert_fresh = |focus: &FrameId| kept.assert_fresh(focus);
    let tree = s.flame.create_tree(A, "Root", "Done", None).unwrap();
    let root = tree.root.clone();
    s.flame.append(A, &root, Role::User, "first request").unwrap();
    assert_eq!(assert_fresh(&root).messages.len(), 1);

    let reply = s.flame.begin_reply(Actor::Agent, &root, Some("m")).unwrap();
    s.flame.update_reply(reply, "the answer so").unwrap();
    assert_fresh(&root);
    s.flame.update_reply(reply, "the answer so far, longer").unwrap();
    let doc = assert_fresh(&root);
    assert!(doc.messages.iter().any(|m| m.content == "the answer so far, longer"));
    // Another process writes after the open reply.
    other.append(A, &root, Role::User, "meanwhile").unwrap();
    assert_fresh(&root);
    let finished = flame_model::NewMessage::text(Role::Assistant, "the whole answer");
    s.flame.finish_reply(Actor::Agent, reply, &finished).unwrap();
    let doc = assert_fresh(&root);
    let texts: Vec<&str> = doc.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(texts, ["first request", "the whole answer", "meanwhile"]);
    other.add_tool_result(A, &root, &read_result("c1"), &trail(&["x.rs"], &[])).unwrap();
    assert_eq!(assert_fresh(&root).messages.len(), 4);

    // Another frame, then this one again; then the tree goes and its context with it.
    let child = s.flame.push(A, Some(&root), "Child", "c").unwrap().id;
    s.flame.append(A, &child, Role::User, "in the child").unwrap();
    assert_eq!(assert_fresh(&child).messages.len(), 1);
    assert_eq!(assert_fresh(&root).messages.len(), 4);
    other.delete_tree(A, &tree.id).unwrap();
    assert!(s.flame.context(Some(&root), None).is_err());
}

/// The frames a context shows and their XML are kept between assemblies; a chat's messages,
/// compacted criteria, siblings planned before the focus, results, edits, moves, a workspace and
/// a finished child, here or in another process, must still give the context a Flame opened just
/// now assembles.
#[test]
fn kept_frames_follow_every_change_to_what_the_context_shows() {
    let kept = Kept::new(71);
    let (s, other) = (&kept.s, &kept.other);
    let assert_fresh = |focus: &FrameId| kept.assert_fresh(focus);
    let tree = s.flame.create_tree(A, "Root", "Ship it", None).unwrap();
    let a = s.flame.push(A, Some(&tree.root), "A", "a").unwrap().id;
    s.flame.add_tool_result(A, &a, &read_result("c1"), &trail(&["a.rs"], &[])).unwrap();
    s.flame.pop(A, Some(&a), &done("results-A")).unwrap();
    let b = s.flame.push(A, Some(&tree.root), "B", "b").unwrap().id;
    let spec = |title: &str| flame_api::PlanSpec {
        title: title.into(),
        success_criteria: format!("criteria of {title}"),
        budget: None,
        children: vec![],
    };
    let planned = s.flame.plan(A, Some(&b), None, &[spec("P")]).unwrap().remove(0).id;
    let focus = s.flame.push(A, Some(&b), "B1", "b1").unwrap().id;
    assert_fresh(&focus);

    // A round of the chat, then the root's criteria compacted.
    s.flame.append(A, &focus, Role::User, "go on").unwrap();
    s.flame.add_tool_result(A, &focus, &read_result("c2"), &trail(&["b1.rs"], &[])).unwrap();
    assert_eq!(assert_fresh(&focus).messages.len(), 2);
    s.flame.set_criteria_compacted(A, &tree.root, "ship, briefly").unwrap();
    assert!(assert_fresh(&focus).xml.contains("ship, briefly"));

    // Another process plans a frame before the others, writes B's results, edits and moves the
    // planned frame, and sets the workspace.
    other.plan(A, Some(&b), Some(0), &[spec("First")]).unwrap();
    assert!(assert_fresh(&focus).xml.contains("criteria of First"));
    other.update_results(A, &b, "Progress", "half done").unwrap();
    assert!(assert_fresh(&focus).xml.contains("half done"));
    other.edit(A, &planned, Some("P, renamed"), None).unwrap();
    assert!(assert_fresh(&focus).xml.contains("P, renamed"));
    other.move_frame(A, &planned, Some(&b), Some(0)).unwrap();
    assert_fresh(&focus);
    let folder = tempfile::tempdir().unwrap();
    other.set_workspace(A, &tree.id, Some(folder.path())).unwrap();
    assert!(assert_fresh(&focus).system.contains(&folder.path().display().to_string()));
    // Another process compacts a planned sibling's criteria: its event tells this one.
    other.set_criteria_compacted(A, &planned, "p, briefly").unwrap();
    assert!(assert_fresh(&focus).xml.contains("p, briefly"));

    // The focus's own child finishes, and the focus's context shows it with its files.
    let c = s.flame.push(A, Some(&focus), "C", "c").unwrap().id;
    s.flame.add_tool_result(A, &c, &read_result("c3"), &trail(&["c.rs"], &[])).unwrap();
    s.flame.pop(A, Some(&c), &done("results-C")).unwrap();
    let doc = assert_fresh(&focus);
    assert!(doc.xml.contains("results-C") && doc.xml.contains("<read>c.rs</read>"), "{}", doc.xml);
}

/// A frame's calls through the facade (issue 29): the opening made at the first call is kept in
/// the store, so another process's call repeats it; what changes around the frame is appended
/// as a note, stored before the call; the inspector's preview stores nothing; the person can
/// have the opening made again.
mod calls {
    use flame_api::{CachePolicy, DEFAULT_BUDGET, Env, Flame, FlameConfig};
    use flame_model::{OpeningReason, Role};

    use super::*;
    use crate::home;

    fn policy() -> CachePolicy {
        CachePolicy::anthropic(None)
    }

    #[test]
    fn another_process_repeats_the_frames_request_and_a_pop_is_appended_as_a_note() {
        let s = Scratch::new(70);
        let tree = s.flame.create_tree(A, "Root", "Ship it", None).unwrap();
        s.flame.append(A, &tree.root, Role::User, "start here").unwrap();
        let first = s.flame.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
        assert!(first.report.opening.made_now);
        assert_eq!(first.report.opening.reason, OpeningReason::Entered);
        let stored = s.flame.frame_context(&tree.root).unwrap().unwrap();
        assert_eq!(stored.opening, first.xml);

        // Another process, a minute later: the same request, nothing stored anew.
        let other = Flame::open_with(
            home(s.dir.path()),
            FlameConfig::default(),
            Env::fixed(1_795_307_661_000, 71),
        )
        .unwrap();
        let again = other.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
        assert!(!again.report.opening.made_now);
        assert_eq!((again.xml.as_str(), &again.messages), (first.xml.as_str(), &first.messages));
        assert_eq!(other.frame_context(&tree.root).unwrap().unwrap(), stored);

        // A child pushed and popped by the person: the preview shows the note to come and
        // stores nothing; the call stores it, and the one after adds nothing.
        let child = s.flame.push(A, None, "Auth", "login works").unwrap().id;
        s.flame.pop(A, Some(&child), &done("JWT login in src/auth.rs")).unwrap();
        let messages = s.flame.messages(&tree.root).unwrap().len();
        let preview = s.flame.context(Some(&tree.root), None).unwrap();
        assert_eq!(preview.report.opening.noted_frames, 1);
        assert!(preview.messages.last().unwrap().content.contains("JWT login in src/auth.rs"));
        assert_eq!(
            s.flame.messages(&tree.root).unwrap().len(),
            messages,
            "a preview stores nothing"
        );
        let call = s.flame.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
        assert_eq!(call.xml, first.xml, "the opening is kept");
        let stored = s.flame.messages(&tree.root).unwrap();
        let note = stored.last().unwrap();
        assert_eq!((note.role, stored.len()), (Role::Note, messages + 1));
        assert!(note.content.contains(&format!("<frame id=\"{child}\" status=\"completed\">")));
        assert_eq!(call.messages.last().unwrap().id, note.id, "the call sends the stored note");
        let after = s.flame.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
        assert_eq!(after.report.opening.noted_frames, 0);
        assert_eq!(s.flame.messages(&tree.root).unwrap().len(), messages + 1);
    }

    #[test]
    fn the_person_has_the_opening_made_again_at_the_next_call() {
        let s = Scratch::new(72);
        let tree = s.flame.create_tree(A, "Root", "Ship it", None).unwrap();
        s.flame.append(A, &tree.root, Role::User, "start here").unwrap();
        s.flame.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
        s.flame.rebuild_context(A, &tree.root).unwrap();
        let preview = s.flame.context(Some(&tree.root), None).unwrap();
        assert!(preview.report.opening.made_now);
        assert_eq!(preview.report.opening.reason, OpeningReason::Asked);
        let call = s.flame.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
        assert_eq!(call.report.opening.generation, 2);
        let stored = s.flame.frame_context(&tree.root).unwrap().unwrap();
        assert!(!stored.rebuild_asked);
        assert_eq!(stored.reason, OpeningReason::Asked);
        // A frame that never had a call makes its opening at its first call anyway.
        let fresh = s.flame.push(A, None, "New", "new work").unwrap().id;
        s.flame.rebuild_context(A, &fresh).unwrap();
        assert!(s.flame.frame_context(&fresh).unwrap().is_none());
        // A deleted tree takes its frames' contexts with it.
        s.flame.delete_tree(A, &tree.id).unwrap();
        assert!(s.flame.frame_context(&tree.root).unwrap().is_none());
    }

    /// The facade keeps a frame's stored context parsed between calls; a save by another
    /// process (a request to make the opening again, a call that made one) is seen at the next
    /// call, and what this process kept of its own saves is what a fresh process reads.
    #[test]
    fn a_kept_context_is_read_again_after_another_process_saves_it() {
        let s = Scratch::new(73);
        let tree = s.flame.create_tree(A, "Root", "Ship it", None).unwrap();
        s.flame.append(A, &tree.root, Role::User, "start here").unwrap();
        s.flame.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
        let kept = s.flame.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
        assert!(!kept.report.opening.made_now);

        let other = s.reopen(74);
        other.rebuild_context(A, &tree.root).unwrap();
        let preview = s.flame.context(Some(&tree.root), None).unwrap();
        assert!(preview.report.opening.made_now, "the request another process stored is seen");
        assert_eq!(preview.report.opening.reason, OpeningReason::Asked);
        let made = other.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
        assert_eq!(made.report.opening.generation, 2);
        let call = s.flame.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
        assert!(!call.report.opening.made_now, "the opening another process made is sent");
        assert_eq!((call.report.opening.generation, &call.xml), (2, &made.xml));

        // A note this process stores with its context: the next call here sends what a process
        // that reads the store afresh sends.
        let child = s.flame.push(A, None, "Auth", "login works").unwrap().id;
        s.flame.pop(A, Some(&child), &done("JWT login in src/auth.rs")).unwrap();
        let noted = s.flame.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
        let note = noted.messages.last().unwrap();
        assert!(note.role == Role::Note && note.content.contains("JWT login"), "{note:?}");
        let here = s.flame.prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
        let fresh = s.reopen(75).prepare_call(&tree.root, DEFAULT_BUDGET, policy()).unwrap();
        assert_eq!((&here.xml, &here.messages), (&fresh.xml, &fresh.messages));
        assert_eq!(here.report.opening.noted_frames, 0);
        assert_eq!(
            s.flame.frame_context(&tree.root).unwrap(),
            other.frame_context(&tree.root).unwrap()
        );
    }
}
