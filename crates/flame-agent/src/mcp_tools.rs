//! The person's MCP servers' tools as the agent offers and calls them (`flame-mcp-client` runs
//! the servers; the settings' `mcp_servers` name them and say how their calls are approved).
//!
//! **Offered.** Each server's tools are offered after the frame and workspace tools, as
//! `server__tool`, sorted by name. The list a frame is offered is the one listed when its
//! opening was made, and it is kept (in memory, per frame and opening) for every later call of
//! that opening, so the start of the frame's requests — the tools, then the preamble and the
//! opening — stays the same byte for byte and the provider's cache holds; a server that changes
//! its tools is listed again at the frame's next opening (`flame_context::opening`'s rules), and
//! its new list is what that opening's first request carries ([`Agent::prepare_round`]: when the
//! call made a new opening, the servers are listed again and, if their tools changed, the call is
//! prepared again with them). A server that cannot be listed (it did not start, it hangs) offers
//! nothing until it can; the person is told once, as a notice, as they are of tools left out.
//!
//! **Called.** A call of an MCP tool waits for the person ([`crate::Ask::Mcp`]) unless the
//! settings allow its server or tool (`McpServerSettings::approval_of`); a call that would wait
//! after a push or pop in the same turn is refused as a workspace call is. Its result is stored
//! with `Flame::record_tool_result`, like every tool result, so it is counted, masked and priced
//! as any other; a server's failure (it exited, hung, sent what is not JSON-RPC or more than the
//! limit) is that call's error, which the model reads, and the turn goes on. Stop ends a running
//! call. A call naming a tool its server does not offer (any more) fails at once.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use flame_api::{Answer, ApiError, ContextDoc, ToolOutcome};
use flame_context::{Budget, CachePolicy};
use flame_mcp_client::{
    Limits, McpError, McpServers, Problem, ServerSpec, ServerStatus, StartEnvironment,
};
use flame_model::{Actor, FrameId};
use flame_models::{CancellationToken, ToolCall, ToolSpec};
use flame_settings::{McpApproval, McpServerSettings, ResolvedModel};
use flame_workspace::Environment;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::approval::{Ask, WaitingRequest};
use crate::{Agent, ChatEvent, Sink};

/// The most frames whose offered tools are kept; past it the least recently used is forgotten
/// (its next call lists the servers again, as after a restart).
pub const MAX_KEPT_FRAMES: usize = 256;

/// The agent's MCP servers, and the tools each frame's opening was offered.
pub(crate) struct McpTools {
    servers: McpServers,
    settings: Vec<McpServerSettings>,
    kept: Mutex<Kept>,
    /// What the person was told already, so a failing server is said once, not at every opening.
    told: Mutex<HashSet<String>>,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools").field("servers", &self.servers).finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Kept {
    frames: HashMap<FrameId, (Option<u32>, Arc<Offered>, u64)>,
    uses: u64,
}

/// The MCP tools offered, and which server and tool each offered name calls.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Offered {
    specs: Vec<ToolSpec>,
    routes: HashMap<String, (String, String)>,
    /// How many tools each server offered in this list; a server that could not be listed is
    /// not here.
    counts: HashMap<String, u32>,
}

/// How an MCP call went.
pub(crate) enum McpRan {
    Done(ToolOutcome),
    Waiting(WaitingRequest),
}

/// An MCP server as the window shows it: where it stands, and how many tools the frame asked
/// about is offered from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct McpServerView {
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// Its command line or address.
    pub summary: String,
    pub status: ServerStatus,
    /// How calls to its tools are approved (the settings may approve some of its tools
    /// otherwise).
    pub approval: McpApproval,
    /// The tools the frame's model is offered from it now; `None` before the frame's first
    /// call since the app started.
    pub offered_in_frame: Option<u32>,
}

impl McpTools {
    pub fn new(settings: &[McpServerSettings], environment: &Environment) -> McpTools {
        let specs = settings
            .iter()
            .map(|s| ServerSpec { name: s.name.clone(), transport: s.transport.clone() })
            .collect();
        let lookup_from = environment.clone();
        let start = StartEnvironment {
            variables: environment.scrubbed().cloned().collect(),
            lookup: Arc::new(move |name| lookup_from.get(name)),
        };
        McpTools {
            servers: McpServers::new(specs, start, Limits::DEFAULT),
            settings: settings.to_vec(),
            kept: Mutex::default(),
            told: Mutex::default(),
        }
    }

    /// The configured server `name` calls, with the rest of the name, if it names one.
    fn server_of<'a>(&self, name: &'a str) -> Option<(&McpServerSettings, &'a str)> {
        let (server, tool) = flame_mcp_client::server_of(name)?;
        Some((self.settings.iter().find(|s| s.name == server)?, tool))
    }

    /// The tools kept for `frame`'s opening `generation`, if they were listed for it.
    fn kept(&self, frame: &FrameId, generation: Option<u32>) -> Option<Arc<Offered>> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.uses += 1;
        let uses = kept.uses;
        let (at, offered, used) = kept.frames.get_mut(frame)?;
        if *at != generation {
            return None;
        }
        *used = uses;
        Some(Arc::clone(offered))
    }

    fn keep(&self, frame: &FrameId, generation: Option<u32>, offered: &Arc<Offered>) {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.uses += 1;
        let uses = kept.uses;
        kept.frames.insert(frame.clone(), (generation, Arc::clone(offered), uses));
        if kept.frames.len() > MAX_KEPT_FRAMES
            && let Some(oldest) =
                kept.frames.iter().min_by_key(|(_, (_, _, used))| *used).map(|(f, _)| f.clone())
        {
            kept.frames.remove(&oldest);
        }
    }

    /// The kept tools of `frame`, whatever opening they were listed for.
    fn any_kept(&self, frame: &FrameId) -> Option<Arc<Offered>> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.frames.get(frame).map(|(_, offered, _)| Arc::clone(offered))
    }

    /// Every server's tools, listed now; what could not be listed, or was left out, is said to
    /// the person once.
    async fn list(&self, on_event: Sink<'_>) -> Arc<Offered> {
        let mut offered = Offered::default();
        for listing in self.servers.list_tools().await {
            match listing.tools {
                Ok(list) => {
                    offered.counts.insert(
                        listing.server.clone(),
                        u32::try_from(list.tools.len()).unwrap_or(u32::MAX),
                    );
                    for why in &list.left_out {
                        self.tell(
                            on_event,
                            format!(
                                "A tool of the MCP server {} is not offered: {why}",
                                listing.server
                            ),
                        );
                    }
                    for tool in list.tools {
                        offered.routes.insert(
                            tool.offered_name.clone(),
                            (listing.server.clone(), tool.name.clone()),
                        );
                        offered.specs.push(ToolSpec {
                            name: tool.offered_name,
                            description: tool.description,
                            schema: Value::Object(tool.schema),
                        });
                    }
                }
                // Said when it failed; not again at every opening until it is retried.
                Err(McpError { problem: Problem::FailedRecently { .. }, .. }) => {}
                Err(err) => self.tell(on_event, format!("{err}; its tools are not offered")),
            }
        }
        offered.specs.sort_by(|a, b| a.name.cmp(&b.name));
        Arc::new(offered)
    }

    fn tell(&self, on_event: Sink<'_>, text: String) {
        tracing::warn!("{text}");
        if self.told.lock().unwrap_or_else(PoisonError::into_inner).insert(text.clone()) {
            on_event(ChatEvent::Notice { text });
        }
    }
}

/// What the model is told when the person refuses an MCP call.
fn refusal_text(call: &ToolCall, reason: Option<&str>) -> String {
    let mut text = format!("The person refused this {} call.", call.name);
    if let Some(reason) = reason.map(str::trim).filter(|r| !r.is_empty()) {
        let kept = &reason[..floor_boundary(reason, flame_api::MAX_REFUSAL_BYTES)];
        text = format!("The person refused this {} call. They said: {kept}", call.name);
    }
    text
}

fn floor_boundary(text: &str, limit: usize) -> usize {
    let mut end = text.len().min(limit);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// The tokens `tools` take, as the model counts them.
fn schema_tokens(model: &ResolvedModel, tools: &[ToolSpec]) -> u64 {
    flame_tokens::count(
        flame_tokens::Encoding::for_model(&model.model.name),
        &serde_json::to_string(tools).unwrap_or_default(),
    )
}

impl Agent {
    /// Whether `call` calls a tool of one of the settings' MCP servers.
    pub(crate) fn is_mcp_call(&self, name: &str) -> bool {
        self.mcp.server_of(name).is_some()
    }

    /// The tools the next call in `frame` offers (`base`: the frame and workspace tools, then the
    /// MCP servers' as the module says) and its context, prepared with `budget` less their
    /// schemas.
    pub(crate) async fn prepare_round(
        &self,
        frame: &FrameId,
        base: &[ToolSpec],
        model: &ResolvedModel,
        budget: &mut Budget,
        policy: CachePolicy,
        on_event: Sink<'_>,
    ) -> Result<(ContextDoc, Vec<ToolSpec>), ApiError> {
        if self.mcp.servers.is_empty() {
            budget.tool_schemas = schema_tokens(model, base);
            let doc = self.flame.prepare_call(frame, *budget, policy)?;
            return Ok((doc, base.to_vec()));
        }
        let generation =
            |flame: &flame_api::Flame| flame.frame_context(frame).map(|c| c.map(|c| c.generation));
        let mut before = generation(&self.flame)?;
        let (mut offered, mut listed_now) = match self.mcp.kept(frame, before) {
            Some(offered) => (offered, false),
            None => (self.mcp.list(on_event).await, true),
        };
        loop {
            let tools: Vec<ToolSpec> = base.iter().chain(&offered.specs).cloned().collect();
            budget.tool_schemas = schema_tokens(model, &tools);
            let doc = self.flame.prepare_call(frame, *budget, policy)?;
            let after = generation(&self.flame)?;
            if after == before || listed_now {
                self.mcp.keep(frame, after, &offered);
                return Ok((doc, tools));
            }
            // This call made a new opening: it carries the servers' tools as they are now.
            let now = self.mcp.list(on_event).await;
            listed_now = true;
            before = after;
            if now.specs == offered.specs {
                self.mcp.keep(frame, after, &now);
                return Ok((doc, tools));
            }
            offered = now;
        }
    }

    /// Runs an MCP tool call made in `frame` (see the module's documentation). `answer` is the
    /// person's, when this is the call that waited.
    pub(crate) async fn run_mcp_call(
        &self,
        frame: &FrameId,
        call: &ToolCall,
        answer: Option<Answer>,
        moved_to: Option<&FrameId>,
        cancel: &CancellationToken,
        on_event: Sink<'_>,
    ) -> Result<McpRan, ApiError> {
        let Some((server, _)) = self.mcp.server_of(&call.name) else {
            return Err(ApiError::new(
                flame_api::ErrorCode::Invalid,
                format!("{} is not a tool of an MCP server in the settings", call.name),
            ));
        };
        let offered = match self.mcp.any_kept(frame) {
            Some(offered) if offered.routes.contains_key(&call.name) => offered,
            // Asked after a restart, or of a frame whose list was forgotten: listed now.
            _ => self.mcp.list(on_event).await,
        };
        let route = offered.routes.get(&call.name).cloned();
        let outcome = match route {
            // A server that could not be listed: the call says why (it did not start, it hung…).
            None if !offered.counts.contains_key(&server.name) => {
                let why =
                    self.mcp.servers.states().into_iter().find_map(|state| match state.status {
                        ServerStatus::Failed { message } if state.name == server.name => {
                            Some(message)
                        }
                        _ => None,
                    });
                ToolOutcome::error(format!(
                    "{}; its tools are not offered, so {} was not called",
                    why.unwrap_or_else(|| format!(
                        "the MCP server {} could not be listed",
                        server.name
                    )),
                    call.name
                ))
            }
            None => ToolOutcome::error(format!(
                "{} is not a tool the MCP server {} offers now; call one of the tools you are offered",
                call.name, server.name
            )),
            Some((server_name, tool)) => {
                let asks = server.approval_of(&tool) == McpApproval::Ask;
                let refusal = match answer {
                    Some(Answer::Refuse { reason }) => Some(refusal_text(call, reason.as_deref())),
                    // The network answer is a command's; given to an MCP call, it accepts it.
                    Some(
                        Answer::Accept { .. } | Answer::AcceptKind { .. } | Answer::AllowNetwork,
                    ) => None,
                    None if asks => match moved_to {
                        Some(to) => Some(flame_api::refusal_after_move(to)),
                        None => {
                            let ask = Ask::Mcp { server: server_name, tool };
                            return Ok(McpRan::Waiting(WaitingRequest { call: call.clone(), ask }));
                        }
                    },
                    None => None,
                };
                match refusal {
                    Some(text) => ToolOutcome::error(text),
                    None => self.call_server(&server_name, &tool, call, cancel).await,
                }
            }
        };
        if let Some(message) = self.flame.record_tool_result(Actor::Agent, frame, call, &outcome)? {
            on_event(ChatEvent::Saved { frame: frame.clone(), message });
        }
        Ok(McpRan::Done(outcome))
    }

    async fn call_server(
        &self,
        server: &str,
        tool: &str,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> ToolOutcome {
        if let Some(why) = call.unreadable_arguments() {
            return ToolOutcome::error(format!(
                "the arguments of {} are not JSON ({why}); call it again with a JSON object",
                call.name
            ));
        }
        let arguments = match &call.arguments {
            Value::Object(map) => map.clone(),
            Value::Null => Map::new(),
            _ => {
                return ToolOutcome::error(format!(
                    "the arguments of {} must be a JSON object",
                    call.name
                ));
            }
        };
        tokio::select! {
            result = self.mcp.servers.call(server, tool, arguments) => match result {
                Ok(reply) => ToolOutcome { content: reply.text, is_error: reply.is_error, ..ToolOutcome::default() },
                Err(err) => ToolOutcome::error(err.to_string()),
            },
            () = cancel.cancelled() => ToolOutcome::error(
                McpError { server: server.to_owned(), problem: Problem::Cancelled }.to_string(),
            ),
        }
    }

    /// The MCP servers of the settings, where each stands, and how many tools `frame`'s model is
    /// offered from each (for the context inspector and the settings).
    pub fn mcp_servers(&self, frame: Option<&FrameId>) -> Vec<McpServerView> {
        let offered = frame.and_then(|f| self.mcp.any_kept(f));
        self.mcp
            .servers
            .states()
            .into_iter()
            .map(|state| McpServerView {
                approval: self
                    .settings
                    .mcp_servers
                    .iter()
                    .find(|s| s.name == state.name)
                    .map_or(McpApproval::Ask, |s| s.approval),
                offered_in_frame: offered
                    .as_ref()
                    .map(|o| o.counts.get(&state.name).copied().unwrap_or(0)),
                name: state.name,
                transport: state.transport,
                summary: state.summary,
                status: state.status,
            })
            .collect()
    }

    /// Stops every MCP server this agent started: when the app or `flame chat` ends.
    pub async fn stop_mcp_servers(&self) {
        self.mcp.servers.stop().await;
    }

    /// Kills every MCP server this agent started, at once: for an exit that cannot wait.
    pub fn kill_mcp_servers(&self) {
        self.mcp.servers.kill_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(n: usize) -> FrameId {
        FrameId::from_trusted(format!("f{n:010}"))
    }

    #[test]
    fn the_tools_of_at_most_the_limit_of_frames_are_kept_the_least_used_forgotten() {
        let tools = McpTools::new(&[], &Environment::from_variables([]));
        let offered = Arc::new(Offered::default());
        for n in 0..MAX_KEPT_FRAMES {
            tools.keep(&frame(n), Some(1), &offered);
        }
        // The first frame is used again, so the second is the least recently used.
        assert!(tools.kept(&frame(0), Some(1)).is_some());
        tools.keep(&frame(MAX_KEPT_FRAMES), Some(1), &offered);
        assert!(tools.kept(&frame(0), Some(1)).is_some());
        assert!(tools.kept(&frame(1), None).is_none() && tools.any_kept(&frame(1)).is_none());
        assert!(tools.any_kept(&frame(MAX_KEPT_FRAMES)).is_some());
        // Another opening's list is not this one's.
        assert!(tools.kept(&frame(0), Some(2)).is_none());
    }
}
