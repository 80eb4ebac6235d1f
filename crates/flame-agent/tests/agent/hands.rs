//! The agent's hands: workspace tools offered only in a tree with a workspace, calls that wait
//! for the person with the diff or the command, refusals with the person's words, the file
//! trail recorded and merged into the artifacts on pop, commands stopped and their environment
//! scrubbed.

use std::ffi::OsString;
use std::path::Path;

use flame_agent::{Answer, ApprovalPolicy, Ask, Preview, RunApproval, waiting_request};
use flame_model::{FileTrail, ToolDetail, ToolKind};
use flame_workspace::Environment;

use super::*;

/// A tree whose workspace holds `greet.py`, with a child frame "Fix the greeting" focused, and
/// an agent with the given approval policy.
async fn workspace_setup(
    approval: ApprovalPolicy,
    replies: Vec<Reply>,
) -> (Setup, tempfile::TempDir) {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("greet.py"), "print('helo')\n").unwrap();
    std::fs::write(workspace.path().join("README.md"), "Says hello.\n").unwrap();
    let mut s = setup(Autonomy::Auto, replies).await;
    let tree = s.flame.status(None).unwrap().tree.id;
    s.flame.set_workspace(Actor::Person, &tree, Some(workspace.path())).unwrap();
    s.flame.push(Actor::Person, None, "Fix the greeting", "greet.py prints hello").unwrap();
    let mut settings = s.agent.settings().clone();
    settings.approval = approval;
    let base = s.server.base_url.clone();
    let environment = Environment::from_variables([
        (OsString::from("PATH"), std::env::var_os("PATH").unwrap_or_default()),
        (OsString::from("ANTHROPIC_API_KEY"), OsString::from(SENTINEL)),
        (OsString::from("ANTHROPIC_BASE_URL"), OsString::from(base)),
        (OsString::from("FLAME_HOME"), s.dir.path().as_os_str().to_owned()),
    ]);
    s.agent = Agent::new(s.flame.clone(), settings, environment, RetryPolicy::default());
    (s, workspace)
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_agent_reads_edits_and_runs_with_approval_then_pops_with_its_trail() {
    let (s, workspace) = workspace_setup(
        ApprovalPolicy::default(),
        vec![
            turn("Reading it.", Some(("read_file", json!({"path": "greet.py"})))),
            turn(
                "Fixing the typo.",
                Some((
                    "edit_file",
                    json!({"path": "greet.py", "old_string": "helo", "new_string": "hello"}),
                )),
            ),
            turn(
                "Running it.",
                Some(("run_command", json!({"command": "python3 greet.py || cat greet.py"}))),
            ),
            turn(
                "Fixed.",
                Some((
                    "pop_frame",
                    json!({"status": "completed", "results": "greet.py now prints hello", "artifacts": ["notes.md"]}),
                )),
            ),
            turn("The greeting is fixed.", None),
        ],
    )
    .await;
    let child = s.flame.status(None).unwrap().focus;
    let outcome = s
        .agent
        .send(Actor::Person, None, "Fix the typo", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    // The read ran at once; the edit waits, with its diff, and nothing changed yet.
    let Stopped::AwaitingApproval { request } = outcome.stopped else { panic!("{outcome:?}") };
    assert_eq!(request.call.name, "edit_file");
    let Ask::Workspace {
        tool_kind: ToolKind::Changing,
        preview: Preview::Change { path, created: false, diff, base },
    } = &request.ask
    else {
        panic!("{:?}", request.ask)
    };
    assert_eq!(path, "greet.py");
    assert!(diff.contains("-print('helo')") && diff.contains("+print('hello')"), "{diff}");
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("greet.py")).unwrap(),
        "print('helo')\n"
    );
    // The question is read back from the store, as after a restart.
    assert_eq!(waiting_request(&s.flame, &child).unwrap(), Some(request.clone()));
    let first = s.server.requests()[0].json();
    let names = tool_names(&first);
    for tool in ["read_file", "list_files", "search", "write_file", "edit_file", "run_command"] {
        assert!(names.contains(&tool.to_owned()), "{tool} not offered: {names:?}");
    }
    // The folder is in the system prompt's second block, after the start every tree shares.
    let system = first["system"][1]["text"].as_str().unwrap();
    assert!(
        system.contains(&workspace.path().canonicalize().unwrap().display().to_string()),
        "{system}"
    );

    let outcome = s
        .agent
        .answer_request(
            &child,
            Answer::Accept { shown: Some(base.clone()) },
            None,
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("greet.py")).unwrap(),
        "print('hello')\n"
    );
    let Stopped::AwaitingApproval { request } = outcome.stopped else { panic!("{outcome:?}") };
    let Ask::Workspace { preview: Preview::Command { command, timeout_seconds: 120, .. }, .. } =
        &request.ask
    else {
        panic!("{:?}", request.ask)
    };
    assert_eq!(command, "python3 greet.py || cat greet.py");

    let outcome = s
        .agent
        .answer_request(
            &child,
            Answer::AcceptKind { shown: None },
            None,
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();
    assert_eq!(outcome.stopped, Stopped::Finished);
    let tree = s.flame.status(None).unwrap().tree.id;
    assert_eq!(s.flame.allowed_kinds(&tree).unwrap(), [ToolKind::Running]);

    // The command's result carries its detail and its whole output is kept in a file.
    let messages = s.flame.messages(&child).unwrap();
    let command_result = messages
        .iter()
        .filter_map(|m| m.tool_result.as_ref())
        .find(|r| r.name.as_deref() == Some("run_command"))
        .unwrap();
    let Some(ToolDetail::Command { exit_code: Some(0), output_file: Some(output_file), .. }) =
        &command_result.detail
    else {
        panic!("{command_result:?}")
    };
    assert!(std::fs::read_to_string(output_file).unwrap().contains("hello"));
    let read_result = messages
        .iter()
        .filter_map(|m| m.tool_result.as_ref())
        .find(|r| r.name.as_deref() == Some("read_file"))
        .unwrap();
    assert!(matches!(
        read_result.detail,
        Some(ToolDetail::Read { first_line: 1, last_line: 1, total_lines: Some(1), .. })
    ));

    // The trail, the artifacts merged, and the parent's next context naming the file.
    assert_eq!(
        s.flame.file_trail(&child).unwrap(),
        FileTrail { read: vec![], changed: vec!["greet.py".into()] }
    );
    let popped = s.flame.frame(&child).unwrap().frame;
    assert_eq!(popped.status, Status::Completed);
    assert_eq!(popped.artifacts, ["notes.md", "greet.py"]);
    // The parent learns of it from the note appended to its context after the pop.
    let last = s.server.requests().last().unwrap().json();
    let appended = last["messages"].as_array().unwrap().last().unwrap().to_string();
    assert!(appended.contains("greet.py"), "{appended}");
    assert_key_nowhere(&s);
}

#[tokio::test]
async fn a_change_allowed_after_the_file_changed_is_asked_again_not_applied() {
    let (s, workspace) = workspace_setup(
        ApprovalPolicy::default(),
        vec![
            turn(
                "Rewriting it.",
                Some(("write_file", json!({"path": "greet.py", "content": "print('hello')\n"}))),
            ),
            turn("Rewritten.", None),
        ],
    )
    .await;
    let child = s.flame.status(None).unwrap().focus;
    let file = workspace.path().join("greet.py");
    let outcome = s
        .agent
        .send(Actor::Person, None, "Fix it", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    let Stopped::AwaitingApproval { request } = outcome.stopped else { panic!("{outcome:?}") };
    let Ask::Workspace { preview: Preview::Change { base: shown, .. }, .. } = &request.ask else {
        panic!("{:?}", request.ask)
    };
    // While the prompt waits, the person's own edit lands in the file.
    std::fs::write(&file, "print('helo')\nprint('my own line')\n").unwrap();
    let accept = |shown: &str| Answer::Accept { shown: Some(shown.to_owned()) };
    let outcome = s
        .agent
        .answer_request(&child, accept(shown), None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    // Nothing was written: the change as it would be now is put to the person instead.
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "print('helo')\nprint('my own line')\n");
    let Stopped::AwaitingApproval { request } = outcome.stopped else { panic!("{outcome:?}") };
    let Ask::Workspace { preview: Preview::Change { base: now, diff, .. }, .. } = &request.ask
    else {
        panic!("{:?}", request.ask)
    };
    assert_ne!(now, shown);
    assert!(diff.contains("-print('my own line')"), "the new question shows what goes: {diff}");
    // An answer that does not say what it was shown is asked again too.
    let outcome = s
        .agent
        .answer_request(
            &child,
            Answer::Accept { shown: None },
            None,
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();
    assert!(matches!(outcome.stopped, Stopped::AwaitingApproval { .. }), "{outcome:?}");
    assert!(s.flame.messages(&child).unwrap().iter().all(|m| m.role != Role::Tool));
    // Allowed as it is now, it is applied.
    let outcome = s
        .agent
        .answer_request(&child, accept(now), None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(outcome.stopped, Stopped::Finished);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "print('hello')\n");
}

#[tokio::test]
async fn a_refusal_reaches_the_model_with_the_persons_words_and_changes_nothing() {
    let (s, workspace) = workspace_setup(
        ApprovalPolicy::default(),
        vec![
            turn(
                "Replacing it.",
                Some(("write_file", json!({"path": "greet.py", "content": "rm -rf /\n"}))),
            ),
            turn("Understood.", None),
        ],
    )
    .await;
    let child = s.flame.status(None).unwrap().focus;
    let outcome = s
        .agent
        .send(Actor::Person, None, "Go", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert!(matches!(outcome.stopped, Stopped::AwaitingApproval { .. }));
    let refused = Answer::Refuse { reason: Some("Keep the file; fix only the typo.".into()) };
    let outcome = s
        .agent
        .answer_request(&child, refused, None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(outcome.stopped, Stopped::Finished);
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("greet.py")).unwrap(),
        "print('helo')\n"
    );
    let second = s.server.requests()[1].json();
    let last = second["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["is_error"], true, "{last}");
    let text = last["content"][0]["content"].to_string();
    assert!(
        text.contains("refused") && text.contains("Keep the file; fix only the typo."),
        "{text}"
    );
    assert!(s.flame.file_trail(&child).unwrap().is_empty());
}

/// A call that can only fail (an edit whose text is not in the file, a write with no content)
/// is not put to the person, though changes ask: the model reads its error at once.
#[tokio::test]
async fn a_call_that_cannot_run_fails_at_once_without_asking() {
    let (s, workspace) = workspace_setup(
        ApprovalPolicy::default(),
        vec![
            turn(
                "Fixing it.",
                Some((
                    "edit_file",
                    json!({"path": "greet.py", "old_string": "goodbye", "new_string": "hello"}),
                )),
            ),
            turn("Writing it.", Some(("write_file", json!({"path": "greet.py"})))),
            turn("Neither worked.", None),
        ],
    )
    .await;
    let child = s.flame.status(None).unwrap().focus;
    let outcome = s
        .agent
        .send(Actor::Person, None, "Fix the typo", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(outcome.stopped, Stopped::Finished);
    assert_eq!(waiting_request(&s.flame, &child).unwrap(), None);
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("greet.py")).unwrap(),
        "print('helo')\n"
    );
    let requests = s.server.requests();
    assert_eq!(requests.len(), 3);
    for (request, expected) in [(&requests[1], "was not found"), (&requests[2], "content")] {
        let body = request.json();
        let last = body["messages"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["content"][0]["is_error"], true, "{last}");
        let text = last["content"][0]["content"].to_string();
        assert!(text.contains(expected), "{text}");
    }
}

#[tokio::test]
async fn a_tree_without_a_workspace_offers_no_workspace_tools_and_says_so() {
    let s = setup(Autonomy::Auto, vec![turn("I cannot see any files.", None)]).await;
    s.agent
        .send(Actor::Person, None, "Read main.rs", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    let request = s.server.requests()[0].json();
    let names = tool_names(&request);
    assert!(!names.contains(&"read_file".to_owned()), "{names:?}");
    assert!(names.contains(&"push_frame".to_owned()), "{names:?}");
    let system = request["system"][0]["text"].as_str().unwrap();
    assert!(system.contains("no workspace"), "{system}");
}

#[tokio::test]
async fn a_command_gets_no_keys_and_automatic_kinds_do_not_ask() {
    let policy = ApprovalPolicy::default().allowing(&[ToolKind::Running]);
    assert_eq!(policy.run, RunApproval::Auto);
    let (s, _workspace) = workspace_setup(
        policy,
        vec![
            turn("Looking.", Some(("run_command", json!({"command": "env; echo ok"})))),
            turn("Done.", None),
        ],
    )
    .await;
    let child = s.flame.status(None).unwrap().focus;
    let outcome = s
        .agent
        .send(
            Actor::Person,
            None,
            "Show the environment",
            None,
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();
    assert_eq!(outcome.stopped, Stopped::Finished);
    let result =
        s.flame.messages(&child).unwrap().into_iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(result.content.contains("ok"), "{}", result.content);
    assert!(!result.content.contains("ANTHROPIC_API_KEY"), "{}", result.content);
    assert!(!result.content.contains("FLAME_HOME"), "{}", result.content);
    assert_key_nowhere(&s);
}

/// Whether a process with this id still runs: it exists and is not a zombie waiting to be
/// reaped by whoever adopted it.
fn alive(pid: i32) -> bool {
    let stat = std::fs::read_to_string(Path::new(&format!("/proc/{pid}/stat"))).unwrap_or_default();
    // The state is the field after the command name, which is in parentheses.
    stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
}

#[tokio::test]
async fn stop_during_a_command_kills_its_process_group_and_keeps_what_happened() {
    let (s, workspace) = workspace_setup(
        ApprovalPolicy::default().allowing(&[ToolKind::Running]),
        vec![turn(
            "Waiting a while.",
            Some(("run_command", json!({"command": "sleep 300 & echo $! > pid; wait"}))),
        )],
    )
    .await;
    let child = s.flame.status(None).unwrap().focus;
    let cancel = CancellationToken::new();
    // Stop is pressed once the command's background sleep has written its process id.
    let pid_file = workspace.path().join("pid");
    let stopper = cancel.clone();
    let watcher = std::thread::spawn(move || {
        loop {
            if let Some(pid) =
                std::fs::read_to_string(&pid_file).ok().and_then(|t| t.trim().parse::<i32>().ok())
            {
                stopper.cancel();
                return pid;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    });
    let answered = s.agent.send(Actor::Person, None, "Wait", None, &cancel, &mut |_| {}).await;
    let pid = watcher.join().unwrap();
    assert!(answered.is_err(), "a stopped answer ends as stopped: {answered:?}");
    assert!(!alive(pid), "the command's background process {pid} outlived Stop");
    let result =
        s.flame.messages(&child).unwrap().into_iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(result.content.contains("stopped by the person"), "{}", result.content);
}

#[tokio::test]
async fn a_workspace_folder_gone_since_is_said_plainly_and_offers_no_tools() {
    let (s, workspace) = workspace_setup(
        ApprovalPolicy::default(),
        vec![
            turn("Reading it.", Some(("read_file", json!({"path": "greet.py"})))),
            turn("The folder is gone.", None),
        ],
    )
    .await;
    let child = s.flame.status(None).unwrap().focus;
    std::fs::remove_dir_all(workspace.path()).unwrap();
    let mut notices = Vec::new();
    s.agent
        .send(Actor::Person, None, "Go", None, &CancellationToken::new(), &mut |e| {
            if let ChatEvent::Notice { text } = e {
                notices.push(text);
            }
        })
        .await
        .unwrap();
    assert!(notices.iter().any(|n| n.contains("no workspace tools")), "{notices:?}");
    assert!(!tool_names(&s.server.requests()[0].json()).contains(&"read_file".to_owned()));
    let result =
        s.flame.messages(&child).unwrap().into_iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(result.tool_result.unwrap().is_error);
    assert!(result.content.contains("cannot be opened"), "{}", result.content);
}

#[tokio::test]
async fn a_workspace_folder_replaced_by_a_link_to_flames_data_is_refused_every_time() {
    let (s, workspace) = workspace_setup(
        ApprovalPolicy::default().allowing(&[ToolKind::Changing]),
        vec![
            turn(
                "Writing it.",
                Some(("write_file", json!({"path": "flame.db", "content": "gone"}))),
            ),
            turn("Done.", None),
        ],
    )
    .await;
    let child = s.flame.status(None).unwrap().focus;
    let database = s.dir.path().join("flame.db");
    let before = std::fs::read(&database).unwrap();
    // The folder was checked when it was set; now it is a link to the data directory.
    std::fs::remove_dir_all(workspace.path()).unwrap();
    std::os::unix::fs::symlink(s.dir.path(), workspace.path()).unwrap();
    s.agent
        .send(Actor::Person, None, "Go", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    let result =
        s.flame.messages(&child).unwrap().into_iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(result.tool_result.unwrap().is_error);
    assert!(result.content.contains("Flame's own folder"), "{}", result.content);
    assert_ne!(std::fs::read(&database).unwrap(), b"gone");
    assert!(std::fs::read(&database).unwrap().starts_with(&before[..16]), "the store was written");
    // No checkpoint follows the link either: the frame's changes say why.
    let err = s.flame.frame_changes(&child, false).unwrap_err();
    assert!(err.message.contains("Flame's own folder"), "{}", err.message);
}

/// `turn` with a call id of its own, so that many calls of one tool can be told apart.
fn read_turn(n: usize) -> Reply {
    let Reply::Stream { body, .. } =
        turn("Reading.", Some(("read_file", json!({"path": format!("file{n}.txt")}))))
    else {
        unreachable!("turn streams")
    };
    Reply::stream(body.replace("toolu_read_file", &format!("toolu_read_{n}")))
}

/// Twenty reads of small files never pay for a batch of masking, so they stay whole; when the
/// person has the opening made again, it keeps the newest K whole and sends the rest as stubs
/// that say how to read them back.
#[tokio::test]
async fn an_opening_made_again_keeps_the_newest_k_results_whole() {
    let mut replies: Vec<Reply> = (0..20).map(read_turn).collect();
    replies.push(turn("Read them all.", None));
    replies.push(turn("Summarised.", None));
    let (mut s, workspace) = workspace_setup(ApprovalPolicy::default(), replies).await;
    for n in 0..20 {
        std::fs::write(workspace.path().join(format!("file{n}.txt")), format!("CONTENT-{n}\n"))
            .unwrap();
    }
    let mut settings = s.agent.settings().clone();
    settings.turn_budget.tool_calls = Some(25);
    // Not the default (1), so the test shows the setting reaches the context.
    settings.keep_tool_results = 5;
    s.flame.reconfigure(settings.facade_config(None));
    let base = s.server.base_url.clone();
    s.agent = Agent::new(
        s.flame.clone(),
        settings,
        environment(&[("ANTHROPIC_API_KEY", SENTINEL), ("ANTHROPIC_BASE_URL", &base)]),
        RetryPolicy::default(),
    );
    let outcome = s
        .agent
        .send(Actor::Person, None, "Read every file", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(outcome.stopped, Stopped::Finished);
    let results = |request: &Value| -> Vec<String> {
        request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter(|block| block["type"] == "tool_result")
            .map(|block| block["content"].to_string())
            .collect()
    };
    let last = s.server.requests().last().unwrap().json();
    let whole = |results: &[String]| -> Vec<usize> {
        (0..20).filter(|n| results[*n].contains(&format!("CONTENT-{n}"))).collect()
    };
    assert_eq!(whole(&results(&last)).len(), 20, "small results never pay for a batch");

    let frame = s.flame.status(None).unwrap().focus;
    s.flame.rebuild_context(Actor::Person, &frame).unwrap();
    s.agent
        .send(Actor::Person, None, "Summarise", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    let rebuilt = s.server.requests().last().unwrap().json();
    let results = results(&rebuilt);
    assert_eq!(results.len(), 20, "every call keeps its result, whole or as a stub");
    assert_eq!(whole(&results), [15, 16, 17, 18, 19], "only the newest results are sent whole");
    for (n, text) in results.iter().enumerate().take(15) {
        assert!(text.contains("masked") && text.contains(&format!("file{n}.txt")), "{text}");
        assert!(text.contains(&format!("toolu_read_{n}")), "no way to read it back: {text}");
    }
}

#[tokio::test]
async fn what_a_command_changed_joins_the_trail_and_is_rolled_back_with_its_frame() {
    let (s, workspace) = workspace_setup(
        ApprovalPolicy::default().allowing(&[ToolKind::Running]),
        vec![
            turn(
                "Fixing it with sed.",
                Some(("run_command", json!({"command": "sed -i 's/helo/hello/' greet.py"}))),
            ),
            turn("Done.", None),
        ],
    )
    .await;
    let child = s.flame.status(None).unwrap().focus;
    s.agent
        .send(Actor::Person, None, "Fix it", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("greet.py")).unwrap(),
        "print('hello')\n"
    );
    // The snapshots around the command found what it changed: no tool named the file.
    assert_eq!(s.flame.file_trail(&child).unwrap().changed, ["greet.py"]);
    let changes = s.flame.frame_changes(&child, false).unwrap();
    assert_eq!(changes.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["greet.py"]);
    assert!(changes.patch.contains("+print('hello')"), "{}", changes.patch);

    let failed = flame_api::PopRequest {
        status: flame_model::lifecycle::PopStatus::Failed,
        results: None,
        results_compacted: None,
        artifacts: vec![],
        decisions: vec![],
        reason: Some("wrong fix".into()),
    };
    s.flame.pop(Actor::Person, Some(&child), &failed).unwrap();
    let outcome = s.flame.rollback(Actor::Person, &child).unwrap();
    assert_eq!(outcome.restored, ["greet.py"]);
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("greet.py")).unwrap(),
        "print('helo')\n"
    );
}
