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
//! model stops calling tools, at `max_tool_rounds`, on cancel, or when a call must wait for the
//! person. A context-length refusal shrinks the budget by a quarter once and says so. Frames the
//! agent creates with criteria over 200 characters get a compacted form from the model before the
//! next round (`compaction.rs`), and push/pop suggestions (`suggest.rs`) are sent as
//! `ChatEvent::Suggestion` when a reply ends.
//!
//! Workspace tools are offered only in a tree with a workspace folder (`offered_tool_specs`); the
//! agent checks where its handle on the folder leads each time it opens it, runs the calls off the
//! async thread (Stop kills a running command's process group; its whole output goes to
//! `command_output_path`, its head and tail to the model), and stores each result with its
//! `ToolDetail` for the window's tool card and the files it read and changed (`add_tool_result`).
//! Imported tool calls (results without a tool name) go to the model as text, and a frame whose
//! last assistant message calls none of the frame tools waits on nothing. Front ends build the
//! agent with `Agent::from_settings_file(flame, settings path, env, retry)` (`SettingsFile::at`
//! refuses a system without a configuration folder, with the same message everywhere), and `flame
//! chat --provider` pins a model's provider with `Agent::use_provider`. The facade's configuration
//! (the checkpoint cap, `keep_tool_results`, prices) is the front end's to pass when it opens
//! Flame (`Settings::facade_config`); the agent never changes it.

pub mod approval;
mod compaction;
mod hands;
pub mod suggest;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flame_api::{ApiError, CachePolicy, ErrorCode, Flame};
use flame_frame_tools as tools;
use flame_model::budget::{Allowance, Spend};
use flame_model::lifecycle::{self, Operation};
use flame_model::{
    Actor, CheckpointReason, FileTrail, FrameId, MessageId, NewMessage, Role, ToolDetail, ToolKind,
    ToolResult, TreeId,
};
use flame_models::{
    CancellationToken, ChatRequest, Client, ModelError, PromptCache, ProviderKind, RetryPolicy,
    StreamEvent, ToolCall, ToolSpec, Usage,
};
use flame_settings::{Autonomy, ResolvedModel, Settings, SettingsFile};
use serde::Serialize;

pub use approval::{Ask, WaitingRequest};
pub use flame_api::{Answer, Approval, ApprovalPolicy, Preview};
pub use compaction::GeneratedResults;

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
    /// [`Autonomy::Ask`], or a workspace call whose kind asks.
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
    env: Box<EnvReader>,
    /// What commands start from (before Flame's and the providers' variables are removed).
    command_environment: flame_workspace::Environment,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent").field("settings", &self.settings).finish_non_exhaustive()
    }
}

type Sink<'a> = &'a mut (dyn FnMut(ChatEvent) + Send);

/// Reads an environment variable: the process's in the app, a fixed map in tests.
type EnvReader = dyn Fn(&str) -> Option<String> + Send + Sync;

impl Agent {
    /// An agent using `settings`, reading keys and base URLs through `env`.
    pub fn new(
        flame: Arc<Flame>,
        settings: Settings,
        env: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
        retry: RetryPolicy,
    ) -> Agent {
        Agent {
            flame,
            client: Client::new(retry),
            settings,
            env: Box::new(env),
            command_environment: flame_workspace::Environment::inherited(),
        }
    }

    /// The agent every front end builds: the settings of the file at `settings_path` (see
    /// [`SettingsFile::at`]: `None` is a system without a configuration folder), their keys where
    /// they are kept, and keys and base URLs read through `env`.
    pub fn from_settings_file(
        flame: Arc<Flame>,
        settings_path: Option<PathBuf>,
        env: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
        retry: RetryPolicy,
    ) -> Result<Agent, ApiError> {
        let settings = SettingsFile::at(settings_path)?.load()?;
        Ok(Agent::new(flame, settings, env, retry))
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

    /// The environment commands start from; the process's own unless a test sets another.
    pub fn set_command_environment(&mut self, environment: flame_workspace::Environment) {
        self.command_environment = environment;
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The model to use: `name` or the default.
    pub fn resolve(&self, name: Option<&str>) -> Result<ResolvedModel, ApiError> {
        self.settings.resolve(name, &*self.env)
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
        let waiting = pending_calls(&self.flame.messages(frame)?);
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
        if !pending_calls(&self.flame.messages(frame)?).is_empty() {
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
        let tools = self.offered_tools(&frame, on_event)?;
        let schema_tokens = flame_tokens::count(
            flame_tokens::Encoding::for_model(&model.model.name),
            &serde_json::to_string(&tools).unwrap_or_default(),
        );
        let mut budget = model.budget(schema_tokens);
        let policy = self.cache_policy(model);
        let mut usage = Usage::default();
        let mut tool_calls = 0u64;
        let mut shrunk = false;
        let mut round = 0;
        loop {
            // Before each call: the budgets on the frame's path, then the turn's own.
            if let Some(stopped) = self.budget_stop(&frame, model, &usage, tool_calls)? {
                return Ok(ChatOutcome { frame, rounds: round, stopped, usage });
            }
            round += 1;
            let doc = self.flame.prepare_call(&frame, budget, policy)?;
            let prompt = flame_context::request::prompt(
                &doc,
                flame_api::DEFAULT_ENCODING,
                policy.conversation,
            );
            let request = ChatRequest {
                model: model.model.name.clone(),
                system: prompt.system,
                messages: prompt.messages,
                tools: tools.clone(),
                max_tokens: model.model.max_output_tokens,
                cache: PromptCache {
                    system: Some(prompt.system_lifetime),
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
    /// `tool_calls` so far.
    fn budget_stop(
        &self,
        frame: &FrameId,
        model: &ResolvedModel,
        usage: &Usage,
        tool_calls: u64,
    ) -> Result<Option<Stopped>, ApiError> {
        let allowance = self.flame.allowance(frame)?;
        if let Some(bound) = allowance.spent() {
            let reason = format!(
                "Stopped before the next model call: {}. Raise the budget, or pop the frame with what it has.",
                Allowance::spent_reason(bound, |id| self.flame.frame_name(id))
            );
            return Ok(Some(Stopped::BudgetSpent { frame: bound.frame.clone(), reason }));
        }
        let row =
            flame_model::cost::ModelUsage { model: Some(model.model.name.clone()), usage: *usage };
        let spent = Spend::priced([&row], tool_calls, &self.settings.price_table());
        let over =
            self.settings.turn_budget.limits().find(|&(unit, limit)| spent.of(unit) >= limit);
        Ok(over.map(|(unit, limit)| Stopped::TurnBudget {
            reason: format!(
                "The agent stopped after spending this turn's budget of {} ({} spent; the per-turn budget is in the settings); send a message to let it go on.",
                unit.amount(limit),
                unit.amount(spent.of(unit))
            ),
        }))
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
        let with_workspace = match open_workspace(&self.flame, &tree) {
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

    /// Takes a checkpoint of the frame's workspace around a changing call, off the async thread;
    /// returns the files changed since the one before (after a call). A failure is shown as a
    /// notice and the call goes on: the frame's changes then say what is missing.
    async fn checkpoint(
        &self,
        frame: &FrameId,
        reason: CheckpointReason,
        call: &ToolCall,
        on_event: Sink<'_>,
    ) -> Vec<String> {
        let flame = Arc::clone(&self.flame);
        let (frame, call_id) = (frame.clone(), call.id.clone());
        let taken =
            tokio::task::spawn_blocking(move || flame.checkpoint(&frame, reason, Some(&call_id)))
                .await;
        match taken {
            Ok(Ok(taken)) => taken.map(|t| t.changed).unwrap_or_default(),
            Ok(Err(err)) => {
                on_event(ChatEvent::Notice {
                    text: format!("No checkpoint was taken around {}: {}", call.name, err.message),
                });
                Vec::new()
            }
            Err(err) => {
                on_event(ChatEvent::Notice {
                    text: format!("No checkpoint was taken around {}: {err}", call.name),
                });
                Vec::new()
            }
        }
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
        let tree = self.flame.frame(frame)?.frame.tree;
        let workspace = open_workspace(&self.flame, &tree);
        let mut allowed = self.flame.allowed_kinds(&tree)?;
        let mut current = frame.clone();
        let mut created = Vec::new();
        for call in calls {
            let kind = flame_workspace::tool_kind(&call.name);
            let asks = match kind {
                Some(kind) => {
                    self.settings.approval.for_kind(kind) == Approval::Ask
                        && !allowed.contains(&kind)
                }
                None => self.settings.autonomy == Autonomy::Ask && tools::needs_approval(call),
            };
            // A write or edit the person allowed is applied only on the file they were shown;
            // a file changed since is put to them again, as the change would be now.
            let mut shown = None;
            if let Some(Answer::Accept { shown: base } | Answer::AcceptKind { shown: base }) =
                &answer
                && kind == Some(ToolKind::Changing)
            {
                let request = waiting_request_for(&self.flame, &tree, call)?;
                if let Ask::Workspace { preview: Preview::Change { base: now, .. }, .. } =
                    &request.ask
                    && base.as_deref() != Some(now.as_str())
                {
                    return Ok(Ran::Waiting(request));
                }
                shown.clone_from(base);
            }
            let refusal = match answer.take() {
                Some(Answer::Refuse { reason }) => Some(refusal_text(call, reason.as_deref())),
                Some(Answer::AcceptKind { .. }) => {
                    if let Some(kind) = kind.filter(|k| !allowed.contains(k)) {
                        self.flame.allow_kind(Actor::Person, &tree, kind)?;
                        allowed.push(kind);
                    }
                    None
                }
                Some(Answer::Accept { .. }) => None,
                // A question asked after the conversation moved would be asked in a frame the
                // window no longer shows; the model is told to make the call again there.
                None if asks && &current != frame => Some(format!(
                    "This call came after a frame change in the same turn, which moved the conversation to frame {current}; make it again there if it is still needed."
                )),
                None if asks => {
                    let request = waiting_request_for(&self.flame, &tree, call)?;
                    match request.ask {
                        // A call that cannot run as it is would only send the model its error,
                        // so the person is not asked to allow it: it fails at once, and the
                        // model reads why.
                        Ask::Workspace { preview: Preview::Invalid { .. }, .. } => None,
                        _ => return Ok(Ran::Waiting(request)),
                    }
                }
                None => None,
            };
            let (content, is_error, detail, trail, moved_to, made) = match (refusal, kind) {
                (Some(text), _) => (text, true, None, FileTrail::default(), None, Vec::new()),
                (None, Some(_)) => {
                    let outcome = match &workspace {
                        Ok(Some(workspace)) => {
                            let output_file =
                                self.flame.command_output_path(frame, &call.id).ok();
                            let setting = hands::CommandSetting {
                                environment: &self.command_environment,
                                output_file,
                            };
                            let changes = kind.is_some_and(|k| k != ToolKind::Reading);
                            if changes {
                                self.checkpoint(frame, CheckpointReason::BeforeCall, call, on_event)
                                    .await;
                            }
                            let mut outcome =
                                hands::run(workspace, call, setting, shown, cancel).await;
                            if changes {
                                // What the snapshot after the call finds changed is what the
                                // call changed: for a command, the only way to know.
                                let changed = self
                                    .checkpoint(frame, CheckpointReason::AfterCall, call, on_event)
                                    .await;
                                outcome.trail = FileTrail::new(
                                    std::mem::take(&mut outcome.trail.read),
                                    outcome.trail.changed.drain(..).chain(changed),
                                );
                            }
                            outcome
                        }
                        Ok(None) => hands::HandsOutcome::error(
                            "This tree has no workspace folder, so there are no files to work on; ask the person to choose one for the tree.".to_owned(),
                        ),
                        Err(message) => hands::HandsOutcome::error(format!(
                            "{message}; ask the person to choose the tree's workspace folder again"
                        )),
                    };
                    (
                        outcome.content,
                        outcome.is_error,
                        outcome.detail,
                        outcome.trail,
                        None,
                        Vec::new(),
                    )
                }
                (None, None) => {
                    let outcome = tools::run(&self.flame, &current, call);
                    (
                        outcome.content,
                        outcome.is_error,
                        None,
                        FileTrail::default(),
                        outcome.moved_to,
                        outcome.created,
                    )
                }
            };
            // A pop finishes the frame the call was made in, which then takes no more messages:
            // its log records the pop itself, and an unanswered call is never sent again.
            let now = self.flame.frame(frame)?.frame;
            if lifecycle::check(Operation::AddMessage, &now.id, &now.title, now.status).is_ok() {
                let mut result = NewMessage::text(Role::Tool, content.clone());
                result.tool_result = Some(ToolResult {
                    detail: detail.clone(),
                    is_error,
                    name: Some(call.name.clone()),
                    tool_call_id: call.id.clone(),
                });
                let saved = self.flame.add_tool_result(Actor::Agent, frame, &result, &trail)?;
                on_event(ChatEvent::Saved { frame: frame.clone(), message: saved.id });
            }
            on_event(ChatEvent::ToolResult {
                frame: frame.clone(),
                id: call.id.clone(),
                name: call.name.clone(),
                content,
                is_error,
                detail,
            });
            if let Some(to) = moved_to {
                current = to;
            }
            created.extend(made);
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
/// would do, read from the stored messages so the question survives a restart of the app.
pub fn waiting_request(flame: &Flame, frame: &FrameId) -> Result<Option<WaitingRequest>, ApiError> {
    let Some(call) = pending_calls(&flame.messages(frame)?).into_iter().next() else {
        return Ok(None);
    };
    let tree = flame.frame(frame)?.frame.tree;
    waiting_request_for(flame, &tree, &call).map(Some)
}

fn waiting_request_for(
    flame: &Flame,
    tree: &TreeId,
    call: &ToolCall,
) -> Result<WaitingRequest, ApiError> {
    let ask = match flame_workspace::tool_kind(&call.name) {
        Some(tool_kind) => {
            let workspace = open_workspace(flame, tree).ok().flatten();
            Ask::Workspace { tool_kind, preview: flame_api::preview_workspace_call(workspace.as_ref(), call) }
        }
        None => Ask::FrameChange,
    };
    Ok(WaitingRequest { call: call.clone(), ask })
}

/// The workspace of `tree`: `None` when it has none, an error message when its folder cannot be
/// opened (moved or deleted since it was chosen) or now leads into Flame's own folders (replaced
/// by a link since: what the opened folder is, not its name, is checked).
fn open_workspace(
    flame: &Flame,
    tree: &TreeId,
) -> Result<Option<flame_workspace::Workspace>, String> {
    let Some(folder) = flame.tree(tree).map_err(|e| e.message)?.workspace else {
        return Ok(None);
    };
    let workspace = flame_workspace::Workspace::open(&folder).map_err(|e| e.to_string())?;
    flame.check_workspace_in_use(workspace.root()).map_err(|e| e.message)?;
    Ok(Some(workspace))
}

/// What the model is told when the person refuses `call`, with their words (cut to
/// [`flame_api::MAX_REFUSAL_BYTES`]).
fn refusal_text(call: &ToolCall, reason: Option<&str>) -> String {
    let what = if flame_workspace::tool_kind(&call.name).is_some() {
        format!("The person refused this {} call", call.name)
    } else {
        "The person refused this frame change; carry on in the current frame".to_owned()
    };
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => {
            let mut end = reason.len().min(flame_api::MAX_REFUSAL_BYTES);
            while !reason.is_char_boundary(end) {
                end -= 1;
            }
            format!("{what}. They said: {}", &reason[..end])
        }
        None => format!("{what}."),
    }
}

/// The tool calls of `messages`' last assistant message that have no result yet. A message
/// with no call to one of the agent's own tools was imported from another tool's transcript
/// (where a call's result often opens the next frame): nothing in it waits for the agent.
fn pending_calls(messages: &[flame_model::Message]) -> Vec<ToolCall> {
    let Some(last) = messages.iter().rposition(|m| m.role == Role::Assistant) else {
        return Vec::new();
    };
    let calls = messages[last].tool_calls.clone().unwrap_or_default();
    if !calls
        .iter()
        .any(|c| tools::is_frame_tool(&c.name) || flame_workspace::tool_kind(&c.name).is_some())
    {
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
    use flame_model::{Message, MessageId, ToolCall};

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
        assert_eq!(pending_calls(&live), vec![call("c1", "push_frame")]);
        // A Claude Code session cut into segments: the call's result opens the next frame.
        let imported = [message(Role::Assistant, Some(vec![call("toolu_1", "TodoWrite")]), None)];
        assert!(pending_calls(&imported).is_empty());
    }
}
