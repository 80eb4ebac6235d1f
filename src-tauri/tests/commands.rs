//! The Tauri commands, called through Tauri's real IPC path on the mock runtime: no window, no
//! display. Each test opens Flame on its own temporary data directory.

use std::ffi::OsStr;
use std::path::Path;

use flame_api::DataDir;
use flame_desktop::{Startup, assemble};
use serde_json::Value;
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
    let request = InvokeRequest {
        cmd: command.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        url: "tauri://localhost".parse().unwrap(),
        body: InvokeBody::default(),
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
