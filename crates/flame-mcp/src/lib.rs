//! `flame mcp`: Flame's frame tools served over the Model Context Protocol (stdio), so that
//! Claude Code, OpenCode and any other MCP client can push, plan and pop frames in the tree a
//! person watches in the app.
//!
//! The tools are the agent's own (`flame-frame-tools`: same names, schemas and code paths),
//! run as `Actor::Agent` on the focused frame of the served tree, plus `frame_context` — the
//! assembled context of a frame, as the app's inspector shows it. Each frame's log is offered as
//! a resource, `flame://log/<frame id>`. Refusals come back as tool errors with the same
//! messages as the command line.

use std::sync::Arc;

use flame_api::{Budget, Flame};
use flame_model::{FrameId, ToolCall, ToolSpec, TreeId};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

const LOG_SCHEME: &str = "flame://log/";

/// The MCP server over one data directory, on one tree (the one current at its start if none
/// was named).
#[derive(Debug, Clone)]
pub struct FlameServer {
    flame: Arc<Flame>,
    tree: Option<TreeId>,
}

impl FlameServer {
    /// A server on `tree`, or on the tree current when it starts: the served tree is pinned, so
    /// a tree made meanwhile by the app or the command line does not change what it serves.
    pub fn new(flame: Arc<Flame>, tree: Option<TreeId>) -> FlameServer {
        let tree = tree.or_else(|| flame.status(None).ok().map(|status| status.tree.id));
        FlameServer { flame, tree }
    }

    /// The frame the tools act in: the served tree's focus, read afresh on every call, since
    /// the app and other clients move it too.
    fn current(&self) -> Result<FrameId, String> {
        self.flame.status(self.tree.as_ref()).map(|s| s.focus).map_err(|e| e.message)
    }

    /// The tree this server serves: the one named at start, else the current one.
    fn served_tree(&self) -> Result<TreeId, String> {
        self.flame.status(self.tree.as_ref()).map(|s| s.tree.id).map_err(|e| e.message)
    }

    /// Refuses a frame outside the served tree, so a client given one tree can neither read
    /// the history of the data directory's other trees nor assemble their contexts.
    fn check_served(&self, id: &FrameId) -> Result<(), String> {
        let served = self.served_tree()?;
        let entry = self.flame.frame(id).map_err(|e| e.message)?;
        if entry.frame.tree != served {
            return Err(format!(
                "frame {id} is not in the served tree {served}; this server offers only its frames"
            ));
        }
        Ok(())
    }

    fn tools() -> Vec<Tool> {
        let mut specs = flame_frame_tools::specs();
        specs.push(ToolSpec {
            name: "frame_context".to_owned(),
            description: "The context Flame assembles for a frame (the current one by default): the stack-context XML, the frame's messages that fit, and the tokens of every section.".to_owned(),
            schema: json!({"type": "object", "properties": {
                "id": {"type": "string"},
                "budget": {"type": "integer", "minimum": 0, "description": "Tokens the context may use"}
            }}),
        });
        specs
            .into_iter()
            .map(|spec| {
                Tool::new(
                    spec.name,
                    spec.description,
                    Arc::new(spec.schema.as_object().cloned().unwrap_or_default()),
                )
            })
            .collect()
    }

    fn call(&self, name: &str, arguments: Value) -> Result<String, String> {
        let current = self.current()?;
        if name == "frame_context" {
            let id = arguments
                .get("id")
                .and_then(Value::as_str)
                .map(FrameId::parse)
                .transpose()
                .map_err(|e| e.to_string())?;
            if let Some(id) = &id {
                self.check_served(id)?;
            }
            let budget = arguments.get("budget").and_then(Value::as_u64).map(Budget::of);
            let doc = self
                .flame
                .context(Some(id.as_ref().unwrap_or(&current)), budget)
                .map_err(|e| e.message)?;
            return serde_json::to_string_pretty(&doc).map_err(|e| e.to_string());
        }
        let call = ToolCall { arguments, id: "mcp".to_owned(), name: name.to_owned() };
        let outcome = flame_frame_tools::run(&self.flame, &current, &call);
        if outcome.is_error { Err(outcome.content) } else { Ok(outcome.content) }
    }
}

impl ServerHandler for FlameServer {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_server_info(Implementation::new("flame", flame_api::VERSION))
            .with_instructions(
                "Flame organises work as a tree of frames. The tools act on the focused frame of the served tree: push_frame for a distinct subtask, pop_frame when its success criteria are met (with results), plan_frames to sketch work ahead, frame_status to see the tree, frame_context for what a model working in a frame would see, read_frame_log (or the flame://log/<id> resources) for a frame's full history.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(FlameServer::tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = match self.call(&request.name, arguments) {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let status = self
            .flame
            .status(self.tree.as_ref())
            .map_err(|e| ErrorData::internal_error(e.message, None))?;
        let resources = status
            .frames
            .iter()
            .map(|entry| {
                let mut resource = Resource::new(
                    format!("{LOG_SCHEME}{}", entry.frame.id),
                    format!("{} ({})", entry.frame.title, entry.frame.status),
                );
                resource.mime_type = Some("text/markdown".to_owned());
                resource.description = Some(format!("The full log of frame {}", entry.frame.id));
                resource
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let id = request.uri.strip_prefix(LOG_SCHEME).ok_or_else(|| {
            ErrorData::resource_not_found(
                format!(
                    "{} is not a Flame log (they look like {LOG_SCHEME}<frame id>)",
                    request.uri
                ),
                None,
            )
        })?;
        let id =
            FrameId::parse(id).map_err(|e| ErrorData::resource_not_found(e.to_string(), None))?;
        let not_found = |message: String| ErrorData::resource_not_found(message, None);
        self.check_served(&id).map_err(not_found)?;
        let log = self.flame.log(&id).map_err(|e| not_found(e.message))?;
        let contents =
            ResourceContents::text(log, request.uri.clone()).with_mime_type("text/markdown");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// Serves `server` over stdin and stdout until the client disconnects.
pub async fn serve_stdio(server: FlameServer) -> Result<(), String> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("the MCP session did not start: {e}"))?;
    running.waiting().await.map_err(|e| format!("the MCP session ended with an error: {e}"))?;
    Ok(())
}
