//! The assembler's one integration test binary.

mod budget;
mod calls;
mod files;
mod kept;
mod properties;
mod spec_tree;
mod xml;

use std::collections::HashMap;
use std::sync::Arc;

use flame_context::{Budget, ContextDoc, ContextInput, assemble};
use flame_model::{FileTrail, Frame, FrameId, Message, MessageId, Role, Status, TreeId};
use flame_tokens::Encoding;

/// A frame with a marker in every field, so tests can see exactly which fields reach a context.
pub fn marked(id: &str, parent: Option<&str>, position: u32, status: Status) -> Frame {
    let mut frame = Frame::new(
        FrameId::parse(id).unwrap(),
        TreeId::parse("t0000000000").unwrap(),
        parent.map(|p| FrameId::parse(p).unwrap()),
        position,
        format!("title-{id}"),
        format!("criteria-{id}"),
        status,
        1,
    );
    frame.success_criteria_compacted = Some(format!("crit-compact-{id}"));
    if status != Status::Planned {
        frame.results = Some(format!("results-{id}"));
        frame.results_compacted = Some(format!("res-compact-{id}"));
    }
    if matches!(status, Status::Completed | Status::Failed | Status::Blocked) {
        frame.artifacts = vec![format!("artifact-{id}")];
        frame.decisions = vec![format!("decision-{id}")];
    }
    if matches!(status, Status::Failed | Status::Blocked) {
        frame.status_reason = Some(format!("reason-{id}"));
    }
    frame
}

pub fn message(id: i64, frame: &FrameId, text: &str, tokens: u64) -> Message {
    Message {
        id: MessageId(id),
        frame: frame.clone(),
        role: if id % 2 == 0 { Role::User } else { Role::Assistant },
        content: text.to_owned(),
        tool_calls: None,
        tool_result: None,
        tokens,
        model: None,
        usage: None,
        created_at: id,
        interrupted: false,
    }
}

pub fn log_paths(frames: &[Frame]) -> HashMap<FrameId, String> {
    frames.iter().map(|f| (f.id.clone(), format!("logs/t0000000000/{}.md", f.id))).collect()
}

/// The messages shared, as the assembler takes them.
pub fn shared(messages: &[Message]) -> Vec<Arc<Message>> {
    messages.iter().cloned().map(Arc::new).collect()
}

/// Assembles with a budget of `budget` tokens, for a tree without a workspace.
pub fn context(frames: &[Frame], focus: &FrameId, messages: &[Message], budget: u64) -> ContextDoc {
    context_with_files(frames, focus, messages, budget, None, &HashMap::new())
}

/// Assembles with a budget of `budget` tokens, the tree's workspace and its frames' trails.
pub fn context_with_files(
    frames: &[Frame],
    focus: &FrameId,
    messages: &[Message],
    budget: u64,
    workspace: Option<&str>,
    trails: &HashMap<FrameId, FileTrail>,
) -> ContextDoc {
    let logs = log_paths(frames);
    let messages = shared(messages);
    let input = ContextInput {
        focus,
        frames,
        messages: &messages,
        encoding: Encoding::O200kBase,
        budget: Budget::of(budget),
        log_paths: &logs,
        linear_message_tokens: 0,
        workspace,
        trails,
        path_trails: &HashMap::new(),
        keep_tool_results: None,
        allowance: None,
        instructions: None,
        read_back: flame_context::ReadBack::FrameLog,
    };
    assemble(&input).unwrap()
}
