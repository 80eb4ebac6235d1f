//! Every lifecycle rule of DESIGN.md §1, through the store: what each operation does, and that
//! each refused one names the frame and changes nothing.

use flame_model::lifecycle::PopStatus;
use flame_model::{
    Actor, EventKind, FrameError, FrameId, FrameTree, IdSource, MessageId, NewMessage, Role,
    Status, ToolCall, TreeId, Usage,
};
use flame_store::{
    Change, MAX_MESSAGE_BYTES, OpenReply, PlanItem, Pop, ReplyOwner, Store, StoreError, fit_reply,
    truncation_note,
};

/// The process the tests' replies are written by.
const WRITER: ReplyOwner = ReplyOwner { pid: 4242, started: Some(987_654) };

struct Fixture {
    store: Store,
    ids: IdSource,
    clock: i64,
    tree: TreeId,
    root: FrameId,
    _dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
        let mut ids = IdSource::seeded(1);
        let (tree, root) = (ids.tree_id(), ids.frame_id());
        store.create_tree(change(1), &tree, &root, "Build the app", "A working app", None).unwrap();
        Fixture { store, ids, clock: 1, tree, root, _dir: dir }
    }

    fn change(&mut self) -> Change {
        self.clock += 1;
        change(self.clock)
    }

    fn push(&mut self, parent: &FrameId, title: &str) -> FrameId {
        let id = self.ids.frame_id();
        let c = self.change();
        self.store.push(c, &id, parent, title, "criteria").unwrap();
        id
    }

    fn plan(&mut self, parent: &FrameId, title: &str) -> FrameId {
        let item = self.item(title);
        let c = self.change();
        self.store.plan(c, parent, None, std::slice::from_ref(&item)).unwrap();
        item.id
    }

    fn item(&mut self, title: &str) -> PlanItem {
        PlanItem {
            id: self.ids.frame_id(),
            title: title.to_owned(),
            success_criteria: "c".to_owned(),
            budget: None,
            children: vec![],
        }
    }

    fn pop(&mut self, id: &FrameId, status: PopStatus) -> Result<flame_model::Frame, StoreError> {
        let c = self.change();
        let pop = match status {
            PopStatus::Completed => completed("done"),
            _ => Pop {
                status,
                results: None,
                results_compacted: None,
                artifacts: vec![],
                decisions: vec![],
                reason: Some("because".into()),
            },
        };
        self.store.pop(c, id, &pop)
    }

    fn status(&self, id: &FrameId) -> Status {
        self.store.frame(id).unwrap().status
    }

    fn focus(&self) -> FrameId {
        self.store.tree(&self.tree).unwrap().focus
    }

    fn snapshot(&self) -> (Vec<flame_model::Frame>, flame_model::Tree) {
        let mut frames = self.store.frames_of_tree(&self.tree).unwrap();
        frames.sort_by(|a, b| a.id.cmp(&b.id));
        (frames, self.store.tree(&self.tree).unwrap())
    }

    fn check(&self) {
        let tree = FrameTree::new(
            self.store.tree(&self.tree).unwrap(),
            self.store.frames_of_tree(&self.tree).unwrap(),
        );
        tree.check_invariants().unwrap();
    }

    /// Runs `op`, which must be refused, and checks that nothing changed.
    fn refused(&mut self, op: impl FnOnce(&mut Fixture) -> Result<(), StoreError>) -> FrameError {
        let before = self.snapshot();
        let events_before = self.store.events_since(0, u32::MAX).unwrap().len();
        let err = match op(self) {
            Err(StoreError::Frame(err)) => err,
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert_eq!(self.snapshot(), before, "a refused operation changed the tree");
        assert_eq!(self.store.events_since(0, u32::MAX).unwrap().len(), events_before);
        err
    }
}

fn change(at: i64) -> Change {
    Change { actor: Actor::Cli, at }
}

fn completed(results: &str) -> Pop {
    Pop {
        status: PopStatus::Completed,
        results: Some(results.to_owned()),
        results_compacted: None,
        artifacts: vec!["src/auth.rs".into()],
        decisions: vec!["JWT".into()],
        reason: None,
    }
}

fn refusal_names(err: &FrameError, id: &FrameId, status: Status) {
    let text = err.to_string();
    assert!(text.contains(id.as_str()), "{text}");
    assert!(text.contains(status.as_str()), "{text}");
}

#[test]
fn a_new_tree_has_an_in_progress_focused_root_and_becomes_current() {
    let f = Fixture::new();
    let tree = f.store.tree(&f.tree).unwrap();
    assert_eq!(tree.root, f.root);
    assert_eq!(tree.focus, f.root);
    assert_eq!(f.status(&f.root), Status::InProgress);
    assert_eq!(f.store.current_tree().unwrap(), Some(f.tree.clone()));
    f.check();
}

#[test]
fn push_creates_an_in_progress_child_and_moves_the_focus() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "Auth");
    let frame = f.store.frame(&a).unwrap();
    assert_eq!(
        (frame.status, frame.parent.as_ref(), frame.position),
        (Status::InProgress, Some(&root), 0)
    );
    assert_eq!(f.focus(), a);
    let b = f.push(&root, "API");
    assert_eq!(f.store.frame(&b).unwrap().position, 1);
    f.check();
}

#[test]
fn push_under_a_planned_frame_starts_it_and_its_planned_ancestors() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let b = f.plan(&root, "API");
    let b1 = f.plan(&b, "CRUD");
    let leaf = f.push(&b1, "GET");
    assert_eq!(f.status(&b), Status::InProgress);
    assert_eq!(f.status(&b1), Status::InProgress);
    assert_eq!(f.focus(), leaf);
    f.check();
}

#[test]
fn push_is_refused_under_a_finished_or_blocked_frame() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "Auth");
    f.pop(&a, PopStatus::Completed).unwrap();
    let b = f.push(&root, "Blocked one");
    f.pop(&b, PopStatus::Blocked).unwrap();
    for (parent, status) in [(a, Status::Completed), (b, Status::Blocked)] {
        let id = f.ids.frame_id();
        let c = f.change();
        let err = f.refused(|f| f.store.push(c, &id, &parent, "x", "y").map(drop));
        refusal_names(&err, &parent, status);
    }
}

#[test]
fn plan_nests_children_and_inserts_at_a_position() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let first = f.plan(&root, "First");
    let mut outer = f.item("Outer");
    outer.children = vec![f.item("Inner 1"), f.item("Inner 2")];
    let c = f.change();
    let created = f.store.plan(c, &root, Some(0), &[outer.clone()]).unwrap();
    assert_eq!(created.len(), 3);
    assert!(created.iter().all(|fr| fr.status == Status::Planned));
    assert_eq!(f.store.frame(&outer.id).unwrap().position, 0);
    assert_eq!(f.store.frame(&first).unwrap().position, 1);
    let inner: Vec<_> = f.store.children(&outer.id).unwrap().into_iter().map(|c| c.title).collect();
    assert_eq!(inner, ["Inner 1", "Inner 2"]);
    f.check();
}

#[test]
fn plan_refuses_a_position_past_the_end_and_empty_identities() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let item = f.item("X");
    let c = f.change();
    let err = f.refused(|f| f.store.plan(c, &root, Some(5), &[item]).map(drop));
    assert!(err.to_string().contains("position 5 is past the end"), "{err}");
    let mut bad = f.item("Y");
    bad.children = vec![PlanItem { title: " ".into(), ..f.item("Z") }];
    let c = f.change();
    let err = f.refused(|f| f.store.plan(c, &root, None, &[bad]).map(drop));
    assert!(err.to_string().contains("needs a title"), "{err}");
}

#[test]
fn plan_is_refused_under_terminal_frames() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    f.pop(&a, PopStatus::Completed).unwrap();
    let item = f.item("late");
    let c = f.change();
    let err = f.refused(|f| f.store.plan(c, &a, None, &[item]).map(drop));
    refusal_names(&err, &a, Status::Completed);
}

#[test]
fn edit_changes_a_planned_frame_only() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let p = f.plan(&root, "Old");
    let c = f.change();
    let edited = f.store.edit(c, &p, Some("New"), None).unwrap();
    assert_eq!((edited.title.as_str(), edited.success_criteria.as_str()), ("New", "c"));
    let a = f.push(&root, "Started");
    let c = f.change();
    let err = f.refused(|f| f.store.edit(c, &a, Some("Renamed"), None).map(drop));
    refusal_names(&err, &a, Status::InProgress);
    let c = f.change();
    let err = f.refused(|f| f.store.edit(c, &p, Some(""), None).map(drop));
    assert!(err.to_string().contains("needs a title"));
}

#[test]
fn move_reorders_siblings_densely() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let [a, b, c] = ["A", "B", "C"].map(|t| f.plan(&root, t));
    let ch = f.change();
    f.store.move_frame(ch, &c, None, Some(0)).unwrap();
    let order: Vec<_> = f.store.children(&root).unwrap().into_iter().map(|x| x.id).collect();
    assert_eq!(order, [c.clone(), a.clone(), b.clone()]);
    let ch = f.change();
    f.store.move_frame(ch, &c, None, Some(2)).unwrap();
    let order: Vec<_> = f.store.children(&root).unwrap().into_iter().map(|x| x.id).collect();
    assert_eq!(order, [a, b, c]);
    f.check();
}

#[test]
fn move_reparents_under_another_open_frame() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let [a, b] = ["A", "B"].map(|t| f.plan(&root, t));
    let ch = f.change();
    let moved = f.store.move_frame(ch, &b, Some(&a), None).unwrap();
    assert_eq!((moved.parent, moved.position), (Some(a.clone()), 0));
    assert_eq!(f.store.frame(&a).unwrap().position, 0);
    f.check();
}

#[test]
fn move_refuses_its_own_subtree_started_frames_and_terminal_targets() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.plan(&root, "A");
    let a1 = f.plan(&a, "A1");
    let ch = f.change();
    let err = f.refused(|f| f.store.move_frame(ch, &a, Some(&a1), None).map(drop));
    assert!(err.to_string().contains("own subtree"), "{err}");
    let ch = f.change();
    let err = f.refused(|f| f.store.move_frame(ch, &a, Some(&a), None).map(drop));
    assert!(err.to_string().contains("own subtree"), "{err}");
    let started = f.push(&root, "S");
    let ch = f.change();
    let err = f.refused(|f| f.store.move_frame(ch, &started, None, Some(0)).map(drop));
    refusal_names(&err, &started, Status::InProgress);
    f.pop(&started, PopStatus::Completed).unwrap();
    let ch = f.change();
    let err = f.refused(|f| f.store.move_frame(ch, &a, Some(&started), None).map(drop));
    refusal_names(&err, &started, Status::Completed);
    let ch = f.change();
    let err = f.refused(|f| f.store.move_frame(ch, &a, None, Some(9)).map(drop));
    assert!(err.to_string().contains("past the end"), "{err}");
}

#[test]
fn delete_removes_a_planned_subtree_without_messages() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let [a, b] = ["A", "B"].map(|t| f.plan(&root, t));
    let a1 = f.plan(&a, "A1");
    let ch = f.change();
    let gone = f.store.delete(ch, &a).unwrap();
    assert_eq!(gone, [a.clone(), a1.clone()]);
    assert!(matches!(f.store.frame(&a), Err(StoreError::Frame(FrameError::NoSuchFrame(_)))));
    assert_eq!(f.store.frame(&b).unwrap().position, 0);
    f.check();
}

#[test]
fn delete_refuses_frames_with_messages_and_started_frames() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let p = f.plan(&root, "P");
    let ch = f.change();
    f.store.add_message(ch, &p, &NewMessage::text(Role::Note, "an idea"), 3).unwrap();
    let ch = f.change();
    let err = f.refused(|f| f.store.delete(ch, &p).map(drop));
    assert!(err.to_string().contains("has messages"), "{err}");
    let s = f.push(&root, "S");
    let ch = f.change();
    let err = f.refused(|f| f.store.delete(ch, &s).map(drop));
    refusal_names(&err, &s, Status::InProgress);
}

#[test]
fn start_starts_planned_ancestors_and_focuses() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let b = f.plan(&root, "B");
    let b1 = f.plan(&b, "B1");
    let ch = f.change();
    f.store.start(ch, &b1).unwrap();
    assert_eq!((f.status(&b), f.status(&b1)), (Status::InProgress, Status::InProgress));
    assert_eq!(f.focus(), b1);
    let ch = f.change();
    let err = f.refused(|f| f.store.start(ch, &b1).map(drop));
    refusal_names(&err, &b1, Status::InProgress);
    f.check();
}

#[test]
fn start_is_refused_under_a_blocked_ancestor() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    let early = f.plan(&a, "Planned before the block");
    f.pop(&a, PopStatus::Blocked).unwrap();
    assert_eq!(
        f.status(&early),
        Status::Invalidated,
        "a pop invalidates remaining planned children"
    );
    let later = f.plan(&a, "Planned while blocked");
    let ch = f.change();
    let err = f.refused(|f| f.store.start(ch, &later).map(drop));
    let text = err.to_string();
    assert!(text.contains(a.as_str()) && text.contains("resume that ancestor first"), "{text}");
}

#[test]
fn pop_completed_records_results_invalidates_planned_children_and_returns_focus() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    let p = f.plan(&a, "Never done");
    let pp = f.plan(&p, "Below it");
    let popped = f.pop(&a, PopStatus::Completed).unwrap();
    assert_eq!(popped.status, Status::Completed);
    assert_eq!(popped.results.as_deref(), Some("done"));
    assert_eq!(popped.artifacts, ["src/auth.rs"]);
    assert_eq!(popped.decisions, ["JWT"]);
    assert!(popped.ended_at.is_some());
    assert_eq!((f.status(&p), f.status(&pp)), (Status::Invalidated, Status::Invalidated));
    assert_eq!(f.focus(), root);
    f.check();
}

#[test]
fn pop_needs_results_or_a_reason_and_refuses_open_children() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    let ch = f.change();
    let no_results = Pop { results: None, ..completed("") };
    let err = f.refused(|f| f.store.pop(ch, &a, &no_results).map(drop));
    assert!(err.to_string().contains("needs its results"), "{err}");
    let ch = f.change();
    let no_reason = Pop { status: PopStatus::Failed, reason: None, ..completed("x") };
    let err = f.refused(|f| f.store.pop(ch, &a, &no_reason).map(drop));
    assert!(err.to_string().contains("needs a reason"), "{err}");
    let child = f.push(&a, "Child");
    let ch = f.change();
    let err = f.refused(|f| f.store.pop(ch, &a, &completed("x")).map(drop));
    assert!(
        err.to_string().contains(child.as_str()) && err.to_string().contains("pop that first"),
        "{err}"
    );
}

#[test]
fn pop_is_refused_for_every_status_but_in_progress() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let planned = f.plan(&root, "P");
    let done = f.push(&root, "D");
    f.pop(&done, PopStatus::Completed).unwrap();
    let failed = f.push(&root, "F");
    f.pop(&failed, PopStatus::Failed).unwrap();
    let blocked = f.push(&root, "B");
    f.pop(&blocked, PopStatus::Blocked).unwrap();
    let gone = f.push(&root, "I");
    let ch = f.change();
    f.store.invalidate(ch, &gone, None).unwrap();
    for (id, status) in [
        (planned, Status::Planned),
        (done, Status::Completed),
        (failed, Status::Failed),
        (blocked, Status::Blocked),
        (gone, Status::Invalidated),
    ] {
        let ch = f.change();
        let err = f.refused(|f| f.store.pop(ch, &id, &completed("x")).map(drop));
        refusal_names(&err, &id, status);
    }
}

#[test]
fn resume_takes_a_blocked_frame_back_into_progress() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    f.pop(&a, PopStatus::Blocked).unwrap();
    assert_eq!(f.store.frame(&a).unwrap().status_reason.as_deref(), Some("because"));
    let ch = f.change();
    let resumed = f.store.resume(ch, &a).unwrap();
    assert_eq!((resumed.status, resumed.status_reason), (Status::InProgress, None));
    assert_eq!(f.focus(), a);
    let ch = f.change();
    let err = f.refused(|f| f.store.resume(ch, &a).map(drop));
    refusal_names(&err, &a, Status::InProgress);
    f.check();
}

#[test]
fn resume_needs_an_in_progress_parent() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    let a1 = f.push(&a, "A1");
    f.pop(&a1, PopStatus::Blocked).unwrap();
    f.pop(&a, PopStatus::Blocked).unwrap();
    let ch = f.change();
    let err = f.refused(|f| f.store.resume(ch, &a1).map(drop));
    assert!(err.to_string().contains(a.as_str()) && err.to_string().contains("blocked"), "{err}");
}

#[test]
fn retry_makes_a_new_sibling_with_the_same_identity() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    let b = f.push(&root, "B");
    f.pop(&b, PopStatus::Completed).unwrap();
    f.pop(&a, PopStatus::Failed).unwrap();
    let new_id = f.ids.frame_id();
    let ch = f.change();
    let retry = f.store.retry(ch, &a, &new_id).unwrap();
    assert_eq!(
        (retry.status, retry.retry_of.as_ref(), retry.position),
        (Status::InProgress, Some(&a), 1)
    );
    assert_eq!((retry.title.as_str(), retry.success_criteria.as_str()), ("A", "criteria"));
    assert_eq!(f.store.frame(&b).unwrap().position, 2);
    assert_eq!(f.status(&a), Status::Failed, "the failed attempt stays");
    assert_eq!(f.focus(), new_id);
    f.check();
    let ch = f.change();
    let other = f.ids.frame_id();
    let err = f.refused(|f| f.store.retry(ch, &b, &other).map(drop));
    refusal_names(&err, &b, Status::Completed);
}

#[test]
fn the_root_cannot_be_retried() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    f.pop(&root, PopStatus::Failed).unwrap();
    let id = f.ids.frame_id();
    let ch = f.change();
    let err = f.refused(|f| f.store.retry(ch, &root, &id).map(drop));
    assert!(err.to_string().contains("root"), "{err}");
}

#[test]
fn invalidate_cascades_to_open_descendants_only() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let b = f.push(&root, "B");
    let done = f.push(&b, "Done");
    f.pop(&done, PopStatus::Completed).unwrap();
    let failed = f.push(&b, "Failed");
    f.pop(&failed, PopStatus::Failed).unwrap();
    let blocked = f.push(&b, "Blocked");
    f.pop(&blocked, PopStatus::Blocked).unwrap();
    let planned = f.plan(&b, "Planned");
    let running = f.push(&b, "Running");
    let deep = f.push(&running, "Deep");
    let ch = f.change();
    let gone = f.store.invalidate(ch, &b, Some("scope changed")).unwrap();
    assert_eq!(gone.len(), 5, "{gone:?}");
    for id in [&b, &blocked, &planned, &running, &deep] {
        assert_eq!(f.status(id), Status::Invalidated);
    }
    assert_eq!((f.status(&done), f.status(&failed)), (Status::Completed, Status::Failed));
    assert_eq!(f.store.frame(&b).unwrap().status_reason.as_deref(), Some("scope changed"));
    assert_eq!(f.focus(), root, "the focus was on {deep}, inside the invalidated subtree");
    let ch = f.change();
    let err = f.refused(|f| f.store.invalidate(ch, &b, None).map(drop));
    refusal_names(&err, &b, Status::Invalidated);
    f.check();
}

#[test]
fn focus_moves_to_any_frame_and_makes_its_tree_current() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    f.pop(&a, PopStatus::Completed).unwrap();
    let (other_tree, other_root) = (f.ids.tree_id(), f.ids.frame_id());
    let ch = f.change();
    f.store.create_tree(ch, &other_tree, &other_root, "Other", "c", None).unwrap();
    assert_eq!(f.store.current_tree().unwrap(), Some(other_tree));
    let ch = f.change();
    f.store.focus(ch, &a).unwrap();
    assert_eq!(f.focus(), a);
    assert_eq!(f.store.current_tree().unwrap(), Some(f.tree.clone()));
}

#[test]
fn messages_are_stored_with_their_tokens_and_counted_on_the_frame() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let ch = f.change();
    let mut msg = NewMessage::text(Role::Assistant, "hello");
    msg.model = Some("m".into());
    msg.usage = Some(Usage { input_tokens: 3, ..Usage::default() });
    msg.interrupted = true;
    let stored = f.store.add_message(ch, &root, &msg, 2).unwrap();
    assert_eq!(f.store.messages(&root).unwrap(), std::slice::from_ref(&stored));
    let frame = f.store.frame(&root).unwrap();
    assert_eq!((frame.message_count, frame.tokens), (1, 2));
    let events = f.store.frame_events(&root, 0).unwrap();
    assert_eq!(events.last().unwrap().kind, EventKind::MessageAdded);
    assert_eq!(
        events.last().unwrap().detail,
        flame_model::EventDetail::MessageAdded { message: stored.id }
    );
}

#[test]
fn messages_are_refused_in_finished_frames_and_above_the_size_limit() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    f.pop(&a, PopStatus::Completed).unwrap();
    let ch = f.change();
    let err = f
        .refused(|f| f.store.add_message(ch, &a, &NewMessage::text(Role::User, "hi"), 1).map(drop));
    refusal_names(&err, &a, Status::Completed);
    let huge = "x".repeat(10 * 1024 * 1024);
    let ch = f.change();
    let err = f.refused(|f| {
        f.store.add_message(ch, &root, &NewMessage::text(Role::User, huge), 1).map(drop)
    });
    assert!(err.to_string().contains("10.0 MiB"), "{err}");
}

#[test]
fn unknown_ids_are_clear_errors() {
    let mut f = Fixture::new();
    let ghost = FrameId::parse("fzzzzzzzzzz").unwrap();
    let ch = f.change();
    let err = f.refused(|f| f.store.start(ch, &ghost).map(drop));
    assert_eq!(err.to_string(), "no frame fzzzzzzzzzz in this data directory");
    assert!(matches!(
        f.store.tree(&TreeId::parse("tzzzzzzzzzz").unwrap()),
        Err(StoreError::Frame(FrameError::NoSuchTree(_)))
    ));
}

#[test]
fn a_taken_id_is_reported_as_taken() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    let ch = f.change();
    assert!(
        matches!(f.store.push(ch, &a, &root, "again", "c"), Err(StoreError::IdTaken(id)) if id == a.as_str())
    );
}

#[test]
fn every_operation_is_recorded_with_who_and_when() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    let events = f.store.frame_events(&a, 0).unwrap();
    let kinds: Vec<_> = events.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [EventKind::Pushed, EventKind::Focused]);
    assert_eq!((events[0].actor, events[0].at), (Actor::Cli, f.clock));
    assert!(f.store.pending_logs().unwrap().iter().any(|(_, frame, _)| frame == &a));
}

#[test]
fn path_with_children_returns_ancestors_and_their_children() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    let a1 = f.push(&a, "A1");
    f.pop(&a1, PopStatus::Completed).unwrap();
    f.pop(&a, PopStatus::Completed).unwrap();
    let b = f.push(&root, "B");
    let b1 = f.push(&b, "B1");
    let b2 = f.plan(&b, "B2");
    let b11 = f.plan(&b1, "B1.1");
    let mut ids: Vec<_> =
        f.store.path_with_children(&b1).unwrap().into_iter().map(|fr| fr.id).collect();
    ids.sort();
    let mut expected = vec![root, a, b, b1, b2, b11];
    expected.sort();
    assert_eq!(ids, expected, "A1 (below an off-path frame) must not be read");
}

#[test]
fn a_frames_ancestor_ids_run_from_it_to_the_root() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    let a1 = f.push(&a, "A1");
    assert_eq!(f.store.frame_and_ancestor_ids(&a1).unwrap(), [a1, a, root.clone()]);
    assert_eq!(f.store.frame_and_ancestor_ids(&root).unwrap(), [root]);
    let gone = FrameId::parse("f0000000777").unwrap();
    assert!(f.store.frame_and_ancestor_ids(&gone).unwrap().is_empty());
}

#[test]
fn messages_after_one_say_which_replies_are_open() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let ch = f.change();
    let first = f.store.add_message(ch, &root, &NewMessage::text(Role::User, "one"), 1).unwrap();
    let ch = f.change();
    let reply = f.store.begin_reply(ch, &root, Some("m"), WRITER).unwrap();
    f.store.update_reply(reply, "so far", 41).unwrap();
    let ch = f.change();
    let last = f.store.add_message(ch, &root, &NewMessage::text(Role::User, "two"), 1).unwrap();
    let read = |store: &Store, after| -> Vec<(String, bool)> {
        let rows = store.messages_after(&root, after).unwrap();
        rows.into_iter().map(|(m, open)| (m.content, open)).collect()
    };
    let all = read(&f.store, MessageId(0));
    assert_eq!(all, [("one".into(), false), ("so far".into(), true), ("two".into(), false)]);
    assert_eq!(read(&f.store, first.id), all[1..]);
    assert!(read(&f.store, last.id).is_empty());
    assert_eq!(f.store.message_count_through(&root, first.id).unwrap(), 1);
    assert_eq!(f.store.message_count_through(&root, last.id).unwrap(), 3);
    let ch = f.change();
    f.store.finish_reply(ch, reply, &NewMessage::text(Role::Assistant, "done"), 1).unwrap();
    assert_eq!(read(&f.store, first.id)[0], ("done".into(), false));
}

#[test]
fn messages_before_one_are_the_newest_of_them_oldest_first() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let other = f.push(&root, "Elsewhere");
    let mut ids = Vec::new();
    for n in 0..5 {
        let ch = f.change();
        let text = NewMessage::text(Role::User, format!("m{n}"));
        ids.push(f.store.add_message(ch, &root, &text, 1).unwrap().id);
        // Another frame's messages between them are not read.
        let ch = f.change();
        f.store.add_message(ch, &other, &NewMessage::text(Role::User, "x"), 1).unwrap();
    }
    let read = |before, limit| -> Vec<String> {
        let rows = f.store.messages_before(&root, before, limit).unwrap();
        rows.into_iter().map(|m| m.content).collect()
    };
    assert_eq!(read(ids[4], 2), ["m2", "m3"]);
    assert_eq!(read(MessageId(i64::MAX), 3), ["m2", "m3", "m4"]);
    assert_eq!(read(ids[2], 10), ["m0", "m1"]);
    assert!(read(ids[0], 10).is_empty());
    assert!(read(ids[4], 0).is_empty());
}

#[test]
fn the_outline_has_every_frame_in_its_narrow_form() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    let ch = f.change();
    f.store.add_message(ch, &a, &NewMessage::text(Role::User, "hi"), 7).unwrap();
    let p = f.plan(&root, "P");
    let mut outline = f.store.outline_of_tree(&f.tree).unwrap();
    outline.sort_by_key(|o| (o.parent.is_some(), o.position));
    let full = |id: &FrameId| f.store.frame(id).unwrap();
    assert_eq!(outline.len(), 3);
    for o in &outline {
        let frame = full(&o.id);
        assert_eq!(
            (&o.parent, o.position, &o.title, o.status),
            (&frame.parent, frame.position, &frame.title, frame.status)
        );
        assert_eq!(
            (o.message_count, o.tokens, o.started_at),
            (frame.message_count, frame.tokens, frame.started_at)
        );
    }
    assert_eq!(outline.iter().find(|o| o.id == a).unwrap().tokens, 7);
    assert_eq!(outline.iter().find(|o| o.id == p).unwrap().status, Status::Planned);
}

#[test]
fn a_tree_keeps_the_total_tokens_of_its_messages() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    for (frame, tokens) in [(&root, 5), (&a, 7), (&a, 11)] {
        let ch = f.change();
        f.store.add_message(ch, frame, &NewMessage::text(Role::User, "x"), tokens).unwrap();
    }
    assert_eq!(f.store.tree_message_tokens(&f.tree).unwrap(), 23);
}

#[test]
fn a_reply_streams_into_an_open_message_and_counts_when_finished() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let ch = f.change();
    let id = f.store.begin_reply(ch, &root, Some("m"), WRITER).unwrap();
    f.store.update_reply(id, "Hel", 40).unwrap();
    assert_eq!(
        f.store.open_replies().unwrap(),
        [OpenReply {
            id,
            frame: root.clone(),
            content: "Hel".to_owned(),
            owner: Some(WRITER),
            heartbeat_at: Some(40),
        }]
    );
    assert_eq!(f.store.frame(&root).unwrap().message_count, 0, "an open reply does not count yet");
    assert!(
        !f.store.frame_events(&root, 0).unwrap().iter().any(|e| e.kind == EventKind::MessageAdded)
    );

    let mut reply = NewMessage::text(Role::Assistant, "Hello");
    reply.tool_calls = Some(vec![ToolCall {
        arguments: serde_json::json!({}),
        id: "c1".into(),
        name: "frame_status".into(),
    }]);
    let ch = f.change();
    let done = f.store.finish_reply(ch, id, &reply, 2).unwrap();
    assert_eq!((done.content.as_str(), done.interrupted, done.tokens), ("Hello", false, 2));
    assert!(f.store.open_replies().unwrap().is_empty());
    assert_eq!(f.store.frame(&root).unwrap().message_count, 1);
    assert_eq!(
        f.store.frame_events(&root, 0).unwrap().last().unwrap().kind,
        EventKind::MessageAdded
    );
    let ch = f.change();
    assert!(f.store.finish_reply(ch, id, &reply, 2).is_err(), "a reply is finished once");
}

#[test]
fn replies_are_refused_where_messages_are() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    f.pop(&a, PopStatus::Completed).unwrap();
    let ch = f.change();
    let err = f.refused(|f| f.store.begin_reply(ch, &a, None, WRITER).map(drop));
    refusal_names(&err, &a, Status::Completed);
}

#[test]
fn deleting_a_tree_removes_all_of_it_and_nothing_else() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    let planned = f.plan(&root, "Later");
    let ch = f.change();
    f.store.add_message(ch, &a, &NewMessage::text(Role::User, "hello"), 1).unwrap();
    f.pop(&a, PopStatus::Failed).unwrap();
    let ch = f.change();
    let retry = f.ids.frame_id();
    f.store.retry(ch, &a, &retry).unwrap();
    // A second tree, created later, which must survive and become current.
    let (other, other_root) = (f.ids.tree_id(), f.ids.frame_id());
    let ch = f.change();
    f.store.create_tree(ch, &other, &other_root, "Other", "kept", None).unwrap();
    let ch = f.change();
    f.store.add_message(ch, &other_root, &NewMessage::text(Role::User, "mine"), 1).unwrap();
    let ch = f.change();
    f.store.focus(ch, &root).unwrap();
    assert_eq!(f.store.current_tree().unwrap(), Some(f.tree.clone()));
    let ch = f.change();
    f.store.allow_network(ch, &f.tree.clone()).unwrap();
    let before = f.store.latest_event_seq().unwrap();

    let ch = f.change();
    let deleted = f.store.delete_tree(ch, &f.tree.clone()).unwrap();
    assert_eq!(deleted.frames, 4);
    assert_eq!(deleted.messages, 1);
    for gone in [&root, &a, &planned, &retry] {
        assert!(f.store.frame(gone).is_err(), "{gone} is gone");
    }
    assert!(f.store.tree(&f.tree).is_err());
    assert_eq!(f.store.trees().unwrap().len(), 1);
    assert_eq!(f.store.current_tree().unwrap(), Some(other.clone()));
    assert_eq!(f.store.messages(&other_root).unwrap().len(), 1);
    // One event tells followers; the tree's own events are gone with it.
    let events = f.store.events_since(before, 10).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].kind, EventKind::TreeDeleted);
    assert_eq!(events[0].frame, root);
    assert!(f.store.pending_logs().unwrap().iter().all(|(tree, _, _)| tree != &f.tree));

    // Deleting the last tree leaves no current tree.
    let ch = f.change();
    f.store.delete_tree(ch, &other).unwrap();
    assert_eq!(f.store.current_tree().unwrap(), None);
    assert!(f.store.trees().unwrap().is_empty());
}

#[test]
fn a_tree_is_not_deleted_while_a_reply_is_written_in_it_nor_when_unknown() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let ch = f.change();
    let reply = f.store.begin_reply(ch, &root, Some("m"), WRITER).unwrap();
    let ch = f.change();
    let tree = f.tree.clone();
    let err = f.refused(|f| f.store.delete_tree(ch, &tree).map(drop));
    assert!(err.to_string().contains(root.as_str()), "{err}");
    assert!(err.to_string().contains("stop the reply"), "{err}");
    let ch = f.change();
    f.store.finish_reply(ch, reply, &NewMessage::text(Role::Assistant, "done"), 1).unwrap();
    let ch = f.change();
    let unknown = f.ids.tree_id();
    assert!(f.store.delete_tree(ch, &unknown).is_err());
    let ch = f.change();
    f.store.delete_tree(ch, &tree).unwrap();
}

#[test]
fn the_first_start_is_claimed_once_and_only_by_an_empty_store() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("flame.db")).unwrap();
    assert!(store.claim_first_start().unwrap());
    assert!(!store.claim_first_start().unwrap(), "asked again");

    let other = tempfile::tempdir().unwrap();
    let mut store = Store::open(&other.path().join("flame.db")).unwrap();
    let mut ids = IdSource::seeded(3);
    store.create_tree(change(1), &ids.tree_id(), &ids.frame_id(), "Mine", "c", None).unwrap();
    assert!(!store.claim_first_start().unwrap(), "a store with a tree is not new");
}

#[test]
fn a_reply_past_the_message_cap_keeps_what_fits_and_says_it_was_truncated() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let ch = f.change();
    let id = f.store.begin_reply(ch, &root, Some("m"), WRITER).unwrap();
    // Two-byte characters with one byte in front, so the cap falls inside a character.
    let long = format!("x{}", "é".repeat(MAX_MESSAGE_BYTES));
    f.store.update_reply(id, &long, 40).unwrap();
    let saved = f.store.open_replies().unwrap().remove(0).content;
    assert!(saved.len() <= MAX_MESSAGE_BYTES, "saved {} bytes", saved.len());
    assert!(saved.ends_with(&truncation_note()), "{}", &saved[saved.len() - 80..]);
    assert!(saved.starts_with("xéé"));

    let ch = f.change();
    let done = f.store.finish_reply(ch, id, &NewMessage::text(Role::Assistant, long), 7).unwrap();
    assert!(done.content.len() <= MAX_MESSAGE_BYTES, "finished with {} bytes", done.content.len());
    assert!(done.content.ends_with(&truncation_note()));
    assert_eq!(f.store.messages(&root).unwrap()[0].content, done.content);
    // The frame goes on taking messages.
    let ch = f.change();
    f.store.add_message(ch, &root, &NewMessage::text(Role::User, "next"), 1).unwrap();
    assert_eq!(f.store.frame(&root).unwrap().message_count, 2);
}

#[test]
fn a_reply_within_the_cap_is_stored_as_it_is() {
    let exact = "a".repeat(MAX_MESSAGE_BYTES);
    assert_eq!(fit_reply(&exact), exact.as_str());
    assert!(fit_reply(&format!("{exact}b")).ends_with(&truncation_note()));
}

#[test]
fn a_reply_opened_before_owners_were_recorded_reads_back_without_one() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let ch = f.change();
    let id = f.store.begin_reply(ch, &root, None, WRITER).unwrap();
    // What migration 5 leaves on a reply that version 4 opened: the new columns empty.
    let conn = rusqlite::Connection::open(f.store.path()).unwrap();
    conn.execute(
        "UPDATE messages SET owner_pid = NULL, owner_started = NULL, heartbeat_at = NULL",
        [],
    )
    .unwrap();
    f.store.update_reply(id, "so far", 50).unwrap();
    let open = f.store.open_replies().unwrap();
    assert_eq!((open[0].owner, open[0].heartbeat_at), (None, Some(50)));
    assert_eq!(open[0].content, "so far");
}

/// Two clients each popping "the focus": the second names the frame it meant, so it cannot pop
/// the parent the first one's pop moved the focus to.
#[test]
fn a_pop_naming_the_focus_is_refused_once_the_focus_moved_and_changes_nothing() {
    let mut f = Fixture::new();
    let root = f.root.clone();
    let a = f.push(&root, "A");
    let ch = f.change();
    // The first client pops A; the focus returns to the root.
    f.store.pop_focused(ch, &a, &completed("done")).unwrap();
    assert_eq!(f.focus(), root);
    // The second still means A.
    let ch = f.change();
    let err = f.refused(|f| f.store.pop_focused(ch, &a, &completed("again")).map(drop));
    let text = err.to_string();
    assert!(text.contains(&format!("focus has moved to {root} \"Build the app\"")), "{text}");
    refusal_names(&err, &a, Status::Completed);
    assert_eq!(f.status(&root), Status::InProgress);

    // Focused elsewhere while the named frame is still open: refused too.
    let b = f.push(&root, "B");
    let ch = f.change();
    f.store.focus(ch, &root).unwrap();
    let ch = f.change();
    let err = f.refused(|f| f.store.pop_focused(ch, &b, &completed("b")).map(drop));
    refusal_names(&err, &b, Status::InProgress);
    assert!(err.to_string().contains(root.as_str()), "{err}");
    let ch = f.change();
    f.store.focus(ch, &b).unwrap();
    let ch = f.change();
    assert_eq!(f.store.pop_focused(ch, &b, &completed("b")).unwrap().status, Status::Completed);
}
