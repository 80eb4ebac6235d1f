//! The Tauri commands. Each one converts, calls `flame-api` as [`Actor::Person`], and returns its
//! result; the error type is always `ApiError`, which reaches the UI as `{code, message}`.
//!
//! The outline by columns and a frame's cost run off the main thread, since a large tree's take a
//! good part of a second; so do `import_session` and `export_frames` (`#[tauri::command(async)]`),
//! which send their progress on a `tauri::ipc::Channel`, and `search`. `list_models` is
//! `flame_settings::model_list`'s list; `frame_context` and `rebuild_context` are the context
//! inspector's; `export_context` writes a frame's assembled context. `choose_save_path` and
//! `choose_folder` open the system's dialogs from Rust (`dialogs.rs`) and return the path.
//! `create_tree` and `set_tree_workspace` check a workspace against every folder of Flame's own
//! (`Startup::own_folders`) before the facade stores it. The `sessions`, `follow_session`,
//! `unfollow_session` and `follow_agent` commands are the Sessions view's, and so are
//! `gateway_status`, `set_gateway` and `gateway_sessions` (`gateway.rs` runs the gateway);
//! `gateway_frame` is the chat pane header's. Every command is
//! declared to Tauri in `build.rs`, which reads the one list in `bindings.rs`, and
//! `mcp_servers` and `find_mcp_servers` are the MCP servers' in Settings and the context
//! inspector. `capabilities/default.json` grants the main window only those it uses (not `update_results`,
//! `frame_messages`, `waiting_request` or `frame_budget`, which only the command tests call).

use flame_agent::{Answer, ChatEvent, ChatOutcome, GeneratedResults, WaitingRequest};
use flame_api::{
    ApiError, AppInfo, Budget, BudgetView, CheckpointStorage, ContextDoc, DeletedTree,
    EarlierMessages, ExportFormat, ExportProgress, ExportScope, ExportSummary, FrameChanges,
    FrameDetail, FrameView, GatewaySavings, GatewaySessionView, OutlineColumns, OutlinePreview,
    PlanSpec, PopRequest, RollbackOutcome, TreeListEntry, window_paths,
};
use flame_model::budget::FrameBudget;
use flame_model::cost::FrameCost;
use flame_model::{Actor, Frame, FrameId, Message, MessageId, Tree, TreeId};
use flame_settings::{GatewaySettings, Settings, SettingsFile};
use serde::Serialize;
use tauri::State;
use tauri::ipc::Channel;

use crate::Startup;
use crate::dialogs::Dialogs;
use crate::follower::Follower;
use crate::gateway::{GatewayRunner, GatewayStatus};

/// Flame's version, data directory and database; the startup error if Flame could not open.
#[tauri::command]
#[specta::specta]
pub fn app_info(startup: State<'_, Startup>) -> Result<AppInfo, ApiError> {
    startup.flame()?.info()
}

/// A tree (the current one when `tree` is null) in the narrow form the flame graph draws, by
/// columns (the window turns them back into a `TreeOutline`). Off the main thread: a large tree
/// takes a good part of a second to read, which would hold up the window's event loop.
#[tauri::command(async)]
#[specta::specta]
pub fn outline(
    startup: State<'_, Startup>,
    tree: Option<TreeId>,
) -> Result<OutlineColumns, ApiError> {
    startup.flame()?.outline_columns(tree.as_ref())
}

/// The top of a large current tree, read ahead while the window started, for the window to draw
/// until the whole outline comes; null for a smaller tree, or when it was taken or not read.
/// Off the main thread: it waits while the tree's frames are read ahead.
#[tauri::command(async)]
#[specta::specta]
pub fn outline_preview(startup: State<'_, Startup>) -> Result<Option<OutlinePreview>, ApiError> {
    Ok(startup.flame()?.outline_preview())
}

/// One frame's cost at the prices in use: its own and its subtree's, and its own usage by model
/// (the graph's tooltip reads it for the frame under the pointer; the outline carries the focused
/// frame's). Off the main thread: after a change, the first one works out the whole tree's costs.
#[tauri::command(async)]
#[specta::specta]
pub fn frame_cost(startup: State<'_, Startup>, id: FrameId) -> Result<FrameCost, ApiError> {
    startup.flame()?.frame_cost(&id)
}

/// A frame's budget, what its subtree spent of it, and what it has left by every budget on its
/// path (the chat pane's header and the graph's tooltip).
#[tauri::command]
#[specta::specta]
pub fn frame_budget(startup: State<'_, Startup>, id: FrameId) -> Result<BudgetView, ApiError> {
    startup.flame()?.frame_budget(&id)
}

/// Gives frame `id` a budget (null, or one that limits nothing, clears it), out of what its
/// parent has left.
#[tauri::command]
#[specta::specta]
pub fn set_frame_budget(
    startup: State<'_, Startup>,
    id: FrameId,
    budget: Option<FrameBudget>,
) -> Result<BudgetView, ApiError> {
    startup.flame()?.set_budget(Actor::Person, &id, budget)
}

/// One frame in full (criteria, results, artifacts, decisions, reason) with its log's path, and
/// what may be done with it now (the window shows these; it checks no lifecycle rule itself).
#[tauri::command]
#[specta::specta]
pub fn frame_detail(startup: State<'_, Startup>, id: FrameId) -> Result<FrameDetail, ApiError> {
    startup.flame()?.frame_detail(&id)
}

/// What the chat pane shows of a frame, read in one call each time the window hears of a change:
/// the frame view (see [`FrameView`] for how the window combines them) and the push or pop the
/// agent waits on there for the person.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ChatView {
    #[serde(flatten)]
    pub view: FrameView,
    /// The tool call the agent waits on in the frame for the person, if any.
    pub waiting_request: Option<WaitingRequest>,
}

/// Frame `id` with its messages after `after` (null: all of them) and the request the agent
/// waits on there: the chat pane's one read, in place of `frame_messages` and
/// `waiting_request`.
#[tauri::command]
#[specta::specta]
pub fn frame_view(
    startup: State<'_, Startup>,
    id: FrameId,
    after: Option<MessageId>,
) -> Result<ChatView, ApiError> {
    let flame = startup.flame()?;
    let view = flame.frame_view(&id, after)?;
    let waiting = flame_agent::waiting_request_among(flame, &id, &startup.mcp_server_settings())?;
    Ok(ChatView { view, waiting_request: waiting })
}

/// A page of frame `id`'s messages before message `before`, the oldest the chat pane holds (a
/// view holds only the newest page): read as the person scrolls up to them, or, with `reach`,
/// every one from a little before that message, which the pane was asked to show.
#[tauri::command]
#[specta::specta]
pub fn earlier_messages(
    startup: State<'_, Startup>,
    id: FrameId,
    before: MessageId,
    reach: Option<MessageId>,
) -> Result<EarlierMessages, ApiError> {
    startup.flame()?.earlier_messages(&id, before, reach)
}

/// Merges `text` into section `section` of an in-progress frame's partial results.
#[tauri::command]
#[specta::specta]
pub fn update_results(
    startup: State<'_, Startup>,
    id: FrameId,
    section: String,
    text: String,
) -> Result<Frame, ApiError> {
    startup.flame()?.update_results(Actor::Person, &id, &section, &text)
}

/// A frame's messages, oldest first.
#[tauri::command]
#[specta::specta]
pub fn frame_messages(startup: State<'_, Startup>, id: FrameId) -> Result<Vec<Message>, ApiError> {
    startup.flame()?.messages(&id)
}

/// Exactly what the model receives in frame `id` (null: the focused frame) under `budget` (null:
/// the default), with the account of every section: the context inspector's data.
#[tauri::command]
#[specta::specta]
pub fn frame_context(
    startup: State<'_, Startup>,
    id: Option<FrameId>,
    budget: Option<Budget>,
) -> Result<ContextDoc, ApiError> {
    startup.flame()?.context(id.as_ref(), budget)
}

/// Asks for frame `frame`'s opening (what its conversation starts with: the tree as it stood) to
/// be made again at its next model call, as the person: the context inspector's "Make the
/// opening again".
#[tauri::command]
#[specta::specta]
pub fn rebuild_context(startup: State<'_, Startup>, frame: FrameId) -> Result<(), ApiError> {
    startup.flame()?.rebuild_context(Actor::Person, &frame)
}

/// Creates a tree, its root frame in progress and focused, and makes it current. `workspace`
/// (null: none) is the folder its agent's workspace tools work in (`~/` is the home folder).
// Async: it takes a checkpoint of the workspace (git), which must not hold the window's thread.
#[tauri::command(async)]
#[specta::specta]
pub fn create_tree(
    startup: State<'_, Startup>,
    title: String,
    criteria: String,
    workspace: Option<String>,
) -> Result<Tree, ApiError> {
    // The facade checks it against every folder of Flame's own (`Startup::own_folders`).
    let workspace = workspace.as_deref().and_then(folder_path);
    startup.flame()?.create_tree(Actor::Person, &title, &criteria, workspace.as_deref())
}

/// A folder the person typed or chose: blank is none, and `~` starts at the home folder (a `~`
/// with no home folder is kept as typed, and refused as a folder that does not exist).
fn folder_path(text: &str) -> Option<std::path::PathBuf> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    flame_api::expand_home(text, dirs::home_dir().as_deref()).or_else(|| Some(text.into()))
}

/// Sets (null: clears) the folder tree `tree`'s workspace tools work in (`~/` is the home
/// folder). The kinds of call allowed for the rest of the tree are asked again.
// Async: it takes a checkpoint of the workspace (git), which must not hold the window's thread.
#[tauri::command(async)]
#[specta::specta]
pub fn set_tree_workspace(
    startup: State<'_, Startup>,
    tree: TreeId,
    workspace: Option<String>,
) -> Result<Tree, ApiError> {
    // The facade checks it against every folder of Flame's own (`Startup::own_folders`).
    let workspace = workspace.as_deref().and_then(folder_path);
    startup.flame()?.set_workspace(Actor::Person, &tree, workspace.as_deref())
}

/// Every tree, oldest first, marking the current one.
#[tauri::command]
#[specta::specta]
pub fn list_trees(startup: State<'_, Startup>) -> Result<Vec<TreeListEntry>, ApiError> {
    startup.flame()?.trees()
}

/// The frames (titles and results) and messages holding every word of `query`, in tree `tree`
/// or in every tree, with each frame's path: the window's search (Ctrl+F, Ctrl+K).
// Async: on a large store a search reads the index for a few milliseconds, off the window's thread.
#[tauri::command(async)]
#[specta::specta]
pub fn search(
    startup: State<'_, Startup>,
    query: String,
    tree: Option<TreeId>,
    limit: Option<u32>,
) -> Result<Vec<flame_api::SearchHit>, ApiError> {
    startup.flame()?.search(&query, tree.as_ref(), limit)
}

/// Deletes a tree with all its frames, messages and logs; the window asks the person first.
#[tauri::command]
#[specta::specta]
pub fn delete_tree(startup: State<'_, Startup>, tree: TreeId) -> Result<DeletedTree, ApiError> {
    startup.flame()?.delete_tree(Actor::Person, &tree)
}

/// Focuses a frame (the chat pane follows it) and makes its tree current.
#[tauri::command]
#[specta::specta]
pub fn focus_frame(startup: State<'_, Startup>, id: FrameId) -> Result<Frame, ApiError> {
    startup.flame()?.focus(Actor::Person, &id)
}

/// Pushes an in-progress child under `parent` (null: the focused frame) and focuses it.
// Async: it takes a checkpoint of the workspace (git), which must not hold the window's thread.
#[tauri::command(async)]
#[specta::specta]
pub fn push_frame(
    startup: State<'_, Startup>,
    parent: Option<FrameId>,
    title: String,
    criteria: String,
) -> Result<Frame, ApiError> {
    startup.flame()?.push(Actor::Person, parent.as_ref(), &title, &criteria)
}

/// Plans frames under `parent` (null: the focused frame) at `position` (null: last).
#[tauri::command]
#[specta::specta]
pub fn plan_frames(
    startup: State<'_, Startup>,
    parent: Option<FrameId>,
    position: Option<u32>,
    specs: Vec<PlanSpec>,
) -> Result<Vec<Frame>, ApiError> {
    startup.flame()?.plan(Actor::Person, parent.as_ref(), position, &specs)
}

/// Moves a planned frame among its siblings or under another frame (`parent` null: same parent).
#[tauri::command]
#[specta::specta]
pub fn move_frame(
    startup: State<'_, Startup>,
    id: FrameId,
    parent: Option<FrameId>,
    position: Option<u32>,
) -> Result<Frame, ApiError> {
    startup.flame()?.move_frame(Actor::Person, &id, parent.as_ref(), position)
}

/// Starts a planned frame (and its planned ancestors) and focuses it.
// Async: it takes a checkpoint of the workspace (git), which must not hold the window's thread.
#[tauri::command(async)]
#[specta::specta]
pub fn start_frame(startup: State<'_, Startup>, id: FrameId) -> Result<Frame, ApiError> {
    startup.flame()?.start(Actor::Person, &id)
}

/// Pops a frame as completed, failed or blocked.
#[tauri::command]
#[specta::specta]
pub fn pop_frame(
    startup: State<'_, Startup>,
    id: FrameId,
    request: PopRequest,
) -> Result<Frame, ApiError> {
    startup.flame()?.pop(Actor::Person, Some(&id), &request)
}

/// Resumes a blocked frame and focuses it.
#[tauri::command]
#[specta::specta]
pub fn resume_frame(startup: State<'_, Startup>, id: FrameId) -> Result<Frame, ApiError> {
    startup.flame()?.resume(Actor::Person, &id)
}

/// Retries a failed frame as a new in-progress sibling and focuses it.
// Async: it takes a checkpoint of the workspace (git), which must not hold the window's thread.
#[tauri::command(async)]
#[specta::specta]
pub fn retry_frame(startup: State<'_, Startup>, id: FrameId) -> Result<Frame, ApiError> {
    startup.flame()?.retry(Actor::Person, &id)
}

/// Rolls a failed frame's file changes back, then retries it from where it started.
#[tauri::command(async)]
#[specta::specta]
pub fn retry_frame_from_start(startup: State<'_, Startup>, id: FrameId) -> Result<Frame, ApiError> {
    startup.flame()?.retry_from_start(Actor::Person, &id)
}

/// The files frame `id` (with `subtree`, and its descendants) changed, as a diff from its start.
#[tauri::command(async)]
#[specta::specta]
pub fn frame_changes(
    startup: State<'_, Startup>,
    id: FrameId,
    subtree: bool,
) -> Result<FrameChanges, ApiError> {
    startup.flame()?.frame_changes(&id, subtree)
}

/// Puts the files frame `id` and its descendants changed back as they were when it started.
#[tauri::command(async)]
#[specta::specta]
pub fn rollback_frame(
    startup: State<'_, Startup>,
    id: FrameId,
) -> Result<RollbackOutcome, ApiError> {
    startup.flame()?.rollback(Actor::Person, &id)
}

/// The storage each workspace's checkpoints take, for the settings.
#[tauri::command(async)]
#[specta::specta]
pub fn checkpoint_storage(startup: State<'_, Startup>) -> Result<Vec<CheckpointStorage>, ApiError> {
    startup.flame()?.checkpoint_storage()
}

/// Invalidates a frame and its open descendants; returns every frame invalidated.
#[tauri::command]
#[specta::specta]
pub fn invalidate_frame(
    startup: State<'_, Startup>,
    id: FrameId,
    reason: Option<String>,
) -> Result<Vec<FrameId>, ApiError> {
    startup.flame()?.invalidate(Actor::Person, &id, reason.as_deref())
}

/// Changes a planned frame's title and/or criteria.
#[tauri::command]
#[specta::specta]
pub fn edit_frame(
    startup: State<'_, Startup>,
    id: FrameId,
    title: Option<String>,
    criteria: Option<String>,
) -> Result<Frame, ApiError> {
    startup.flame()?.edit(Actor::Person, &id, title.as_deref(), criteria.as_deref())
}

/// Deletes a planned frame with no messages, and its planned subtree; returns the deleted ids.
#[tauri::command]
#[specta::specta]
pub fn delete_frame(startup: State<'_, Startup>, id: FrameId) -> Result<Vec<FrameId>, ApiError> {
    startup.flame()?.delete(Actor::Person, &id)
}

/// Sends `text` in frame `frame` (null: the focused frame) with `model` (null: the default) and
/// answers it, streaming every [`ChatEvent`] over `channel`. A new message cancels an answer
/// still running.
#[tauri::command]
#[specta::specta]
pub async fn send_message(
    startup: State<'_, Startup>,
    frame: Option<FrameId>,
    text: String,
    model: Option<String>,
    channel: Channel<ChatEvent>,
) -> Result<ChatOutcome, ApiError> {
    let agent = startup.agent()?;
    let answering = startup.begin_answer();
    agent
        .send(
            Actor::Person,
            frame.as_ref(),
            &text,
            model.as_deref(),
            &answering.cancel,
            &mut forward(&channel),
        )
        .await
}

/// Answers the conversation in `frame` again without adding a message (after a failed or
/// stopped reply), streaming every [`ChatEvent`] over `channel`.
#[tauri::command]
#[specta::specta]
pub async fn answer_again(
    startup: State<'_, Startup>,
    frame: FrameId,
    model: Option<String>,
    channel: Channel<ChatEvent>,
) -> Result<ChatOutcome, ApiError> {
    let agent = startup.agent()?;
    let answering = startup.begin_answer();
    agent.answer_again(&frame, model.as_deref(), &answering.cancel, &mut forward(&channel)).await
}

/// Answers the tool call the agent is waiting on in `frame` (accept, accept the rest of the
/// tree's calls of its kind, or refuse with the person's words), then lets it go on.
#[tauri::command]
#[specta::specta]
pub async fn answer_request(
    startup: State<'_, Startup>,
    frame: FrameId,
    answer: Answer,
    model: Option<String>,
    channel: Channel<ChatEvent>,
) -> Result<ChatOutcome, ApiError> {
    let agent = startup.agent()?;
    let answering = startup.begin_answer();
    agent
        .answer_request(&frame, answer, model.as_deref(), &answering.cancel, &mut forward(&channel))
        .await
}

/// The tool call the agent is waiting on in `frame` for the person to answer, with what it
/// would do, if any (read from the stored conversation, so it outlives the app).
#[tauri::command]
#[specta::specta]
pub fn waiting_request(
    startup: State<'_, Startup>,
    frame: FrameId,
) -> Result<Option<WaitingRequest>, ApiError> {
    flame_agent::waiting_request_among(startup.flame()?, &frame, &startup.mcp_server_settings())
}

/// Stops the answer running now; what arrived is kept, marked interrupted.
#[tauri::command]
#[specta::specta]
pub fn cancel_answer(startup: State<'_, Startup>) -> bool {
    startup.cancel_answer()
}

/// The model's proposal for a frame's results (for the pop dialog to show, editable).
#[tauri::command]
#[specta::specta]
pub async fn generate_results(
    startup: State<'_, Startup>,
    frame: FrameId,
    model: Option<String>,
) -> Result<GeneratedResults, ApiError> {
    let agent = startup.agent()?;
    let answering = startup.begin_answer();
    agent.generate_results(&frame, model.as_deref(), &answering.cancel).await
}

/// The model settings, with keys shown only as set or not, and where each is kept.
#[tauri::command]
#[specta::specta]
pub fn get_settings(startup: State<'_, Startup>) -> Result<Settings, ApiError> {
    Ok(settings_file(&startup)?.load()?.redacted(&startup.env_reader()))
}

/// Saves the model settings. A key left as the placeholder the UI was shown is kept (unless the
/// base URL moved to another host); an empty key removes it. The gateway starts again when its
/// port, mode or upstreams changed.
#[tauri::command]
#[specta::specta]
pub async fn save_settings(
    startup: State<'_, Startup>,
    gateway: State<'_, GatewayRunner>,
    settings: Settings,
) -> Result<Settings, ApiError> {
    let file = settings_file(&startup)?;
    let merged = file.load()?.with_changes(settings);
    file.save(&merged)?;
    startup.forget_agent();
    // Costs, masking and the checkpoint cap follow the saved settings at once (a Flame that
    // failed to open has nothing to configure).
    if let Ok(flame) = startup.flame() {
        flame.reconfigure(merged.facade_config(Some(file.path())));
    }
    gateway.apply(startup.flame().cloned(), &merged).await;
    Ok(file.load()?.redacted(&startup.env_reader()))
}

/// The gateway as it runs now: its settings, where it listens, the line to paste for each
/// agent, and why it does not listen when it should.
#[tauri::command]
#[specta::specta]
pub async fn gateway_status(gateway: State<'_, GatewayRunner>) -> Result<GatewayStatus, ApiError> {
    Ok(gateway.status().await)
}

/// Saves the gateway's settings (on or off, port, mode) and starts, restarts or stops it to
/// match. A port that is taken is said in the status, not refused: the settings are saved.
#[tauri::command]
#[specta::specta]
pub async fn set_gateway(
    startup: State<'_, Startup>,
    gateway: State<'_, GatewayRunner>,
    settings: GatewaySettings,
) -> Result<GatewayStatus, ApiError> {
    let file = settings_file(&startup)?;
    let mut saved = file.load()?;
    saved.gateway = settings;
    file.save(&saved)?;
    startup.forget_agent();
    Ok(gateway.apply(startup.flame().cloned(), &saved).await)
}

/// Every session the gateway recorded, newest first, with what its calls were billed and what
/// the client's own requests would have cost.
#[tauri::command(async)]
#[specta::specta]
pub fn gateway_sessions(startup: State<'_, Startup>) -> Result<Vec<GatewaySessionView>, ApiError> {
    startup.flame()?.gateway_overview()
}

/// What the gateway's calls in frame `id` were billed and would have cost the client; null when
/// the gateway made none there (the chat pane's header).
#[tauri::command(async)]
#[specta::specta]
pub fn gateway_frame(
    startup: State<'_, Startup>,
    id: FrameId,
) -> Result<Option<GatewaySavings>, ApiError> {
    startup.flame()?.gateway_frame_savings(&id)
}

/// Every model to pick and where it came from: the settings', each provider's list (cached
/// for an hour, and offline), and those of model servers found on this computer now.
#[tauri::command]
#[specta::specta]
pub async fn list_models(
    startup: State<'_, Startup>,
) -> Result<flame_settings::model_list::ModelList, ApiError> {
    let file = settings_file(&startup)?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| i64::try_from(since.as_millis()).unwrap_or(i64::MAX));
    let options = flame_settings::model_list::ListOptions::default();
    let env = startup.env_reader();
    flame_settings::model_list::list_models_for(&file, &env, now_ms, &options).await
}

/// The MCP servers of the settings, where each stands, and how many tools the model of `frame`
/// (null: none) is offered from each: the settings' list and the context inspector's.
#[tauri::command]
#[specta::specta]
pub fn mcp_servers(
    startup: State<'_, Startup>,
    frame: Option<FrameId>,
) -> Result<Vec<flame_agent::McpServerView>, ApiError> {
    Ok(startup.agent()?.mcp_servers(frame.as_ref()))
}

/// The MCP servers other agents were given (Claude Code, OpenCode, Codex, and the `.mcp.json` of
/// tree `tree`'s workspace, if it has one), for the person to pick from; nothing is added here.
#[tauri::command]
#[specta::specta]
pub fn find_mcp_servers(
    startup: State<'_, Startup>,
    tree: Option<TreeId>,
) -> Result<flame_mcp_client::found::Found, ApiError> {
    let workspace = match &tree {
        Some(tree) => startup.flame()?.tree(tree)?.workspace.map(std::path::PathBuf::from),
        None => None,
    };
    Ok(flame_mcp_client::found::find(&startup.mcp_places(workspace), &[]))
}

/// The settings file, with its keys in the system keyring if one answers now.
fn settings_file(startup: &Startup) -> Result<SettingsFile, ApiError> {
    SettingsFile::at(startup.settings_path())
}

/// Hands each event of an answer to the window. A window that went away does not stop the
/// answer: what it writes is stored either way.
fn forward(channel: &Channel<ChatEvent>) -> impl FnMut(ChatEvent) + Send + '_ {
    move |event| {
        let _ = channel.send(event);
    }
}

/// Imports an agent session (Claude Code, OpenCode) or a Flame export at `path` as a new tree,
/// detecting the format, and makes it current. Runs off the main thread and reports how far it
/// has read on `progress`; afterwards a thread indexes the imported messages for search.
#[tauri::command(async)]
#[specta::specta]
pub fn import_session(
    startup: State<'_, Startup>,
    path: String,
    progress: Channel<flame_api::ImportProgress>,
) -> Result<flame_api::ImportSummary, ApiError> {
    let path = std::path::PathBuf::from(path.trim());
    window_paths::check_import_source(&path, &startup.own_folders())?;
    let flame = startup.flame()?;
    let summary = flame.import_file(Actor::Person, &path, None, true, None, &mut |p| {
        // A window that went away while the import ran does not stop the import.
        if let Err(err) = progress.send(p) {
            tracing::debug!("import progress not sent: {err}");
        }
    })?;
    let flame = std::sync::Arc::clone(flame);
    crate::in_background("flame-search-catch-up", move || crate::catch_up_search(&flame));
    Ok(summary)
}

/// Writes the frames `scope` names from frame `id` to `path` (`~/` is the home folder) as JSON
/// or Markdown, replacing a file there only once the new one is complete. Runs off the main
/// thread and reports the frames read on `progress`.
#[tauri::command(async)]
#[specta::specta]
pub fn export_frames(
    startup: State<'_, Startup>,
    id: FrameId,
    scope: ExportScope,
    format: ExportFormat,
    path: String,
    progress: Channel<ExportProgress>,
) -> Result<ExportSummary, ApiError> {
    let path = flame_api::resolve_export_path(&path, dirs::home_dir().as_deref())?;
    window_paths::check_export_target(&path, format, &startup.own_folders())?;
    startup.flame()?.export_to_file(id.as_str(), scope, format, &path, &mut |p| {
        // A window that went away while the export ran does not stop the export.
        if let Err(err) = progress.send(p) {
            tracing::debug!("export progress not sent: {err}");
        }
    })
}

/// Writes what the model receives in `frame` (the default budget) to `path` as Markdown: the
/// system prompt with its `<stack-context>` document, and the messages.
#[tauri::command(async)]
#[specta::specta]
pub fn export_context(
    startup: State<'_, Startup>,
    frame: FrameId,
    path: String,
) -> Result<ExportSummary, ApiError> {
    let path = flame_api::resolve_export_path(&path, dirs::home_dir().as_deref())?;
    window_paths::check_export_target(&path, ExportFormat::Markdown, &startup.own_folders())?;
    startup.flame()?.export_context_to_file(&frame, None, &path)
}

/// Asks where to save with the system's save dialog, starting in the home folder with
/// `suggested_name`; null when the person cancels. The dialog is opened here rather than from
/// the web UI, so the UI needs no permission to open dialogs.
#[tauri::command(async)]
#[specta::specta]
pub fn choose_save_path(
    dialogs: State<'_, Dialogs>,
    suggested_name: String,
) -> Result<Option<String>, ApiError> {
    Ok(dialogs.save_path(&suggested_name)?.map(|path| path.display().to_string()))
}

/// Asks for a folder with the system's folder dialog titled `title`, starting in the home folder;
/// null when the person cancels. Opened here, like the save dialog, so the UI needs no dialog
/// permission.
#[tauri::command(async)]
#[specta::specta]
pub fn choose_folder(
    dialogs: State<'_, Dialogs>,
    title: String,
) -> Result<Option<String>, ApiError> {
    Ok(dialogs.folder(&title)?.map(|path| path.display().to_string()))
}

/// The sessions Claude Code, Codex and OpenCode keep on this computer (of `agents`, every agent
/// when null), with each one's recorded cost and whether Flame follows it: the Sessions view.
/// Off the main thread: it reads the beginning of every session file, and whole the ones whose
/// cost it adds up.
#[tauri::command(async)]
#[specta::specta]
pub fn sessions(
    startup: State<'_, Startup>,
    follower: State<'_, Follower>,
    agents: Option<Vec<flame_api::Agent>>,
) -> Result<flame_api::SessionList, ApiError> {
    let agents = agents.unwrap_or_else(|| flame_api::Agent::ALL.to_vec());
    startup.flame()?.sessions(&follower.homes, &agents)
}

/// Starts following session `id` (as the Sessions view names it) and reads it; the follower
/// then keeps its tree in step with its files.
#[tauri::command(async)]
#[specta::specta]
pub fn follow_session(
    startup: State<'_, Startup>,
    follower: State<'_, Follower>,
    id: String,
) -> Result<flame_api::FollowOutcome, ApiError> {
    let outcome = startup.flame()?.follow_named(
        Actor::Person,
        &follower.homes,
        &flame_api::Agent::ALL,
        &id,
    )?;
    follower.refresh();
    Ok(outcome)
}

/// Stops following session `id`; its tree is kept.
#[tauri::command]
#[specta::specta]
pub fn unfollow_session(
    startup: State<'_, Startup>,
    follower: State<'_, Follower>,
    id: String,
) -> Result<bool, ApiError> {
    let was = startup.flame()?.unfollow(&id)?;
    follower.refresh();
    Ok(was)
}

/// Follows every new session of `agent` from now on (`on`), or no longer.
#[tauri::command]
#[specta::specta]
pub fn follow_agent(
    startup: State<'_, Startup>,
    follower: State<'_, Follower>,
    agent: flame_api::Agent,
    on: bool,
) -> Result<(), ApiError> {
    startup.flame()?.follow_agent(agent, on)?;
    follower.refresh();
    Ok(())
}
