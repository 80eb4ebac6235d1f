//! Generated results: on pop, the model writes a frame's hand-off — results, a compacted form,
//! artifacts, decisions, and whether the criteria were met — from the frame's full log and its
//! success criteria. The answer must be exactly one JSON object of that shape; a malformed answer
//! is asked for once more, and then the person writes the results.

use flame_api::{ApiError, ErrorCode};
use flame_model::FrameId;
use flame_models::{CancellationToken, ChatMessage, ChatRequest, PromptCache};
use serde::{Deserialize, Serialize};

use crate::Agent;

/// A frame's hand-off as the model proposes it; the person may edit it before it is saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(deny_unknown_fields)]
pub struct GeneratedResults {
    pub results: String,
    pub results_compacted: String,
    pub artifacts: Vec<String>,
    pub decisions: Vec<String>,
    pub criteria_met: bool,
}

const SYSTEM: &str = "You write the hand-off of a finished subtask (a frame) for the agent and the people \
who continue the work. You get the frame's title, its success criteria and its full log. Answer with \
exactly one JSON object and nothing else — no prose, no code fence — with these keys: \"results\" \
(what was accomplished, complete and specific), \"results_compacted\" (the same in one or two dense \
sentences), \"artifacts\" (an array of the files or resources produced), \"decisions\" (an array of the \
key decisions made), \"criteria_met\" (true or false: were the success criteria met).";

/// Criteria longer than this many characters get a compacted form from the model.
pub(crate) const LONG_CRITERIA: usize = 200;

const CRITERIA_SYSTEM: &str = "Rewrite a subtask's success criteria as one dense sentence of at most 25 \
words that keeps every verifiable condition. Answer with the sentence only.";

/// Asks the model for a dense form of a frame's success criteria and stores it.
pub(crate) async fn compact_criteria(
    flame: &flame_api::Flame,
    client: &flame_models::Client,
    model: &crate::ResolvedModel,
    frame: &FrameId,
) -> Result<(), ApiError> {
    let entry = flame.frame(frame)?;
    let request = ChatRequest {
        model: model.model.name.clone(),
        system: CRITERIA_SYSTEM.to_owned(),
        messages: vec![ChatMessage::User(entry.frame.success_criteria.clone())],
        tools: Vec::new(),
        max_tokens: 200,
        cache: PromptCache::default(),
    };
    let turn = client
        .stream(&model.provider, &request, &CancellationToken::new(), |_| {})
        .await
        .map_err(|e| crate::model_error(&e))?;
    let compacted = turn.text.split_whitespace().collect::<Vec<_>>().join(" ");
    if compacted.is_empty() {
        return Err(ApiError::new(ErrorCode::ModelFailed, "the model wrote no compacted criteria"));
    }
    flame.set_criteria_compacted(flame_model::Actor::Agent, frame, &compacted)
}

/// Parses an answer strictly: one JSON object of exactly the documented shape, with results.
pub(crate) fn parse(text: &str) -> Result<GeneratedResults, String> {
    let parsed: GeneratedResults = serde_json::from_str(text.trim())
        .map_err(|e| format!("it is not the JSON object asked for ({e})"))?;
    if parsed.results.trim().is_empty() || parsed.results_compacted.trim().is_empty() {
        return Err("results and results_compacted must not be empty".to_owned());
    }
    Ok(parsed)
}

pub(crate) async fn generate_results(
    agent: &Agent,
    frame: &FrameId,
    model: Option<&str>,
    cancel: &CancellationToken,
) -> Result<GeneratedResults, ApiError> {
    let model = agent.resolve_for_call(model).await?;
    let entry = agent.flame.frame(frame)?;
    let log = agent.flame.log(frame)?;
    // Keep the log's end when it is longer than about half the window (four bytes a token).
    let room = (model.model.context_window as usize / 2) * 4;
    let log = if log.len() > room {
        let mut cut = log.len() - room;
        while !log.is_char_boundary(cut) {
            cut += 1;
        }
        format!("[the log's first {cut} bytes are left out]\n{}", &log[cut..])
    } else {
        log
    };
    let question = format!(
        "Title: {}\nSuccess criteria: {}\n\nThe frame's full log:\n\n{log}",
        entry.frame.title, entry.frame.success_criteria
    );
    let mut messages = vec![ChatMessage::User(question)];
    let mut last_problem = String::new();
    for _attempt in 0..2 {
        let request = ChatRequest {
            model: model.model.name.clone(),
            system: SYSTEM.to_owned(),
            messages: messages.clone(),
            tools: Vec::new(),
            max_tokens: model.model.max_output_tokens,
            cache: PromptCache::default(),
        };
        let turn = agent
            .client
            .stream(&model.provider, &request, cancel, |_| {})
            .await
            .map_err(|e| crate::model_error(&e))?;
        match parse(&turn.text) {
            Ok(results) => return Ok(results),
            Err(problem) => {
                tracing::info!(%frame, "the generated results were malformed: {problem}");
                messages.push(ChatMessage::Assistant { text: turn.text, tool_calls: Vec::new() });
                messages.push(ChatMessage::User(format!(
                    "That answer cannot be used: {problem}. Answer again with only the JSON object."
                )));
                last_problem = problem;
            }
        }
    }
    Err(ApiError::new(
        ErrorCode::ModelFailed,
        format!(
            "the model did not produce usable results for {frame} twice ({last_problem}); write the results yourself"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_shape_is_accepted() {
        let good = r#"{"results":"Did it","results_compacted":"Done","artifacts":["a.rs"],"decisions":[],"criteria_met":true}"#;
        assert_eq!(parse(good).unwrap().artifacts, ["a.rs"]);
        assert!(parse(&format!("```json\n{good}\n```")).is_err(), "no code fence");
        assert!(parse(&format!("Here you go: {good}")).is_err(), "no prose");
        assert!(
            parse(r#"{"results":"x","results_compacted":"y","artifacts":[],"decisions":[]}"#)
                .is_err(),
            "every key"
        );
        assert!(parse(r#"{"results":"x","results_compacted":"y","artifacts":[],"decisions":[],"criteria_met":true,"extra":1}"#).is_err(), "no other key");
        assert!(parse(r#"{"results":" ","results_compacted":"y","artifacts":[],"decisions":[],"criteria_met":true}"#).is_err(), "not empty");
    }
}
