//! The project instructions at the start of a frame's opening (`flame_model::instructions`).
//!
//! The caller reads the files when an opening is made and hands their texts in
//! ([`crate::ContextInput::instructions`]), in the order they are sent: the person's own file,
//! then the workspace root's, then those of deeper folders, each after the folders above it, as
//! Codex sends them, so that a nearer file comes later and wins. They are written as one
//! `<project-instructions>` block that opens the opening's text, so they are kept with the
//! opening (`FrameContext`) and sent byte for byte until the next one is made: a changed file is
//! seen at the frame's next opening, and the cached prefix holds meanwhile.
//!
//! The files' texts together are held to [`MAX_INSTRUCTIONS_BYTES`]: each file takes what the
//! files before it left, and one that does not fit is cut (at a line end when there is one in its
//! last quarter) with a line saying how much was sent and where the rest is.

use flame_model::instructions::MAX_INSTRUCTIONS_BYTES;
use flame_model::{InstructionFile, InstructionFileReport, InstructionScope};

/// The instructions as an opening starts with them: the block's text (`None` when there is no
/// file to send) and what was sent of each file.
pub(crate) struct Rendered {
    pub text: Option<String>,
    pub files: Vec<InstructionFileReport>,
}

/// The block that opens the opening, for `files` in the order they are sent.
pub(crate) fn render(files: &[InstructionFile]) -> Rendered {
    let mut left = MAX_INSTRUCTIONS_BYTES;
    let mut text = String::from(
        "<project-instructions>\nThe person's and the project's instructions for working here (AGENTS.md and \
         CLAUDE.md files), as they were when this conversation's opening was made. A workspace's file \
         applies to the files in its folder and below it; where two disagree, the later one, nearer the \
         files, wins, and the person's own messages win over all of them.\n",
    );
    let mut reports = Vec::with_capacity(files.len());
    let mut any = false;
    for file in files {
        let shown = sent_part(&file.text, left);
        left -= shown.len();
        reports.push(InstructionFileReport {
            path: file.path.clone(),
            scope: file.scope,
            size: file.size,
            sent: shown.len() as u64,
            problem: file.problem.clone(),
        });
        if file.problem.is_none() && file.text.trim().is_empty() {
            continue;
        }
        any = true;
        let applies = match file.folder() {
            None => "every workspace (the person's own)".to_owned(),
            Some("") => "the whole workspace".to_owned(),
            Some(folder) => folder.to_owned(),
        };
        text.push_str(&format!(
            "<instructions file=\"{}\" applies-to=\"{}\">\n",
            attribute(&file.path),
            attribute(&applies)
        ));
        if let Some(problem) = &file.problem {
            text.push_str(&format!("[Flame could not read this file: {problem}]\n"));
        } else {
            text.push_str(shown);
            if !shown.is_empty() && !shown.ends_with('\n') {
                text.push('\n');
            }
            if (shown.len() as u64) < file.size {
                text.push_str(&cut_line(file, shown.len()));
            }
        }
        text.push_str("</instructions>\n");
    }
    // The document that follows starts on a line of its own.
    text.push_str("</project-instructions>\n");
    Rendered { text: any.then_some(text), files: reports }
}

/// The part of `text` sent when `left` bytes remain: all of it when it fits, else its start,
/// cut after the last line end in the last quarter of what fits, or at a character.
fn sent_part(text: &str, left: usize) -> &str {
    if text.len() <= left {
        return text;
    }
    let mut end = left;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    match text[..end].rfind('\n') {
        Some(newline) if newline + 1 >= end - end / 4 => &text[..=newline],
        _ => &text[..end],
    }
}

/// The line that says a file was cut after `sent` bytes, and where the rest is.
fn cut_line(file: &InstructionFile, sent: usize) -> String {
    let rest = match file.scope {
        InstructionScope::Workspace => "read_file reads the rest",
        InstructionScope::Personal => "the rest is in the file",
    };
    format!(
        "[Flame cut this file here: {sent} of its {} bytes are sent, since project instructions are \
         limited to {MAX_INSTRUCTIONS_BYTES} bytes in all; {rest}.]\n",
        file.size
    )
}

/// `value` as an attribute's value between double quotes.
fn attribute(value: &str) -> String {
    value.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, scope: InstructionScope, text: &str) -> InstructionFile {
        InstructionFile {
            path: path.to_owned(),
            scope,
            text: text.to_owned(),
            size: text.len() as u64,
            problem: None,
        }
    }

    #[test]
    fn files_are_sent_in_the_order_given_each_with_where_it_applies() {
        let rendered = render(&[
            file("/home/a/.config/flame/AGENTS.md", InstructionScope::Personal, "Be brief."),
            file("AGENTS.md", InstructionScope::Workspace, "Run make test.\n"),
            file("src/AGENTS.md", InstructionScope::Workspace, "Use tabs."),
        ]);
        let text = rendered.text.unwrap();
        let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle} in {text}"));
        assert!(at("Be brief.") < at("Run make test.") && at("Run make test.") < at("Use tabs."));
        assert!(text.contains(r#"file="src/AGENTS.md" applies-to="src/""#), "{text}");
        assert!(text.contains(r#"file="AGENTS.md" applies-to="the whole workspace""#), "{text}");
        assert!(text.starts_with("<project-instructions>\n"));
        assert!(text.ends_with("</instructions>\n</project-instructions>\n"));
        assert!(rendered.files.iter().all(|f| f.sent == f.size && f.problem.is_none()));
    }

    #[test]
    fn no_file_sends_nothing_and_an_empty_one_is_only_reported() {
        assert!(render(&[]).text.is_none());
        let rendered = render(&[file("AGENTS.md", InstructionScope::Workspace, " \n")]);
        assert!(rendered.text.is_none());
        assert_eq!(rendered.files.len(), 1);
    }

    #[test]
    fn past_the_limit_files_are_cut_with_a_line_that_says_so() {
        // Lines of 100 bytes: the first file takes three quarters of the limit, the second is cut
        // at a line end, the third at a character, and the fourth gets nothing.
        let lines = |n: usize, mark: char| -> String {
            (0..n).map(|_| format!("{}\n", mark.to_string().repeat(99))).collect()
        };
        let first = lines(MAX_INSTRUCTIONS_BYTES * 3 / 400, 'a');
        let second = lines(MAX_INSTRUCTIONS_BYTES / 100, 'b');
        let third = "c".repeat(200);
        let rendered = render(&[
            file("AGENTS.md", InstructionScope::Workspace, &first),
            file("src/AGENTS.md", InstructionScope::Workspace, &second),
            file("src/ui/AGENTS.md", InstructionScope::Workspace, &third),
            file("/home/a/.config/flame/AGENTS.md", InstructionScope::Personal, "Fourth."),
        ]);
        let sent: Vec<u64> = rendered.files.iter().map(|f| f.sent).collect();
        assert_eq!(sent[0], first.len() as u64);
        assert!(sent[1] < second.len() as u64 && sent[1].is_multiple_of(100), "{sent:?}");
        assert!(sent[2] > 0 && sent[2] < 100, "{sent:?}");
        assert_eq!(sent[3], 0);
        assert_eq!(sent.iter().sum::<u64>(), MAX_INSTRUCTIONS_BYTES as u64);
        let text = rendered.text.unwrap();
        let cut = |sent: u64, size: usize, rest: &str| {
            format!(
                "[Flame cut this file here: {sent} of its {size} bytes are sent, since project \
                 instructions are limited to {MAX_INSTRUCTIONS_BYTES} bytes in all; {rest}.]\n"
            )
        };
        assert!(text.contains(&cut(sent[1], second.len(), "read_file reads the rest")), "{text}");
        assert!(text.contains(&cut(sent[2], 200, "read_file reads the rest")));
        assert!(text.contains(&cut(0, 7, "the rest is in the file")));
        assert!(!text.contains("Fourth."));
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        let text = "é".repeat(MAX_INSTRUCTIONS_BYTES);
        let rendered = render(&[file("AGENTS.md", InstructionScope::Workspace, &text)]);
        assert_eq!(rendered.files[0].sent, MAX_INSTRUCTIONS_BYTES as u64);
        let text = "x".to_owned() + &"é".repeat(MAX_INSTRUCTIONS_BYTES);
        let rendered = render(&[file("AGENTS.md", InstructionScope::Workspace, &text)]);
        assert_eq!(rendered.files[0].sent, MAX_INSTRUCTIONS_BYTES as u64 - 1);
    }

    #[test]
    fn a_file_that_could_not_be_read_is_named_with_why() {
        let mut broken = file("lib/AGENTS.md", InstructionScope::Workspace, "");
        broken.problem = Some("it is a link that leads outside the workspace".to_owned());
        let rendered = render(&[broken]);
        let text = rendered.text.unwrap();
        assert!(text.contains(
            "[Flame could not read this file: it is a link that leads outside the workspace]"
        ));
        assert_eq!(
            rendered.files[0].problem.as_deref(),
            Some("it is a link that leads outside the workspace")
        );
    }
}
