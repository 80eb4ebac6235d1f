//! The agent: chatting in a frame with a model.
//!
//! Sending a message stores it in the frame, assembles the frame's context (`flame-context`),
//! streams the model's reply into the store as it arrives (a crash keeps what arrived, marked
//! interrupted) and to the caller as [`ChatEvent`]s, records usage, and runs the frame tools the
//! model calls (`flame-frame-tools`) — until the model stops calling tools, the turn spends the
//! settings' per-turn budget, or a budget on the frame's path is spent (checked before every
//! call, and told to the model through its context as it runs low). A push moves the
//! conversation into the child; a pop moves it back to the parent, whose context now holds the
//! child's results. In a tree with a workspace folder the agent also reads, searches, changes
//! files and runs commands there (`hands.rs` over `flame-workspace`), recording the files each
//! frame read and changed (its trail). A call waits for the person ([`Stopped::AwaitingApproval`],
//! then [`Agent::answer_request`]) when its kind asks under the [`ApprovalPolicy`] and was not
//! allowed for the tree, or when it is a push or pop under [`Autonomy::Ask`].
//!
//! Each round prepares the call's context with `Flame::prepare_call`: the budget is the model's
//! window less its output reserve and the tools' schema tokens, with the provider's `CachePolicy`
//! (Anthropic's for a priced Anthropic model, OpenAI's automatic cache for a priced OpenAI one, and
//! a local server's, masking only for the budget, for a `local:` model or an unpriced one on this
//! computer). It is put in the request's shape with `flame_context::request::prompt` (its marks as
//! `PromptCache`, the frame's id as the cache key), a reply is opened (`Flame::begin_reply`) and
//! streamed into, its text saved every 250 ms, and finished with its usage; a reply over the
//! store's cap keeps its beginning with a note. `answer_again` runs the same loop without a new
//! message, for a retry after a failed or stopped reply. A push, start or pop moves the
//! conversation to that frame, which gets a note saying how it got there; the parent's next call
//! appends a note with the popped child's results, never its conversation. The loop ends when the
//! model stops calling tools, at the turn's budget, on cancel, or when a call must wait for the
//! person; a stop at a budget (the path's or the turn's) is kept as a note of the frame, so its
//! log, its export and the window's conversation say why the work stopped, and the model reads it
//! in the frame's next call, after what the last one sent. A context-length refusal shrinks the
//! budget by a quarter once and says so. Frames the
//! agent creates with criteria over 200 characters get a compacted form from the model before the
//! next round (`compaction.rs`), and push/pop suggestions (`suggest.rs`) are sent as
//! `ChatEvent::Suggestion` when a reply ends.
//!
//! Workspace tools are offered only in a tree with a workspace folder (`offered_tool_specs`). Each
//! workspace call is one facade operation, `Flame::run_workspace_call` (ask or allow, preview,
//! checkpoints, run, the result stored with its `ToolDetail` and file trail), run off the async
//! thread with the agent's `hands::Hands` as its command runner: Stop kills a running command's
//! process group, and commands start from the `Environment` the front end passed in, which keys
//! and base URLs are read from too.
//! The tools of the MCP servers in the settings are offered after these as `server__tool`, the
//! list each frame's opening was offered kept until its next opening, and called with the
//! person's approval unless the settings allow them (`mcp_tools.rs`); the servers start at their
//! first use and stop with the agent (`Agent::stop_mcp_servers`).
//! Imported tool calls (results without a tool name) go to the model as text, and a frame whose
//! last assistant message calls none of the frame tools waits on nothing. Front ends build the
//! agent with `Agent::from_settings_file(flame, settings path, environment, retry)` (`SettingsFile::at`
//! refuses a system without a configuration folder, with the same message everywhere), and `flame
//! chat --provider` pins a model's provider with `Agent::use_provider`. The facade's configuration
//! (the checkpoint cap, `keep_tool_results`, prices) is the front end's to pass when it opens
//! Flame (`Settings::facade_config`); the agent never changes it.

pub mod approval;
mod compaction;
mod hands;
mod mcp_tools;
pub mod suggest;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flame_api::{
    ApiError, CachePolicy, CallInFrame, CallOutcome, CallResult, ErrorCode, Flame, ToolOutcome,
};
use flame_frame_tools as tools;
use flame_model::budget::{Allowance, Spend};
use flame_model::lifecycle::{self, Operation};
use flame_model::{Actor, FrameId, MessageId, NewMessage, Role, ToolDetail, ToolKind};
use flame_models::{
    CancellationToken, ChatRequest, Client, ModelError, PromptCache, ProviderKind, RetryPolicy,
    StreamEvent, ToolCall, ToolSpec, Usage,
};
use flame_settings::{Autonomy, ResolvedModel, Settings, SettingsFile};
use flame_workspace::Environment;
use serde::Serialize;

pub use approval::{Ask, WaitingRequest};
pub use compaction::GeneratedResults;
pub use flame_api::{Answer, Approval, ApprovalPolicy, Preview, RunApproval};
pub use mcp_tools::{MAX_KEPT_FRAMES, McpServerView};

/// How often a streaming reply's text is written to the store.
const SAVE_EVERY: Duration = Duration::from_millis(250);

/// What happens while a message is answered, for a UI or a terminal to show.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChatEvent {
    /// A piece of the reply's text.
    Text { frame: FrameId, text: String },
    /// The model started a tool call.
    ToolCall { frame: FrameId, id: String, name: String },
    /// A tool ran.
    ToolResult {
        frame: FrameId,
        id: String,
        name: String,
        content: String,
        is_error: bool,
        detail: Option<ToolDetail>,
    },
    /// The conversation moved to another frame (after a push, pop or start).
    Moved { from: FrameId, to: FrameId },
    /// A message was stored.
    Saved { frame: FrameId, message: MessageId },
    /// Something the person should know, such as a budget shrunk after the model refused a
    /// context as too long.
    Notice { text: String },
    /// A frame operation Flame suggests, to accept or dismiss with one click.
    Suggestion { frame: FrameId, suggestion: suggest::Suggestion },
}

/// Why answering stopped.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Stopped {
    /// The model answered without calling a tool.
    Finished,
    /// The turn spent the settings' per-turn budget (`turn_budget`); the person may send
    /// another message to go on.
    TurnBudget { reason: String },
    /// A budget on the frame's path is spent, so no further call was made: the person raises
    /// it or pops the frame. `frame` is the frame whose budget it is.
    BudgetSpent { frame: FrameId, reason: String },
    /// A tool call waits for the person to accept or refuse it: a push or pop under
    /// [`Autonomy::Ask`], a workspace call whose kind asks, or an MCP call the settings do not
    /// allow.
    AwaitingApproval { request: WaitingRequest },
}

/// How answering a message went.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ChatOutcome {
    /// The frame the conversation is in now.
    pub frame: FrameId,
    pub rounds: u32,
    pub stopped: Stopped,
    /// The usage of every model call, added up.
    pub usage: Usage,
}

/// A chatting agent over one data directory.
pub struct Agent {
    flame: Arc<Flame>,
    client: Client,
    settings: Settings,
    /// Where keys and base URLs are read from, and what commands start from (before Flame's and
    /// the providers' variables are removed): the front end's, passed in.
    environment: Environment,
    /// The settings' MCP servers, started at their first use (`mcp_tools.rs`).
    mcp: mcp_tools::McpTools,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent").field("settings", &self.settings).finish_non_exhaustive()
    }
}

type Sink<'a> = &'a mut (dyn FnMut(ChatEvent) + Send);

impl Agent {
    /// An agent using `settings`, reading keys and base URLs from `environment`, which its
    /// commands also start from.
    pub fn new(
        flame: Arc<Flame>,
        settings: Settings,
        environment: Environment,
        retry: RetryPolicy,
    ) -> Agent {
        let mcp = mcp_tools::McpTools::new(&settings.mcp_servers, &environment);
        Agent { flame, client: Client::new(retry), settings, environment, mcp }
    }

    /// The agent every front end builds: the settings of the file at `settings_path` (see
    /// [`SettingsFile::at`]: `None` is a system without a configuration folder), their keys where
    /// they are kept, and keys and base URLs read from `environment`.
    pub fn from_settings_file(
        flame: Arc<Flame>,
        settings_path: Option<PathBuf>,
        environment: Environment,
        retry: RetryPolicy,
    ) -> Result<Agent, ApiError> {
        let settings = SettingsFile::at(settings_path)?.load()?;
        Ok(Agent::new(flame, settings, environment, retry))
    }

    /// Talks to model `name` through `provider`, whatever the settings say of it (the command
    /// line's `--provider`); a model the settings do not list gets the defaults.
    pub fn use_provider(&mut self, provider: ProviderKind, name: &str) -> Result<(), ApiError> {
        let known = self.settings.resolve(Some(name), &|_| None)?.model;
        self.settings.models.retain(|m| m.name != name);
        self.settings.models.push(flame_settings::ModelSettings { provider, ..known });
        Ok(())
    }

    /// Lets calls of `kinds` run without asking, whatever the settings say: the command line's
    /// `--approve`.
    pub fn allow_kinds(&mut self, kinds: &[ToolKind]) {
        self.settings.approval = self.settings.approval.allowing(kinds);
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The model to use: `name` or the default.
    pub fn resolve(&self, name: Option<&str>) -> Result<ResolvedModel, ApiError> {
        self.settings.resolve(name, &|key| self.environment.get(key))
    }

    /// The model a call goes to: [`Agent::resolve`], and for a local server's model the settings
    /// do not list, the window that server gives it, asked now (a server that cannot be asked
    /// leaves the default window, and the call itself then says what is wrong).
    pub async fn resolve_for_call(&self, name: Option<&str>) -> Result<ResolvedModel, ApiError> {
        let resolved = self.resolve(name)?;
        let Some(address) = resolved.local_server.clone() else { return Ok(resolved) };
        let discovery = flame_models::discover::Discovery::default();
        match discovery.context_window(&address, &resolved.model.name).await {
            Ok(Some(window)) => Ok(resolved.with_window(window)),
            Ok(None) => Ok(resolved),
            Err(err) => {
                tracing::info!("the window of {} was not asked: {err}", resolved.model.name);
                Ok(resolved)
            }
        }
    }

    /// Sends `text` as `actor` in frame `frame` (default: the focused frame) and answers it.
    pub async fn send(
        &self,
        actor: Actor,
        frame: Option<&FrameId>,
        text: &str,
        model: Option<&str>,
        cancel: &CancellationToken,
        on_event: Sink<'_>,
    ) -> Result<ChatOutcome, ApiError> {
        let model = self.resolve_for_call(model).await?;
        let frame = match frame {
            Some(id) => id.clone(),
            None => self.flame.status(None)?.focus,
        };
        let message = self.flame.append(actor, &frame, Role::User, text)?;
        on_event(ChatEvent::Saved { frame: frame.clone(), message: message.id });
        self.answer(frame, &model, cancel, on_event).await
    }

    /// Answers the tool call the agent is waiting on in `frame` (see [`waiting_request`]), runs
    /// the rest of that turn's calls (which may wait again), then goes on.
    pub async fn answer_request(
        &self,
        frame: &FrameId,
        answer: Answer,
        model: Option<&str>,
        cancel: &CancellationToken,
        on_event: Sink<'_>,
    ) -> Result<ChatOutcome, ApiError> {
        let model = self.resolve_for_call(model).await?;
        let waiting = pending_calls(&self.flame.messages(frame)?, &self.settings.mcp_servers);
        if waiting.is_empty() {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                format!("nothing in {frame} is waiting for an answer"),
            ));
        }
        let next = match self.run_calls(frame, &waiting, Some(answer), cancel, on_event).await? {
            Ran::Done { next, created } => {
                self.compact_new_criteria(&created, &model).await;
                next
            }
            Ran::Waiting(request) => {
                return Ok(ChatOutcome {
                    frame: frame.clone(),
                    rounds: 1,
                    stopped: Stopped::AwaitingApproval { request },
                    usage: Usage::default(),
                });
            }
        };
        let mut outcome = self.answer(next, &model, cancel, on_event).await?;
        outcome.rounds += 1;
        Ok(outcome)
    }

    /// Answers the conversation in `frame` again as it stands, adding no message: after a reply
    /// failed or was stopped, so that the person's message, already stored, is not sent twice.
    pub async fn answer_again(
        &self,
        frame: &FrameId,
        model: Option<&str>,
        cancel: &CancellationToken,
        on_event: Sink<'_>,
    ) -> Result<ChatOutcome, ApiError> {
        let model = self.resolve_for_call(model).await?;
        let entry = self.flame.frame(frame)?.frame;
        if lifecycle::check(Operation::AddMessage, &entry.id, &entry.title, entry.status).is_err() {
            return Err(ApiError::new(
                ErrorCode::Refused,
                format!(
                    "frame {frame} \"{}\" is {} and takes no messages, so nothing can be answered there",
                    entry.title, entry.status
                ),
            ));
        }
        if !pending_calls(&self.flame.messages(frame)?, &self.settings.mcp_servers).is_empty() {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                format!(
                    "the agent is waiting in {frame} for its request to be accepted or refused; answer that instead"
                ),
            ));
        }
        self.answer(frame.clone(), &model, cancel, on_event).await
    }

    /// Answers the conversation in `frame` until the model stops calling tools.
    async fn answer(
        &self,
        mut frame: FrameId,
        model: &ResolvedModel,
        cancel: &CancellationToken,
        on_event: Sink<'_>,
    ) -> Result<ChatOutcome, ApiError> {
        let base_tools = self.offered_tools(&frame, on_event)?;
        // The tools' schemas are counted at each round, with the MCP servers' tools.
        let mut budget = model.budget(0);
        let policy = self.cache_policy(model);
        let mut usage = Usage::default();
        let mut tool_calls = 0u64;
        let mut shrunk = false;
        let mut round = 0;
        loop {
            // Before each call: the budgets on the frame's path, then the turn's own.
            if let Some((stopped, note)) = self.budget_stop(&frame, model, &usage, tool_calls)? {
                self.note_stop(&frame, &note, on_event);
                return Ok(ChatOutcome { frame, rounds: round, stopped, usage });
            }
            round += 1;
            let (doc, tools) = self
                .prepare_round(&frame, &base_tools, model, &mut budget, policy, on_event)
                .await?;
            let prompt = flame_context::request::prompt(
                &doc,
                flame_api::DEFAULT_ENCODING,
                policy.conversation,
            );
            let request = ChatRequest {
                model: model.model.name.clone(),
                system: prompt.system,
                messages: prompt.messages,
                tools,
                max_tokens: model.model.max_output_tokens,
                cache: PromptCache {
                    system: Some(prompt.system_lifetime),
                    system_shared: Some(prompt.system_shared),
                    marks: prompt.marks,
                    key: Some(frame.to_string()),
                },
            };
            let turn = match self.stream_into_store(&frame, model, &request, cancel, on_event).await
            {
                Ok(turn) => turn,
                Err(ModelError::ContextTooLong { message, .. }) if !shrunk => {
                    // The provider counts differently from Flame: send a smaller context once.
                    shrunk = true;
                    budget.context_window = budget.context_window * 3 / 4;
                    on_event(ChatEvent::Notice {
                        text: format!(
                            "the model refused the context as too long ({message}); trying again with a budget of {} tokens",
                            budget.available()
                        ),
                    });
                    round -= 1;
                    continue;
                }
                Err(err) => return Err(model_error(&err)),
            };
            usage.add(&turn.usage);
            tool_calls = tool_calls.saturating_add(turn.tool_calls.len() as u64);
            for text in &turn.notices {
                tracing::warn!("{text}");
                on_event(ChatEvent::Notice { text: text.clone() });
            }
            if turn.tool_calls.is_empty() {
                for suggestion in
                    suggest::suggestions(&self.flame.messages(&frame)?, budget.available())
                {
                    on_event(ChatEvent::Suggestion { frame: frame.clone(), suggestion });
                }
                return Ok(ChatOutcome { frame, rounds: round, stopped: Stopped::Finished, usage });
            }
            match self.run_calls(&frame, &turn.tool_calls, None, cancel, on_event).await? {
                Ran::Done { next, created } => {
                    self.compact_new_criteria(&created, model).await;
                    frame = next;
                }
                Ran::Waiting(request) => {
                    return Ok(ChatOutcome {
                        frame,
                        rounds: round,
                        stopped: Stopped::AwaitingApproval { request },
                        usage,
                    });
                }
            }
        }
    }

    /// Why no further call may be made in `frame`, if none may: a budget on its path is spent
    /// (checked with the facade's kept spends, which reads only the replies since the last
    /// check), or this turn spent the settings' per-turn budget — `usage` of `model` and
    /// `tool_calls` so far. With it, the note the frame keeps of the stop ([`Agent::note_stop`]).
    fn budget_stop(
        &self,
        frame: &FrameId,
        model: &ResolvedModel,
        usage: &Usage,
        tool_calls: u64,
    ) -> Result<Option<(Stopped, String)>, ApiError> {
        let allowance = self.flame.allowance(frame)?;
        if let Some(bound) = allowance.spent() {
            let spent = Allowance::spent_reason(bound, |id| self.flame.frame_name(id));
            let reason = format!(
                "Stopped before the next model call: {spent}. Raise the budget, or pop the frame with what it has."
            );
            let note = format!(
                "[Flame] Budget: the work stopped here, before the next model call, because {spent}. The person lets it go on by raising that budget, or pops this frame with what it has."
            );
            let stopped = Stopped::BudgetSpent { frame: bound.frame.clone(), reason };
            return Ok(Some((stopped, note)));
        }
        let row =
            flame_model::cost::ModelUsage { model: Some(model.model.name.clone()), usage: *usage };
        let spent = Spend::priced([&row], tool_calls, &self.settings.price_table());
        let over =
            self.settings.turn_budget.limits().find(|&(unit, limit)| spent.of(unit) >= limit);
        Ok(over.map(|(unit, limit)| {
            let (limit, spent) = (unit.amount(limit), unit.amount(spent.of(unit)));
            let reason = format!(
                "The agent stopped after spending this turn's budget of {limit} ({spent} spent; the per-turn budget is in the settings); send a message to let it go on."
            );
            let note = format!(
                "[Flame] Budget: the work stopped here after spending this turn's budget of {limit} ({spent} spent; the person's settings set it). The person's next message starts a new turn, with the whole budget again."
            );
            (Stopped::TurnBudget { reason }, note)
        }))
    }

    /// Keeps why the work stopped as a note of `frame`, so its history says so: the log, the
    /// export and the window's conversation show it, and the model reads it in the frame's next
    /// call (after what that call's previous request sent, which it still starts with). A note
    /// that cannot be stored (the frame closed meanwhile) does not hide the stop, which the
    /// outcome says anyway.
    fn note_stop(&self, frame: &FrameId, note: &str, on_event: Sink<'_>) {
        match self.flame.append(Actor::Agent, frame, Role::Note, note) {
            Ok(message) => on_event(ChatEvent::Saved { frame: frame.clone(), message: message.id }),
            Err(err) => {
                tracing::warn!(%frame, "could not keep why the work stopped: {}", err.message)
            }
        }
    }

    /// Streams one turn into an open reply in `frame`, saving its text as it grows.
    async fn stream_into_store(
        &self,
        frame: &FrameId,
        model: &ResolvedModel,
        request: &ChatRequest,
        cancel: &CancellationToken,
        on_event: Sink<'_>,
    ) -> Result<flame_models::Turn, ModelError> {
        let reply = self
            .flame
            .begin_reply(Actor::Agent, frame, Some(&model.model.name))
            .map_err(to_model_error)?;
        let mut text = String::new();
        let mut saved_at = Instant::now();
        let result = self
            .client
            .stream(&model.provider, request, cancel, |event| match event {
                StreamEvent::Text(piece) => {
                    text.push_str(&piece);
                    on_event(ChatEvent::Text { frame: frame.clone(), text: piece });
                    if saved_at.elapsed() >= SAVE_EVERY {
                        if let Err(err) = self.flame.update_reply(reply, &text) {
                            tracing::warn!("could not save the reply so far: {}", err.message);
                        }
                        saved_at = Instant::now();
                    }
                }
                StreamEvent::ToolCallStarted { id, name } => {
                    on_event(ChatEvent::ToolCall { frame: frame.clone(), id, name })
                }
            })
            .await;
        let (mut message, outcome) = match result {
            Ok(turn) => {
                let mut message = NewMessage::text(Role::Assistant, turn.text.clone());
                if !turn.tool_calls.is_empty() {
                    message.tool_calls = Some(turn.tool_calls.clone());
                }
                message.usage = Some(turn.usage);
                (message, Ok(turn))
            }
            Err(err) => {
                // Whatever arrived is kept, marked interrupted; its tool calls are not, since
                // they will never run.
                let partial = err.partial().map_or(text, |t| t.text.clone());
                let mut message = NewMessage::text(Role::Assistant, partial);
                message.interrupted = true;
                (message, Err(err))
            }
        };
        message.model = Some(model.model.name.clone());
        let saved =
            self.flame.finish_reply(Actor::Agent, reply, &message).map_err(to_model_error)?;
        on_event(ChatEvent::Saved { frame: frame.clone(), message: saved.id });
        outcome
    }

    /// What `model`'s provider caches and charges, for the frame's context: Anthropic keeps
    /// what it is asked to, OpenAI keeps a prefix for minutes on its own, and a server on this
    /// computer keeps what it last processed, which costs nothing to read. A model Flame knows
    /// a price for is taken to be its provider's, wherever its base URL points (a proxy on this
    /// computer forwards to the provider); an unpriced model on this computer is a local server.
    fn cache_policy(&self, model: &ResolvedModel) -> CachePolicy {
        let price = self.settings.price_table().get(&model.model.name).map(|p| p.price());
        let local = model.local_server.is_some()
            || (price.is_none() && flame_settings::is_on_this_computer(&model.provider.base_url));
        match model.provider.kind {
            _ if local => CachePolicy::local(),
            ProviderKind::Anthropic => CachePolicy::anthropic(price.as_ref()),
            ProviderKind::Openai => CachePolicy::automatic(price.as_ref()),
        }
    }

    /// The tools offered in `frame`: the frame tools, and the workspace tools when its tree has
    /// a workspace folder that opens (one that cannot is said once as a notice).
    fn offered_tools(
        &self,
        frame: &FrameId,
        on_event: Sink<'_>,
    ) -> Result<Vec<ToolSpec>, ApiError> {
        let tree = self.flame.frame(frame)?.frame.tree;
        let with_workspace = match self.flame.open_workspace(&tree) {
            Ok(found) => found.is_some(),
            Err(message) => {
                on_event(ChatEvent::Notice {
                    text: format!("{message}; the agent has no workspace tools until it is fixed"),
                });
                false
            }
        };
        Ok(offered_tool_specs(with_workspace))
    }

    /// Runs the tool calls of a turn made in `frame`, in order, until one must wait for the
    /// person. `answer` is the person's answer to the first call, which is the one waiting.
    /// Results are stored in `frame`, where the calls are, each workspace result with the files
    /// it touched; the conversation continues in the frame the last moving call went to, which
    /// is told how it got there.
    async fn run_calls(
        &self,
        frame: &FrameId,
        calls: &[ToolCall],
        mut answer: Option<Answer>,
        cancel: &CancellationToken,
        on_event: Sink<'_>,
    ) -> Result<Ran, ApiError> {
        let mut current = frame.clone();
        let mut created = Vec::new();
        for call in calls {
            let moved_to = (&current != frame).then(|| current.clone());
            let outcome = if flame_workspace::tool_kind(&call.name).is_some() {
                let request = CallInFrame {
                    frame: frame.clone(),
                    call: call.clone(),
                    answer: answer.take(),
                    policy: self.settings.approval,
                    moved_to,
                };
                match self.run_workspace_call(request, cancel).await? {
                    CallOutcome::Waiting { tool_kind, preview } => {
                        let ask = Ask::Workspace { tool_kind, preview };
                        return Ok(Ran::Waiting(WaitingRequest { call: call.clone(), ask }));
                    }
                    CallOutcome::Done(CallResult { outcome, saved, notices }) => {
                        for text in notices {
                            on_event(ChatEvent::Notice { text });
                        }
                        if let Some(message) = saved {
                            on_event(ChatEvent::Saved { frame: frame.clone(), message });
                        }
                        outcome
                    }
                }
            } else if self.is_mcp_call(&call.name) {
                let answer = answer.take();
                match self
                    .run_mcp_call(frame, call, answer, moved_to.as_ref(), cancel, on_event)
                    .await?
                {
                    mcp_tools::McpRan::Waiting(request) => return Ok(Ran::Waiting(request)),
                    mcp_tools::McpRan::Done(outcome) => outcome,
                }
            } else {
                let asks = self.settings.autonomy == Autonomy::Ask && tools::needs_approval(call);
                let refusal = match answer.take() {
                    Some(Answer::Refuse { reason }) => {
                        Some(flame_api::refusal_text(call, reason.as_deref()))
                    }
                    Some(
                        Answer::Accept { .. } | Answer::AcceptKind { .. } | Answer::AllowNetwork,
                    ) => None,
                    None if asks => match &moved_to {
                        Some(to) => Some(flame_api::refusal_after_move(to)),
                        None => {
                            let ask = Ask::FrameChange;
                            return Ok(Ran::Waiting(WaitingRequest { call: call.clone(), ask }));
                        }
                    },
                    None => None,
                };
                let outcome = match refusal {
                    Some(text) => ToolOutcome::error(text),
                    None => {
                        let ran = tools::run(&self.flame, &current, call);
                        if let Some(to) = ran.moved_to {
                            current = to;
                        }
                        created.extend(ran.created);
                        ToolOutcome {
                            content: ran.content,
                            is_error: ran.is_error,
                            ..ToolOutcome::default()
                        }
                    }
                };
                if let Some(message) =
                    self.flame.record_tool_result(Actor::Agent, frame, call, &outcome)?
                {
                    on_event(ChatEvent::Saved { frame: frame.clone(), message });
                }
                outcome
            };
            on_event(ChatEvent::ToolResult {
                frame: frame.clone(),
                id: call.id.clone(),
                name: call.name.clone(),
                content: outcome.content,
                is_error: outcome.is_error,
                detail: outcome.detail,
            });
            if cancel.is_cancelled() {
                return Err(model_error(&ModelError::Cancelled { partial: Box::default() }));
            }
        }
        if &current != frame {
            let here = self.flame.frame(&current)?.frame;
            let note = format!(
                "[Flame] The conversation moved here from frame {frame}. You are now in frame {} \"{}\" ({}); work towards its success criteria, and pop it with pop_frame when they are met.",
                here.id, here.title, here.status
            );
            self.flame.append(Actor::Agent, &current, Role::Note, &note)?;
            on_event(ChatEvent::Moved { from: frame.clone(), to: current.clone() });
        }
        Ok(Ran::Done { next: current, created })
    }

    /// Runs one workspace call through the facade, off the async thread; Stop (`cancel`) kills a
    /// running command's process group.
    async fn run_workspace_call(
        &self,
        request: CallInFrame,
        cancel: &CancellationToken,
    ) -> Result<CallOutcome, ApiError> {
        let flame = Arc::clone(&self.flame);
        let hands = hands::Hands {
            environment: self.environment.clone(),
            stop: flame_workspace::CancelHandle::new(),
        };
        let stop = hands.stop.clone();
        let mut job = tokio::task::spawn_blocking(move || {
            flame.run_workspace_call(Actor::Agent, request, &hands)
        });
        let joined = tokio::select! {
            joined = &mut job => joined,
            () = cancel.cancelled() => {
                stop.cancel();
                job.await
            }
        };
        joined.map_err(|err| ApiError::internal("run the workspace call", err))?
    }

    /// Compacts the success criteria of new frames whose criteria are long (short ones serve
    /// as their own compacted form). A failure is logged, not fatal: the full criteria stand in.
    async fn compact_new_criteria(&self, created: &[FrameId], model: &ResolvedModel) {
        for frame in created {
            let Ok(entry) = self.flame.frame(frame) else { continue };
            if entry.frame.success_criteria.chars().count() <= compaction::LONG_CRITERIA {
                continue;
            }
            if let Err(err) =
                compaction::compact_criteria(&self.flame, &self.client, model, frame).await
            {
                tracing::warn!(%frame, "could not compact the success criteria: {}", err.message);
            }
        }
    }

    /// Asks the model for a frame's structured results from its full log and criteria.
    pub async fn generate_results(
        &self,
        frame: &FrameId,
        model: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<GeneratedResults, ApiError> {
        compaction::generate_results(self, frame, model, cancel).await
    }
}

/// The tools the agent offers a model: the frame tools, and the workspace tools when the tree has
/// a workspace folder.
pub fn offered_tool_specs(with_workspace: bool) -> Vec<ToolSpec> {
    let mut offered = tools::specs();
    if with_workspace {
        offered.extend(hands::specs());
    }
    offered
}

/// How running a turn's tool calls ended.
enum Ran {
    /// Every call ran (or was refused); the conversation goes on in `next`.
    Done { next: FrameId, created: Vec<FrameId> },
    /// A call waits for the person.
    Waiting(WaitingRequest),
}

/// The tool call the agent is waiting on in `frame` for the person to answer, with what it
/// would do, read from the stored messages so the question survives a restart of the app. A
/// front end whose settings list MCP servers asks [`waiting_request_among`] instead.
pub fn waiting_request(flame: &Flame, frame: &FrameId) -> Result<Option<WaitingRequest>, ApiError> {
    waiting_request_among(flame, frame, &[])
}

/// [`waiting_request`], where a call of one of `mcp_servers`' tools is one of the agent's own.
pub fn waiting_request_among(
    flame: &Flame,
    frame: &FrameId,
    mcp_servers: &[flame_settings::McpServerSettings],
) -> Result<Option<WaitingRequest>, ApiError> {
    let Some(call) = pending_calls(&flame.messages(frame)?, mcp_servers).into_iter().next() else {
        return Ok(None);
    };
    let ask = match flame_workspace::tool_kind(&call.name) {
        Some(tool_kind) => {
            let tree = flame.frame(frame)?.frame.tree;
            Ask::Workspace { tool_kind, preview: flame.preview_workspace_call(&tree, &call) }
        }
        None => match flame_mcp_client::server_of(&call.name) {
            Some((server, tool)) if mcp_servers.iter().any(|s| s.name == server) => {
                Ask::Mcp { server: server.to_owned(), tool: tool.to_owned() }
            }
            _ => Ask::FrameChange,
        },
    };
    Ok(Some(WaitingRequest { call, ask }))
}

/// The tool calls of `messages`' last assistant message that have no result yet. A message
/// with no call to one of the agent's own tools (the frame tools, the workspace tools, the tools
/// of `mcp_servers`) was imported from another tool's transcript (where a call's result often
/// opens the next frame): nothing in it waits for the agent.
fn pending_calls(
    messages: &[flame_model::Message],
    mcp_servers: &[flame_settings::McpServerSettings],
) -> Vec<ToolCall> {
    let Some(last) = messages.iter().rposition(|m| m.role == Role::Assistant) else {
        return Vec::new();
    };
    let calls = messages[last].tool_calls.clone().unwrap_or_default();
    let own = |name: &str| {
        tools::is_frame_tool(name)
            || flame_workspace::tool_kind(name).is_some()
            || flame_mcp_client::server_of(name)
                .is_some_and(|(server, _)| mcp_servers.iter().any(|s| s.name == server))
    };
    if !calls.iter().any(|c| own(&c.name)) {
        return Vec::new();
    }
    let answered: Vec<&str> = messages[last..]
        .iter()
        .filter_map(|m| Some(m.tool_result.as_ref()?.tool_call_id.as_str()))
        .collect();
    calls.into_iter().filter(|c| !answered.contains(&c.id.as_str())).collect()
}

/// A model failure as the boundary's error: the message says what to do.
fn model_error(err: &ModelError) -> ApiError {
    let code = match err {
        ModelError::NoKey { .. } | ModelError::Unauthorized { .. } => ErrorCode::Invalid,
        _ => ErrorCode::ModelFailed,
    };
    ApiError::new(code, err.to_string())
}

/// A store failure met while streaming, carried as a dropped stream so the loop stops cleanly.
fn to_model_error(err: ApiError) -> ModelError {
    ModelError::Dropped { provider: "Flame", reason: err.message, partial: Box::default() }
}

#[cfg(test)]
mod tests {
    use flame_model::{Message, MessageId, ToolCall, ToolResult};

    use super::*;

    fn message(role: Role, calls: Option<Vec<ToolCall>>, result: Option<ToolResult>) -> Message {
        Message {
            id: MessageId(1),
            frame: FrameId::from_trusted("f0000000001".to_owned()),
            role,
            content: String::new(),
            tool_calls: calls,
            tool_result: result,
            tokens: 0,
            model: None,
            usage: None,
            created_at: 0,
            interrupted: false,
        }
    }

    fn call(id: &str, name: &str) -> ToolCall {
        ToolCall { arguments: serde_json::json!({}), id: id.into(), name: name.into() }
    }

    /// The aim for what every call costs before any frame or message: the system
    /// preamble and every tool's schema.
    const MAX_FIXED_TOKENS: u64 = 3_000;

    #[test]
    fn the_preamble_and_every_tool_schema_stay_under_the_aim() {
        let system = flame_context::preamble(Some("/home/someone/projects/flame"));
        let schemas = serde_json::to_string(&offered_tool_specs(true)).unwrap();
        let encoding = flame_tokens::Encoding::O200kBase;
        let tokens =
            flame_tokens::count(encoding, &system) + flame_tokens::count(encoding, &schemas);
        assert!(tokens <= MAX_FIXED_TOKENS, "{tokens} tokens");
    }

    #[test]
    fn an_unanswered_frame_tool_call_waits_and_an_imported_one_does_not() {
        let live = [message(Role::Assistant, Some(vec![call("c1", "push_frame")]), None)];
        assert_eq!(pending_calls(&live, &[]), vec![call("c1", "push_frame")]);
        // A Claude Code session cut into segments: the call's result opens the next frame.
        let imported = [message(Role::Assistant, Some(vec![call("toolu_1", "TodoWrite")]), None)];
        assert!(pending_calls(&imported, &[]).is_empty());
    }
}
