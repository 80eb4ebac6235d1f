//! One configured server: started at its first use, listed and called within the limits, and
//! started again at the use after it broke.
//!
//! A server is *idle* until something needs it, then *running*, or *failed* when it could not
//! start; a failed server is not tried again for [`crate::RETRY_START_AFTER`], so one that cannot
//! start costs its start timeout once, not at every frame's opening. A running server whose
//! connection breaks (its process exited, it sent a message over the limit, what it wrote was not
//! JSON-RPC) is stopped, the call that met it gets an error saying which of those it was, and the
//! server is idle again, so the next use starts it afresh. A call that times out or that the
//! server refuses leaves it running. Starting holds the server's lock, so two frames that need it
//! at once start it once; calls and listings do not hold it, so a slow call holds up nothing else.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation,
    PaginatedRequestParams, Tool,
};
use rmcp::service::{Peer, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::{McpTransport, expand};
use crate::error::{McpError, Problem};
use crate::limits::{
    Limits, MAX_LIST_PAGES, MAX_TOOL_DESCRIPTION_BYTES, MAX_TOOLS_PER_SERVER, cut, error_text,
};
use crate::names::offered_name;
use crate::process::{Launch, ServerProcess};
use crate::reply::{ToolReply, reply};
use crate::schema::offered_schema;
use crate::transport::{Broken, LineTransport, OutputWatch};

/// One server as the settings name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    pub name: String,
    pub transport: McpTransport,
}

/// What servers start from.
pub struct StartEnvironment {
    /// The variables a stdio server starts with, before its own: the environment Flame's
    /// commands start from, keys removed.
    pub variables: Vec<(OsString, OsString)>,
    /// Where `${NAME}` in a server's settings is looked up: the environment Flame started from,
    /// keys included, since the person named the variable for that server.
    pub lookup: Lookup,
}

/// Reads one variable of an environment.
pub type Lookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

impl std::fmt::Debug for StartEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StartEnvironment")
            .field("variables", &self.variables.len())
            .finish_non_exhaustive()
    }
}

/// A tool a server offers, as it is offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedTool {
    /// `server__tool` (see [`crate::offered_name`]).
    pub offered_name: String,
    /// The tool's own name, which the server is called with.
    pub name: String,
    pub description: String,
    /// Its input schema, made one every provider accepts ([`crate::offered_schema`]).
    pub schema: Map<String, Value>,
}

/// A server's tools, in the order of their offered names, and those it offers that are not
/// offered to the model, each with why.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolList {
    pub tools: Vec<ListedTool>,
    pub left_out: Vec<String>,
}

/// Where a server stands, for the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ServerStatus {
    /// Not needed yet (it starts at the first call that needs it), or stopped.
    NotStarted,
    /// Running; with how many tools it offered when last listed.
    Running { tools: Option<u32> },
    /// Its last start or call failed; it is tried again at its next use.
    Failed { message: String },
}

/// How long an ended process is given to finish writing its standard error, so an error can
/// say what it wrote.
const EXIT_WAIT: Duration = Duration::from_millis(500);

pub(crate) struct Server {
    spec: ServerSpec,
    start_environment: Arc<StartEnvironment>,
    limits: Limits,
    state: tokio::sync::Mutex<State>,
    /// What the window is shown, readable while a start holds the state.
    shown: Mutex<ServerStatus>,
    /// The running stdio server's process group, to kill from code that cannot wait.
    group: Mutex<Option<Pid>>,
    epochs: AtomicU64,
}

enum State {
    Idle,
    Running(Box<Connection>),
    Failed { problem: Problem, at: Instant },
}

struct Connection {
    service: RunningService<RoleClient, ClientConfig>,
    process: Option<ServerProcess>,
    watch: Option<Arc<OutputWatch>>,
    epoch: u64,
}

impl Connection {
    fn live(&self) -> Live {
        Live { peer: self.service.peer().clone(), epoch: self.epoch }
    }

    fn is_open(&self) -> bool {
        !self.service.is_closed()
            && !self.service.peer().is_transport_closed()
            && self.watch.as_ref().is_none_or(|w| w.broken().is_none())
    }
}

/// A running server's connection, as a call uses it.
struct Live {
    peer: Peer<RoleClient>,
    epoch: u64,
}

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("flame", env!("CARGO_PKG_VERSION")),
    )
}

impl Server {
    pub fn new(
        spec: ServerSpec,
        start_environment: Arc<StartEnvironment>,
        limits: Limits,
    ) -> Server {
        Server {
            spec,
            start_environment,
            limits,
            state: tokio::sync::Mutex::new(State::Idle),
            shown: Mutex::new(ServerStatus::NotStarted),
            group: Mutex::new(None),
            epochs: AtomicU64::new(0),
        }
    }

    pub fn spec(&self) -> &ServerSpec {
        &self.spec
    }

    pub fn status(&self) -> ServerStatus {
        self.shown.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn show(&self, status: ServerStatus) {
        *self.shown.lock().unwrap_or_else(PoisonError::into_inner) = status;
    }

    fn error(&self, problem: Problem) -> McpError {
        McpError::new(&self.spec.name, problem)
    }

    /// The server's tools, listed now (starting it if it is not running).
    pub async fn tools(&self) -> Result<ToolList, McpError> {
        let live = self.live().await?;
        match tokio::time::timeout(self.limits.list, list_pages(&live.peer)).await {
            Ok(Ok((tools, more))) => {
                let list = tool_list(&self.spec.name, tools, more);
                let count = u32::try_from(list.tools.len()).unwrap_or(u32::MAX);
                self.show(ServerStatus::Running { tools: Some(count) });
                Ok(list)
            }
            Ok(Err(err)) => Err(self.error(self.after_error(&live, err).await)),
            Err(_) => Err(self.error(Problem::TimedOut {
                what: "the request for its tools",
                after: self.limits.list,
                noise: None,
                stderr: String::new(),
            })),
        }
    }

    /// Calls `tool` with `arguments` (starting the server if it is not running).
    pub async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<ToolReply, McpError> {
        let live = self.live().await?;
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        match tokio::time::timeout(self.limits.call, live.peer.call_tool(params)).await {
            Ok(Ok(result)) => Ok(reply(result, self.limits.max_result_text_bytes)),
            Ok(Err(err)) => Err(self.error(self.after_error(&live, err).await)),
            // The server is told the call was cancelled when it is dropped, and stays running.
            Err(_) => Err(self.error(Problem::TimedOut {
                what: "the call",
                after: self.limits.call,
                noise: None,
                stderr: String::new(),
            })),
        }
    }

    /// The running connection, started now if there is none (see the module's documentation).
    async fn live(&self) -> Result<Live, McpError> {
        let mut state = self.state.lock().await;
        if let State::Running(connection) = &*state {
            if connection.is_open() {
                return Ok(connection.live());
            }
            // It ended since its last use; it is started again below.
            if let State::Running(connection) = std::mem::replace(&mut *state, State::Idle) {
                let problem = self.close(*connection, None).await;
                tracing::info!("the MCP server {} had ended: {problem}", self.spec.name);
            }
        }
        if let State::Failed { problem, at } = &*state {
            let since = at.elapsed();
            if since < self.limits.retry_start_after {
                return Err(self.error(Problem::FailedRecently {
                    earlier: Box::new(problem.clone()),
                    retry_in: self.limits.retry_start_after - since,
                }));
            }
        }
        match self.start().await {
            Ok(connection) => {
                let live = connection.live();
                *state = State::Running(Box::new(connection));
                self.show(ServerStatus::Running { tools: None });
                Ok(live)
            }
            Err(problem) => {
                self.show(ServerStatus::Failed {
                    message: self.error(problem.clone()).to_string(),
                });
                *state = State::Failed { problem: problem.clone(), at: Instant::now() };
                Err(self.error(problem))
            }
        }
    }

    async fn start(&self) -> Result<Connection, Problem> {
        let epoch = self.epochs.fetch_add(1, Ordering::Relaxed);
        let lookup = &*self.start_environment.lookup;
        let cannot = |reason: String| Problem::CannotStart { reason };
        match &self.spec.transport {
            McpTransport::Stdio { command, args, env, cwd } => {
                let program = expand(command, lookup).map_err(cannot)?;
                let args = args
                    .iter()
                    .map(|a| expand(a, lookup))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(cannot)?;
                let mut environment = self.start_environment.variables.clone();
                for (name, value) in env {
                    let value = expand(value, lookup).map_err(cannot)?;
                    environment.push((name.into(), value.into()));
                }
                let cwd = cwd.as_deref().map(|c| expand(c, lookup)).transpose().map_err(cannot)?;
                let launch = Launch { program: program.clone(), args, environment, cwd };
                let (mut process, stdout, stdin) = ServerProcess::spawn(&launch)
                    .map_err(|e| cannot(format!("could not run {program}: {e}")))?;
                *self.group.lock().unwrap_or_else(PoisonError::into_inner) = process.group();
                let watch = Arc::new(OutputWatch::default());
                let transport = LineTransport::new(
                    stdout,
                    stdin,
                    Arc::clone(&watch),
                    self.limits.max_message_bytes,
                    self.limits.max_noise_bytes,
                );
                let started =
                    tokio::time::timeout(self.limits.start, client_config().serve(transport)).await;
                let problem = match started {
                    Ok(Ok(service)) => {
                        return Ok(Connection {
                            service,
                            process: Some(process),
                            watch: Some(watch),
                            epoch,
                        });
                    }
                    Ok(Err(err)) => self.ended(&mut process, &watch, &err.to_string()).await,
                    Err(_) => match watch.broken() {
                        Some(broken) => broken_problem(broken, self.limits.max_message_bytes),
                        None => Problem::TimedOut {
                            what: "the initialize request",
                            after: self.limits.start,
                            noise: watch.noise_sample(),
                            stderr: process.stderr_tail(),
                        },
                    },
                };
                process.stop(self.limits.stop_grace).await;
                *self.group.lock().unwrap_or_else(PoisonError::into_inner) = None;
                Err(problem)
            }
            McpTransport::Http { url, headers } => {
                let url = expand(url, lookup).map_err(cannot)?;
                let mut custom = HashMap::new();
                for (name, value) in headers {
                    let value = expand(value, lookup).map_err(cannot)?;
                    let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|_| cannot(format!("{name:?} is not a header name")))?;
                    let value = reqwest::header::HeaderValue::from_str(&value).map_err(|_| {
                        cannot(format!("the value of the header {name} is not one"))
                    })?;
                    custom.insert(name, value);
                }
                let config = StreamableHttpClientTransportConfig::with_uri(url)
                    .custom_headers(custom)
                    .max_sse_event_size(self.limits.max_message_bytes);
                use_ring_for_tls();
                let transport = StreamableHttpClientTransport::from_config(config);
                match tokio::time::timeout(self.limits.start, client_config().serve(transport))
                    .await
                {
                    Ok(Ok(service)) => {
                        Ok(Connection { service, process: None, watch: None, epoch })
                    }
                    Ok(Err(err)) => Err(cannot(error_text(&err.to_string()))),
                    Err(_) => Err(Problem::TimedOut {
                        what: "the initialize request",
                        after: self.limits.start,
                        noise: None,
                        stderr: String::new(),
                    }),
                }
            }
        }
    }

    /// What a failed request says of the server. A refusal or an answer of the wrong kind
    /// leaves it running; a broken connection is closed, and the server started again at its
    /// next use.
    async fn after_error(&self, live: &Live, err: ServiceError) -> Problem {
        match err {
            ServiceError::McpError(data) => {
                return Problem::Refused { message: error_text(&data.message) };
            }
            ServiceError::UnexpectedResponse => {
                return Problem::Protocol {
                    detail: "it answered with something other than what was asked".to_owned(),
                };
            }
            ServiceError::Cancelled { .. } => return Problem::Cancelled,
            _ => {}
        }
        let mut state = self.state.lock().await;
        let ours = matches!(&*state, State::Running(c) if c.epoch == live.epoch);
        let problem = if ours
            && let State::Running(connection) = std::mem::replace(&mut *state, State::Idle)
        {
            self.close(*connection, Some(&err.to_string())).await
        } else {
            Problem::Protocol { detail: error_text(&err.to_string()) }
        };
        self.show(ServerStatus::Failed { message: self.error(problem.clone()).to_string() });
        problem
    }

    /// Closes a connection that broke or ended and says why it did (`detail`: the error that
    /// showed it, if one did).
    async fn close(&self, connection: Connection, detail: Option<&str>) -> Problem {
        let Connection { service, process, watch, .. } = connection;
        let problem = match (process, watch) {
            (Some(mut process), Some(watch)) => {
                let problem = self
                    .ended(&mut process, &watch, detail.unwrap_or("its connection closed"))
                    .await;
                process.stop(self.limits.stop_grace).await;
                problem
            }
            _ => {
                Problem::Protocol { detail: error_text(detail.unwrap_or("its connection closed")) }
            }
        };
        *self.group.lock().unwrap_or_else(PoisonError::into_inner) = None;
        let _ = tokio::time::timeout(self.limits.stop_grace, service.cancel()).await;
        problem
    }

    /// Why a stdio server's connection ended: what the reader saw, else how the process ended,
    /// else `detail`.
    async fn ended(
        &self,
        process: &mut ServerProcess,
        watch: &OutputWatch,
        detail: &str,
    ) -> Problem {
        if let Some(broken) = watch.broken() {
            return broken_problem(broken, self.limits.max_message_bytes);
        }
        match process.exit_within(EXIT_WAIT).await {
            Some(status) => {
                process.stderr_closed_within(EXIT_WAIT).await;
                Problem::Exited { status: describe(status), stderr: process.stderr_tail() }
            }
            None => Problem::Protocol { detail: error_text(detail) },
        }
    }

    /// Stops the server: its input closed, then its process group asked to exit and killed.
    pub async fn stop(&self) {
        let connection = match std::mem::replace(&mut *self.state.lock().await, State::Idle) {
            State::Running(connection) => Some(connection),
            _ => None,
        };
        if let Some(connection) = connection {
            let Connection { service, process, .. } = *connection;
            let _ = tokio::time::timeout(self.limits.stop_grace, service.cancel()).await;
            if let Some(process) = process {
                process.stop(self.limits.stop_grace).await;
            }
        }
        *self.group.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.show(ServerStatus::NotStarted);
    }

    /// Kills a running stdio server's process group now, for code that cannot wait (the app
    /// exiting).
    pub fn kill_now(&self) {
        if let Some(group) = *self.group.lock().unwrap_or_else(PoisonError::into_inner) {
            let _ = killpg(group, Signal::SIGKILL);
        }
    }
}

fn broken_problem(broken: Broken, limit: usize) -> Problem {
    match broken {
        Broken::TooLarge => Problem::TooLarge { limit },
        Broken::Noise(sample) => Problem::NotJsonRpc { sample },
        Broken::Malformed(sample) => Problem::Protocol {
            detail: format!("it sent a message that is not JSON-RPC: {sample}"),
        },
    }
}

fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => status.to_string(),
    }
}

/// Every page of the server's tools, up to [`MAX_LIST_PAGES`] pages and a few more tools than a
/// server may offer; the second value says whether it had more.
async fn list_pages(peer: &Peer<RoleClient>) -> Result<(Vec<Tool>, bool), ServiceError> {
    let mut tools = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_LIST_PAGES {
        let page =
            peer.list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor))).await?;
        tools.extend(page.tools);
        cursor = page.next_cursor;
        if cursor.is_none() {
            return Ok((tools, false));
        }
        if tools.len() > MAX_TOOLS_PER_SERVER {
            break;
        }
    }
    Ok((tools, cursor.is_some()))
}

/// The tools of `server` as they are offered: named, mended, sorted and capped, with what was
/// left out and why.
fn tool_list(server: &str, tools: Vec<Tool>, more: bool) -> ToolList {
    let mut list = ToolList::default();
    let mut names = BTreeSet::new();
    let mut tools: Vec<Tool> = tools;
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    for tool in tools {
        let Some(offered) = offered_name(server, &tool.name) else {
            list.left_out
                .push(format!("a tool named {:?}: no name left to offer it under", tool.name));
            continue;
        };
        if !names.insert(offered.clone()) {
            list.left_out.push(format!("{}: another tool is offered as {offered}", tool.name));
            continue;
        }
        let schema = match offered_schema(&tool.input_schema) {
            Ok(schema) => schema,
            Err(why) => {
                names.remove(&offered);
                list.left_out.push(format!("{}: {why}", tool.name));
                continue;
            }
        };
        let description = tool.description.as_deref().or(tool.title.as_deref()).unwrap_or_default();
        let kept = cut(description.trim(), MAX_TOOL_DESCRIPTION_BYTES);
        list.tools.push(ListedTool {
            offered_name: offered,
            name: tool.name.into_owned(),
            description: kept.to_owned(),
            schema,
        });
    }
    list.tools.sort_by(|a, b| a.offered_name.cmp(&b.offered_name));
    if list.tools.len() > MAX_TOOLS_PER_SERVER {
        let over: Vec<String> = list.tools.drain(MAX_TOOLS_PER_SERVER..).map(|t| t.name).collect();
        list.left_out.push(format!(
            "{} more tools ({}): a server may offer at most {MAX_TOOLS_PER_SERVER}",
            over.len(),
            over.join(", ")
        ));
    }
    if more {
        list.left_out.push(format!(
            "the rest of its list: it came in more than {MAX_LIST_PAGES} pages or past {MAX_TOOLS_PER_SERVER} tools"
        ));
    }
    list
}

/// Gives rustls ring's cryptography for the process, as `flame_models::use_ring_for_tls` does
/// (this crate depends on no Flame crate): the streamable HTTP transport builds its reqwest client
/// itself, which reqwest refuses while the process has no cryptography chosen.
fn use_ring_for_tls() {
    static CHOSEN: std::sync::Once = std::sync::Once::new();
    CHOSEN.call_once(|| {
        // Flame's model clients may have chosen first; their choice is the same.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn tool(name: &str, schema: Value) -> Tool {
        let Value::Object(schema) = schema else { panic!() };
        Tool::new(name.to_owned(), format!("The {name} tool"), Arc::new(schema))
    }

    #[test]
    fn tools_are_named_sorted_and_the_unusable_left_out_with_why() {
        let list = tool_list(
            "srv",
            vec![
                tool("zeta", json!({"type": "object"})),
                tool("alpha", json!({"type": "object", "properties": {"a": true}})),
                tool("a.b", json!({"type": "object"})),
                tool("a_b", json!({"type": "object"})),
                tool("listy", json!({"type": "array"})),
            ],
            false,
        );
        let names: Vec<&str> = list.tools.iter().map(|t| t.offered_name.as_str()).collect();
        assert_eq!(names, ["srv__a_b", "srv__alpha", "srv__zeta"]);
        assert_eq!(list.tools[0].name, "a.b", "the server is called with the tool's own name");
        assert_eq!(list.tools[1].schema["properties"]["a"], json!({}));
        assert_eq!(list.left_out.len(), 2, "{:?}", list.left_out);
        assert!(list.left_out[0].contains("another tool is offered as srv__a_b"));
        assert!(list.left_out[1].starts_with("listy:"));
    }

    #[test]
    fn a_long_description_is_cut() {
        let mut long = tool("long", json!({}));
        long.description = Some("é".repeat(MAX_TOOL_DESCRIPTION_BYTES).into());
        let list = tool_list("srv", vec![long], false);
        assert_eq!(list.tools[0].description.len(), MAX_TOOL_DESCRIPTION_BYTES);
    }

    #[test]
    fn a_server_offers_at_most_the_limit() {
        let tools: Vec<Tool> =
            (0..MAX_TOOLS_PER_SERVER + 3).map(|i| tool(&format!("t{i:04}"), json!({}))).collect();
        let list = tool_list("srv", tools, true);
        assert_eq!(list.tools.len(), MAX_TOOLS_PER_SERVER);
        assert!(list.left_out[0].starts_with("3 more tools"), "{:?}", list.left_out);
        assert!(list.left_out[1].contains("the rest of its list"));
    }
}
