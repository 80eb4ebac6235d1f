//! The Tauri commands, called through Tauri's real IPC path on the mock runtime: no window, no
//! display. Each test opens Flame on its own temporary data directory.

use std::ffi::OsStr;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use flame_api::{DataDir, Flame, FlameConfig};
use flame_desktop::{Startup, assemble};
use flame_model::Actor;
use serde_json::{Value, json};
use tauri::Listener;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{
    INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder, mock_context, noop_assets,
};
use tauri::webview::{InvokeRequest, WebviewWindow, WebviewWindowBuilder};

fn window_with(startup: Startup) -> (tauri::App<MockRuntime>, WebviewWindow<MockRuntime>) {
    let app = assemble(mock_builder(), startup)
        .build(mock_context(noop_assets()))
        .expect("the mock app builds");
    let window = WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    (app, window)
}

fn window_on(home: &Path) -> (tauri::App<MockRuntime>, WebviewWindow<MockRuntime>) {
    window_with(Startup::open(DataDir::resolve(Some(home.as_os_str()), None, None)))
}

fn invoke(window: &WebviewWindow<MockRuntime>, command: &str) -> Result<Value, Value> {
    invoke_with(window, command, json!({}))
}

fn invoke_with(
    window: &WebviewWindow<MockRuntime>,
    command: &str,
    args: Value,
) -> Result<Value, Value> {
    let request = InvokeRequest {
        cmd: command.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "tauri://localhost".parse().unwrap(),
        body: InvokeBody::Json(args),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    };
    get_ipc_response(window, request).map(|body| body.deserialize::<Value>().unwrap())
}

#[test]
fn app_info_reports_the_data_directory_it_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let (_app, window) = window_on(&home);

    let info = invoke(&window, "app_info").expect("app_info succeeds");
    assert_eq!(info["data_dir"], home.display().to_string());
    assert_eq!(info["data_dir_source"], "flame_home");
    assert_eq!(info["database_path"], home.join("flame.db").display().to_string());
    assert_eq!(info["schema_version"], flame_api::SCHEMA_VERSION);
    assert!(home.join("flame.db").is_file());
}

#[test]
fn app_info_returns_the_startup_error_as_code_and_message() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let (_app, window) = window_on(&file);

    let err = invoke(&window, "app_info").expect_err("app_info fails");
    assert_eq!(err["code"], "data_dir_unusable");
    assert!(err["message"].as_str().unwrap().contains("it is a file, not a folder"), "{err}");
    assert_eq!(err.as_object().unwrap().len(), 2, "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a folder");
}

#[test]
fn an_unresolvable_data_directory_reaches_the_ui_as_an_error() {
    let (_app, window) =
        window_with(Startup::open(DataDir::resolve(Some(OsStr::new("rel")), None, None)));
    let err = invoke(&window, "app_info").expect_err("app_info fails");
    assert_eq!(err["code"], "data_dir_unusable");
}

#[test]
fn an_unknown_command_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (_app, window) = window_on(tmp.path());
    assert!(invoke(&window, "no_such_command").is_err());
}

/// Another Flame on the same data directory, standing for another process.
fn open_flame(home: &Path) -> Flame {
    Flame::open(
        DataDir::resolve(Some(home.as_os_str()), None, None).unwrap(),
        FlameConfig::default(),
    )
    .unwrap()
}

/// Creates a tree titled "Root" and returns the root frame's id.
fn new_tree(window: &WebviewWindow<MockRuntime>) -> String {
    let tree = invoke_with(window, "create_tree", json!({"title": "Root", "criteria": "All done"}))
        .expect("create_tree succeeds");
    tree["root"].as_str().unwrap().to_owned()
}

fn plan(window: &WebviewWindow<MockRuntime>, parent: &str, title: &str) -> String {
    let spec = json!([{"title": title, "success_criteria": "Done when done"}]);
    let planned = invoke_with(
        window,
        "plan_frames",
        json!({"parent": parent, "position": null, "specs": spec}),
    )
    .expect("plan_frames succeeds");
    planned[0]["id"].as_str().unwrap().to_owned()
}

/// The titles of `parent`'s children in the current tree's outline, in position order.
fn children(window: &WebviewWindow<MockRuntime>, parent: &str) -> Vec<String> {
    let outline = invoke_with(window, "outline", json!({"tree": null})).unwrap();
    // The outline comes by columns: the parent is an index into them.
    let ids = outline["id"].as_array().unwrap();
    let mut kids: Vec<(u64, String)> = (0..ids.len())
        .filter(|&i| {
            let p = outline["parent"][i].as_i64().unwrap();
            p >= 0 && ids[p as usize] == parent
        })
        .map(|i| {
            let position = outline["position"][i].as_u64().unwrap();
            (position, outline["title"][i].as_str().unwrap().to_owned())
        })
        .collect();
    kids.sort();
    kids.into_iter().map(|(_, title)| title).collect()
}

#[test]
fn outline_without_a_tree_is_not_found_and_create_tree_makes_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (_app, window) = window_on(tmp.path());
    let err = invoke_with(&window, "outline", json!({"tree": null})).expect_err("no tree yet");
    assert_eq!(err["code"], "not_found");

    let root = new_tree(&window);
    let outline = invoke_with(&window, "outline", json!({"tree": null})).unwrap();
    assert_eq!(outline["tree"]["focus"], root.as_str());
    assert_eq!(outline["id"].as_array().unwrap().len(), 1);
    let status = outline["status"][0].as_u64().unwrap() as usize;
    assert_eq!(outline["statuses"][status], "in_progress");
    assert!(outline["seq"].as_f64().unwrap() > 0.0);
}

#[test]
fn focus_frame_moves_the_focus_as_the_person() {
    let tmp = tempfile::tempdir().unwrap();
    let (_app, window) = window_on(tmp.path());
    let root = new_tree(&window);
    let child = invoke_with(
        &window,
        "push_frame",
        json!({"parent": root, "title": "Child", "criteria": "Works"}),
    )
    .unwrap();
    assert_eq!(child["status"], "in_progress");
    invoke_with(&window, "focus_frame", json!({"id": root})).expect("focus succeeds");
    let status = open_flame(tmp.path()).status(None).unwrap();
    assert_eq!(status.focus.as_str(), root);
    let flame = open_flame(tmp.path());
    let last = flame.events_since(0, 1000).unwrap().pop().unwrap();
    assert_eq!(last.actor, Actor::Person);
}

#[test]
fn move_frame_reorders_and_reparents_planned_frames() {
    let tmp = tempfile::tempdir().unwrap();
    let (_app, window) = window_on(tmp.path());
    let root = new_tree(&window);
    let a = plan(&window, &root, "A");
    plan(&window, &root, "B");
    let c = plan(&window, &root, "C");

    invoke_with(&window, "move_frame", json!({"id": c, "parent": root, "position": 0})).unwrap();
    assert_eq!(children(&window, &root), ["C", "A", "B"]);

    invoke_with(&window, "move_frame", json!({"id": c, "parent": a, "position": null})).unwrap();
    assert_eq!(children(&window, &root), ["A", "B"]);
    assert_eq!(children(&window, &a), ["C"]);
}

#[test]
fn a_refused_move_returns_the_rule_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (_app, window) = window_on(tmp.path());
    let root = new_tree(&window);
    let a = plan(&window, &root, "A");
    let b = plan(&window, &root, "B");
    invoke_with(&window, "start_frame", json!({"id": b})).unwrap();
    let before = invoke_with(&window, "outline", json!({"tree": null})).unwrap();

    let err = invoke_with(&window, "move_frame", json!({"id": b, "parent": root, "position": 0}))
        .expect_err("an in-progress frame does not move");
    assert_eq!(err["code"], "refused");
    assert!(err["message"].as_str().unwrap().contains("planned"), "{err}");
    let err = invoke_with(&window, "move_frame", json!({"id": a, "parent": a, "position": null}))
        .expect_err("a frame does not move into itself");
    assert_eq!(err["code"], "invalid");

    let after = invoke_with(&window, "outline", json!({"tree": null})).unwrap();
    assert_eq!(before, after);
}

#[test]
fn the_lifecycle_commands_reach_the_facade() {
    let tmp = tempfile::tempdir().unwrap();
    let (_app, window) = window_on(tmp.path());
    let root = new_tree(&window);
    let a = plan(&window, &root, "A");
    invoke_with(&window, "edit_frame", json!({"id": a, "title": "A2", "criteria": null})).unwrap();
    assert_eq!(children(&window, &root), ["A2"]);
    invoke_with(&window, "start_frame", json!({"id": a})).unwrap();
    let popped = invoke_with(
        &window,
        "pop_frame",
        json!({"id": a, "request": {"status": "failed", "results": null, "results_compacted": null, "reason": "no way"}}),
    )
    .unwrap();
    assert_eq!(popped["status"], "failed");
    let retry = invoke_with(&window, "retry_frame", json!({"id": a})).unwrap();
    assert_eq!(retry["retry_of"], a.as_str());
    let retry_id = retry["id"].as_str().unwrap();
    invoke_with(
        &window,
        "pop_frame",
        json!({"id": retry_id, "request": {"status": "blocked", "results": null, "results_compacted": null, "reason": "waiting"}}),
    )
    .unwrap();
    assert_eq!(
        invoke_with(&window, "resume_frame", json!({"id": retry_id})).unwrap()["status"],
        "in_progress"
    );
    let gone =
        invoke_with(&window, "invalidate_frame", json!({"id": retry_id, "reason": null})).unwrap();
    assert_eq!(gone, json!([retry_id]));
    let b = plan(&window, &root, "B");
    assert_eq!(invoke_with(&window, "delete_frame", json!({"id": b})).unwrap(), json!([b]));
    let err =
        invoke_with(&window, "delete_frame", json!({"id": "fnotanid"})).expect_err("no frame");
    assert_eq!(err["code"], "not_found");
}

#[test]
fn a_change_from_another_process_is_announced_to_the_window() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut app, window) = window_on(tmp.path());
    new_tree(&window);
    // The mock runtime runs the setup hook (events, the change watch) on the first turn of its
    // event loop, as the real one does when the window is ready.
    #[allow(deprecated)]
    app.run_iteration(|_, _| {});
    let (tx, rx) = mpsc::channel::<String>();
    app.listen_any("tree-changed", move |event| {
        let _ = tx.send(event.payload().to_owned());
    });
    // Let the watch read its starting point, then drain what this window's own change caused.
    std::thread::sleep(Duration::from_millis(500));
    while rx.try_recv().is_ok() {}

    // A second Flame on the same data directory stands for the `flame` command line.
    let other = open_flame(tmp.path());
    let pushed = other.push(Actor::Cli, None, "From elsewhere", "It shows").unwrap();
    let newest = other.events_since(0, 1000).unwrap().last().unwrap().seq;

    let payload = rx.recv_timeout(Duration::from_secs(2)).expect("the window is told within 2 s");
    let payload: Value = serde_json::from_str(&payload).unwrap();
    assert_eq!(payload["seq"].as_i64().unwrap(), newest);
    let outline = invoke_with(&window, "outline", json!({"tree": null})).unwrap();
    assert!(outline["id"].as_array().unwrap().iter().any(|id| id == pushed.id.as_str()));
}

/// The window opens with the database's quick check aside; when the check then finds the file
/// damaged, the window is told (it shows what it shows for a database found damaged at start),
/// `app_info` says so from then on, and nothing is written to the file.
#[test]
fn a_database_found_damaged_after_the_window_opened_is_announced_and_never_written() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    {
        let flame = open_flame(&home);
        let tree = flame.create_tree(Actor::Person, "Build", "It works", None).unwrap();
        let text = "a message long enough to fill pages of the database. ".repeat(20);
        for _ in 0..30 {
            flame.append(Actor::Person, &tree.root, flame_model::Role::User, &text).unwrap();
        }
    }
    let database = home.join("flame.db");
    let mut bytes = std::fs::read(&database).unwrap();
    let middle = bytes.len() / 4096 / 2;
    bytes[middle * 4096..(middle + 1) * 4096].fill(0);
    std::fs::write(&database, &bytes).unwrap();

    let (mut app, window) = window_on(&home);
    let (tx, rx) = mpsc::channel::<String>();
    app.listen_any("database-damaged", move |event| {
        let _ = tx.send(event.payload().to_owned());
    });
    #[allow(deprecated)]
    app.run_iteration(|_, _| {});
    let payload = rx.recv_timeout(Duration::from_secs(10)).expect("the window is told");
    let payload: Value = serde_json::from_str(&payload).unwrap();
    assert_eq!(payload["error"]["code"], "database_unreadable", "{payload}");
    assert!(payload["error"]["message"].as_str().unwrap().contains("is damaged"), "{payload}");
    let err = invoke(&window, "app_info").expect_err("app_info reports the damage");
    assert_eq!(err, payload["error"]);
    let refused = invoke_with(&window, "create_tree", json!({"title": "B", "criteria": "C"}));
    assert_eq!(refused.expect_err("nothing is written")["code"], "database_unreadable");
    drop((window, app));
    assert_eq!(std::fs::read(&database).unwrap(), bytes, "the damaged file was written");
}

#[test]
fn frame_context_returns_the_context_and_its_account() {
    let tmp = tempfile::tempdir().unwrap();
    let (_app, window) = window_on(tmp.path());
    let root = new_tree(&window);
    let planned = plan(&window, &root, "Pagination");
    let doc = invoke_with(&window, "frame_context", json!({"id": null, "budget": null}))
        .expect("frame_context succeeds");
    assert!(doc["xml"].as_str().unwrap().contains(&format!("<stack-context id=\"{root}\"")));
    assert!(doc["xml"].as_str().unwrap().contains("<title>Pagination</title>"));
    assert_eq!(doc["report"]["focus"], root.as_str());
    assert!(doc["report"]["fits"].as_bool().unwrap());
    let budget = json!({"context_window": 1000, "reply_reserve": 100, "tool_schemas": 50});
    let tight =
        invoke_with(&window, "frame_context", json!({"id": planned, "budget": budget})).unwrap();
    assert_eq!(tight["report"]["budget"], 850);
    let err = invoke_with(&window, "frame_context", json!({"id": "fzzzzzzzzzz", "budget": null}))
        .unwrap_err();
    assert_eq!(err["code"], "not_found");
}

/// "Make the opening again": the frame's next call makes its opening again, as the context the
/// inspector reads says; a frame that does not exist is refused.
#[test]
fn rebuild_context_has_the_next_call_make_the_opening_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (_app, window) = window_on(tmp.path());
    let root = new_tree(&window);
    // What the agent does before each model call stores the frame's first opening.
    let id = flame_model::FrameId::parse(&root).unwrap();
    open_flame(tmp.path())
        .prepare_call(&id, flame_api::DEFAULT_BUDGET, flame_api::CachePolicy::default())
        .unwrap();
    let opening = || {
        let doc = invoke_with(&window, "frame_context", json!({"id": root, "budget": null}));
        doc.expect("frame_context succeeds")["report"]["opening"].clone()
    };
    let before = opening();
    assert_eq!((&before["generation"], &before["made_now"]), (&json!(1), &json!(false)));

    let asked = invoke_with(&window, "rebuild_context", json!({"frame": root}));
    assert_eq!(asked.expect("rebuild_context succeeds"), Value::Null);
    let after = opening();
    assert_eq!(after["generation"], 2, "{after}");
    assert_eq!(after["reason"], "asked");
    assert_eq!(after["made_now"], true);

    let err = invoke_with(&window, "rebuild_context", json!({"frame": "fzzzzzzzzzz"})).unwrap_err();
    assert_eq!(err["code"], "not_found");
}

#[test]
fn send_message_answers_through_the_command_layer_against_the_replay_server() {
    let tmp = tempfile::tempdir().unwrap();
    let server =
        tauri::async_runtime::block_on(flame_models::replay::ReplayServer::start()).unwrap();
    let wire = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/flame-models/tests/models/wire/anthropic-text.sse");
    server.push([flame_models::replay::Reply::stream(std::fs::read_to_string(wire).unwrap())]);
    let settings = tmp.path().join("settings.json");
    let key = "sk-ant-tauri-SENTINEL-4c1d2e3f";
    std::fs::write(
        &settings,
        json!({"default_model": "claude-sonnet-4-5", "anthropic": {"base_url": server.base_url, "api_key": key}}).to_string(),
    )
    .unwrap();
    let home = tmp.path().join("home");
    let (_app, window) = window_with(Startup::with_settings(
        DataDir::resolve(Some(home.as_os_str()), None, None),
        Some(settings),
    ));
    let root = new_tree(&window);

    let outcome = invoke_with(
        &window,
        "send_message",
        json!({"frame": null, "text": "Say hello", "model": null, "channel": "__CHANNEL__:1"}),
    )
    .expect("send_message succeeds");
    assert_eq!(outcome["frame"], root.as_str());
    assert_eq!(outcome["stopped"]["kind"], "finished");
    let flame = open_flame(&home);
    let messages = flame.messages(&flame_model::FrameId::parse(&root).unwrap()).unwrap();
    let texts: Vec<&str> = messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(texts, ["Say hello", "Hello!"]);
    assert_eq!(server.requests().len(), 1);

    let listed = invoke_with(&window, "frame_messages", json!({"id": root})).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2);
    let detail = invoke_with(&window, "frame_detail", json!({"id": root})).unwrap();
    assert_eq!(detail["message_count"], 2);
    assert!(detail["log_path"].as_str().unwrap().ends_with(".md"));
    // What the lifecycle allows comes with it: the root is in progress, with nothing planned.
    assert_eq!(detail["actions"]["chat"], true);
    assert_eq!(detail["actions"]["pop"], true);
    assert_eq!(detail["actions"]["move"], false);
    assert_eq!(detail["actions"]["start_target"], Value::Null);

    let shown = invoke(&window, "get_settings").unwrap();
    assert_eq!(shown["anthropic"]["api_key"], "(set)");
    assert!(!shown.to_string().contains(key));
    // The key was read from the settings file (with a keyring, it moves there at the next save).
    assert_eq!(shown["anthropic"]["key_location"]["kind"], "file");
    assert!(
        !invoke(&window, "cancel_answer").unwrap().as_bool().unwrap(),
        "nothing is running now"
    );
}

/// The outline carries each frame's cost at the settings' prices: those read when the app
/// opened, then those saved from the window.
#[test]
fn the_outline_prices_replies_at_the_prices_of_the_settings_and_follows_a_save() {
    let tmp = tempfile::tempdir().unwrap();
    let settings = tmp.path().join("settings.json");
    let price = json!({"model": "llama3.1:8b", "input": 1_000_000, "output": 0,
                       "cache_read": 0, "cache_write": 0, "as_of": "2026-11"});
    std::fs::write(&settings, json!({"prices": [price]}).to_string()).unwrap();
    let home = tmp.path().join("home");
    let (_app, window) = window_with(Startup::with_settings(
        DataDir::resolve(Some(home.as_os_str()), None, None),
        Some(settings),
    ));
    let root = new_tree(&window);
    let mut reply = flame_model::NewMessage::text(flame_model::Role::Assistant, "done");
    reply.model = Some("llama3.1:8b".into());
    reply.usage = Some(flame_model::Usage { input_tokens: 1_000_000, ..Default::default() });
    let id = flame_model::FrameId::parse(&root).unwrap();
    open_flame(&home).add_message(Actor::Agent, &id, &reply).unwrap();
    // The outline's own cost of the root (its only frame) and the frame's cost read alone.
    let cost = |window: &WebviewWindow<MockRuntime>| {
        let outline = invoke_with(window, "outline", json!({"tree": null})).unwrap();
        let frame = invoke_with(window, "frame_cost", json!({"id": root})).unwrap();
        assert_eq!(outline["own_cost_steps"], json!([0]));
        assert_eq!(outline["own_costs"][0], frame["own"]["micro_usd"]);
        frame["subtree"]["micro_usd"].clone()
    };
    assert_eq!(cost(&window), 1_000_000);

    let mut shown = invoke(&window, "get_settings").unwrap();
    assert!(shown["built_in_prices"].as_array().unwrap().len() > 10, "{shown}");
    shown["prices"][0]["input"] = json!(2_000_000);
    invoke_with(&window, "save_settings", json!({"settings": shown})).unwrap();
    assert_eq!(cost(&window), 2_000_000);
}

#[test]
fn trees_are_listed_and_one_is_deleted_as_the_person() {
    let tmp = tempfile::tempdir().unwrap();
    let (_app, window) = window_on(tmp.path());
    new_tree(&window);
    let second =
        invoke_with(&window, "create_tree", json!({"title": "Second", "criteria": "c"})).unwrap();
    let listed = invoke_with(&window, "list_trees", json!({})).unwrap();
    let titles: Vec<&str> =
        listed.as_array().unwrap().iter().map(|t| t["tree"]["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["Root", "Second"]);
    assert_eq!(listed[1]["current"], true);

    let deleted = invoke_with(&window, "delete_tree", json!({"tree": second["id"]})).unwrap();
    assert_eq!((deleted["title"].as_str(), deleted["frames"].as_u64()), (Some("Second"), Some(1)));
    let outline = invoke_with(&window, "outline", json!({"tree": null})).unwrap();
    assert_eq!(outline["tree"]["title"], "Root", "the remaining tree is current");
    let flame = open_flame(tmp.path());
    let last = flame.events_since(0, 1000).unwrap().pop().unwrap();
    assert_eq!((last.kind, last.actor), (flame_model::EventKind::TreeDeleted, Actor::Person));

    let again = invoke_with(&window, "delete_tree", json!({"tree": second["id"]}));
    assert_eq!(again.expect_err("already gone")["code"], "not_found");
    let bad = invoke_with(&window, "delete_tree", json!({"tree": "not-an-id"}));
    assert!(bad.is_err(), "a malformed id is refused");
}

#[test]
fn export_commands_write_files_and_refuse_a_folder_as_the_path() {
    // The folder's own name must not be hidden (tempfile's default is `.tmp…`): the window does
    // not export into hidden folders.
    let tmp = tempfile::Builder::new().prefix("flame-export-").tempdir().unwrap();
    let home = tmp.path().join("home");
    let (_app, window) = window_on(&home);
    let root = new_tree(&window);

    let file = tmp.path().join("tree.json");
    let summary = invoke_with(
        &window,
        "export_frames",
        json!({"id": root, "scope": "tree", "format": "json", "path": file, "progress": "__CHANNEL__:1"}),
    )
    .expect("export_frames succeeds");
    assert_eq!(summary["frames"], 1);
    assert_eq!(summary["path"], file.display().to_string());
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(written["format"], "flame-export");
    assert_eq!(written["frames"][0]["id"], root.as_str());

    let folder = tmp.path().join("notes.md");
    std::fs::create_dir(&folder).unwrap();
    let err = invoke_with(
        &window,
        "export_frames",
        json!({"id": root, "scope": "frame", "format": "markdown", "path": folder, "progress": "__CHANNEL__:2"}),
    )
    .unwrap_err();
    assert_eq!(err["code"], "invalid");
    assert!(err["message"].as_str().unwrap().contains("is a folder"), "{err}");

    let context = tmp.path().join("context.md");
    invoke_with(&window, "export_context", json!({"frame": root, "path": context}))
        .expect("export_context succeeds");
    assert!(std::fs::read_to_string(&context).unwrap().contains("<stack-context"));
}

/// Paths from the window are checked in Rust: an export writes only a file with its format's
/// extension outside hidden folders and Flame's own folders; an import never reads Flame's own
/// folders (where the settings and keys are).
#[test]
fn the_window_cannot_export_or_import_outside_what_a_person_would_name() {
    let tmp = tempfile::Builder::new().prefix("flame-paths-").tempdir().unwrap();
    let home = tmp.path().join("home");
    let (_app, window) = window_on(&home);
    let root = new_tree(&window);
    let export = |path: &Path, format: &str| {
        invoke_with(
            &window,
            "export_frames",
            json!({"id": root, "scope": "tree", "format": format, "path": path, "progress": "__CHANNEL__:1"}),
        )
    };
    let dotfile = tmp.path().join(".bashrc");
    let err = export(&dotfile, "markdown").unwrap_err();
    assert!(err["message"].as_str().unwrap().contains(".md file"), "{err}");
    let hidden = tmp.path().join(".ssh/notes.md");
    std::fs::create_dir_all(hidden.parent().unwrap()).unwrap();
    let err = export(&hidden, "markdown").unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("hidden"), "{err}");
    let own = home.join("logs/tree.json");
    let err = export(&own, "json").unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("Flame's own folder"), "{err}");
    for path in [&dotfile, &hidden, &own] {
        assert!(!path.exists(), "{} was written", path.display());
    }
    let err = invoke_with(
        &window,
        "import_session",
        json!({"path": home.join("flame.db"), "progress": "__CHANNEL__:2"}),
    )
    .unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("Flame's own folder"), "{err}");
}

#[test]
fn frame_view_returns_the_frame_and_only_the_messages_after_the_ones_held() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let (_app, window) = window_on(&home);
    let root = new_tree(&window);
    let flame = open_flame(&home);
    let frame = flame_model::FrameId::parse(&root).unwrap();
    let said = |text: &str| {
        flame.append(Actor::Person, &frame, flame_model::Role::User, text).unwrap().id.0
    };
    said("one");
    let second = said("two");

    let view = invoke_with(&window, "frame_view", json!({"id": root, "after": null})).unwrap();
    assert_eq!(view["frame"]["id"], root.as_str());
    assert!(view["frame"]["log_path"].as_str().unwrap().ends_with(".md"));
    assert_eq!(view["frame"]["message_count"], 2);
    assert_eq!(view["kept_through"], Value::Null);
    let texts = |view: &Value| -> Vec<String> {
        view["messages"].as_array().unwrap().iter().map(|m| m["content"].to_string()).collect()
    };
    assert_eq!(texts(&view), ["\"one\"", "\"two\""]);
    assert_eq!(view["settled_through"], second);
    assert_eq!(view["waiting_request"], Value::Null);
    assert_eq!(view["seq"], flame.latest_seq().unwrap());

    let third = said("three");
    let next = invoke_with(&window, "frame_view", json!({"id": root, "after": second})).unwrap();
    assert_eq!(next["kept_through"], second);
    assert_eq!(texts(&next), ["\"three\""]);
    assert_eq!(next["settled_through"], third);
    // A message the frame does not have: every message again.
    let other = flame.push(Actor::Person, Some(&frame), "Other", "x").unwrap().id;
    let elsewhere =
        flame.append(Actor::Person, &other, flame_model::Role::User, "elsewhere").unwrap().id.0;
    let reset =
        invoke_with(&window, "frame_view", json!({"id": root, "after": elsewhere})).unwrap();
    assert_eq!(reset["kept_through"], Value::Null);
    assert_eq!(texts(&reset).len(), 3);

    let err = invoke_with(&window, "frame_view", json!({"id": "fzzzzzzzzzz", "after": null}))
        .unwrap_err();
    assert_eq!(err["code"], "not_found");
    assert_eq!(reset["earlier"], 0);

    // The messages before the oldest one held, a page at a time.
    let older = json!({"id": root, "before": second, "reach": null});
    let page = invoke_with(&window, "earlier_messages", older).unwrap();
    assert_eq!(texts(&page), ["\"one\""]);
    assert_eq!(page["earlier"], 0);
    let missing = json!({"id": "fzzzzzzzzzz", "before": second, "reach": null});
    let err = invoke_with(&window, "earlier_messages", missing).unwrap_err();
    assert_eq!(err["code"], "not_found");
}

#[test]
fn search_finds_words_with_the_frame_path_and_refuses_a_long_search() {
    let tmp = tempfile::tempdir().unwrap();
    let (_app, window) = window_on(tmp.path());
    let root = new_tree(&window);
    let flame = open_flame(tmp.path());
    let id = flame_model::FrameId::parse(&root).unwrap();
    flame.append(Actor::Cli, &id, flame_model::Role::User, "the kestrel flies").unwrap();

    let hits =
        invoke_with(&window, "search", json!({"query": "kestrel", "tree": null, "limit": null}))
            .unwrap();
    assert_eq!(hits.as_array().unwrap().len(), 1, "{hits}");
    assert_eq!(hits[0]["frame"], root.as_str());
    assert_eq!(hits[0]["path"], json!(["Root"]));
    assert_eq!(hits[0]["place"]["kind"], "message");
    let long = "k".repeat(flame_api::MAX_SEARCH_QUERY_CHARS + 1);
    let err = invoke_with(&window, "search", json!({"query": long, "tree": null, "limit": 5}))
        .expect_err("too long");
    assert_eq!(err["code"], "invalid");
}

/// A POST to the gateway at `address` over plain HTTP/1.1, read to its end: the status and the
/// body, put together again from its chunks.
fn post(address: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    stream.write_all(format!("{head}\r\n{body}").as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, mut rest) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    if !head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        return (status, rest.to_owned());
    }
    let mut whole = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        whole.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    (status, whole)
}

/// The window runs the gateway as its settings say: a port another program holds is said, not
/// fatal; a port chosen in the window is saved and served; a client's call becomes a tree the
/// window lists with what it was billed, per session and per frame; a new upstream in the
/// settings restarts it; off lets the port go.
#[test]
fn the_window_runs_the_gateway_as_the_settings_say_and_lists_what_it_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let server =
        tauri::async_runtime::block_on(flame_models::replay::ReplayServer::start()).unwrap();
    let wire = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/flame-models/tests/models/wire/openai-text.sse");
    let reply = flame_models::replay::Reply::stream(std::fs::read_to_string(wire).unwrap());
    server.route("POST", "/v1/chat/completions", reply);
    let upstream = format!("{}/v1", server.base_url);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let settings = tmp.path().join("settings.json");
    let written = json!({"openai": {"base_url": upstream}, "gateway": {"on": true, "port": port}});
    std::fs::write(&settings, written.to_string()).unwrap();
    let home = tmp.path().join("home");
    let (mut app, window) = window_with(Startup::with_settings(
        DataDir::resolve(Some(home.as_os_str()), None, None),
        Some(settings.clone()),
    ));
    #[allow(deprecated)]
    app.run_iteration(|_, _| {});
    let (tx, rx) = mpsc::channel::<String>();
    app.listen_any("gateway-called", move |event| {
        let _ = tx.send(event.payload().to_owned());
    });

    let status = invoke(&window, "gateway_status").unwrap();
    assert_eq!(status["listening"], Value::Null);
    let problem = status["problem"].as_str().unwrap();
    assert!(problem.starts_with(&format!("cannot listen on 127.0.0.1:{port}: ")), "{problem}");
    assert_eq!(status["openai_upstream"], upstream.as_str());

    // A port chosen in the window (the settings take no port 0): one free a moment ago.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let on = json!({"settings": {"on": true, "port": free, "mode": "observe"}});
    let status = invoke_with(&window, "set_gateway", on).unwrap();
    assert_eq!(status["problem"], Value::Null);
    let address = status["listening"].as_str().unwrap().to_owned();
    assert_eq!(address, format!("127.0.0.1:{free}"));
    let lines = status["clients"].as_array().unwrap();
    assert_eq!(lines[0]["line"], format!("export ANTHROPIC_BASE_URL=http://{address}"));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(saved["gateway"], json!({"on": true, "port": free, "mode": "observe"}));
    assert_eq!(saved["openai"]["base_url"], upstream.as_str(), "the rest is kept");

    let request = json!({"model": "gpt-4o-mini", "stream": true,
        "tools": [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}],
        "messages": [{"role": "system", "content": "You are a test."},
                     {"role": "user", "content": "Read notes.txt"}]});
    let headers = [
        ("user-agent", "opencode/1.18.33"),
        ("x-session-id", "ses_window"),
        ("authorization", "Bearer sk-test-key"),
    ];
    let (code, body) = post(&address, "/v1/chat/completions", &headers, &request.to_string());
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("\"content\":\"Hello\"") && body.ends_with("data: [DONE]\n\n"), "{body}");
    let called = rx.recv_timeout(Duration::from_secs(10)).expect("the window is told of the call");
    let called: Value = serde_json::from_str(&called).unwrap();
    assert_eq!(
        (&called["session"], &called["status"]),
        (&json!("opencode:ses_window"), &json!(200))
    );
    assert_eq!(server.requests()[0].header("authorization"), Some("Bearer sk-test-key"));

    let sessions = invoke(&window, "gateway_sessions").unwrap();
    assert_eq!(sessions.as_array().unwrap().len(), 1, "{sessions}");
    assert_eq!(sessions[0]["id"], "opencode:ses_window");
    assert_eq!(sessions[0]["agent"], "opencode");
    assert_eq!(sessions[0]["savings"]["calls"], 1);
    let tree = sessions[0]["tree"].as_str().unwrap();
    let outline = invoke_with(&window, "outline", json!({"tree": tree})).unwrap();
    let mut with_calls = Vec::new();
    for id in outline["id"].as_array().unwrap() {
        let savings = invoke_with(&window, "gateway_frame", json!({"id": id})).unwrap();
        if !savings.is_null() {
            with_calls.push(savings);
        }
    }
    assert_eq!(with_calls.len(), 1, "one frame made the call: {with_calls:?}");
    assert_eq!(with_calls[0]["billed"], sessions[0]["savings"]["billed"]);

    // Another upstream in the settings: the gateway starts again on its port, forwarding there.
    let mut shown = invoke(&window, "get_settings").unwrap();
    shown["openai"]["base_url"] = json!("http://127.0.0.1:9/v1");
    invoke_with(&window, "save_settings", json!({"settings": shown})).unwrap();
    let status = invoke(&window, "gateway_status").unwrap();
    assert_eq!(status["openai_upstream"], "http://127.0.0.1:9/v1");
    assert_eq!(status["listening"], address.as_str());

    let off = json!({"settings": {"on": false, "port": free, "mode": "observe"}});
    let status = invoke_with(&window, "set_gateway", off).unwrap();
    assert_eq!((&status["listening"], &status["problem"]), (&Value::Null, &Value::Null));
    assert!(std::net::TcpStream::connect(&address).is_err(), "the port is let go");
    drop(taken);
}

/// The settings' MCP servers reach the window with where each stands and without their values;
/// the servers other agents were given are found in the home of the environment the app started
/// with and in the tree's workspace, and adding them is a save of the settings.
#[test]
fn mcp_servers_are_listed_found_elsewhere_and_added_by_saving_the_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let person = tmp.path().join("person");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&person).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        person.join(".claude.json"),
        json!({"mcpServers": {"github": {"type": "http", "url": "https://api.example.com/mcp",
                                         "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        work.join(".mcp.json"),
        json!({"mcpServers": {"fs": {"command": "npx", "args": ["-y", "server-filesystem", "."]}}})
            .to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(tmp.path().join("config")).unwrap();
    let settings = tmp.path().join("config/settings.json");
    std::fs::write(
        &settings,
        json!({"mcp_servers": [{"name": "docs", "approval": "allow",
            "transport": {"kind": "stdio", "command": "docs-server", "env": {"TOKEN": "s3cret-value"}}}]})
            .to_string(),
    )
    .unwrap();
    let home = tmp.path().join("home");
    let environment = flame_workspace::Environment::from_variables([(
        "HOME".into(),
        person.clone().into_os_string(),
    )]);
    let (_app, window) = window_with(
        Startup::with_settings(
            DataDir::resolve(Some(home.as_os_str()), None, None),
            Some(settings),
        )
        .with_environment(environment),
    );
    let created = invoke_with(
        &window,
        "create_tree",
        json!({"title": "Work", "criteria": "done", "workspace": work.display().to_string()}),
    )
    .unwrap();
    let tree = created["id"].as_str().unwrap().to_owned();

    let servers = invoke_with(&window, "mcp_servers", json!({"frame": null})).unwrap();
    assert_eq!(
        servers,
        json!([{"name": "docs", "transport": "stdio", "summary": "docs-server",
                "status": {"kind": "not_started"}, "approval": "allow", "offered_in_frame": null}])
    );
    let shown = invoke(&window, "get_settings").unwrap();
    assert_eq!(shown["mcp_servers"][0]["transport"]["env"]["TOKEN"], "(set)");
    assert!(!shown.to_string().contains("s3cret-value"));

    let found = invoke_with(&window, "find_mcp_servers", json!({"tree": tree})).unwrap();
    let names: Vec<&str> =
        found["servers"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["fs", "github"], "{found}");
    assert_eq!(found["servers"][0]["source"], "project");

    // The window adds what the person picked to the settings it shows, and saves them.
    let mut edited = shown.clone();
    let picked = &found["servers"][1];
    edited["mcp_servers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": picked["name"], "transport": picked["transport"], "approval": "ask"}));
    invoke_with(&window, "save_settings", json!({"settings": edited})).unwrap();
    let saved = invoke(&window, "get_settings").unwrap();
    assert_eq!(saved["mcp_servers"].as_array().unwrap().len(), 2);
    let listed = invoke_with(&window, "mcp_servers", json!({"frame": null})).unwrap();
    assert_eq!(listed[1]["name"], "github");
    assert_eq!(listed[1]["transport"], "http");
    // The value the window never saw is still the one saved.
    let text = std::fs::read_to_string(tmp.path().join("config/settings.json")).unwrap();
    assert!(text.contains("s3cret-value"), "{text}");
}
