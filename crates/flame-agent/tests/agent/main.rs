//! The agent end to end against the local replay server, which answers in Anthropic's documented
//! stream format: message in, context out, stream back, tool calls, frames pushed and popped,
//! results generated — and the key nowhere it must not be.

use std::sync::Arc;

use flame_agent::{Agent, Answer, Ask, ChatEvent, Stopped};
use flame_api::{DataDir, Env, ErrorCode, Flame, FlameConfig};
use flame_model::budget::FrameBudget;
use flame_model::{Actor, Role, Status};
use flame_models::replay::{ReplayServer, Reply};
use flame_models::{CancellationToken, ProviderKind, RetryPolicy};
use flame_settings::{Autonomy, Settings};
use serde_json::{Value, json};

mod budget;
mod cache;
mod hands;
mod mcp;
mod models;

const SENTINEL: &str = "sk-ant-SENTINEL-5e2f8a7c31d94b06";

/// One streamed Anthropic message: some text, then optionally one tool call whose arguments
/// arrive in fragments.
/// An environment of `variables` alone, for keys, base URLs and commands.
fn environment(variables: &[(&str, &str)]) -> flame_workspace::Environment {
    flame_workspace::Environment::from_variables(
        variables.iter().map(|(name, value)| ((*name).into(), (*value).into())),
    )
}

fn turn(text: &str, tool: Option<(&str, Value)>) -> Reply {
    let mut events = vec![
        json!({"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":120,"output_tokens":1}}}),
        json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    ];
    for word in text.split_inclusive(' ') {
        events.push(json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":word}}));
    }
    events.push(json!({"type":"content_block_stop","index":0}));
    if let Some((name, input)) = &tool {
        events.push(json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":format!("toolu_{name}"),"name":name,"input":{}}}));
        let json = input.to_string();
        let (a, b) = json.split_at(json.len() / 2);
        for part in [a, b] {
            events.push(json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":part}}));
        }
        events.push(json!({"type":"content_block_stop","index":1}));
    }
    let stop = if tool.is_some() { "tool_use" } else { "end_turn" };
    events.push(json!({"type":"message_delta","delta":{"stop_reason":stop,"stop_sequence":null},"usage":{"output_tokens":30}}));
    events.push(json!({"type":"message_stop"}));
    let body: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    Reply::stream(body)
}

struct Setup {
    flame: Arc<Flame>,
    agent: Agent,
    server: ReplayServer,
    dir: tempfile::TempDir,
}

async fn setup(autonomy: Autonomy, replies: Vec<Reply>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let home = DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
    let flame = Arc::new(
        Flame::open_with(home, FlameConfig::default(), Env::fixed(1_795_307_601_000, 9)).unwrap(),
    );
    flame.create_tree(Actor::Person, "Build the app", "A working app with auth", None).unwrap();
    let server = ReplayServer::start().await.unwrap();
    server.push(replies);
    let settings = Settings {
        default_model: Some("claude-sonnet-4-5".into()),
        autonomy,
        turn_budget: FrameBudget { tool_calls: Some(4), ..FrameBudget::default() },
        ..Settings::default()
    };
    let base = server.base_url.clone();
    let env = environment(&[("ANTHROPIC_API_KEY", SENTINEL), ("ANTHROPIC_BASE_URL", &base)]);
    let retry = RetryPolicy {
        attempts: 2,
        base_delay: std::time::Duration::from_millis(10),
        ..RetryPolicy::default()
    };
    let agent = Agent::new(flame.clone(), settings, env, retry);
    Setup { flame, agent, server, dir }
}

fn assert_key_nowhere(s: &Setup) {
    let mut stack = vec![s.dir.path().to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(SENTINEL),
                "the key is in {}",
                path.display()
            );
        }
    }
}

#[tokio::test]
async fn the_agent_pushes_works_pops_and_continues_in_the_parent() {
    let s = setup(Autonomy::Auto, vec![
        turn("I will do auth in its own frame.", Some(("push_frame", json!({"title": "User Authentication", "success_criteria": "JWT login works"})))),
        turn("Implemented login with JWT. ", Some(("pop_frame", json!({"status": "completed", "results": "JWT login with refresh tokens in src/auth.rs", "results_compacted": "JWT auth done", "artifacts": ["src/auth.rs"], "decisions": ["JWT over sessions"]})))),
        turn("Auth is done; the API is next.", None),
    ])
    .await;
    let root = s.flame.status(None).unwrap().tree.root;
    let mut events = Vec::new();
    let outcome = s
        .agent
        .send(
            Actor::Person,
            None,
            "Build the auth first",
            None,
            &CancellationToken::new(),
            &mut |e| events.push(e),
        )
        .await
        .unwrap();
    assert_eq!(
        (outcome.frame.clone(), outcome.rounds, outcome.stopped.clone()),
        (root.clone(), 3, Stopped::Finished)
    );
    assert_eq!(outcome.usage.input_tokens, 360);

    let status = s.flame.status(None).unwrap();
    let auth = status
        .frames
        .iter()
        .find(|e| e.frame.title == "User Authentication")
        .unwrap()
        .frame
        .clone();
    assert_eq!(auth.status, Status::Completed);
    assert_eq!(auth.results_compacted.as_deref(), Some("JWT auth done"));
    assert_eq!(auth.artifacts, ["src/auth.rs"]);
    assert_eq!(status.focus, root, "after the pop the conversation is back in the parent");
    let agent_push = s
        .flame
        .events_since(0, 1000)
        .unwrap()
        .into_iter()
        .find(|e| e.frame == auth.id && e.kind == flame_model::EventKind::Pushed)
        .unwrap();
    assert_eq!(agent_push.actor, Actor::Agent);

    let root_messages = s.flame.messages(&root).unwrap();
    let root_roles: Vec<Role> = root_messages.iter().map(|m| m.role).collect();
    // After the pop, the note that the conversation moved back, then the one Flame appends to
    // the parent's context with the child's results.
    assert_eq!(
        root_roles,
        [Role::User, Role::Assistant, Role::Tool, Role::Note, Role::Note, Role::Assistant]
    );
    assert!(root_messages[4].content.contains("JWT login with refresh tokens in src/auth.rs"));
    let auth_messages = s.flame.messages(&auth.id).unwrap();
    // The pop's own result is not stored in the frame it finished; its log records the pop.
    assert_eq!(
        auth_messages.iter().map(|m| m.role).collect::<Vec<_>>(),
        [Role::Note, Role::Assistant]
    );
    assert!(s.flame.log(&auth.id).unwrap().contains("popped as completed by agent"));
    assert_eq!(auth_messages[1].content, "Implemented login with JWT. ");
    assert!(auth_messages.iter().all(|m| !m.interrupted));

    // What the model was sent each time: the child's own context, opening with its own
    // stack-context, then the parent's, which starts as it did before the push and has the
    // child's full results appended, and none of its conversation.
    let requests = s.server.requests();
    assert_eq!(requests.len(), 3);
    let second = requests[1].json();
    let opening = second["messages"][0]["content"][0]["text"].as_str().unwrap();
    assert!(
        opening.contains(&format!(
            "<child id=\"{}\" status=\"in_progress\" current=\"true\">",
            auth.id
        )),
        "{opening}"
    );
    let (first, third) = (requests[0].json(), requests[2].json());
    assert_eq!(third["messages"][0], first["messages"][0], "the parent's opening is kept");
    assert_eq!(third["system"][0]["text"], first["system"][0]["text"]);
    let appended = third["messages"].as_array().unwrap().last().unwrap().to_string();
    assert!(appended.contains("JWT login with refresh tokens in src/auth.rs"), "{appended}");
    let sent = third.to_string();
    assert!(
        !sent.contains("Implemented login with JWT"),
        "the child's conversation leaked into the parent's context"
    );
    assert_eq!(third["tools"].as_array().unwrap().len(), 7);

    assert!(events.iter().any(|e| matches!(e, ChatEvent::Moved { to, .. } if to == &auth.id)));
    assert!(events.iter().any(|e| matches!(e, ChatEvent::Text { text, .. } if text == "Auth ")));
    assert_key_nowhere(&s);
}

#[tokio::test]
async fn a_refused_tool_call_goes_back_to_the_model_as_an_error() {
    let s = setup(
        Autonomy::Auto,
        vec![
            turn("Done, popping.", Some(("pop_frame", json!({"status": "completed"})))),
            turn("I need to give results; sorry.", None),
        ],
    )
    .await;
    let outcome = s
        .agent
        .send(Actor::Person, None, "Finish up", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!(outcome.stopped, Stopped::Finished);
    let root = s.flame.status(None).unwrap().tree.root;
    let tool = s.flame.messages(&root).unwrap().into_iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(tool.content.contains("needs its results"), "{}", tool.content);
    assert!(tool.tool_result.unwrap().is_error);
    let second = s.server.requests()[1].json();
    let last = second["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["content"][0]["is_error"], true, "{last}");
}

#[tokio::test]
async fn with_ask_autonomy_a_push_waits_for_the_person() {
    let s = setup(
        Autonomy::Ask,
        vec![
            turn(
                "Let me push.",
                Some(("push_frame", json!({"title": "Side quest", "success_criteria": "x"}))),
            ),
            turn("Understood, staying here.", None),
        ],
    )
    .await;
    let root = s.flame.status(None).unwrap().tree.root;
    let outcome = s
        .agent
        .send(Actor::Person, None, "Go", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert!(
        matches!(outcome.stopped, Stopped::AwaitingApproval { ref request } if request.call.name == "push_frame" && request.ask == Ask::FrameChange)
    );
    assert_eq!(s.flame.status(None).unwrap().frames.len(), 1, "nothing was pushed yet");
    let answered = s
        .agent
        .answer_request(
            &root,
            Answer::Refuse { reason: None },
            None,
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();
    assert_eq!(answered.stopped, Stopped::Finished);
    assert_eq!(s.flame.status(None).unwrap().frames.len(), 1, "refused: still nothing pushed");
    let tool = s.flame.messages(&root).unwrap().into_iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(tool.content.contains("refused"), "{}", tool.content);
}

#[tokio::test]
async fn a_dropped_reply_is_kept_marked_interrupted() {
    let full = match turn("This reply will be cut off halfway through.", None) {
        Reply::Stream { body, .. } => body,
        _ => unreachable!(),
    };
    let cut = full.find("halfway").unwrap() + 40;
    let s = setup(Autonomy::Auto, vec![Reply::Dropped { body: full, cut_at: cut }]).await;
    let err = s
        .agent
        .send(Actor::Person, None, "Talk", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::ModelFailed);
    let root = s.flame.status(None).unwrap().tree.root;
    let reply = s.flame.messages(&root).unwrap().pop().unwrap();
    assert!(
        reply.interrupted && reply.content.starts_with("This reply will be cut off"),
        "{reply:?}"
    );
}

#[tokio::test]
async fn results_are_generated_strictly_with_one_retry() {
    let good = r#"{"results":"Login works with JWT","results_compacted":"JWT login","artifacts":["src/auth.rs"],"decisions":["JWT"],"criteria_met":true}"#;
    let s = setup(
        Autonomy::Auto,
        vec![
            turn(&format!("Sure! {good}"), None),
            turn(good, None),
            turn("no", None),
            turn("still no", None),
        ],
    )
    .await;
    let root = s.flame.status(None).unwrap().tree.root;
    let generated = s.agent.generate_results(&root, None, &CancellationToken::new()).await.unwrap();
    assert_eq!((generated.results_compacted.as_str(), generated.criteria_met), ("JWT login", true));
    let retry = s.server.requests()[1].json();
    assert!(
        retry["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .to_string()
            .contains("cannot be used")
    );
    let err = s.agent.generate_results(&root, None, &CancellationToken::new()).await.unwrap_err();
    assert!(err.message.contains("write the results yourself"), "{}", err.message);
}

#[tokio::test]
async fn the_per_turn_budget_stops_a_looping_agent_and_the_next_message_goes_on() {
    let status = || turn("Checking.", Some(("frame_status", json!({}))));
    let done = turn("Done.", None);
    let s = setup(Autonomy::Auto, vec![status(), status(), status(), status(), done]).await;
    let outcome = s
        .agent
        .send(Actor::Person, None, "Loop", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    let Stopped::TurnBudget { reason } = &outcome.stopped else { panic!("{outcome:?}") };
    assert!(reason.contains("budget of 4 tool calls"), "{reason}");
    assert_eq!(outcome.rounds, 4);
    // The stop is in the frame's history, last: a note the log and the export show.
    let stop = stopped_note(&s.flame, &outcome.frame);
    assert!(stop.contains("stopped here after spending this turn's budget of 4 tool calls"));
    // The next message is a new turn, with the whole budget again.
    let outcome = s
        .agent
        .send(Actor::Person, None, "Go on", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!((outcome.rounds, outcome.stopped), (1, Stopped::Finished));
    // Its request starts with the last one before the stop, byte for byte, and then tells the
    // model why the work stopped.
    let bodies: Vec<String> =
        s.server.requests().into_iter().map(|r| cache::unmarked(&r.body)).collect();
    assert_eq!(bodies.len(), 5);
    assert!(bodies[4].starts_with(bodies[3].strip_suffix("]}").unwrap()));
    assert!(bodies[4].contains("stopped here after spending this turn's budget"));
}

/// The note `frame`'s history ends with, which must say why the agent stopped: the frame's log
/// (what `flame log` prints) and its export (JSON and Markdown) show it as the log's last
/// message.
fn stopped_note(flame: &Flame, frame: &flame_model::FrameId) -> String {
    let messages = flame.messages(frame).unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last.role, Role::Note, "{last:?}");
    assert!(last.content.starts_with("[Flame] Budget: the work stopped here"), "{last:?}");
    let log = flame.log(frame).unwrap();
    let at = log.rfind("· note ·").expect("the log has a note");
    assert!(log[at..].contains(&last.content), "{log}");
    for format in [flame_api::ExportFormat::Json, flame_api::ExportFormat::Markdown] {
        let export =
            flame.export_text(frame.as_str(), flame_api::ExportScope::Frame, format).unwrap();
        let shown = serde_json::to_string(&last.content).unwrap();
        let shown = if format == flame_api::ExportFormat::Json { &shown } else { &last.content };
        assert!(export.contains(shown.as_str()), "{format:?}: {export}");
    }
    last.content.clone()
}

#[tokio::test]
async fn a_rejected_key_is_named_by_its_source_and_leaves_no_trace_of_the_key() {
    let body = format!(
        r#"{{"type":"error","error":{{"type":"authentication_error","message":"invalid x-api-key {SENTINEL}"}}}}"#
    );
    let s = setup(Autonomy::Auto, vec![Reply::json(401, body)]).await;
    let err = s
        .agent
        .send(Actor::Person, None, "Hi", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Anthropic rejected the API key from ANTHROPIC_API_KEY (HTTP 401); check that key"
    );
    assert!(!format!("{err:?}").contains(SENTINEL));
    assert_key_nowhere(&s);
}

#[tokio::test]
async fn long_criteria_are_compacted_and_a_finished_reply_suggests_a_pop() {
    let criteria = "The login endpoint accepts an email and a password, checks the bcrypt hash, issues a JWT access token valid for fifteen minutes and a refresh token valid for thirty days, rejects wrong passwords with 401, and every path has a test.";
    let s = setup(
        Autonomy::Auto,
        vec![
            turn(
                "Pushing.",
                Some(("push_frame", json!({"title": "Login", "success_criteria": criteria}))),
            ),
            turn(
                "Login issues JWT access and refresh tokens; bad passwords get 401; all tested.",
                None,
            ),
            turn("Done: the tests pass, so the success criteria are met.", None),
        ],
    )
    .await;
    let mut events = Vec::new();
    let outcome = s
        .agent
        .send(Actor::Person, None, "Do the login", None, &CancellationToken::new(), &mut |e| {
            events.push(e)
        })
        .await
        .unwrap();
    let login = s
        .flame
        .status(None)
        .unwrap()
        .frames
        .into_iter()
        .find(|e| e.frame.title == "Login")
        .unwrap()
        .frame;
    assert_eq!(outcome.frame, login.id);
    assert_eq!(
        login.success_criteria_compacted.as_deref(),
        Some("Login issues JWT access and refresh tokens; bad passwords get 401; all tested.")
    );
    let compaction = s.server.requests()[1].json();
    assert_eq!(compaction["messages"][0]["content"][0]["text"], criteria);
    assert!(compaction.get("tools").is_none());
    let suggestion = events.iter().find_map(|e| match e {
        ChatEvent::Suggestion { suggestion, .. } => Some(suggestion.clone()),
        _ => None,
    });
    assert_eq!(suggestion.map(|s| s.kind), Some(flame_agent::suggest::SuggestionKind::Pop));
}

#[tokio::test]
async fn answering_again_after_a_failure_does_not_send_the_message_twice() {
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    // Two attempts (the retry policy's) fail; then the person asks for the answer again.
    let s = setup(
        Autonomy::Auto,
        vec![
            Reply::json(529, overloaded),
            Reply::json(529, overloaded),
            turn("Here is the plan.", None),
        ],
    )
    .await;
    let root = s.flame.status(None).unwrap().tree.root;
    let cancel = CancellationToken::new();
    let err = s.agent.send(Actor::Person, None, "Plan it", None, &cancel, &mut |_| {}).await;
    assert_eq!(err.unwrap_err().code, ErrorCode::ModelFailed);

    let outcome = s.agent.answer_again(&root, None, &cancel, &mut |_| {}).await.unwrap();
    assert_eq!(outcome.stopped, Stopped::Finished);
    let messages = s.flame.messages(&root).unwrap();
    let asked: Vec<_> = messages.iter().filter(|m| m.role == Role::User).collect();
    assert_eq!(asked.len(), 1, "the message is stored once: {messages:?}");
    let last = messages.iter().rev().find(|m| m.role == Role::Assistant && !m.interrupted);
    assert_eq!(last.unwrap().content, "Here is the plan.");
    let sent = s.server.requests().last().unwrap().json();
    let times = sent["messages"].to_string().matches("Plan it").count();
    assert_eq!(times, 1, "the message is sent once: {sent}");
}

#[tokio::test]
async fn answering_again_is_refused_where_nothing_can_be_answered() {
    let s = setup(
        Autonomy::Ask,
        vec![turn(
            "A frame for auth.",
            Some(("push_frame", json!({"title": "Auth", "success_criteria": "login works"}))),
        )],
    )
    .await;
    let root = s.flame.status(None).unwrap().tree.root;
    let cancel = CancellationToken::new();
    s.agent.send(Actor::Person, None, "Go", None, &cancel, &mut |_| {}).await.unwrap();
    // The question is read back from the store, as a restarted app would.
    let waiting = flame_agent::waiting_request(&s.flame, &root).unwrap().expect("a push waits");
    assert_eq!(waiting.call.name, "push_frame");
    let err = s.agent.answer_again(&root, None, &cancel, &mut |_| {}).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Invalid);
    assert!(err.message.contains("accepted or refused"), "{}", err.message);

    let done = s.flame.push(Actor::Person, Some(&root), "Done already", "c").unwrap();
    s.flame
        .pop(
            Actor::Person,
            Some(&done.id),
            &flame_api::PopRequest {
                status: flame_model::lifecycle::PopStatus::Failed,
                results: None,
                results_compacted: None,
                artifacts: vec![],
                decisions: vec![],
                reason: Some("no".into()),
            },
        )
        .unwrap();
    let err = s.agent.answer_again(&done.id, None, &cancel, &mut |_| {}).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Refused);
    assert!(s.server.requests().len() == 1, "nothing more was sent");
}

/// The one way front ends build the agent: from the settings file's path, with the same refusal
/// everywhere when the system has no configuration folder; `--provider` then pins a model's
/// provider.
#[test]
fn the_agent_is_built_from_the_settings_file_or_refused_without_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let home = DataDir::resolve(Some(dir.path().join("data").as_os_str()), None, None).unwrap();
    let flame = Arc::new(
        Flame::open_with(home, FlameConfig::default(), Env::fixed(1_795_307_601_000, 9)).unwrap(),
    );
    let no_env = environment(&[]);
    let err =
        Agent::from_settings_file(flame.clone(), None, no_env.clone(), RetryPolicy::default())
            .err()
            .unwrap();
    assert_eq!(err.code, ErrorCode::Invalid);
    assert_eq!(err.message, "this system has no configuration folder for Flame's settings");

    let path = dir.path().join("settings.json");
    std::fs::write(&path, r#"{"default_model": "claude-sonnet-4-5"}"#).unwrap();
    let mut agent =
        Agent::from_settings_file(flame, Some(path), no_env, RetryPolicy::default()).unwrap();
    assert_eq!(agent.settings().default_model.as_deref(), Some("claude-sonnet-4-5"));
    agent.use_provider(ProviderKind::Openai, "claude-sonnet-4-5").unwrap();
    let pinned = agent.settings().models.iter().filter(|m| m.name == "claude-sonnet-4-5");
    assert_eq!(pinned.map(|m| m.provider).collect::<Vec<_>>(), [ProviderKind::Openai]);
}
