//! Commands and the sandbox through the facade, on real folders with a real `bwrap`: "auto in the
//! sandbox" runs a command at once inside, where Flame's data folder is not there to read; one
//! that asks for the network or to leave waits, with its reason, and runs as the person lets it;
//! the network allowed for a tree is kept for its later commands; and where the sandbox cannot
//! start, every command asks, which is said once.

use std::ffi::OsString;
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use flame_api::{
    Answer, ApprovalPolicy, CallInFrame, CallOutcome, CallResult, ErrorCode, Flame, FlameConfig,
    PlacePreview, Preview, RunApproval,
};
use flame_model::{Actor, CommandPlace, FrameId, LeaveSandbox, ToolCall, ToolDetail, TreeId};
use flame_workspace::{Environment, Sandbox};
use serde_json::{Value, json};

use crate::workspace_call::CountingRunner;

/// A Flame whose data folder and workspace lie in the build's temporary folder: not under
/// `/tmp`, which the sandbox replaces with its own, so what hides the data folder is the rule
/// that hides Flame's folders.
struct Fixture {
    outer: tempfile::TempDir,
    flame: Flame,
    tree: TreeId,
    frame: FrameId,
}

impl Fixture {
    fn new(sandbox: Option<Sandbox>) -> Fixture {
        let outer = tempfile::Builder::new()
            .prefix("api-sandbox-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        let data = outer.path().join("data");
        let flame = Flame::open_with(
            crate::home(&data),
            FlameConfig::default(),
            flame_api::Env::fixed(1_795_307_601_000, 38),
        )
        .unwrap();
        std::fs::create_dir(outer.path().join("ws")).unwrap();
        let tree = flame
            .create_tree(Actor::Person, "Work", "Done", Some(&outer.path().join("ws")))
            .unwrap();
        let frame = flame.status(Some(&tree.id)).unwrap().focus;
        if let Some(sandbox) = sandbox {
            flame.use_sandbox(sandbox);
        }
        Fixture { outer, flame, tree: tree.id, frame }
    }

    fn with_the_sandbox() -> Fixture {
        let sandbox = Sandbox::from_environment(&Environment::inherited());
        if let Err(unavailable) = sandbox.check() {
            panic!(
                "the sandbox must start where the tests run (make setup installs bubblewrap): {unavailable}"
            );
        }
        Fixture::new(Some(sandbox))
    }

    fn path(&self, name: &str) -> PathBuf {
        std::fs::canonicalize(self.outer.path()).unwrap().join(name)
    }

    fn call(&self, id: &str, arguments: Value, answer: Option<Answer>) -> CallOutcome {
        let request = CallInFrame {
            frame: self.frame.clone(),
            call: ToolCall { id: id.into(), name: "run_command".into(), arguments },
            answer,
            policy: ApprovalPolicy { run: RunApproval::AutoInSandbox, ..ApprovalPolicy::default() },
            moved_to: None,
        };
        self.flame.run_workspace_call(Actor::Agent, request, &CountingRunner::default()).unwrap()
    }
}

fn done(outcome: CallOutcome) -> CallResult {
    match outcome {
        CallOutcome::Done(result) => result,
        CallOutcome::Waiting { preview, .. } => panic!("the call waits: {preview:?}"),
    }
}

fn ran_in(result: &CallResult) -> Option<CommandPlace> {
    match &result.outcome.detail {
        Some(ToolDetail::Command { place, .. }) => *place,
        other => panic!("not a command's detail: {other:?}"),
    }
}

/// Connections the listener took since it was last asked.
fn accepted(listener: &TcpListener) -> usize {
    std::iter::from_fn(|| listener.accept().ok()).count()
}

#[test]
fn auto_in_the_sandbox_runs_a_command_at_once_where_flames_data_is_not_there() {
    let f = Fixture::with_the_sandbox();
    let data = f.path("data");
    assert!(data.join("flame.db").is_file());
    let script = format!(
        "echo listed=$(ls -A {data} | wc -l); head -c 15 {data}/flame.db; echo x > {beside}; echo in > inside.txt; echo finished",
        data = data.display(),
        beside = f.path("planted.txt").display(),
    );
    let result = done(f.call("c1", json!({ "command": script }), None));
    let text = &result.outcome.content;
    assert!(text.contains("finished"), "{text}");
    assert!(!text.contains("SQLite format"), "Flame's database was read: {text}");
    assert!(text.contains("listed=0"), "Flame's data folder was listed: {text}");
    assert_eq!(ran_in(&result), Some(CommandPlace::Sandbox { network: false }));
    assert!(!f.path("planted.txt").exists(), "written outside the workspace");
    assert!(f.path("ws/inside.txt").is_file());
    assert!(result.notices.is_empty(), "{:?}", result.notices);

    // Outside the sandbox, as the person let it, the same script reads the database.
    let leave = json!({ "command": script, "leave_sandbox": "all", "reason": "compare" });
    assert!(matches!(f.call("c2", leave.clone(), None), CallOutcome::Waiting { .. }));
    let result = done(f.call("c2", leave, Some(Answer::Accept { shown: None })));
    assert!(result.outcome.content.contains("SQLite format"), "{}", result.outcome.content);
    assert!(!result.outcome.content.contains("listed=0"), "{}", result.outcome.content);
    assert_eq!(ran_in(&result), Some(CommandPlace::Outside));
    assert!(f.path("planted.txt").exists());
}

#[test]
fn a_command_asking_for_the_network_waits_and_allowing_it_gives_the_tree_the_network() {
    let f = Fixture::with_the_sandbox();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!(
        "(echo hi > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected || echo refused"
    );

    let result = done(f.call("c0", json!({ "command": connect }), None));
    assert!(result.outcome.content.contains("refused"), "{}", result.outcome.content);
    assert_eq!(accepted(&listener), 0, "a connection came from the sandbox");

    let asks = json!({
        "command": connect,
        "leave_sandbox": "network",
        "reason": "reach the test server",
    });
    let CallOutcome::Waiting { preview, .. } = f.call("c1", asks.clone(), None) else {
        panic!("a command asking for the network waits");
    };
    let Preview::Command { place, .. } = &preview else {
        panic!("{preview:?}");
    };
    assert_eq!(
        *place,
        PlacePreview::LeaveSandbox {
            leave: LeaveSandbox::Network,
            reason: "reach the test server".into()
        }
    );
    assert_eq!(
        f.flame.preview_workspace_call(
            &f.tree,
            &ToolCall { id: "c1".into(), name: "run_command".into(), arguments: asks.clone() }
        ),
        preview
    );

    let result = done(f.call("c1", asks, Some(Answer::AllowNetwork)));
    assert!(result.outcome.content.contains("connected"), "{}", result.outcome.content);
    assert_eq!(accepted(&listener), 1);
    assert_eq!(ran_in(&result), Some(CommandPlace::Sandbox { network: true }));
    assert!(f.flame.network_allowed(&f.tree).unwrap());

    // The tree's later commands have the network without asking, still in the sandbox.
    let result = done(f.call("c2", json!({ "command": connect }), None));
    assert!(result.outcome.content.contains("connected"), "{}", result.outcome.content);
    assert_eq!(accepted(&listener), 1);
    assert_eq!(ran_in(&result), Some(CommandPlace::Sandbox { network: true }));

    // Only a command that asked for the network is answered by allowing it.
    let plain = CallInFrame {
        frame: f.frame.clone(),
        call: ToolCall {
            id: "c3".into(),
            name: "run_command".into(),
            arguments: json!({"command": "true"}),
        },
        answer: Some(Answer::AllowNetwork),
        policy: ApprovalPolicy::default(),
        moved_to: None,
    };
    let error =
        f.flame.run_workspace_call(Actor::Agent, plain, &CountingRunner::default()).unwrap_err();
    assert_eq!(error.code, ErrorCode::Invalid, "{}", error.message);
}

#[test]
fn where_the_sandbox_cannot_start_every_command_asks_and_that_is_said_once() {
    let empty = tempfile::tempdir().unwrap();
    let without_bwrap = Environment::from_variables([(
        OsString::from("PATH"),
        empty.path().as_os_str().to_owned(),
    )]);
    for f in [Fixture::new(Some(Sandbox::from_environment(&without_bwrap))), Fixture::new(None)] {
        let command = json!({ "command": "echo ran > ran.txt" });
        let CallOutcome::Waiting { preview: Preview::Command { place, .. }, .. } =
            f.call("c1", command.clone(), None)
        else {
            panic!("a command waits where there is no sandbox");
        };
        let PlacePreview::NoSandbox { why } = place else { panic!("{place:?}") };
        assert!(why.contains("bubblewrap") || why.contains("without a sandbox"), "{why}");
        assert!(!Path::new(&f.path("ws/ran.txt")).exists());

        let result = done(f.call("c1", command.clone(), Some(Answer::Accept { shown: None })));
        assert_eq!(ran_in(&result), Some(CommandPlace::Outside));
        assert!(f.path("ws/ran.txt").exists());
        assert_eq!(result.notices.len(), 1, "{:?}", result.notices);
        assert!(result.notices[0].contains("every command asks"), "{:?}", result.notices);

        assert!(matches!(f.call("c2", command.clone(), None), CallOutcome::Waiting { .. }));
        let again = done(f.call("c2", command, Some(Answer::Accept { shown: None })));
        assert!(again.notices.is_empty(), "said twice: {:?}", again.notices);
    }
}
