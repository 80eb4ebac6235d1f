//! Following other agents' sessions: Claude Code's, Codex's and OpenCode's, each kept in step
//! with its files in a tree of its own.
//!
//! [`Flame::sessions`] lists the sessions the agents keep (`flame_follow::list_sessions`) with
//! each one's recorded cost and whether Flame follows it. [`Flame::follow`] starts following one;
//! [`Flame::sync_followed`] reads what its files gained since the last read
//! (`flame_follow::LiveSession`) and stores it in one transaction: its first read that holds a
//! message as an import, each later one as the frames and messages that are new and the frames
//! the source changed (`flame_store`'s `follow.rs`), found by the key each draft frame carries.
//! A read that fails (a file gone, replaced by a folder, a database locked) stores nothing and
//! leaves its reason on the session's row; the tree keeps what was read before. A file truncated
//! or replaced is read again from its start into the same tree: its frames are made anew under
//! the root, with the session's next generation in their keys, in one transaction.
//!
//! [`Flame::run_follower`] is the loop a front end runs on a thread: it reads every followed
//! session, then waits on file-system notifications (`flame_follow::Watcher`) and reads the
//! sessions whose files changed, and the new sessions of agents followed whole. An agent's folder
//! that does not exist yet is watched for from the nearest folder above it that does
//! (`AgentHomes::folders_to_watch`), so the agent's first session is followed once it writes it;
//! the front end hears which folders are awaited each time the follower waits
//! ([`FollowerNews::Waiting`]).
//!
//! What Flame's own context would have cost on a session's calls is [`flame_context_cost`]:
//! `flame_import::replay` of the session's draft, priced at the session's own model under its
//! provider's prompt cache.
//!
//! The listing's recorded cost of a followed session comes from its tree, another's from reading it
//! whole, for at most `MAX_COSTED_SESSIONS` sessions; Flame's cost is given per followed frame by
//! draft key, and is "not available", with the reason, for a model without a price. The first read
//! is stored with `Store::import_followed`, which does not make the tree current; later reads with
//! `Store::follow_update`, which skips a message the store's count says is stored (so two processes
//! store each once) and refuses a read that would break `FrameTree::check_invariants`; both store
//! the files' cursors (device, inode, offset). Lines that could not be read are named on the
//! session's row too.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use flame_follow::{
    AgentHomes, Cursor, FileIdentity, FollowError, FoundSession, LiveSession, WatchSignal, Watcher,
};
use flame_import::{Draft, ImportOptions, ROOT_KEY};
use flame_model::cost::{CostSummary, CostTotal, ModelUsage, PriceTable};
use flame_model::{Actor, FileTrail, Frame, FrameError, FrameId, Timestamp, TreeId};
use flame_store::{
    FollowCursor, FollowFrameChange, FollowMessage, FollowNewFrame, FollowUpdate, FollowedSession,
};
use serde::Serialize;

pub use flame_follow::Agent;

use crate::frames::with_fresh_ids;
use crate::{ApiError, ErrorCode, Flame};

/// How many of the listed sessions that Flame does not follow get their recorded cost, most
/// recently active first: each is read whole to add it up.
pub const MAX_COSTED_SESSIONS: usize = 200;

/// How long the follower waits, after a change, for more changes of the same write before it
/// reads: an agent writes a burst of lines at once, and one read takes them all.
const SETTLE: Duration = Duration::from_millis(15);

/// A session an agent keeps, as the Sessions view and `flame sessions` show it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct SessionEntry {
    /// `<agent>:<the agent's id of the session>`: what `flame follow` and the window name it by.
    pub id: String,
    pub agent: Agent,
    /// The agent's id of the session.
    pub session: String,
    /// Its main file, or the OpenCode database that holds it.
    pub source: String,
    /// The folder the agent worked in.
    pub project: Option<String>,
    pub first_request: Option<String>,
    /// Milliseconds since the epoch.
    pub last_activity: Option<Timestamp>,
    /// Bytes of its files (or rows).
    pub size: u64,
    /// What its recorded model calls cost, cache reads and writes priced; `None` when it was not
    /// read (past [`MAX_COSTED_SESSIONS`], or unreadable).
    pub recorded_cost: Option<CostSummary>,
    /// What Flame's own context would have cost on the same calls.
    pub flame_cost: FlameContextCost,
    pub followed: bool,
    /// Its tree, once followed and holding a message.
    pub tree: Option<TreeId>,
    /// What the last read of a followed session could not do.
    pub problem: Option<String>,
    /// When a read of a followed session last went well.
    pub synced_at: Option<Timestamp>,
}

/// The sessions the agents keep.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct SessionList {
    /// Most recently active first; followed sessions whose files are gone are listed too.
    pub sessions: Vec<SessionEntry>,
    /// Agents whose every new session is followed.
    pub followed_agents: Vec<Agent>,
    /// Folders and files that could not be read.
    pub problems: Vec<String>,
    /// Sessions past the listing's limit, not listed.
    pub unlisted: u64,
    /// The sessions the gateway recorded calls of, with what they cost and would have cost.
    pub gateway: Vec<crate::GatewaySessionView>,
}

/// What Flame's context would have cost on a session's recorded calls, under each provider's
/// cache rules (issue 29's replay priced in dollars).
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FlameContextCost {
    /// Not worked out, and why.
    NotAvailable { reason: String },
    /// The whole session's and each frame's.
    Priced { session: CostSummary, frames: Vec<(FrameId, CostSummary)> },
}

/// What one read of a followed session did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct FollowOutcome {
    pub id: String,
    pub tree: Option<TreeId>,
    /// Frames added, frames changed, and messages added by this read.
    pub frames: u64,
    pub changed: u64,
    pub messages: u64,
    /// Why the files were read again from their start, when they were.
    pub restarted: Option<String>,
    /// What the read could not do (nothing was stored then).
    pub problem: Option<String>,
    /// A budget of the followed tree that its replies have spent, in words. Flame does not
    /// drive the followed agent, so it can only warn.
    pub budget_notice: Option<String>,
}

impl FollowOutcome {
    /// Whether the read stored anything.
    pub fn stored(&self) -> bool {
        self.frames + self.changed + self.messages > 0
    }
}

/// What the follower ([`Flame::run_follower`]) tells the front end that runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FollowerNews<'a> {
    /// A followed session was read.
    Read(&'a FollowOutcome),
    /// Every change heard of so far is read, and the follower waits for the next; `absent` are
    /// the folders of agents followed whole that do not exist yet, each watched for from the
    /// folder above it.
    Waiting { absent: &'a [AbsentFolder] },
}

/// The folder of an agent followed whole that does not exist yet (a new machine, a new
/// `CLAUDE_CONFIG_DIR`): its first session is followed once the agent makes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AbsentFolder {
    pub agent: Agent,
    /// Where the agent will keep its sessions.
    pub folder: PathBuf,
    /// The nearest folder above it that exists, watched for it to be made.
    pub watched: Option<PathBuf>,
}

/// The followed sessions' readers, kept between reads so a read takes only what is new.
#[derive(Debug, Default)]
pub(crate) struct Following {
    live: Mutex<HashMap<String, LiveSession>>,
}

/// The id Flame gives a session of `agent`.
pub fn session_id(agent: Agent, session: &str) -> String {
    session_id_of(agent.as_str(), session)
}

/// The id Flame gives a session of the agent named `agent` (`claude-code`, or `other` for a
/// client of the gateway it cannot name).
pub(crate) fn session_id_of(agent: &str, session: &str) -> String {
    format!("{agent}:{session}")
}

/// The key a draft frame is stored under in `generation` (every frame of a session read again
/// from its start is new, but the root, which stays the tree's root).
fn keyed(key: &str, generation: u32) -> String {
    if generation == 0 { key.to_owned() } else { format!("{generation}/{key}") }
}

/// OpenCode's database read through the store (the crate that opens SQLite), as the
/// importer's rows; or the older `storage/` folder, read by the importer.
fn read_opencode(path: &Path) -> Result<flame_import::opencode::Rows, String> {
    if path.is_dir() {
        return flame_import::opencode::read_storage(path, &mut |_| {}).map_err(|e| e.to_string());
    }
    flame_store::foreign::read_opencode_db(path)
        .map(crate::import::opencode_rows)
        .map_err(|err| describe_foreign(&err))
}

/// What a person is told when OpenCode's database cannot be read.
fn describe_foreign(err: &flame_store::foreign::ForeignError) -> String {
    let text = err.to_string();
    if text.contains("locked") || text.contains("busy") {
        format!(
            "{text}: OpenCode holds its database locked (writing it, or migrating it); it is read again at its next change"
        )
    } else if text.contains("no such table") || text.contains("no such column") {
        format!(
            "{text}: the database is not in a shape Flame reads (OpenCode may be migrating it); it is read again at its next change"
        )
    } else {
        text
    }
}

/// The usage a draft's messages recorded, by model.
fn draft_usage(draft: &Draft) -> Vec<ModelUsage> {
    let mut by_model: Vec<ModelUsage> = Vec::new();
    for m in &draft.messages {
        let Some(u) = m.message.usage else { continue };
        let model = m.message.model.clone();
        match by_model.iter_mut().find(|x| x.model == model) {
            Some(x) => {
                x.usage.input_tokens = x.usage.input_tokens.saturating_add(u.input_tokens);
                x.usage.output_tokens = x.usage.output_tokens.saturating_add(u.output_tokens);
                x.usage.cache_read_tokens =
                    x.usage.cache_read_tokens.saturating_add(u.cache_read_tokens);
                x.usage.cache_write_tokens =
                    x.usage.cache_write_tokens.saturating_add(u.cache_write_tokens);
            }
            None => by_model.push(ModelUsage { model, usage: u }),
        }
    }
    by_model
}

impl Flame {
    /// The sessions of `agents` that `homes` hold, and the followed sessions no longer there.
    pub fn sessions(&self, homes: &AgentHomes, agents: &[Agent]) -> Result<SessionList, ApiError> {
        let listing = flame_follow::list_sessions(homes, agents, &read_opencode);
        let (followed, followed_agents) = {
            let store = self.store();
            (store.followed_sessions()?, store.followed_agents()?)
        };
        let prices = self.prices();
        let mut costed = 0;
        let mut sessions: Vec<SessionEntry> = Vec::with_capacity(listing.sessions.len());
        for found in &listing.sessions {
            let id = session_id(found.agent, &found.id);
            let row = followed.iter().find(|f| f.id == id);
            let tree = row.and_then(|r| r.tree.as_ref());
            let (recorded_cost, flame_cost) = if costed < MAX_COSTED_SESSIONS {
                costed += 1;
                let draft = session_draft(found);
                let recorded = match tree {
                    Some(tree) => self.tree_cost(tree).ok(),
                    None => draft.as_ref().map(|d| draft_cost(d, &prices)),
                };
                let frames = match tree {
                    Some(_) => self.followed_frame_ids(&id)?,
                    None => HashMap::new(),
                };
                (recorded, flame_context_cost(draft.as_ref(), &prices, &frames))
            } else {
                let reason = format!("not read: past the first {MAX_COSTED_SESSIONS} sessions");
                (
                    tree.and_then(|t| self.tree_cost(t).ok()),
                    FlameContextCost::NotAvailable { reason },
                )
            };
            sessions.push(entry(found, id, row, recorded_cost, flame_cost));
        }
        // Followed sessions the listing did not find: deleted, moved, or of an agent not asked.
        for row in &followed {
            let Some(agent) = Agent::parse(&row.agent) else { continue };
            if !agents.contains(&agent) || sessions.iter().any(|s| s.id == row.id) {
                continue;
            }
            let found = recorded_session(agent, row);
            let cost = row.tree.as_ref().and_then(|t| self.tree_cost(t).ok());
            let flame = flame_context_cost(None, &prices, &HashMap::new());
            sessions.push(entry(&found, row.id.clone(), Some(row), cost, flame));
        }
        Ok(SessionList {
            sessions,
            followed_agents: followed_agents
                .iter()
                .filter_map(|(agent, _)| Agent::parse(agent))
                .collect(),
            problems: listing.problems,
            unlisted: listing.unlisted,
            gateway: self.gateway_overview()?,
        })
    }

    /// The whole recorded cost of a tree: its root's subtree.
    fn tree_cost(&self, tree: &TreeId) -> Result<CostSummary, ApiError> {
        let root = self.store().tree(tree)?.root;
        Ok(self.frame_cost(&root)?.subtree)
    }

    /// The stored frames of the followed session `id`, by their draft keys.
    fn followed_frame_ids(&self, id: &str) -> Result<HashMap<String, FrameId>, ApiError> {
        Ok(self.store().followed_frames(id)?.into_iter().map(|f| (f.key, f.frame)).collect())
    }

    /// What Flame's own context would have cost on the recorded calls of the followed session
    /// `id` (per frame of its tree, and for the whole session): [`flame_context_cost`] on the
    /// session's files read whole.
    pub fn flame_context_cost(&self, id: &str) -> Result<FlameContextCost, ApiError> {
        let row = self.store().followed_session(id)?.ok_or_else(|| {
            ApiError::new(ErrorCode::NotFound, format!("Flame does not follow the session {id}"))
        })?;
        let Some(agent) = Agent::parse(&row.agent) else {
            let reason = format!("{} is not an agent Flame reads", row.agent);
            return Ok(FlameContextCost::NotAvailable { reason });
        };
        let found = recorded_session(agent, &row);
        let frames = self.followed_frame_ids(id)?;
        Ok(flame_context_cost(session_draft(&found).as_ref(), &self.prices(), &frames))
    }

    /// The session `spec` names, among those of `agents` in `homes`: its Flame id
    /// (`codex:<id>`), the agent's id of it, or the path of its main file (which may be
    /// anywhere). Returns its agent, main file (or database) and the agent's id of it.
    pub fn find_session(
        &self,
        homes: &AgentHomes,
        agents: &[Agent],
        spec: &str,
    ) -> Result<(Agent, PathBuf, String), ApiError> {
        let path = Path::new(spec);
        if path.is_file() {
            let agent = match flame_import::detect(path) {
                Ok(flame_import::Format::ClaudeCode) => Agent::ClaudeCode,
                Ok(flame_import::Format::Codex) => Agent::Codex,
                _ => {
                    return Err(ApiError::new(
                        ErrorCode::Invalid,
                        format!(
                            "{spec} is neither a Claude Code session nor a Codex rollout; name an OpenCode session by its id (flame sessions --agent opencode lists them)"
                        ),
                    ));
                }
            };
            let format = match agent {
                Agent::Codex => flame_import::live::LiveFormat::Codex,
                _ => flame_import::live::LiveFormat::ClaudeCode,
            };
            let head = flame_import::live::head(format, path, flame_follow::MAX_HEAD_BYTES)
                .map_err(|e| ApiError::new(ErrorCode::Invalid, format!("{spec}: {e}")))?;
            let stem =
                path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            let source = std::path::absolute(path)
                .map_err(|e| ApiError::new(ErrorCode::Invalid, format!("{spec}: {e}")))?;
            return Ok((agent, source, head.id.unwrap_or(stem)));
        }
        let listing = flame_follow::list_sessions(homes, agents, &read_opencode);
        let matches: Vec<&FoundSession> = listing
            .sessions
            .iter()
            .filter(|f| session_id(f.agent, &f.id) == spec || f.id == spec)
            .collect();
        match matches.as_slice() {
            [found] => Ok((found.agent, found.source.clone(), found.id.clone())),
            [] => Err(ApiError::new(
                ErrorCode::NotFound,
                format!(
                    "no session {spec} among the sessions of {}: flame sessions lists them",
                    names(agents)
                ),
            )),
            _ => Err(ApiError::new(
                ErrorCode::Invalid,
                format!("{spec} names sessions of several agents; name one as AGENT:{spec}"),
            )),
        }
    }

    /// Starts following the session `spec` names (see [`Flame::find_session`]) and reads it.
    pub fn follow_named(
        &self,
        actor: Actor,
        homes: &AgentHomes,
        agents: &[Agent],
        spec: &str,
    ) -> Result<FollowOutcome, ApiError> {
        let (agent, source, session) = self.find_session(homes, agents, spec)?;
        self.follow(actor, agent, &source, &session)
    }

    /// Starts following the session `session` of `agent` whose main file (or OpenCode
    /// database) is `source`, and reads it.
    pub fn follow(
        &self,
        actor: Actor,
        agent: Agent,
        source: &Path,
        session: &str,
    ) -> Result<FollowOutcome, ApiError> {
        let source = std::path::absolute(source)
            .map_err(|e| ApiError::new(ErrorCode::Invalid, format!("{}: {e}", source.display())))?;
        let id = session_id(agent, session);
        let at = self.env().now();
        self.store().follow_session(
            at,
            &id,
            agent.as_str(),
            session,
            &source.display().to_string(),
        )?;
        self.sync_followed(actor, &id)
    }

    /// Stops following a session; its tree is kept. Returns whether it was followed.
    pub fn unfollow(&self, id: &str) -> Result<bool, ApiError> {
        self.following.live.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
        Ok(self.store().unfollow_session(id)?)
    }

    /// Follows every new session of `agent` from now on (`on`), or no longer.
    pub fn follow_agent(&self, agent: Agent, on: bool) -> Result<(), ApiError> {
        let at = self.env().now();
        Ok(self.store().set_followed_agent(agent.as_str(), on.then_some(at))?)
    }

    /// The followed sessions as the store keeps them.
    pub fn followed_sessions(&self) -> Result<Vec<FollowedSession>, ApiError> {
        Ok(self.store().followed_sessions()?)
    }

    /// Reads what a followed session's files gained since the last read and stores it, in one
    /// transaction. A read that fails stores nothing and leaves its reason on the session's row
    /// (and in the outcome); only a session that is not followed is an error.
    pub fn sync_followed(&self, actor: Actor, id: &str) -> Result<FollowOutcome, ApiError> {
        let row = self.store().followed_session(id)?.ok_or_else(|| {
            ApiError::new(ErrorCode::NotFound, format!("Flame does not follow the session {id}"))
        })?;
        let recorded_by_gateway = row.source == flame_store::GATEWAY_SOURCE;
        let mut outcome = FollowOutcome {
            id: id.to_owned(),
            tree: row.tree.clone(),
            frames: 0,
            changed: 0,
            messages: 0,
            restarted: None,
            problem: None,
            budget_notice: None,
        };
        if recorded_by_gateway {
            // The gateway records this session from its requests (`gateway.rs`): its files, if
            // any, would make the same tree a second time.
            return Ok(outcome);
        }
        let mut live_sessions = self.following.live.lock().unwrap_or_else(|p| p.into_inner());
        let mut generation = row.generation;
        if !live_sessions.contains_key(id) {
            let Some(agent) = Agent::parse(&row.agent) else {
                return Err(ApiError::internal("read a followed session", &row.agent));
            };
            let options = ImportOptions { segment: true, session: Some(row.session.clone()) };
            let live = LiveSession::new(agent, Path::new(&row.source), &row.session, options);
            // The files must still be the ones the store's cursors were read from.
            let cursors: Vec<Cursor> = self
                .store()
                .follow_cursors(id)?
                .into_iter()
                .map(|c| Cursor {
                    path: PathBuf::from(c.path),
                    identity: FileIdentity { device: c.device, inode: c.inode },
                    offset: c.offset,
                })
                .collect();
            if let Err(why) = LiveSession::check(&cursors) {
                generation += 1;
                outcome.restarted = Some(why);
            }
            live_sessions.insert(id.to_owned(), live);
        }
        let live = live_sessions.get_mut(id).expect("just inserted");
        let synced = match live.sync(&read_opencode) {
            Ok(synced) => synced,
            Err(err) => {
                let problem = match err {
                    FollowError::Gone(why) | FollowError::Unreadable(why) => why,
                };
                return self.record_problem(outcome, problem);
            }
        };
        if let Some(why) = synced.restarted {
            if outcome.restarted.is_none() {
                generation += 1;
            }
            outcome.restarted = Some(why);
        }
        // Lines that could not be read are the session's problem to show, though the rest of
        // it is stored.
        let unread = unread(&synced.report, synced.draft.is_none());
        let Some(mut draft) = synced.draft else {
            let at = self.env().now();
            self.store().set_follow_problem(id, at, unread.as_deref())?;
            outcome.problem = unread;
            return Ok(outcome);
        };
        draft.cut_long_messages(flame_store::MAX_MESSAGE_BYTES);
        let cursors: Vec<FollowCursor> = synced
            .cursors
            .iter()
            .map(|c| FollowCursor {
                path: c.path.display().to_string(),
                device: c.identity.device,
                inode: c.identity.inode,
                offset: c.offset,
            })
            .collect();
        let stored = match &row.tree {
            None => self.store_first_read(actor, id, &draft, &cursors).map(|tree| {
                outcome.tree = Some(tree);
                (draft.frames.len() as u64, 0, draft.messages.len() as u64)
            }),
            Some(tree) => self.store_later_read(actor, id, tree, generation, &draft, cursors),
        };
        match stored {
            Ok((frames, changed, messages)) => {
                outcome.frames = frames;
                outcome.changed = changed;
                outcome.messages = messages;
                if let Some(tree) = outcome.tree.as_ref().filter(|_| messages > 0) {
                    outcome.budget_notice = self.spent_budget_notice(tree)?;
                }
                if unread.is_some() {
                    let at = self.env().now();
                    self.store().set_follow_problem(id, at, unread.as_deref())?;
                    outcome.problem = unread;
                }
                Ok(outcome)
            }
            Err(err) => {
                // The readers may be ahead of what is stored now: read the files again next time.
                live_sessions.remove(id);
                self.record_problem(outcome, err.message)
            }
        }
    }

    fn record_problem(
        &self,
        mut outcome: FollowOutcome,
        problem: String,
    ) -> Result<FollowOutcome, ApiError> {
        let at = self.env().now();
        self.store().set_follow_problem(&outcome.id, at, Some(&problem))?;
        outcome.problem = Some(problem);
        Ok(outcome)
    }

    /// Stores a session's first read that holds a message as a new tree.
    pub(crate) fn store_first_read(
        &self,
        actor: Actor,
        id: &str,
        draft: &Draft,
        cursors: &[FollowCursor],
    ) -> Result<TreeId, ApiError> {
        self.write(actor, |store, change, env| {
            with_fresh_ids(|| {
                let tree = draft.materialise(&mut env.ids).map_err(|e| {
                    FrameError::Invalid(format!("the session's tree is not valid: {e}"))
                })?;
                let messages = crate::import::imported_messages(draft);
                let mut counts = vec![0u64; draft.frames.len()];
                for m in &draft.messages {
                    counts[m.frame] += 1;
                }
                let keys: Vec<(String, u64)> =
                    draft.frames.iter().map(|f| f.key.clone()).zip(counts).collect();
                store.import_followed(
                    change,
                    id,
                    &tree.tree,
                    &tree.frames,
                    &messages,
                    &tree.trails,
                    &keys,
                    cursors,
                )?;
                store.defer_imported_logs(&tree.tree.id)?;
                Ok(tree.tree.id)
            })
        })
    }

    /// Stores what a later read found beyond what the store holds.
    pub(crate) fn store_later_read(
        &self,
        actor: Actor,
        id: &str,
        tree: &TreeId,
        generation: u32,
        draft: &Draft,
        cursors: Vec<FollowCursor>,
    ) -> Result<(u64, u64, u64), ApiError> {
        let (held, frames) = {
            let store = self.store();
            let held: HashMap<String, (FrameId, u64)> = store
                .followed_frames(id)?
                .into_iter()
                .map(|f| (f.key, (f.frame, f.messages)))
                .collect();
            let frames: HashMap<FrameId, Frame> =
                store.frames_of_tree(tree)?.into_iter().map(|f| (f.id.clone(), f)).collect();
            (held, frames)
        };
        let stored = self.write(actor, |store, change, env| {
            let mut update = FollowUpdate {
                session: id.to_owned(),
                tree: Some(tree.clone()),
                generation: Some(generation),
                cursors: cursors.clone(),
                ..FollowUpdate::default()
            };
            let mut ids: Vec<FrameId> = Vec::with_capacity(draft.frames.len());
            let mut counts: Vec<u64> = Vec::with_capacity(draft.frames.len());
            for (i, d) in draft.frames.iter().enumerate() {
                let key = keyed(&d.key, generation);
                let (frame, count) = match held.get(&key) {
                    Some((frame, count)) => (frame.clone(), *count),
                    None if d.parent.is_none() => {
                        // A new generation's root is the tree's root, with a key of its own
                        // for the messages this generation reads into it.
                        let (root, _) = held.get(ROOT_KEY).ok_or_else(|| {
                            FrameError::Invalid("the followed session's root is not stored".into())
                        })?;
                        update.new_frames.push(FollowNewFrame {
                            key: key.clone(),
                            frame: frames.get(root).cloned().ok_or_else(|| {
                                FrameError::Invalid("the followed session's root is gone".into())
                            })?,
                        });
                        (root.clone(), 0)
                    }
                    None => {
                        let parent =
                            d.parent.and_then(|p| ids.get(p)).cloned().ok_or_else(|| {
                                FrameError::Invalid(format!(
                                    "frame {i} of the session comes before its parent"
                                ))
                            })?;
                        let mut frame = Frame::new(
                            env.ids.frame_id(),
                            tree.clone(),
                            Some(parent),
                            0,
                            d.title.clone(),
                            d.criteria.clone(),
                            d.status,
                            d.created_at,
                        );
                        frame.status_reason = d.status_reason.clone();
                        frame.results = d.results.clone();
                        frame.started_at = d.started_at;
                        frame.ended_at = d.ended_at;
                        update.new_frames.push(FollowNewFrame { key, frame: frame.clone() });
                        (frame.id, 0)
                    }
                };
                if let Some(stored) = frames.get(&frame)
                    && (stored.title != d.title
                        || stored.success_criteria != d.criteria
                        || stored.status != d.status
                        || stored.status_reason != d.status_reason
                        || stored.results != d.results
                        || stored.ended_at != d.ended_at)
                {
                    update.changed_frames.push(FollowFrameChange {
                        frame: frame.clone(),
                        title: d.title.clone(),
                        criteria: d.criteria.clone(),
                        status: d.status,
                        status_reason: d.status_reason.clone(),
                        results: d.results.clone(),
                        ended_at: d.ended_at,
                    });
                }
                ids.push(frame);
                counts.push(count);
            }
            let mut ordinals = vec![0u64; draft.frames.len()];
            let mut new_messages: BTreeSet<usize> = BTreeSet::new();
            for (n, m) in draft.messages.iter().enumerate() {
                let ordinal = ordinals[m.frame];
                ordinals[m.frame] += 1;
                if ordinal < counts[m.frame] {
                    continue;
                }
                new_messages.insert(n);
                update.messages.push(FollowMessage {
                    key: keyed(&draft.frames[m.frame].key, generation),
                    frame: ids[m.frame].clone(),
                    ordinal,
                    message: (*m.message).clone(),
                    tokens: m.tokens,
                    at: m.at,
                });
            }
            let mut trails: HashMap<usize, (Vec<String>, Vec<String>)> = HashMap::new();
            for f in draft.files.iter().filter(|f| new_messages.contains(&f.message)) {
                let (read, changed) = trails.entry(f.frame).or_default();
                if f.changed { changed.push(f.path.clone()) } else { read.push(f.path.clone()) }
            }
            update.trails = trails
                .into_iter()
                .map(|(frame, (read, changed))| (ids[frame].clone(), FileTrail::new(read, changed)))
                .collect();
            update.focus = draft.focus.and_then(|f| ids.get(f)).cloned();
            store.follow_update(change, &update)
        })?;
        Ok((stored.frames, stored.changed, stored.messages))
    }

    /// Follows, until told to stop, every followed session: reads each once, then each whose
    /// files change, and follows the new sessions of the agents followed whole. It waits on
    /// file-system notifications between changes (`signals`, which the watcher it makes sends
    /// into through `sender`, as do callers: `Refresh` when the followed sessions changed, `Stop`
    /// to end). `on_news` hears of every read, and of every wait with the agents' folders that
    /// are awaited.
    pub fn run_follower(
        &self,
        actor: Actor,
        homes: &AgentHomes,
        sender: Sender<WatchSignal>,
        signals: &Receiver<WatchSignal>,
        on_news: &mut dyn FnMut(FollowerNews<'_>),
    ) -> Result<(), ApiError> {
        let mut watcher =
            Watcher::new(sender).map_err(|e| ApiError::new(ErrorCode::Internal, e))?;
        let mut pending: BTreeSet<String> = BTreeSet::new();
        let mut refresh = true;
        let mut look_for_new = true;
        loop {
            if refresh {
                pending.extend(self.followed_sessions()?.into_iter().map(|s| s.id));
                refresh = false;
            }
            if look_for_new {
                pending.extend(self.follow_new_sessions(actor, homes)?);
                look_for_new = false;
            }
            for id in std::mem::take(&mut pending) {
                match self.sync_followed(actor, &id) {
                    Ok(outcome) => on_news(FollowerNews::Read(&outcome)),
                    // Stopped following meanwhile.
                    Err(err) if err.code == ErrorCode::NotFound => {}
                    Err(err) => return Err(err),
                }
            }
            let (folders, absent) = self.watched_folders(homes)?;
            let (added, problems) = watcher.watch_only(&folders);
            for problem in problems {
                tracing::warn!("{problem}");
            }
            if !added.is_empty() {
                // What was written between a session's read and the watch of its folders is
                // read now: nothing will announce it.
                let live = self.following.live.lock().unwrap_or_else(|p| p.into_inner());
                pending.extend(
                    live.iter()
                        .filter(|(_, s)| s.folders().iter().any(|f| added.contains(f)))
                        .map(|(id, _)| id.clone()),
                );
                look_for_new = true;
                continue;
            }
            on_news(FollowerNews::Waiting { absent: &absent });
            let mut changed: Vec<PathBuf> = Vec::new();
            let mut first = true;
            loop {
                let signal = if first {
                    first = false;
                    match signals.recv() {
                        Ok(signal) => signal,
                        Err(_) => return Ok(()),
                    }
                } else {
                    match signals.recv_timeout(SETTLE) {
                        Ok(signal) => signal,
                        Err(RecvTimeoutError::Timeout) => break,
                        Err(RecvTimeoutError::Disconnected) => return Ok(()),
                    }
                };
                match signal {
                    WatchSignal::Changed(paths) => changed.extend(paths),
                    WatchSignal::Refresh => refresh = true,
                    WatchSignal::Stop => return Ok(()),
                    WatchSignal::Failed(why) => tracing::warn!("file notifications failed: {why}"),
                }
            }
            let live = self.following.live.lock().unwrap_or_else(|p| p.into_inner());
            for path in &changed {
                let mut known = false;
                for (id, session) in live.iter() {
                    if session.concerns(path) {
                        pending.insert(id.clone());
                        known = true;
                    }
                }
                // A change beside a folder watched for an agent's missing one (a home folder's
                // own files) is no new session: listing every agent's sessions again for it
                // would read them at every keystroke saved there.
                look_for_new |= !known && Agent::ALL.iter().any(|a| homes.on_the_way(*a, path));
            }
        }
    }

    /// The folders the follower watches — every followed session's, and where the agents
    /// followed whole write new sessions (`AgentHomes::folders_to_watch`) — and the agents'
    /// folders that do not exist yet.
    fn watched_folders(
        &self,
        homes: &AgentHomes,
    ) -> Result<(Vec<PathBuf>, Vec<AbsentFolder>), ApiError> {
        let mut folders: Vec<PathBuf> = Vec::new();
        for session in self.following.live.lock().unwrap_or_else(|p| p.into_inner()).values() {
            folders.extend(session.folders());
        }
        let mut absent = Vec::new();
        for (agent, _) in self.store().followed_agents()? {
            let Some(agent) = Agent::parse(&agent) else { continue };
            let folder = homes.of(agent);
            if !folder.is_dir() {
                let watched = flame_follow::nearest_folder(folder);
                absent.push(AbsentFolder { agent, folder: folder.to_owned(), watched });
            }
            folders.extend(homes.folders_to_watch(agent));
        }
        folders.sort();
        folders.dedup();
        Ok((folders, absent))
    }

    /// Follows the sessions of the agents followed whole that were active since they were, and
    /// are not followed yet; returns their ids.
    fn follow_new_sessions(
        &self,
        actor: Actor,
        homes: &AgentHomes,
    ) -> Result<Vec<String>, ApiError> {
        let agents = self.store().followed_agents()?;
        if agents.is_empty() {
            return Ok(Vec::new());
        }
        let wanted: Vec<Agent> = agents.iter().filter_map(|(a, _)| Agent::parse(a)).collect();
        let listing = flame_follow::list_sessions(homes, &wanted, &read_opencode);
        let followed: Vec<String> = self.followed_sessions()?.into_iter().map(|s| s.id).collect();
        let mut new = Vec::new();
        for found in listing.sessions {
            let since = agents.iter().find(|(a, _)| a == found.agent.as_str()).map(|(_, s)| *s);
            let id = session_id(found.agent, &found.id);
            if followed.contains(&id) || found.last_activity < since {
                continue;
            }
            let at = self.env().now();
            let source = found.source.display().to_string();
            self.store().follow_session(at, &id, found.agent.as_str(), &found.id, &source)?;
            tracing::info!(%id, "following a new session");
            new.push(id);
        }
        let _ = actor;
        Ok(new)
    }
}

/// A followed session as its row recorded it, for when the agent's folders no longer list it:
/// only what the row knows (not its project, first request or size).
fn recorded_session(agent: Agent, row: &FollowedSession) -> FoundSession {
    FoundSession {
        agent,
        id: row.session.clone(),
        source: PathBuf::from(&row.source),
        project: None,
        first_request: None,
        last_activity: row.synced_at,
        size: 0,
    }
}

/// A session's files read whole, as `flame import` reads them; `None` when they cannot be.
fn session_draft(found: &FoundSession) -> Option<Draft> {
    let format = match found.agent {
        Agent::ClaudeCode => crate::ImportFormat::ClaudeCode,
        Agent::Codex => crate::ImportFormat::Codex,
        Agent::OpenCode => crate::ImportFormat::OpenCode,
    };
    let options = ImportOptions { segment: true, session: Some(found.id.clone()) };
    crate::import::read_draft(&found.source, Some(format), &options, &mut |_| {}).ok()
}

/// What a draft's recorded model calls cost, cache reads and writes priced.
fn draft_cost(draft: &Draft, prices: &PriceTable) -> CostSummary {
    let mut total = CostTotal::default();
    for usage in draft_usage(draft) {
        let price = usage.model.as_deref().and_then(|m| prices.get(m)).map(|p| p.price());
        total.add(&usage, price.as_ref());
    }
    total.summary()
}

/// What Flame's own context would have cost on a session's recorded calls: the replay of the
/// session's `draft` (`flame_import::replay`), priced at the session's own model under its
/// provider's prompt cache (Anthropic's for a Claude model, OpenAI's automatic cache for any
/// other), for the whole session and, for the frames `frames` names by draft key (a followed
/// session's stored frames), each of them. Not available without a draft, or for a model with
/// no known price.
pub fn flame_context_cost(
    draft: Option<&Draft>,
    prices: &PriceTable,
    frames: &HashMap<String, FrameId>,
) -> FlameContextCost {
    let unavailable = |reason: String| FlameContextCost::NotAvailable { reason };
    let Some(draft) = draft else {
        return unavailable("the session's files could not be read whole".to_owned());
    };
    let Some(model) = draft
        .messages
        .iter()
        .find_map(|m| m.message.model.as_deref().filter(|m| !m.starts_with('<')))
    else {
        return unavailable("the session names no model".to_owned());
    };
    let Some(price) = prices.get(model).map(|p| p.price()) else {
        return unavailable(format!("Flame knows no price for {model}"));
    };
    let provider = if model.starts_with("claude") {
        flame_import::replay::ReplayProvider::Anthropic
    } else {
        flame_import::replay::ReplayProvider::Openai
    };
    let options = flame_import::replay::ReplayOptions {
        provider,
        price: Some((model.to_owned(), price)),
        ..Default::default()
    };
    let replay = match flame_import::replay::replay(draft, &options) {
        Ok(replay) => replay,
        Err(err) => return unavailable(format!("the replay failed: {err}")),
    };
    let summary = |micro_usd: u64, cache: &flame_import::replay::CacheTokens| CostSummary {
        micro_usd,
        completeness: if micro_usd > 0 {
            flame_model::cost::Completeness::Complete
        } else {
            flame_model::cost::Completeness::None
        },
        usage: flame_model::Usage {
            cache_read_tokens: cache.read,
            cache_write_long_tokens: cache.written_long,
            cache_write_tokens: cache.written,
            input_tokens: cache.uncached,
            output_tokens: 0,
        },
        ..CostSummary::default()
    };
    let mut by_frame: HashMap<usize, (u64, flame_import::replay::CacheTokens)> = HashMap::new();
    for row in &replay.per_call {
        let (usd, cache) = by_frame.entry(row.frame).or_default();
        *usd += row.flame_micro_usd;
        cache.read += row.flame_cache.read;
        cache.written += row.flame_cache.written;
        cache.written_long += row.flame_cache.written_long;
        cache.uncached += row.flame_cache.uncached;
    }
    let mut frames: Vec<(FrameId, CostSummary)> = by_frame
        .into_iter()
        .filter_map(|(index, (usd, cache))| {
            let id = frames.get(&draft.frames[index].key)?;
            Some((id.clone(), summary(usd, &cache)))
        })
        .collect();
    frames.sort_by(|a, b| a.0.cmp(&b.0));
    FlameContextCost::Priced {
        session: summary(replay.flame_micro_usd, &replay.flame_cache),
        frames,
    }
}

/// What a session's reading could not read, in words for its row: the problems the report
/// lists (and how many more); `empty` when nothing of it could be stored yet.
fn unread(report: &flame_import::ImportReport, empty: bool) -> Option<String> {
    if report.problem_count() == 0 {
        return None;
    }
    let lines = report.problem_lines().join("; ");
    Some(if empty {
        format!("nothing in it can be stored yet: {lines}")
    } else {
        format!("the rest is stored, but not: {lines}")
    })
}

/// "Claude Code, Codex and OpenCode".
fn names(agents: &[Agent]) -> String {
    let names: Vec<&str> = agents.iter().map(|a| a.label()).collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => "no agent".to_owned(),
    }
}

fn entry(
    found: &FoundSession,
    id: String,
    row: Option<&FollowedSession>,
    recorded_cost: Option<CostSummary>,
    flame_cost: FlameContextCost,
) -> SessionEntry {
    SessionEntry {
        id,
        agent: found.agent,
        session: found.id.clone(),
        source: found.source.display().to_string(),
        project: found.project.clone(),
        first_request: found.first_request.clone(),
        last_activity: found.last_activity,
        size: found.size,
        recorded_cost,
        flame_cost,
        followed: row.is_some(),
        tree: row.and_then(|r| r.tree.clone()),
        problem: row.and_then(|r| r.problem.clone()),
        synced_at: row.and_then(|r| r.synced_at),
    }
}
