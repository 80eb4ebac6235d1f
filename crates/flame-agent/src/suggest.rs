//! Suggestions of frame operations, from what a frame's conversation looks like — pure
//! heuristics the person accepts or dismisses with one click:
//!
//! - **push**, when the frame's own history has grown past a quarter of the context budget, or
//!   when the newest reply turns to at least two files the frame had not mentioned before;
//! - **pop**, when the newest reply says the work is done or the criteria are met.

use flame_model::{Message, Role};
use serde::Serialize;

/// A suggested operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum SuggestionKind {
    Push,
    Pop,
}

/// What Flame suggests, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct Suggestion {
    pub kind: SuggestionKind,
    pub reason: String,
}

/// The suggestions for a frame whose messages are `messages` (oldest first) with `budget`
/// tokens of context.
pub fn suggestions(messages: &[Message], budget: u64) -> Vec<Suggestion> {
    let mut out = Vec::new();
    let own: u64 = messages.iter().map(|m| m.tokens).sum();
    if budget > 0 && own * 4 > budget {
        out.push(Suggestion {
            kind: SuggestionKind::Push,
            reason: format!("this frame's own history is {own} tokens, over a quarter of the {budget}-token budget: the next subtask could go in a child frame"),
        });
    }
    let Some(last) = messages.iter().rposition(|m| m.role == Role::Assistant) else { return out };
    let earlier: Vec<String> = messages[..last].iter().flat_map(|m| paths(&m.content)).collect();
    let new: Vec<String> =
        paths(&messages[last].content).into_iter().filter(|p| !earlier.contains(p)).collect();
    if new.len() >= 2 && !earlier.is_empty() && out.is_empty() {
        out.push(Suggestion {
            kind: SuggestionKind::Push,
            reason: format!(
                "the work turns to other files ({}): a child frame would keep them apart",
                new.join(", ")
            ),
        });
    }
    let reply = messages[last].content.to_lowercase();
    const DONE: [&str; 6] = [
        "criteria are met",
        "criteria have been met",
        "all done",
        "the task is complete",
        "is now complete",
        "everything is done",
    ];
    if let Some(phrase) = DONE.iter().find(|p| reply.contains(*p)) {
        out.push(Suggestion {
            kind: SuggestionKind::Pop,
            reason: format!("the reply says \"{phrase}\": pop the frame with its results?"),
        });
    }
    out
}

/// Words that look like file paths: a slash or a file extension, made of path characters.
fn paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for word in text
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '(' | ')' | ',' | ';' | '"' | '\''))
    {
        let word = word.trim_end_matches(['.', ':']);
        let pathy =
            word.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'));
        let has_extension = word.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphabetic())
        });
        if pathy && has_extension && word.len() > 3 && !found.iter().any(|f| f == word) {
            found.push(word.to_owned());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use flame_model::{FrameId, MessageId};

    fn message(role: Role, content: &str, tokens: u64) -> Message {
        Message {
            id: MessageId(1),
            frame: FrameId::parse("f0000000000").unwrap(),
            role,
            content: content.to_owned(),
            tool_calls: None,
            tool_result: None,
            tokens,
            model: None,
            usage: None,
            created_at: 0,
            interrupted: false,
        }
    }

    #[test]
    fn a_long_history_suggests_a_push() {
        let history = [message(Role::User, "go", 30_000), message(Role::Assistant, "ok", 10)];
        let found = suggestions(&history, 100_000);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, SuggestionKind::Push);
        assert!(suggestions(&history, 1_000_000).is_empty());
    }

    #[test]
    fn turning_to_other_files_suggests_a_push() {
        let history = [
            message(Role::User, "Fix the bug in src/auth/login.rs", 10),
            message(
                Role::Assistant,
                "Now updating `src/billing/invoice.rs` and src/billing/tax.rs.",
                10,
            ),
        ];
        let found = suggestions(&history, 100_000);
        assert_eq!(found[0].kind, SuggestionKind::Push);
        assert!(found[0].reason.contains("src/billing/invoice.rs"), "{}", found[0].reason);
        let same = [
            message(Role::User, "Fix src/a.rs", 10),
            message(Role::Assistant, "Fixed src/a.rs.", 10),
        ];
        assert!(suggestions(&same, 100_000).is_empty());
    }

    #[test]
    fn saying_the_criteria_are_met_suggests_a_pop() {
        let history = [
            message(Role::User, "x", 1),
            message(Role::Assistant, "Tests pass, so the success criteria are met.", 1),
        ];
        assert_eq!(
            suggestions(&history, 100_000),
            [Suggestion {
                kind: SuggestionKind::Pop,
                reason: "the reply says \"criteria are met\": pop the frame with its results?"
                    .into()
            }]
        );
    }
}
