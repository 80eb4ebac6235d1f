//! One workspace call in a frame as one facade operation, on a real folder with real
//! checkpoints: when it waits, what the person is shown, that the change shown is the one
//! applied, the checkpoints around it, the command run through the runner passed in, and the
//! result stored with its trail.

use std::ffi::OsString;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use flame_api::{
    Answer, ApprovalPolicy, CallInFrame, CallOutcome, CallResult, CommandRunner, ErrorCode, Preview,
};
use flame_model::{Actor, FrameId, Role, ToolCall, ToolDetail, ToolKind};
use flame_workspace::{
    CancelHandle, CommandOutcome, CommandRequest, Confinement, Environment, Workspace,
    WorkspaceError,
};
use serde_json::json;

use crate::Scratch;

/// Runs commands from a fixed environment, counts the runs, and says every run took 1.5 s, so
/// the tool card's duration is shown to come from the runner.
#[derive(Default)]
pub(crate) struct CountingRunner {
    pub(crate) runs: AtomicUsize,
}

impl CommandRunner for CountingRunner {
    fn run(
        &self,
        workspace: &Workspace,
        request: &CommandRequest,
        confinement: Confinement<'_>,
        log: &mut dyn Write,
    ) -> (Result<CommandOutcome, WorkspaceError>, Duration) {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let environment = Environment::from_variables([(
            OsString::from("PATH"),
            std::env::var_os("PATH").unwrap_or_default(),
        )]);
        let outcome =
            workspace.run_command(request, confinement, &environment, &CancelHandle::new(), log);
        (outcome, Duration::from_millis(1_500))
    }
}

struct Fixture {
    s: Scratch,
    folder: tempfile::TempDir,
    frame: FrameId,
}

fn fixture(seed: u64) -> Fixture {
    let s = Scratch::new(seed);
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("greet.py"), "print('hello')\n").unwrap();
    let tree = s.flame.create_tree(Actor::Person, "Work", "Done", Some(folder.path())).unwrap();
    let frame = s.flame.status(Some(&tree.id)).unwrap().focus;
    Fixture { s, folder, frame }
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments }
}

fn edit(id: &str) -> ToolCall {
    call(
        id,
        "edit_file",
        json!({"path": "greet.py", "old_string": "hello", "new_string": "goodbye"}),
    )
}

fn request(f: &Fixture, call: &ToolCall, answer: Option<Answer>) -> CallInFrame {
    CallInFrame {
        frame: f.frame.clone(),
        call: call.clone(),
        answer,
        policy: ApprovalPolicy::default(),
        moved_to: None,
    }
}

fn done(outcome: CallOutcome) -> CallResult {
    match outcome {
        CallOutcome::Done(result) => result,
        CallOutcome::Waiting { preview, .. } => panic!("the call waits: {preview:?}"),
    }
}

fn greeting(f: &Fixture) -> String {
    std::fs::read_to_string(f.folder.path().join("greet.py")).unwrap()
}

fn tool_messages(f: &Fixture) -> usize {
    f.s.flame.messages(&f.frame).unwrap().iter().filter(|m| m.role == Role::Tool).count()
}

#[test]
fn a_change_waits_with_its_diff_and_the_one_shown_is_applied_between_checkpoints() {
    let f = fixture(1);
    let runner = CountingRunner::default();
    let edit = edit("c1");
    let waiting = f.s.flame.run_workspace_call(Actor::Agent, request(&f, &edit, None), &runner);
    let CallOutcome::Waiting { tool_kind, preview: Preview::Change { base, diff, path, .. } } =
        waiting.unwrap()
    else {
        panic!("the edit should wait with its diff");
    };
    assert_eq!((tool_kind, path.as_str()), (ToolKind::Changing, "greet.py"));
    assert!(diff.contains("+print('goodbye')"), "{diff}");
    assert_eq!(greeting(&f), "print('hello')\n", "nothing is written while it waits");
    assert_eq!(tool_messages(&f), 0, "nothing is stored while it waits");
    assert_eq!(
        f.s.flame.preview_workspace_call(&f.s.flame.frame(&f.frame).unwrap().frame.tree, &edit),
        Preview::Change { base: base.clone(), diff, path, created: false }
    );

    let accept = Answer::Accept { shown: Some(base) };
    let result = done(
        f.s.flame
            .run_workspace_call(Actor::Agent, request(&f, &edit, Some(accept)), &runner)
            .unwrap(),
    );
    assert!(!result.outcome.is_error, "{}", result.outcome.content);
    assert!(result.notices.is_empty(), "{:?}", result.notices);
    assert_eq!(greeting(&f), "print('goodbye')\n");
    assert_eq!(result.outcome.trail.changed, ["greet.py"]);
    assert!(matches!(result.outcome.detail, Some(ToolDetail::Change { .. })));
    let stored = f.s.flame.messages(&f.frame).unwrap();
    let last = stored.last().unwrap();
    assert_eq!(Some(last.id), result.saved);
    assert_eq!(last.tool_result.as_ref().unwrap().tool_call_id, "c1");
    assert_eq!(f.s.flame.file_trail(&f.frame).unwrap().changed, ["greet.py"]);
    // The checkpoints before and after the call make the frame's changes.
    let changes = f.s.flame.frame_changes(&f.frame, false).unwrap();
    assert_eq!(changes.files.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(), ["greet.py"]);
    assert_eq!(runner.runs.load(Ordering::SeqCst), 0, "a file call needs no command runner");
}

#[test]
fn an_accepted_change_to_a_file_changed_since_is_asked_again_and_not_written() {
    let f = fixture(2);
    let runner = CountingRunner::default();
    let edit = edit("c1");
    let CallOutcome::Waiting { preview: Preview::Change { base: shown, .. }, .. } =
        f.s.flame.run_workspace_call(Actor::Agent, request(&f, &edit, None), &runner).unwrap()
    else {
        panic!("the edit should wait");
    };
    std::fs::write(f.folder.path().join("greet.py"), "print('hello')  # the person's\n").unwrap();
    let accept = Answer::Accept { shown: Some(shown.clone()) };
    let again =
        f.s.flame.run_workspace_call(Actor::Agent, request(&f, &edit, Some(accept)), &runner);
    let CallOutcome::Waiting { preview: Preview::Change { base: now, diff, .. }, .. } =
        again.unwrap()
    else {
        panic!("the edit should be asked again");
    };
    assert_ne!(now, shown);
    assert!(diff.contains("# the person's"), "{diff}");
    assert_eq!(greeting(&f), "print('hello')  # the person's\n");
    assert_eq!(tool_messages(&f), 0);
}

#[test]
fn a_refusal_is_stored_for_the_model_and_runs_nothing() {
    let f = fixture(3);
    let runner = CountingRunner::default();
    let command = call("c1", "run_command", json!({"command": "touch made.txt"}));
    let refuse = Answer::Refuse { reason: Some("  not now ".into()) };
    let result = done(
        f.s.flame
            .run_workspace_call(Actor::Agent, request(&f, &command, Some(refuse)), &runner)
            .unwrap(),
    );
    assert!(result.outcome.is_error);
    assert_eq!(
        result.outcome.content,
        "The person refused this run_command call. They said: not now"
    );
    assert_eq!(runner.runs.load(Ordering::SeqCst), 0);
    assert!(!f.folder.path().join("made.txt").exists());
    assert_eq!(tool_messages(&f), 1);
}

#[test]
fn allowing_a_kind_for_the_tree_runs_its_later_calls_at_once_through_the_runner() {
    let f = fixture(4);
    let runner = CountingRunner::default();
    let first = call("c1", "run_command", json!({"command": "echo one > one.txt"}));
    let CallOutcome::Waiting {
        tool_kind: ToolKind::Running,
        preview: Preview::Command { command, .. },
    } = f.s.flame.run_workspace_call(Actor::Agent, request(&f, &first, None), &runner).unwrap()
    else {
        panic!("the command should wait");
    };
    assert_eq!(command, "echo one > one.txt");
    let allow = Answer::AcceptKind { shown: None };
    let result = done(
        f.s.flame
            .run_workspace_call(Actor::Agent, request(&f, &first, Some(allow)), &runner)
            .unwrap(),
    );
    assert!(!result.outcome.is_error, "{}", result.outcome.content);
    assert_eq!(
        f.s.flame.allowed_kinds(&f.s.flame.frame(&f.frame).unwrap().frame.tree).unwrap(),
        [ToolKind::Running]
    );
    // The checkpoint after the command is how its trail learns what it changed.
    assert_eq!(result.outcome.trail.changed, ["one.txt"]);
    let Some(ToolDetail::Command { duration_ms, exit_code, output_file, .. }) =
        result.outcome.detail
    else {
        panic!("a command's detail");
    };
    assert_eq!((duration_ms, exit_code), (1_500, Some(0)));
    assert!(std::path::Path::new(&output_file.unwrap()).exists(), "the whole output is kept");

    let second = call("c2", "run_command", json!({"command": "exit 3"}));
    let result = done(
        f.s.flame.run_workspace_call(Actor::Agent, request(&f, &second, None), &runner).unwrap(),
    );
    assert!(result.outcome.is_error, "a failing command is marked an error");
    assert_eq!(runner.runs.load(Ordering::SeqCst), 2);
}

#[test]
fn a_call_that_cannot_run_fails_at_once_and_one_after_a_move_is_refused() {
    let f = fixture(5);
    let runner = CountingRunner::default();
    let missing = call(
        "c1",
        "edit_file",
        json!({"path": "greet.py", "old_string": "absent", "new_string": "x"}),
    );
    let result = done(
        f.s.flame.run_workspace_call(Actor::Agent, request(&f, &missing, None), &runner).unwrap(),
    );
    assert!(result.outcome.is_error);
    assert_eq!(f.s.flame.frame_changes(&f.frame, false).unwrap().files, []);

    let elsewhere = FrameId::from_trusted("f0000000099".to_owned());
    let moved = CallInFrame { moved_to: Some(elsewhere), ..request(&f, &edit("c2"), None) };
    let result = done(f.s.flame.run_workspace_call(Actor::Agent, moved, &runner).unwrap());
    assert!(result.outcome.content.contains("moved the conversation to frame f0000000099"));
    assert_eq!(greeting(&f), "print('hello')\n");

    let frame_tool = call("c3", "push_frame", json!({}));
    let err = f.s.flame.run_workspace_call(Actor::Agent, request(&f, &frame_tool, None), &runner);
    assert_eq!(err.unwrap_err().code, ErrorCode::Invalid);
    assert_eq!(runner.runs.load(Ordering::SeqCst), 0);
}
