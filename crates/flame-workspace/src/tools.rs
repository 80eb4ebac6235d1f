//! The six workspace tools as a model sees them: names, descriptions and JSON schemas, the typed
//! arguments a call carries, and the kind of each tool that the approval policy keys on.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

pub use flame_model::{LeaveSandbox, ToolKind};

use crate::{CommandRequest, LineRange, MAX_COMMAND_TIMEOUT, MAX_CONTEXT_LINES, SearchQuery};

/// The files a call read and changed, for the frame's file trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Touched {
    /// Workspace-relative paths.
    Files { read: Vec<String>, changed: Vec<String> },
    /// A command may have read or changed anything; which files is not known.
    Unknown,
}

impl Touched {
    pub fn files(read: Vec<String>, changed: Vec<String>) -> Touched {
        Touched::Files { read, changed }
    }
}

/// One tool as offered to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkspaceToolSpec {
    pub name: &'static str,
    pub kind: ToolKind,
    pub description: &'static str,
    /// A JSON Schema (draft 2020-12) document for the arguments.
    pub schema: Value,
}

/// The kind of the workspace tool `name`, without building the schemas; `None` for any other
/// name. A test keeps it equal to the kinds [`tool_specs`] gives.
pub fn tool_kind(name: &str) -> Option<ToolKind> {
    match name {
        "read_file" | "list_files" | "search" => Some(ToolKind::Reading),
        "write_file" | "edit_file" => Some(ToolKind::Changing),
        "run_command" => Some(ToolKind::Running),
        _ => None,
    }
}

/// The six tools, in the order they are offered.
pub fn tool_specs() -> Vec<WorkspaceToolSpec> {
    let spec =
        |name, kind, description, schema| WorkspaceToolSpec { name, kind, description, schema };
    let path = json!({"type": "string", "description": "Relative to the workspace root"});
    let glob = json!({"type": "string", "description": "Without '/' matches file names anywhere (*.rs); with '/' the whole path (src/**/*.ts)"});
    vec![
        spec(
            "read_file",
            ToolKind::Reading,
            "Read a text file, lines numbered like cat -n. At most 256 KB per call; the reply says how to read on.",
            json!({"type": "object", "properties": {
                "path": path,
                "start_line": {"type": "integer", "minimum": 1, "description": "First line, from 1"},
                "end_line": {"type": "integer", "minimum": 1, "description": "Last line, inclusive"}
            }, "required": ["path"], "additionalProperties": false}),
        ),
        spec(
            "list_files",
            ToolKind::Reading,
            "List workspace files matching a glob, sorted (at most 1000). Skips .gitignore'd and hidden files.",
            json!({"type": "object", "properties": {"glob": glob}, "additionalProperties": false}),
        ),
        spec(
            "search",
            ToolKind::Reading,
            "Search file contents with a regular expression (ripgrep syntax). Skips ignored, hidden and binary files. Returns path, line numbers and context.",
            json!({"type": "object", "properties": {
                "pattern": {"type": "string"},
                "glob": glob,
                "context_lines": {"type": "integer", "minimum": 0, "maximum": MAX_CONTEXT_LINES},
                "case_insensitive": {"type": "boolean"}
            }, "required": ["pattern"], "additionalProperties": false}),
        ),
        spec(
            "write_file",
            ToolKind::Changing,
            "Create or replace a whole file (folders made as needed). Prefer edit_file for changes to an existing file.",
            json!({"type": "object", "properties": {
                "path": path,
                "content": {"type": "string"}
            }, "required": ["path", "content"], "additionalProperties": false}),
        ),
        spec(
            "edit_file",
            ToolKind::Changing,
            "Replace exact text in a file. old_string must occur exactly once (include surrounding lines), or set replace_all.",
            json!({"type": "object", "properties": {
                "path": path,
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean"}
            }, "required": ["path", "old_string", "new_string"], "additionalProperties": false}),
        ),
        spec(
            "run_command",
            ToolKind::Running,
            "Run a bash command in the workspace root, sandboxed where possible: only the workspace (not .git) and a private /tmp writable, no network. Output is cut to its start and end.",
            json!({"type": "object", "properties": {
                "command": {"type": "string"},
                "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": MAX_COMMAND_TIMEOUT.as_secs(), "description": "Default 120"},
                "leave_sandbox": {"type": "string", "enum": ["network", "all"], "description": "Ask the person to allow the network, or running outside the sandbox; give a reason"},
                "reason": {"type": "string"}
            }, "required": ["command"], "additionalProperties": false}),
        ),
    ]
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    pub path: String,
    pub start_line: Option<u64>,
    pub end_line: Option<u64>,
}

impl ReadFileArgs {
    pub fn range(&self) -> Option<LineRange> {
        match (self.start_line, self.end_line) {
            (None, None) => None,
            (start, end) => Some(LineRange { start: start.unwrap_or(1), end }),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListFilesArgs {
    pub glob: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    pub pattern: String,
    pub glob: Option<String>,
    pub context_lines: Option<usize>,
    pub case_insensitive: Option<bool>,
}

impl SearchArgs {
    pub fn query(&self) -> SearchQuery {
        SearchQuery {
            pattern: self.pattern.clone(),
            glob: self.glob.clone(),
            context_lines: self.context_lines.unwrap_or(0),
            case_insensitive: self.case_insensitive.unwrap_or(false),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    pub path: String,
    pub content: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    pub path: String,
    pub old_string: String,
    pub new_string: String,
    #[serde(default)]
    pub replace_all: bool,
}

/// The longest reason a command may give for leaving the sandbox, in bytes: a sentence or two
/// for the approval prompt.
pub const MAX_LEAVE_REASON_BYTES: usize = 1024;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunCommandArgs {
    pub command: String,
    pub timeout_seconds: Option<u64>,
    /// What of the sandbox the command asks to leave; the person is asked, with `reason`.
    pub leave_sandbox: Option<LeaveSandbox>,
    /// Why, in the model's words: required with `leave_sandbox`, at most
    /// [`MAX_LEAVE_REASON_BYTES`].
    pub reason: Option<String>,
}

impl RunCommandArgs {
    /// A request to leave the sandbox comes with a reason the person can read.
    fn check_leave(&self) -> Result<(), ArgumentsError> {
        let error = |message: String| ArgumentsError { tool: "run_command", message };
        let reason = self.reason.as_deref().map(str::trim).unwrap_or_default();
        if self.leave_sandbox.is_some() && reason.is_empty() {
            return Err(error(
                "leave_sandbox needs a reason: say in a sentence why the command needs it".into(),
            ));
        }
        if reason.len() > MAX_LEAVE_REASON_BYTES {
            return Err(error(format!(
                "the reason is {} bytes; give one of at most {MAX_LEAVE_REASON_BYTES}",
                reason.len()
            )));
        }
        Ok(())
    }

    pub fn request(&self) -> CommandRequest {
        CommandRequest {
            command: self.command.clone(),
            timeout: self.timeout_seconds.map(Duration::from_secs),
        }
    }
}

/// A call of one of the workspace tools, with its arguments parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkspaceCall {
    ReadFile(ReadFileArgs),
    ListFiles(ListFilesArgs),
    Search(SearchArgs),
    WriteFile(WriteFileArgs),
    EditFile(EditFileArgs),
    RunCommand(RunCommandArgs),
}

/// Arguments that do not fit a tool's schema.
#[derive(Debug, thiserror::Error)]
#[error("the arguments of {tool} are not valid: {message}")]
pub struct ArgumentsError {
    pub tool: &'static str,
    pub message: String,
}

impl WorkspaceCall {
    /// Parses a call of the tool `name`; `None` when `name` is not a workspace tool.
    pub fn parse(name: &str, arguments: &Value) -> Option<Result<WorkspaceCall, ArgumentsError>> {
        fn parse<T: for<'de> Deserialize<'de>>(
            tool: &'static str,
            arguments: &Value,
            wrap: fn(T) -> WorkspaceCall,
        ) -> Result<WorkspaceCall, ArgumentsError> {
            T::deserialize(arguments)
                .map(wrap)
                .map_err(|e| ArgumentsError { tool, message: e.to_string() })
        }
        Some(match name {
            "run_command" => {
                parse("run_command", arguments, WorkspaceCall::RunCommand).and_then(|call| {
                    match &call {
                        WorkspaceCall::RunCommand(args) => args.check_leave().map(|()| call),
                        _ => Ok(call),
                    }
                })
            }
            "read_file" => parse("read_file", arguments, WorkspaceCall::ReadFile),
            "list_files" => parse("list_files", arguments, WorkspaceCall::ListFiles),
            "search" => parse("search", arguments, WorkspaceCall::Search),
            "write_file" => parse("write_file", arguments, WorkspaceCall::WriteFile),
            "edit_file" => parse("edit_file", arguments, WorkspaceCall::EditFile),
            _ => return None,
        })
    }

    pub fn kind(&self) -> ToolKind {
        match self {
            WorkspaceCall::ReadFile(_) | WorkspaceCall::ListFiles(_) | WorkspaceCall::Search(_) => {
                ToolKind::Reading
            }
            WorkspaceCall::WriteFile(_) | WorkspaceCall::EditFile(_) => ToolKind::Changing,
            WorkspaceCall::RunCommand(_) => ToolKind::Running,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid_samples(name: &str) -> Vec<Value> {
        match name {
            "read_file" => vec![
                json!({"path": "src/main.rs"}),
                json!({"path": "a.txt", "start_line": 10, "end_line": 20}),
            ],
            "list_files" => vec![json!({}), json!({"glob": "src/**/*.rs"})],
            "search" => vec![
                json!({"pattern": "fn main"}),
                json!({"pattern": "x", "glob": "*.rs", "context_lines": 2, "case_insensitive": true}),
            ],
            "write_file" => vec![json!({"path": "a.txt", "content": ""})],
            "edit_file" => vec![
                json!({"path": "a.txt", "old_string": "a", "new_string": "b"}),
                json!({"path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": true}),
            ],
            "run_command" => vec![
                json!({"command": "cargo test"}),
                json!({"command": "make", "timeout_seconds": 600}),
                json!({"command": "cargo fetch", "leave_sandbox": "network", "reason": "fetch crates"}),
                json!({"command": "git commit -am x", "leave_sandbox": "all", "reason": "commit"}),
            ],
            other => panic!("no samples for {other}"),
        }
    }

    fn invalid_samples(name: &str) -> Vec<Value> {
        match name {
            "read_file" => vec![
                json!({}),
                json!({"path": "a", "start_line": 0}),
                json!({"path": "a", "extra": 1}),
            ],
            "list_files" => vec![json!({"glob": 3}), json!({"pattern": "*.rs"})],
            "search" => vec![json!({}), json!({"pattern": "x", "context_lines": 11})],
            "write_file" => vec![json!({"path": "a.txt"})],
            "edit_file" => vec![
                json!({"path": "a.txt", "old_string": "a"}),
                json!({"path": "a", "old_string": "a", "new_string": "b", "replaceAll": true}),
            ],
            "run_command" => vec![
                json!({}),
                json!({"command": "x", "timeout_seconds": 601}),
                json!({"command": "x", "timeout_seconds": 0}),
                json!({"command": "x", "leave_sandbox": "everything", "reason": "r"}),
            ],
            other => panic!("no samples for {other}"),
        }
    }

    #[test]
    fn every_schema_compiles_and_judges_samples_as_a_strict_server_would() {
        let specs = tool_specs();
        let names: Vec<&str> = specs.iter().map(|spec| spec.name).collect();
        assert_eq!(
            names,
            ["read_file", "list_files", "search", "write_file", "edit_file", "run_command"]
        );
        for spec in specs {
            let validator = jsonschema::draft202012::new(&spec.schema)
                .unwrap_or_else(|e| panic!("the schema of {} does not compile: {e}", spec.name));
            for sample in valid_samples(spec.name) {
                let errors: Vec<String> =
                    validator.iter_errors(&sample).map(|e| e.to_string()).collect();
                assert!(errors.is_empty(), "{} refused {sample}: {errors:?}", spec.name);
                let call = WorkspaceCall::parse(spec.name, &sample)
                    .expect("a workspace tool")
                    .unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(call.kind(), spec.kind);
                assert_eq!(tool_kind(spec.name), Some(spec.kind));
            }
            for sample in invalid_samples(spec.name) {
                assert!(!validator.is_valid(&sample), "{} accepted {sample}", spec.name);
            }
        }
    }

    #[test]
    fn no_schema_refers_to_anything() {
        // llama.cpp compiles schemas into grammars and refuses a reference to the root; these
        // schemas need no references at all.
        for spec in tool_specs() {
            assert!(!spec.schema.to_string().contains("$ref"), "{} has a $ref", spec.name);
        }
    }

    #[test]
    fn calls_parse_into_typed_arguments_and_unknown_fields_are_refused() {
        let call = WorkspaceCall::parse(
            "edit_file",
            &json!({"path": "a", "old_string": "x", "new_string": "y"}),
        );
        let Some(Ok(WorkspaceCall::EditFile(args))) = call else { panic!("{call:?}") };
        assert!(!args.replace_all);
        let call = WorkspaceCall::parse("read_file", &json!({"path": "a", "end_line": 5}));
        let Some(Ok(WorkspaceCall::ReadFile(args))) = call else { panic!("{call:?}") };
        assert_eq!(args.range(), Some(LineRange { start: 1, end: Some(5) }));
        let call =
            WorkspaceCall::parse("run_command", &json!({"command": "ls", "timeout_seconds": 5}));
        let Some(Ok(WorkspaceCall::RunCommand(args))) = call else { panic!("{call:?}") };
        assert_eq!(args.request().timeout, Some(Duration::from_secs(5)));
        let Some(Err(error)) = WorkspaceCall::parse(
            "edit_file",
            &json!({"path": "a", "old_string": "x", "new_string": "y", "replaceAll": true}),
        ) else {
            panic!("an unknown field was accepted")
        };
        assert!(error.to_string().contains("replaceAll"), "{error}");
        assert!(WorkspaceCall::parse("push_frame", &json!({})).is_none());
        assert_eq!(tool_kind("push_frame"), None);
    }

    #[test]
    fn leaving_the_sandbox_needs_a_short_reason() {
        let parse = |arguments: Value| {
            WorkspaceCall::parse("run_command", &arguments).expect("a workspace tool")
        };
        let Ok(WorkspaceCall::RunCommand(args)) =
            parse(json!({"command": "curl x", "leave_sandbox": "network", "reason": "fetch x"}))
        else {
            panic!("a request to leave with a reason is a call")
        };
        assert_eq!(args.leave_sandbox, Some(LeaveSandbox::Network));
        for missing in [
            json!({"command": "curl x", "leave_sandbox": "all"}),
            json!({"command": "curl x", "leave_sandbox": "all", "reason": "  "}),
        ] {
            let error = parse(missing).expect_err("no reason");
            assert!(error.to_string().contains("leave_sandbox needs a reason"), "{error}");
        }
        let long = "x".repeat(MAX_LEAVE_REASON_BYTES + 1);
        let error = parse(json!({"command": "c", "leave_sandbox": "all", "reason": long}))
            .expect_err("too long");
        assert!(error.to_string().contains("at most 1024"), "{error}");
        let fits = "x".repeat(MAX_LEAVE_REASON_BYTES);
        assert!(parse(json!({"command": "c", "leave_sandbox": "all", "reason": fits})).is_ok());
    }

    /// The issue's aim is 3,000 tokens for the preamble and every tool schema together; these
    /// six keep to a third of it.
    const MAX_SPEC_TOKENS: u64 = 1_000;

    #[test]
    fn the_six_tools_cost_few_tokens() {
        let text: String = tool_specs()
            .iter()
            .map(|spec| format!("{}{}{}", spec.name, spec.description, spec.schema))
            .collect();
        let tokens = flame_tokens::count(flame_tokens::Encoding::O200kBase, &text);
        assert!(tokens <= MAX_SPEC_TOKENS, "{tokens} tokens");
    }
}
