//! The facade every Flame front end calls.
//!
//! The desktop shell and the command line both go through this crate: they resolve a
//! [`DataDir`], open a [`Flame`] on it, and call plain methods that return domain results or an
//! [`ApiError`]. The types here are the transport types: they derive `serde` and `specta::Type`
//! so that the desktop shell can generate their TypeScript twins.
//!
//! `Flame::open` creates the data directory, opens the store and repairs the logs a crash left
//! behind (`frame_log.rs`), and finishes as interrupted only the open replies whose writer is gone
//! (`process.rs`); replies other processes are streaming are left to them. Every operation takes an
//! `Actor`, gets its time, its new ids and the process replies are written as from `Env`
//! (`clock.rs`), runs one store transaction, then brings the touched frames' logs up to date.
//! `DataDir::from_env` and `agent_homes_from_env` (`data_dir.rs`) are the only places the facade
//! reads the process environment.
//!
//! Costs, the checkpoint cap and `keep_tool_results` come from the front end, since the facade
//! knows no settings file: a `FlameConfig` passed to `Flame::open` and replaced whole by
//! `Flame::reconfigure` (`config.rs`). `Flame::offer_sample_tree` (`sample.rs`) is called by the
//! desktop shell when it opens, not by the command line. `Flame::import_file` (`import.rs`) cuts a
//! message over `flame_store::MAX_MESSAGE_BYTES` to fit, with a closing note, before storing it
//! (`Draft::cut_long_messages`), and its summary's problems end with "and N more" when some were
//! only counted.

mod budget;
mod calls;
mod checkpoints;
mod clock;
mod command_place;
mod config;
mod cost;
mod data_dir;
mod error;
mod export;
mod follow;
pub mod frame_log;
mod frames;
mod gateway;
mod import;
mod instructions;
pub mod logging;
mod outline;
mod path_frames;
mod process;
mod sample;
mod search;
mod settled_messages;
mod subtree_trails;
pub mod window_paths;
mod workspace;
mod workspace_call;

use std::sync::{Mutex, MutexGuard};

use flame_store::Store;
use serde::Serialize;

pub use budget::BudgetView;
pub use checkpoints::{
    ChangedFile, CheckpointStorage, Checkpointed, DEFAULT_CHECKPOINT_CAP_BYTES, FileChangeKind,
    FrameChanges, RollbackOffer, RollbackOutcome,
};
pub use clock::Env;
pub use command_place::RunApproval;
pub use config::FlameConfig;
pub use data_dir::{DataDir, DataDirSource, agent_homes_from_env};
pub use error::{ApiError, ErrorCode};
pub use export::{
    ExportFormat, ExportProgress, ExportScope, ExportSummary, expand_home, resolve_export_path,
};
pub use flame_context::{
    Budget, CacheEconomics, CachePolicy, ContextDoc, ContextReport, OpeningReport,
};
pub use flame_follow::{AgentHomes, WatchSignal};
pub use flame_import::flame_json::Export;
pub use flame_import::replay::{CacheTokens, CallRow, Replay, ReplayOptions, ReplayProvider};
pub use flame_store::ReplyOwner;
pub use follow::{
    AbsentFolder, Agent, FlameContextCost, FollowOutcome, FollowerNews, MAX_COSTED_SESSIONS,
    SessionEntry, SessionList, flame_context_cost, session_id,
};
pub use frames::{
    DEFAULT_BUDGET, DEFAULT_ENCODING, DeletedTree, EarlierMessages, FrameDetail, FrameEntry,
    FrameView, MESSAGE_PAGE, PlanSpec, PopRequest, TreeListEntry, TreeOutline, TreeStatus,
};
pub use gateway::{
    GATEWAY_AGENTS, GatewayCall, GatewayReport, GatewaySavings, GatewaySession, GatewaySessionView,
    Rewrite, StoredDraft,
};
pub use import::{ImportFormat, ImportProgress, ImportSummary, SkippedRecords, replay_file};
pub use outline::{
    FoldedSubtrees, OutlineColumns, OutlinePreview, PREVIEW_FROM_FRAMES, PREVIEW_MAX_FRAMES,
};
pub use search::{
    DEFAULT_SEARCH_HITS, MAX_SEARCH_HITS, MAX_SEARCH_QUERY_CHARS, MAX_SEARCH_WORDS, SearchHit,
    SearchPlace, SnippetPart,
};
pub use workspace::{MAX_OUTPUT_NAME_CHARS, check_workspace};
pub use workspace_call::{
    Answer, Approval, ApprovalPolicy, CallInFrame, CallOutcome, CallResult, CommandRunner,
    MAX_REFUSAL_BYTES, PlacePreview, Preview, ToolOutcome, refusal_after_move, refusal_text,
};

/// How many events since a kept read (usage, subtree trails, the frames a context shows) was made
/// are followed to bring it up to date; past that many it is read again whole, which is then
/// cheaper.
const MAX_EVENTS_FOLLOWED: u32 = 2_000;

/// The database schema this Flame writes.
pub const SCHEMA_VERSION: u32 = flame_store::LATEST_SCHEMA_VERSION;

/// Flame's version, as every front end reports it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// An open Flame: a data directory and its store.
#[derive(Debug)]
pub struct Flame {
    data_dir: DataDir,
    // One connection behind a mutex is enough while every operation is short; the store's own
    // busy timeout handles other processes.
    store: Mutex<Store>,
    env: Mutex<Env>,
    /// The checkpoint cap, the tool results sent in full and the prices (`reconfigure`).
    config: config::Config,
    /// The recorded usage of the tree whose costs were last read, kept up to date.
    usage: cost::UsageCache,
    /// The files the finished frames' subtrees of the tree last assembled for touched, kept up
    /// to date.
    subtree_trails: subtree_trails::SubtreeTrails,
    /// The settled messages of the frame last assembled for.
    settled_messages: settled_messages::SettledMessages,
    /// The frames shown in the context last assembled, and their log paths.
    path_frames: path_frames::PathFrames,
    /// The parts of the contexts assembled (frames' XML, masked messages) kept for the next.
    kept_parts: Mutex<path_frames::KeptContext>,
    /// The current tree's outline read while the window started, for its first ask.
    outline_ahead: outline::OutlineAhead,
    /// The cache policy of the last call prepared, which the context's preview assumes.
    last_policy: calls::LastPolicy,
    /// The stored context of the frame last assembled for, parsed.
    kept_context: calls::KeptFrameContext,
    /// The followed sessions' readers.
    following: follow::Following,
    /// Flame's folders besides the data directory that the front ends named (`add_own_folders`):
    /// no workspace may lie in one or hold one.
    own_folders: Mutex<Vec<std::path::PathBuf>>,
    /// The sandbox workspace commands run in (`use_sandbox`), and whether its absence was said.
    sandbox_slot: command_place::SandboxSlot,
}

/// What the front ends show about the running Flame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct AppInfo {
    /// Flame's version.
    pub version: String,
    /// The data directory in use, absolute.
    pub data_dir: String,
    /// Where the data directory setting came from.
    pub data_dir_source: DataDirSource,
    /// The SQLite database inside the data directory.
    pub database_path: String,
    /// The schema version the database is at.
    pub schema_version: u32,
}

impl Flame {
    /// Creates the data directory if needed, opens (creating or migrating) its database,
    /// finishes the replies a stopped process left open, and repairs any frame log a crash left
    /// behind; it works with `config` (the person's settings') and gets time and ids from the
    /// system.
    pub fn open(data_dir: DataDir, config: FlameConfig) -> Result<Flame, ApiError> {
        Flame::open_with(data_dir, config, Env::system())
    }

    /// [`Flame::open`] with the given sources of time and ids.
    pub fn open_with(data_dir: DataDir, config: FlameConfig, env: Env) -> Result<Flame, ApiError> {
        Flame::open_inner(data_dir, config, env, false)
    }

    /// [`Flame::open`] for a front end that shows what it reads at once (the window): the
    /// database's quick check, which reads every page (2.3 s for a 100k-frame store), is left to
    /// run when the front end asks ([`Flame::check_damage`], on a thread of its own) or before
    /// the first write, whichever comes first; every write waits for it, a damaged file is never
    /// written, and each write is refused with what the check found
    /// (`flame_store::DamageCheck`). A database that must be migrated is checked first, as by
    /// [`Flame::open`].
    pub fn open_checking_aside(data_dir: DataDir, config: FlameConfig) -> Result<Flame, ApiError> {
        Flame::open_inner(data_dir, config, Env::system(), true)
    }

    fn open_inner(
        data_dir: DataDir,
        config: FlameConfig,
        env: Env,
        check_aside: bool,
    ) -> Result<Flame, ApiError> {
        data_dir.create()?;
        let path = data_dir.database_path();
        let mut store = if check_aside {
            Store::open_checking_aside(&path).map_err(ApiError::from_open)?
        } else {
            Store::open(&path).map_err(ApiError::from_open)?
        };
        let mut env = env;
        // Only replies whose writer has stopped: another process may be streaming one now.
        match frames::close_open_replies(&mut store, env.now(), process::probe) {
            Ok(0) => {}
            Ok(closed) => tracing::info!(
                closed,
                "kept the replies a stopped process was streaming, marked interrupted"
            ),
            Err(err) => tracing::warn!("could not close replies left open: {err}"),
        }
        match frame_log::sync_pending(&mut store, data_dir.path()) {
            Ok(0) => {}
            Ok(repaired) => {
                tracing::info!(repaired, "brought frame logs up to date with the database")
            }
            Err(err) => tracing::warn!("frame logs could not be repaired: {err:#}"),
        }
        tracing::info!(data_dir = %data_dir.path().display(), "Flame opened");
        Ok(Flame {
            data_dir,
            store: Mutex::new(store),
            env: Mutex::new(env),
            config: config::Config::new(config),
            usage: cost::UsageCache::default(),
            subtree_trails: subtree_trails::SubtreeTrails::default(),
            settled_messages: settled_messages::SettledMessages::default(),
            path_frames: path_frames::PathFrames::default(),
            kept_parts: Mutex::default(),
            outline_ahead: outline::OutlineAhead::default(),
            last_policy: calls::LastPolicy::default(),
            kept_context: calls::KeptFrameContext::default(),
            following: follow::Following::default(),
            own_folders: Mutex::default(),
            sandbox_slot: command_place::SandboxSlot::default(),
        })
    }

    /// The data directory this Flame works in.
    pub fn data_dir(&self) -> &DataDir {
        &self.data_dir
    }

    /// The running Flame's version, data directory and database, read from the store.
    pub fn info(&self) -> Result<AppInfo, ApiError> {
        self.damage()?;
        let store = self.store();
        let schema_version =
            store.schema_version().map_err(|e| ApiError::internal("read the schema version", e))?;
        Ok(AppInfo {
            version: VERSION.to_owned(),
            data_dir: self.data_dir.path().display().to_string(),
            data_dir_source: self.data_dir.source(),
            database_path: store.path().display().to_string(),
            schema_version,
        })
    }

    /// Runs the database's quick check if it has not run (see [`Flame::open_checking_aside`]),
    /// or waits for it: what it found. It takes the store only to copy its check, so reads go on
    /// meanwhile.
    pub fn check_damage(&self) -> Result<(), ApiError> {
        let check = self.store().damage_check().clone();
        check.run().map_err(|err| ApiError::from_open_ref(&err))
    }

    /// What the database's quick check found, once it has run: `info` reports a damaged file
    /// found after a window opened on it.
    fn damage(&self) -> Result<(), ApiError> {
        match self.store().damage_check().outcome() {
            Some(Err(err)) => Err(ApiError::from_open_ref(&err)),
            _ => Ok(()),
        }
    }

    fn store(&self) -> MutexGuard<'_, Store> {
        // A panic while the lock was held cannot leave the store half-written (every write is
        // one SQLite transaction), so a poisoned lock is safe to take over.
        self.store.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn env(&self) -> MutexGuard<'_, Env> {
        self.env.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How many of a frame's newest tool results its context sends whole (the settings'
    /// `keep_tool_results`), for a front end that assembles contexts of its own (the gateway).
    pub fn keep_tool_results(&self) -> usize {
        self.config.keep_tool_results()
    }

    /// The time by the facade's clock (its `Env`): what a front end that keeps time of its own
    /// (the gateway's calls) reads, so that a test's fixed clock reaches it too.
    pub fn now(&self) -> flame_model::Timestamp {
        self.env().now()
    }
}
