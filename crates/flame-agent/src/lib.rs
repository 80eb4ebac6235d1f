//! The agent: chatting in a frame with a model.
//!
//! Sending a message stores it in the frame, assembles the frame's context (`flame-context`),
//! streams the model's reply into the store as it arrives (a crash keeps what arrived, marked
//! interrupted) and to the caller as [`ChatEvent`]s, records usage, and runs the frame tools the
//! model calls (`flame-frame-tools`) — up to a limit of tool rounds per message. A push moves the
//! conversation into the child; a pop moves it back to the parent, whose context now holds the
//! child's results. With [`Autonomy::Ask`], a push or pop waits for the person
//! ([`Stopped::AwaitingApproval`], then [`Agent::answer_request`]).

mod compaction;
pub mod key_store;
mod private_file;
pub mod settings;
pub mod suggest;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flame_api::{ApiError, ContextDoc, ErrorCode, Flame};
use flame_frame_tools as tools;
use flame_model::lifecycle::{self, Operation};
use flame_model::{Actor, FrameId, MessageId, NewMessage, Role, ToolResult};
use flame_models::{
    CancellationToken, ChatMessage, ChatRequest, Client, ModelError, ProviderKind, RetryPolicy,
    StreamEvent, ToolCall, Usage,
};
use serde::Serialize;

pub use compaction::GeneratedResults;
pub use key_store::{KeyLocation, KeyStore};
pub use settings::{Autonomy, ResolvedModel, Settings, SettingsFile};

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
    ToolResult { frame: FrameId, id: String, name: String, content: String, is_error: bool },
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
    /// The tool-round limit was reached; the person may send another message to go on.
    ToolRoundLimit,
    /// The model asked to push or pop a frame and the person must accept or refuse.
    AwaitingApproval { call: ToolCall },
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
        Agent { flame, client: Client::new(retry), settings, env: Box::new(env) }
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
        self.settings.models.push(settings::ModelSettings { provider, ..known });
        Ok(())
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The model to use: `name` or the default.
    pub fn resolve(&self, name: Option<&str>) -> Result<ResolvedModel, ApiError> {
        self.settings.resolve(name, &*self.env)
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
        let model = self.resolve(model)?;
        let frame = match frame {
            Some(id) => id.clone(),
            None => self.flame.status(None)?.focus,
        };
        let message = self.flame.append(actor, &frame, Role::User, text)?;
        on_event(ChatEvent::Saved { frame: frame.clone(), message: message.id });
        self.answer(frame, &model, cancel, on_event).await
    }

    /// Accepts or refuses the push or pop the agent is waiting on in `frame`, then goes on.
    pub async fn answer_request(
        &self,
        frame: &FrameId,
        accept: bool,
        model: Option<&str>,
        cancel: &CancellationToken,
        on_event: Sink<'_>,
    ) -> Result<ChatOutcome, ApiError> {
        let model = self.resolve(model)?;
        let waiting = pending_calls(&self.flame.messages(frame)?);
        if waiting.is_empty() {
            return Err(ApiError::new(
                ErrorCode::Invalid,
                format!("nothing in {frame} is waiting for an answer"),
            ));
        }
        let (next, created) = self.run_tools(frame, &waiting, !accept, on_event)?;
        self.compact_new_criteria(&created, &model).await;
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
        let model = self.resolve(model)?;
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
        let tools = tools::specs();
        let schema_tokens = flame_tokens::count(
            flame_tokens::Encoding::for_model(&model.model.name),
            &serde_json::to_string(&tools).unwrap_or_default(),
        );
        let mut budget = model.budget(schema_tokens);
        let mut usage = Usage::default();
        let mut shrunk = false;
        let mut round = 0;
        while round < self.settings.max_tool_rounds.max(1) {
            round += 1;
            let doc = self.flame.context(Some(&frame), Some(budget))?;
            let request = ChatRequest {
                model: model.model.name.clone(),
                system: doc.system.clone(),
                messages: conversation(&doc),
                tools: tools.clone(),
                max_tokens: model.model.max_output_tokens,
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
            add_usage(&mut usage, &turn.usage);
            if turn.tool_calls.is_empty() {
                for suggestion in
                    suggest::suggestions(&self.flame.messages(&frame)?, budget.available())
                {
                    on_event(ChatEvent::Suggestion { frame: frame.clone(), suggestion });
                }
                return Ok(ChatOutcome { frame, rounds: round, stopped: Stopped::Finished, usage });
            }
            let asks = self.settings.autonomy == Autonomy::Ask;
            if let Some(call) = turn.tool_calls.iter().find(|c| asks && tools::needs_approval(c)) {
                return Ok(ChatOutcome {
                    frame,
                    rounds: round,
                    stopped: Stopped::AwaitingApproval { call: call.clone() },
                    usage,
                });
            }
            let (next, created) = self.run_tools(&frame, &turn.tool_calls, false, on_event)?;
            self.compact_new_criteria(&created, model).await;
            frame = next;
        }
        Ok(ChatOutcome { frame, rounds: round, stopped: Stopped::ToolRoundLimit, usage })
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

    /// Runs (or, refusing, answers without running) the tool calls of a turn made in `frame`.
    /// Their results are stored in `frame`, where the calls are; the conversation continues in
    /// the frame the last moving call went to, which is told how it got there.
    fn run_tools(
        &self,
        frame: &FrameId,
        calls: &[ToolCall],
        refuse: bool,
        on_event: Sink<'_>,
    ) -> Result<(FrameId, Vec<FrameId>), ApiError> {
        let mut current = frame.clone();
        let mut created = Vec::new();
        for call in calls {
            let outcome = if refuse && tools::needs_approval(call) {
                tools::ToolOutcome::error(
                    "The person refused this frame change; carry on in the current frame."
                        .to_owned(),
                )
            } else {
                tools::run(&self.flame, &current, call)
            };
            // A pop finishes the frame the call was made in, which then takes no more messages:
            // its log records the pop itself, and an unanswered call is never sent again.
            let now = self.flame.frame(frame)?.frame;
            if lifecycle::check(Operation::AddMessage, &now.id, &now.title, now.status).is_ok() {
                let mut result = NewMessage::text(Role::Tool, outcome.content.clone());
                result.tool_result = Some(ToolResult {
                    detail: None,
                    is_error: outcome.is_error,
                    name: Some(call.name.clone()),
                    tool_call_id: call.id.clone(),
                });
                let saved = self.flame.add_message(Actor::Agent, frame, &result)?;
                on_event(ChatEvent::Saved { frame: frame.clone(), message: saved.id });
            }
            on_event(ChatEvent::ToolResult {
                frame: frame.clone(),
                id: call.id.clone(),
                name: call.name.clone(),
                content: outcome.content,
                is_error: outcome.is_error,
            });
            if let Some(to) = outcome.moved_to {
                current = to;
            }
            created.extend(outcome.created);
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
        Ok((current, created))
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

/// The push or pop the agent is waiting on in `frame` for the person to accept or refuse, read
/// from the stored messages, so the question survives a restart of the app.
pub fn waiting_request(flame: &Flame, frame: &FrameId) -> Result<Option<ToolCall>, ApiError> {
    let pending = pending_calls(&flame.messages(frame)?);
    Ok(pending.iter().find(|c| tools::needs_approval(c)).or(pending.first()).cloned())
}

/// The tool calls of `messages`' last assistant message that have no result yet. A message
/// with no call to one of the agent's own tools was imported from another tool's transcript
/// (where a call's result often opens the next frame): nothing in it waits for the agent.
fn pending_calls(messages: &[flame_model::Message]) -> Vec<ToolCall> {
    let Some(last) = messages.iter().rposition(|m| m.role == Role::Assistant) else {
        return Vec::new();
    };
    let calls = messages[last].tool_calls.clone().unwrap_or_default();
    if !calls.iter().any(|c| tools::is_frame_tool(&c.name)) {
        return Vec::new();
    }
    let answered: Vec<&str> = messages[last..]
        .iter()
        .filter_map(|m| Some(m.tool_result.as_ref()?.tool_call_id.as_str()))
        .collect();
    calls.into_iter().filter(|c| !answered.contains(&c.id.as_str())).collect()
}

/// Whether the agent ran the tool a result answers: it records the tool's name with every
/// result. Results imported from other tools' transcripts do not name it, and answer calls to
/// tools the model here does not have, so they are sent as text.
fn ran_here(result: &ToolResult) -> bool {
    result.name.is_some()
}

/// The conversation to send: the frame's included messages as the provider-neutral kind.
/// Notes go as the user's (they are context a person or Flame added); tool calls that never got
/// a result are dropped, and results whose call was left out become plain text.
fn conversation(doc: &ContextDoc) -> Vec<ChatMessage> {
    let mut out = Vec::new();
    if let Some(omission) = &doc.omission {
        out.push(ChatMessage::User(omission.clone()));
    }
    let answered: Vec<&str> = doc
        .messages
        .iter()
        .filter_map(|m| m.tool_result.as_ref().filter(|r| ran_here(r)))
        .map(|r| r.tool_call_id.as_str())
        .collect();
    let mut called: Vec<String> = Vec::new();
    for m in &doc.messages {
        match m.role {
            Role::User => out.push(ChatMessage::User(m.content.clone())),
            Role::Note => out.push(ChatMessage::User(format!("[note] {}", m.content))),
            Role::Assistant => {
                let calls: Vec<ToolCall> = m
                    .tool_calls
                    .iter()
                    .flatten()
                    .filter(|c| answered.contains(&c.id.as_str()))
                    .cloned()
                    .collect();
                called.extend(calls.iter().map(|c| c.id.clone()));
                if !m.content.is_empty() || !calls.is_empty() {
                    out.push(ChatMessage::Assistant { text: m.content.clone(), tool_calls: calls });
                }
            }
            Role::Tool => {
                let result = m.tool_result.as_ref().filter(|r| called.contains(&r.tool_call_id));
                if let Some(result) = result {
                    out.push(ChatMessage::ToolResult {
                        call_id: result.tool_call_id.clone(),
                        content: m.content.clone(),
                        is_error: result.is_error,
                    });
                } else {
                    out.push(ChatMessage::User(format!("[tool result] {}", m.content)));
                }
            }
        }
    }
    if !matches!(out.first(), Some(ChatMessage::User(_))) {
        out.insert(
            0,
            ChatMessage::User("[Flame] This frame's conversation so far follows.".to_owned()),
        );
    }
    out
}

fn add_usage(total: &mut Usage, more: &Usage) {
    // Each count from a provider is bounded (flame_models::MAX_USAGE_TOKENS), but a long loop of
    // rounds adds them up: a total saturates rather than overflowing.
    total.input_tokens = total.input_tokens.saturating_add(more.input_tokens);
    total.output_tokens = total.output_tokens.saturating_add(more.output_tokens);
    total.cache_read_tokens = total.cache_read_tokens.saturating_add(more.cache_read_tokens);
    total.cache_write_tokens = total.cache_write_tokens.saturating_add(more.cache_write_tokens);
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

    #[test]
    fn an_unanswered_frame_tool_call_waits_and_an_imported_one_does_not() {
        let live = [message(Role::Assistant, Some(vec![call("c1", "push_frame")]), None)];
        assert_eq!(pending_calls(&live), vec![call("c1", "push_frame")]);
        // A Claude Code session cut into segments: the call's result opens the next frame.
        let imported = [message(Role::Assistant, Some(vec![call("toolu_1", "TodoWrite")]), None)];
        assert!(pending_calls(&imported).is_empty());
    }
}
