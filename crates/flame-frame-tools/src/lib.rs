//! The frame tools a model may call: `push_frame`, `pop_frame`, `plan_frames`, `start_frame`,
//! `invalidate_frame`, `frame_status` and `read_frame_log`. They run the same facade methods as a
//! person's commands, recorded as done by the agent. A refusal goes back to the model as a tool
//! error it can read and act on.
//!
//! The agent (`flame-agent`) offers them to the models it calls, and `flame mcp` (`flame-mcp`)
//! to MCP clients; this crate needs only the facade, so the MCP server does not depend on the
//! agent, its settings or the HTTP stack.

use flame_api::{Flame, PlanSpec, PopRequest};
use flame_model::budget::FrameBudget;
use flame_model::lifecycle::PopStatus;
use flame_model::{Actor, FrameId, ToolCall, ToolSpec};
use serde::Deserialize;
use serde_json::{Value, json};

/// The most of a frame log `read_frame_log` returns; the rest is named, not sent.
const LOG_LIMIT: usize = 40_000;

/// The most of one tool result `read_frame_log` returns when asked for it by its call's id (a
/// masked result): as much as the largest workspace read, so what was sent once can be again.
const RESULT_LIMIT: usize = 256 * 1024;

/// Every tool, with its JSON schema.
pub fn specs() -> Vec<ToolSpec> {
    // A planned frame nests planned children of the same shape. The recursion goes through
    // `$defs`, not `{"$ref": "#"}`: the root reference would point at the tool's whole arguments,
    // and strict servers (llama.cpp, which compiles schemas into grammars) refuse it.
    let frame_def = json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "2-5 words"},
            "success_criteria": {"type": "string", "description": "What defines done, concretely and verifiably"},
            "budget": budget_schema(),
            "children": {"type": "array", "items": {"$ref": "#/$defs/frame"}, "description": "Planned children of this frame"}
        },
        "required": ["title", "success_criteria"]
    });
    let spec = |name: &str, description: &str, schema: Value| ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        schema,
    };
    vec![
        spec(
            "push_frame",
            "Start a child frame of the current frame for a distinct subtask (one that could fail and be retried on its own, touches other files or subjects, or deserves its own summary). You continue working inside it.",
            json!({"type": "object", "properties": {
                "title": {"type": "string", "description": "2-5 words"},
                "success_criteria": {"type": "string", "description": "What defines done, concretely and verifiably"},
                "budget": budget_schema()
            }, "required": ["title", "success_criteria"]}),
        ),
        spec(
            "pop_frame",
            "Finish the current frame and return to its parent. completed needs results; failed and blocked need a reason. The results are what the parent and later siblings will see of this frame, so make them complete and dense.",
            json!({"type": "object", "properties": {
                "status": {"type": "string", "enum": ["completed", "failed", "blocked"]},
                "results": {"type": "string", "description": "What was accomplished, in detail"},
                "results_compacted": {"type": "string", "description": "The same in a sentence or two"},
                "artifacts": {"type": "array", "items": {"type": "string"}, "description": "Files or resources produced"},
                "decisions": {"type": "array", "items": {"type": "string"}, "description": "Key decisions made"},
                "reason": {"type": "string", "description": "Why it failed or is blocked"},
                "frame": {"type": "string", "description": "The id of the frame you mean to pop; if the current frame is another one by then (another client moved the focus), nothing is popped"}
            }, "required": ["status"]}),
        ),
        spec(
            "plan_frames",
            "Plan frames (with planned children) to sketch work ahead without starting it. By default they go under the current frame, after its other children.",
            json!({"type": "object", "$defs": {"frame": frame_def}, "properties": {
                "frames": {"type": "array", "items": {"$ref": "#/$defs/frame"}},
                "parent": {"type": "string", "description": "The id of the frame to plan under"},
                "position": {"type": "integer", "minimum": 0, "description": "Where among the parent's children"}
            }, "required": ["frames"]}),
        ),
        spec(
            "start_frame",
            "Start a planned frame (and its planned ancestors) and continue working inside it.",
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        ),
        spec(
            "invalidate_frame",
            "Mark a frame that is no longer relevant as invalidated, with the open frames below it.",
            json!({"type": "object", "properties": {"id": {"type": "string"}, "reason": {"type": "string"}}, "required": ["id"]}),
        ),
        spec(
            "frame_status",
            "The whole tree: every frame's id, parent, title and status, and which frame is current.",
            json!({"type": "object", "properties": {}}),
        ),
        spec(
            "read_frame_log",
            "Read a frame's full log (its whole conversation and history), for detail its summary leaves out; with tool_call_id, only that tool call's result (one masked in your context).",
            json!({"type": "object", "properties": {"id": {"type": "string"}, "tool_call_id": {"type": "string"}}, "required": ["id"]}),
        ),
    ]
}

/// The optional budget a pushed or planned frame is given, out of what its parent has left. The
/// dollar amount is a plain number: llama.cpp compiles a schema into a grammar and bounds only
/// integers.
fn budget_schema() -> Value {
    json!({
        "type": "object",
        "description": "Optional: what the frame and everything under it may spend, out of what its parent has left",
        "properties": {
            "usd": {"type": "number", "description": "Dollars"},
            "tokens": {"type": "integer", "minimum": 0},
            "tool_calls": {"type": "integer", "minimum": 0}
        }
    })
}

/// A budget as the model gives it: dollars as a number.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
struct BudgetArgs {
    usd: Option<f64>,
    tokens: Option<u64>,
    tool_calls: Option<u64>,
}

impl BudgetArgs {
    fn budget(self) -> Result<FrameBudget, String> {
        let micro_usd = self.usd.map(flame_model::budget::micro_usd).transpose()?;
        Ok(FrameBudget { micro_usd, tokens: self.tokens, tool_calls: self.tool_calls })
    }
}

/// A frame to plan as the model gives it.
#[derive(Deserialize)]
struct PlannedFrame {
    title: String,
    success_criteria: String,
    budget: Option<BudgetArgs>,
    #[serde(default)]
    children: Vec<PlannedFrame>,
}

impl PlannedFrame {
    fn spec(self) -> Result<PlanSpec, String> {
        Ok(PlanSpec {
            title: self.title,
            success_criteria: self.success_criteria,
            budget: self.budget.map(BudgetArgs::budget).transpose()?,
            children: self
                .children
                .into_iter()
                .map(PlannedFrame::spec)
                .collect::<Result<_, _>>()?,
        })
    }
}

/// What running a tool did.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    pub content: String,
    pub is_error: bool,
    /// The frame the conversation continues in, when the tool moved it.
    pub moved_to: Option<FrameId>,
    /// Frames the tool created.
    pub created: Vec<FrameId>,
}

impl ToolOutcome {
    fn ok(content: String, moved_to: Option<FrameId>) -> ToolOutcome {
        ToolOutcome { content, is_error: false, moved_to, created: Vec::new() }
    }

    /// A refusal, sent back to the model as a tool error.
    pub fn error(content: String) -> ToolOutcome {
        ToolOutcome { content, is_error: true, moved_to: None, created: Vec::new() }
    }
}

/// Whether `name` is one of the frame tools [`specs`] offers.
pub fn is_frame_tool(name: &str) -> bool {
    specs().iter().any(|s| s.name == name)
}

/// Whether a call changes which frame the agent is in, which the `ask` autonomy makes wait for
/// the person.
pub fn needs_approval(call: &ToolCall) -> bool {
    matches!(call.name.as_str(), "push_frame" | "pop_frame")
}

/// Runs `call` in frame `current`.
pub fn run(flame: &Flame, current: &FrameId, call: &ToolCall) -> ToolOutcome {
    match run_inner(flame, current, call) {
        Ok(outcome) => outcome,
        Err(message) => ToolOutcome::error(message),
    }
}

fn args<T: for<'de> Deserialize<'de>>(call: &ToolCall) -> Result<T, String> {
    if let Some(why) = call.unreadable_arguments() {
        return Err(format!(
            "{} did not run: its arguments were {why}. If your reply was cut off at its length limit, call it again with shorter, complete JSON arguments",
            call.name
        ));
    }
    serde_json::from_value(call.arguments.clone())
        .map_err(|e| format!("the arguments of {} are not valid: {e}", call.name))
}

/// A frame the model named by id, which must be in the tree it works in: the tools never reach
/// another tree's frames (their logs, their lifecycle), whoever calls them (the agent, MCP).
fn frame_in_tree(flame: &Flame, current: &FrameId, text: &str) -> Result<FrameId, String> {
    let id = FrameId::parse(text).map_err(|e| e.to_string())?;
    let tree_of =
        |id: &FrameId| flame.frame(id).map(|entry| entry.frame.tree).map_err(|e| e.message);
    if tree_of(&id)? != tree_of(current)? {
        return Err(format!(
            "frame {id} is in another tree; the tools act only on the frames of the tree you work in"
        ));
    }
    Ok(id)
}

fn run_inner(flame: &Flame, current: &FrameId, call: &ToolCall) -> Result<ToolOutcome, String> {
    const A: Actor = Actor::Agent;
    let failed = |e: flame_api::ApiError| e.message;
    match call.name.as_str() {
        "push_frame" => {
            #[derive(Deserialize)]
            struct Args {
                title: String,
                success_criteria: String,
                budget: Option<BudgetArgs>,
            }
            let a: Args = args(call)?;
            let budget = a.budget.map(BudgetArgs::budget).transpose()?;
            let frame = flame
                .push_with_budget(A, Some(current), &a.title, &a.success_criteria, budget)
                .map_err(|e| format!("No frame was pushed: {}", e.message))?;
            let text = format!(
                "Pushed frame {} \"{}\". You are now working in it.",
                frame.id, frame.title
            );
            let mut outcome = ToolOutcome::ok(text, Some(frame.id.clone()));
            outcome.created.push(frame.id);
            Ok(outcome)
        }
        "pop_frame" => {
            #[derive(Deserialize)]
            struct Args {
                status: PopStatus,
                results: Option<String>,
                results_compacted: Option<String>,
                #[serde(default)]
                artifacts: Vec<String>,
                #[serde(default)]
                decisions: Vec<String>,
                reason: Option<String>,
                frame: Option<String>,
            }
            let a: Args = args(call)?;
            // A caller that names the frame it means is refused when the current frame is
            // another: for an MCP client the current frame is the focus, which another client
            // may have moved since it last looked.
            if let Some(named) = a.frame.as_deref() {
                let named = FrameId::parse(named).map_err(|e| e.to_string())?;
                if &named != current {
                    let here = flame.frame(current).map_err(failed)?.frame;
                    return Err(format!(
                        "pop_frame named {named}, but the current frame is {current} \"{}\" ({}): the focus has moved since, so nothing was popped; call frame_status to see the tree",
                        here.title, here.status
                    ));
                }
            }
            let request = PopRequest {
                status: a.status,
                results: a.results,
                results_compacted: a.results_compacted,
                artifacts: a.artifacts,
                decisions: a.decisions,
                reason: a.reason,
            };
            let frame = flame.pop(A, Some(current), &request).map_err(failed)?;
            let back = frame.parent.clone();
            let whereto = back.as_ref().map_or("This was the root frame.".to_owned(), |p| {
                format!("You are back in its parent {p}.")
            });
            Ok(ToolOutcome::ok(format!("Popped {} as {}. {whereto}", frame.id, frame.status), back))
        }
        "plan_frames" => {
            #[derive(Deserialize)]
            struct Args {
                frames: Vec<PlannedFrame>,
                parent: Option<String>,
                position: Option<u32>,
            }
            let a: Args = args(call)?;
            let specs: Vec<PlanSpec> =
                a.frames.into_iter().map(PlannedFrame::spec).collect::<Result<_, _>>()?;
            let parent = a
                .parent
                .as_deref()
                .map(|p| frame_in_tree(flame, current, p))
                .transpose()?
                .unwrap_or_else(|| current.clone());
            let planned = flame
                .plan(A, Some(&parent), a.position, &specs)
                .map_err(|e| format!("Nothing was planned: {}", e.message))?;
            let list: Vec<String> =
                planned.iter().map(|f| format!("{} \"{}\"", f.id, f.title)).collect();
            let mut outcome = ToolOutcome::ok(format!("Planned {}.", list.join(", ")), None);
            outcome.created = planned.into_iter().map(|f| f.id).collect();
            Ok(outcome)
        }
        "start_frame" => {
            #[derive(Deserialize)]
            struct Args {
                id: String,
            }
            let a: Args = args(call)?;
            let frame = flame.start(A, &frame_in_tree(flame, current, &a.id)?).map_err(failed)?;
            Ok(ToolOutcome::ok(
                format!("Started {} \"{}\". You are now working in it.", frame.id, frame.title),
                Some(frame.id),
            ))
        }
        "invalidate_frame" => {
            #[derive(Deserialize)]
            struct Args {
                id: String,
                reason: Option<String>,
            }
            let a: Args = args(call)?;
            let gone = flame
                .invalidate(A, &frame_in_tree(flame, current, &a.id)?, a.reason.as_deref())
                .map_err(failed)?;
            let ids: Vec<&str> = gone.iter().map(FrameId::as_str).collect();
            // Invalidating the frame the agent is in (or an ancestor) moves the focus out of it.
            let moved = ids
                .contains(&current.as_str())
                .then(|| flame.status(None).ok().map(|s| s.focus))
                .flatten();
            Ok(ToolOutcome::ok(format!("Invalidated {}.", ids.join(", ")), moved))
        }
        "frame_status" => {
            let tree = flame.frame(current).map_err(failed)?.frame.tree;
            let status = flame.status(Some(&tree)).map_err(failed)?;
            let frames: Vec<Value> = status
                .frames
                .iter()
                .map(|e| json!({"id": e.frame.id, "parent": e.frame.parent, "title": e.frame.title, "status": e.frame.status}))
                .collect();
            Ok(ToolOutcome::ok(
                json!({"current": current, "focus": status.focus, "frames": frames}).to_string(),
                None,
            ))
        }
        "read_frame_log" => {
            #[derive(Deserialize)]
            struct Args {
                id: String,
                tool_call_id: Option<String>,
            }
            let a: Args = args(call)?;
            if let Some(wanted) = &a.tool_call_id {
                let frame = frame_in_tree(flame, current, &a.id)?;
                let messages = flame.messages(&frame).map_err(failed)?;
                let found = messages
                    .iter()
                    .find(|m| m.tool_result.as_ref().is_some_and(|r| &r.tool_call_id == wanted));
                let Some(found) = found else {
                    return Err(format!("frame {frame} has no result of a tool call {wanted:?}"));
                };
                let text = &found.content;
                if text.len() <= RESULT_LIMIT {
                    return Ok(ToolOutcome::ok(text.clone(), None));
                }
                let mut end = RESULT_LIMIT;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                return Ok(ToolOutcome::ok(
                    format!(
                        "{}\n[the last {} bytes of this result are left out]",
                        &text[..end],
                        text.len() - end
                    ),
                    None,
                ));
            }
            let log = flame.log(&frame_in_tree(flame, current, &a.id)?).map_err(failed)?;
            if log.len() <= LOG_LIMIT {
                return Ok(ToolOutcome::ok(log, None));
            }
            let mut cut = log.len() - LOG_LIMIT;
            while !log.is_char_boundary(cut) {
                cut += 1;
            }
            let path =
                flame.frame(&frame_in_tree(flame, current, &a.id)?).map_err(failed)?.log_path;
            Ok(ToolOutcome::ok(
                format!("[the first {cut} bytes of {path} are left out]\n{}", &log[cut..]),
                None,
            ))
        }
        other => Err(format!(
            "there is no tool named {other}; the tools are push_frame, pop_frame, plan_frames, start_frame, invalidate_frame, frame_status and read_frame_log"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments a model could send for each tool, each of which the schema must accept.
    fn valid_samples(name: &str) -> Vec<Value> {
        match name {
            "push_frame" => vec![
                json!({"title": "Auth", "success_criteria": "Login works"}),
                json!({"title": "Auth", "success_criteria": "Login works", "budget": {"usd": 0.5, "tool_calls": 40}}),
            ],
            "pop_frame" => vec![
                json!({"status": "completed", "results": "Done", "artifacts": ["src/a.rs"], "decisions": ["JWT"]}),
                json!({"status": "failed", "reason": "Tests fail"}),
                json!({"status": "completed", "results": "Done", "frame": "f0000000000"}),
            ],
            "plan_frames" => vec![
                json!({"frames": [{"title": "A", "success_criteria": "a"}]}),
                json!({"frames": [{"title": "A", "success_criteria": "a", "children": [
                    {"title": "A1", "success_criteria": "a1", "children": [{"title": "A1x", "success_criteria": "x"}]}
                ]}], "parent": "f0000000000", "position": 0}),
                json!({"frames": [{"title": "A", "success_criteria": "a", "budget": {"tokens": 100000}}]}),
            ],
            "start_frame" | "read_frame_log" => vec![json!({"id": "f0000000000"})],
            "invalidate_frame" => vec![json!({"id": "f0000000000", "reason": "not needed"})],
            "frame_status" => vec![json!({})],
            other => panic!("no sample arguments for the tool {other}"),
        }
    }

    /// Arguments each schema must refuse: a missing required field, or a nested frame that
    /// lacks one (which only a recursion that really points at the frame shape catches).
    fn invalid_samples(name: &str) -> Vec<Value> {
        match name {
            "push_frame" => vec![
                json!({"title": "Auth"}),
                json!({"title": "Auth", "success_criteria": "a", "budget": {"tool_calls": -1}}),
            ],
            "pop_frame" => vec![
                json!({"status": "done"}),
                json!({}),
                json!({"status": "completed", "results": "x", "frame": 7}),
            ],
            "plan_frames" => vec![
                json!({}),
                json!({"frames": [{"title": "A", "success_criteria": "a", "children": [{"title": "A1"}]}]}),
                json!({"frames": [{"title": "A", "success_criteria": "a"}], "position": -1}),
            ],
            "start_frame" | "read_frame_log" | "invalidate_frame" => vec![json!({})],
            "frame_status" => vec![],
            other => panic!("no sample arguments for the tool {other}"),
        }
    }

    #[test]
    fn every_tool_schema_is_valid_json_schema_and_checks_its_arguments() {
        for spec in specs() {
            let validator = jsonschema::draft202012::new(&spec.schema)
                .unwrap_or_else(|e| panic!("the schema of {} does not compile: {e}", spec.name));
            for sample in valid_samples(&spec.name) {
                let errors: Vec<String> =
                    validator.iter_errors(&sample).map(|e| e.to_string()).collect();
                assert!(errors.is_empty(), "{} refused {sample}: {errors:?}", spec.name);
            }
            for sample in invalid_samples(&spec.name) {
                assert!(!validator.is_valid(&sample), "{} accepted {sample}", spec.name);
            }
        }
    }

    /// Issue 13: an MCP client popping "the focus" after another client had popped it completed
    /// the parent. Naming the frame it means, it is refused instead.
    #[test]
    fn a_pop_naming_another_frame_than_the_current_one_is_refused_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let home = flame_api::DataDir::resolve(Some(dir.path().as_os_str()), None, None).unwrap();
        let flame = Flame::open_with(
            home,
            flame_api::FlameConfig::default(),
            flame_api::Env::fixed(1_795_307_601_000, 5),
        )
        .unwrap();
        let tree = flame.create_tree(Actor::Person, "Root", "r", None).unwrap();
        let child = flame.push(Actor::Person, None, "Child", "c").unwrap();
        let pop = |frame: &FrameId, results: &str| ToolCall {
            id: "c1".into(),
            name: "pop_frame".into(),
            arguments: json!({"status": "completed", "results": results, "frame": frame}),
        };
        // Another client pops the child; this one still means the child, in the focus it reads now.
        run(&flame, &child.id, &pop(&child.id, "first"));
        let focus = flame.status(None).unwrap().focus;
        let outcome = run(&flame, &focus, &pop(&child.id, "second"));
        assert!(outcome.is_error, "{}", outcome.content);
        assert!(outcome.content.contains(child.id.as_str()), "{}", outcome.content);
        assert!(
            outcome.content.contains(&format!("current frame is {} \"Root\"", tree.root)),
            "{}",
            outcome.content
        );
        assert_eq!(flame.frame(&tree.root).unwrap().frame.status, flame_model::Status::InProgress);
        // Naming the frame it is in, the pop goes ahead.
        let outcome = run(&flame, &focus, &pop(&tree.root, "all done"));
        assert!(!outcome.is_error, "{}", outcome.content);
        assert_eq!(flame.frame(&tree.root).unwrap().frame.status, flame_model::Status::Completed);
    }

    /// llama.cpp compiles every tool schema into a grammar and refuses a reference to the
    /// document root (`{"$ref": "#"}`) with HTTP 400, so every reference must name a definition.
    #[test]
    fn no_schema_refers_to_its_root() {
        fn refs(value: &Value, found: &mut Vec<String>) {
            match value {
                Value::Object(map) => {
                    if let Some(Value::String(target)) = map.get("$ref") {
                        found.push(target.clone());
                    }
                    map.values().for_each(|v| refs(v, found));
                }
                Value::Array(items) => items.iter().for_each(|v| refs(v, found)),
                _ => {}
            }
        }
        for spec in specs() {
            let mut found = Vec::new();
            refs(&spec.schema, &mut found);
            for target in found {
                assert!(target.starts_with("#/$defs/"), "{} refers to {target}", spec.name);
            }
        }
    }
}
