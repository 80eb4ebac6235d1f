//! Flame's desktop shell: the window, the Tauri commands and the state they share.
//!
//! Nothing here decides anything about frames, context or models: commands convert their
//! arguments, call `flame-api`, and hand back its result or its `{code, message}` error.
//!
//! `run` resolves the data directory, starts logging, and opens Flame into `Startup` (making the
//! sample tree on a first start). It then starts reading the current tree's outline ahead on a
//! thread (`Flame::read_outline_ahead`, so a large tree's outline and usage are ready before the
//! page asks), then indexes for search what imports left to index (`Flame::catch_up_search`, on a
//! connection of its own, 20,000 frames or message ids per transaction, so neither the facade's
//! store nor SQLite's write lock is held for long; `import_session` starts the same on a thread
//! after an import), and runs the window. A failed start does not end the process: `Startup` keeps
//! the `ApiError`, every command returns it, and the window shows it. `assemble` puts the commands,
//! events and state on a `tauri::Builder`, for the app and the command tests alike; its setup hook
//! starts `change_watch.rs`, the database's quick check, left aside at open so that a large
//! store's window opens at once (`damage_watch.rs`; every write waits for it), the follower, the
//! gateway when the settings say so (`gateway.rs`), and applies the webview's one WebKitGTK
//! setting (`webkit.rs`). When the app exits, the gateway lets its port go and the MCP servers
//! the agent started are stopped (`Startup::stop_mcp_servers`).

pub mod bindings;
mod change_watch;
mod commands;
mod damage_watch;
mod dialogs;
mod follower;
mod gateway;
mod startup;
mod webkit;

pub use change_watch::TreeChanged;
pub use damage_watch::DatabaseDamaged;
pub use follower::FollowRead;
pub use gateway::{GatewayCalled, GatewayStatus};
pub use startup::Startup;

use tauri::{Manager, Runtime};

/// Puts Flame's commands, events and state on a Tauri builder: the app does this on the real
/// runtime, the command tests on the mock one, so both exercise the same wiring.
pub fn assemble<R: Runtime>(builder: tauri::Builder<R>, startup: Startup) -> tauri::Builder<R> {
    let bindings = bindings::builder::<R>();
    // The save dialog is opened by a command in Rust; the UI is given no dialog permission.
    builder
        .plugin(tauri_plugin_dialog::init())
        .invoke_handler(bindings.invoke_handler())
        .manage(startup)
        // Managed before the setup hook starts it, so the settings commands always find it.
        .manage(gateway::GatewayRunner::default())
        .setup(move |app| {
            bindings.mount_events(app);
            app.manage(dialogs::Dialogs::new(app.handle().clone()));
            change_watch::spawn(app.handle().clone());
            damage_watch::spawn(app.handle());
            // Where the agents keep their sessions, from the environment as they read it.
            let homes = flame_api::agent_homes_from_env();
            app.manage(follower::spawn(app.handle().clone(), homes));
            start_gateway(app.handle());
            // The web view's data and caches are Flame's too: no workspace may lie in or hold one.
            if let Ok(flame) = app.state::<Startup>().flame() {
                let paths = app.path();
                flame.add_own_folders(
                    [paths.app_data_dir(), paths.app_local_data_dir(), paths.app_cache_dir()]
                        .into_iter()
                        .flatten(),
                );
            }
            if let Some(window) = app.get_webview_window("main") {
                webkit::paint_without_gpu(&window);
            }
            Ok(())
        })
}

/// Opens Flame on its data directory and runs the window until it is closed.
///
/// A data directory or database that cannot be used does not stop the window from opening: the
/// failure is kept in [`Startup`] and every command answers with it, so the UI shows the person
/// a clear error instead of the process dying.
///
/// `withdrawn` is the process's environment, keys included, that
/// `flame_workspace::Environment::withdraw_secrets` took out of the process, and whether it could.
pub fn run(withdrawn: (flame_workspace::Environment, std::io::Result<usize>)) {
    let (environment, wiped) = withdrawn;
    let filter = environment.get("FLAME_LOG").unwrap_or_else(|| "info".to_owned());
    let data_dir = flame_api::DataDir::from_env();
    let log_dir = data_dir.as_ref().ok().map(flame_api::DataDir::diagnostics_dir);
    let logging = flame_api::logging::init(&filter, log_dir.as_deref());
    if let Some(problem) = &logging.file_error {
        tracing::warn!("{problem}; logging to stderr only");
    }
    if let Err(err) = wiped {
        tracing::warn!("keys in the environment stay readable by the commands run: {err}");
    }

    // The token encodings are not built ahead of time: each holds tens of megabytes for as long
    // as the app runs, and is built (in about a tenth of a second) when a count first needs it,
    // which an app opened only to read its trees never does.
    let startup = Startup::open(data_dir).with_environment(environment);
    match startup.flame() {
        // A new data directory starts with the sample tree, to explore or delete.
        Ok(flame) => match flame.offer_sample_tree(flame_model::Actor::Person) {
            Ok(Some(tree)) => tracing::info!(tree = %tree.id, "first start: made the sample tree"),
            Ok(None) => {}
            Err(err) => tracing::warn!("could not make the sample tree: {}", err.message),
        },
        Err(err) => tracing::error!(code = ?err.code, "Flame could not start: {}", err.message),
    }
    // The current tree's outline, with the usage it prices, is read while the window and its web
    // process start (a third of a second before the page can ask), and handed to the page's
    // first ask (`Flame::read_outline_ahead`), a large tree's preview first. Then the messages an
    // import (perhaps `flame import`) left to index are indexed, so the first search does not
    // wait for them. All of it at the lowest priority: on two cores, reading a 100k-frame tree
    // beside WebKit's start delayed the page by some 80 ms, and the preview, made first, is
    // still ready when the page asks.
    if let Ok(flame) = startup.flame() {
        let flame = std::sync::Arc::clone(flame);
        in_background("flame-outline-ahead", move || {
            yield_to_the_window();
            if let Err(err) = flame.read_outline_ahead() {
                tracing::warn!("could not read the tree's outline ahead: {}", err.message);
            }
            catch_up_search(&flame);
        });
    }

    let built = assemble(tauri::Builder::default(), startup)
        .build(tauri::generate_context!("../tauri.conf.json"));
    let app = built.unwrap_or_else(|err| {
        // Without a window there is nowhere else to say it.
        tracing::error!("the window could not be opened: {err}");
        std::process::exit(1);
    });
    app.run(|app, event| {
        // The gateway's port is let go of before the process ends, not with it, and the MCP
        // servers the agent started end with the app.
        if let tauri::RunEvent::Exit = event {
            tauri::async_runtime::block_on(app.state::<gateway::GatewayRunner>().stop());
            app.state::<Startup>().stop_mcp_servers();
        }
    });
}

/// Starts the window's gateway as the settings say (`gateway.rs`), telling the window of each
/// call it ends.
fn start_gateway<R: Runtime>(app: &tauri::AppHandle<R>) {
    let handle = app.clone();
    let announce = move |called: GatewayCalled| {
        if let Err(err) = tauri_specta::Event::emit(&called, &handle) {
            tracing::debug!("could not tell the window about a gateway call: {err}");
        }
    };
    let startup = app.state::<Startup>();
    let settings = flame_settings::Settings::without_keys(startup.settings_path().as_deref());
    app.state::<gateway::GatewayRunner>().start(announce, startup.flame().cloned(), settings);
}

/// Gives the calling thread the lowest scheduling priority (on Linux a thread's nice value is
/// its own), so that work ahead of need (the database's check, the outline read ahead) does not
/// slow the window's start on a machine of few cores.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub(crate) fn yield_to_the_window() {
    // SAFETY: `setpriority` takes plain integers; `who` 0 with `PRIO_PROCESS` is the calling
    // thread on Linux. A failure leaves the priority as it was, which is only slower.
    let lowered = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 19) };
    if lowered != 0 {
        tracing::debug!("could not lower a background thread's priority");
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn yield_to_the_window() {}

/// Runs `work` on a thread of its own named `name`; a thread that cannot start is logged, as the
/// work it would have done is only ahead of need.
pub(crate) fn in_background(name: &str, work: impl FnOnce() + Send + 'static) {
    if let Err(err) = std::thread::Builder::new().name(name.to_owned()).spawn(work) {
        tracing::warn!("could not start the thread {name}: {err}");
    }
}

/// Indexes for search what imports left to index (`Flame::catch_up_search`), logging a failure:
/// a search indexes it anyway.
pub(crate) fn catch_up_search(flame: &flame_api::Flame) {
    match flame.catch_up_search() {
        Ok(0) => {}
        Ok(rows) => tracing::info!(rows, "indexed imported frames and messages for search"),
        Err(err) => {
            tracing::warn!(
                "could not index imported frames and messages for search: {}",
                err.message
            )
        }
    }
}
