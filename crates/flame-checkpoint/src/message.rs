//! A snapshot's commit message: the label on the first line, a blank line, then one line per
//! skipped path, `skipped <bytes | special | unreadable:<error>>\t<path>`, each followed by
//! `signature <signature>\t<path>` when its metadata was read, at most [`MAX_SKIPPED_LISTED`], and
//! `skipped-more <count>` when there were more. Tabs, newlines and backslashes in paths and errors
//! are written `\t`, `\n`, `\\` (and `\r`), so every entry is one line. A signature has a line of
//! its own so that a Flame that does not know them still reads the rest.

use crate::{MAX_SKIPPED_LISTED, SkipReason, Skipped};

const SKIPPED: &str = "skipped ";
const SKIPPED_MORE: &str = "skipped-more ";
const SIGNATURE: &str = "signature ";
const UNREADABLE: &str = "unreadable:";
const SPECIAL: &str = "special";

/// The message for a snapshot labelled `label` that skipped `skipped` (sorted).
pub(crate) fn format(label: &str, skipped: &[Skipped]) -> String {
    let label: String = label
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_owned();
    let mut message = if label.is_empty() { "snapshot".to_owned() } else { label };
    message.push('\n');
    if skipped.is_empty() {
        return message;
    }
    message.push('\n');
    for one in skipped.iter().take(MAX_SKIPPED_LISTED) {
        message.push_str(SKIPPED);
        match &one.reason {
            SkipReason::TooLarge { bytes } => message.push_str(&bytes.to_string()),
            SkipReason::Special => message.push_str(SPECIAL),
            SkipReason::Unreadable { error } => {
                message.push_str(UNREADABLE);
                message.push_str(&escape(error));
            }
        }
        message.push('\t');
        message.push_str(&escape(&one.path));
        message.push('\n');
        if let Some(signature) = &one.signature {
            message.push_str(&format!("{SIGNATURE}{}\t{}\n", escape(signature), escape(&one.path)));
        }
    }
    if skipped.len() > MAX_SKIPPED_LISTED {
        message.push_str(&format!("{SKIPPED_MORE}{}\n", skipped.len() - MAX_SKIPPED_LISTED));
    }
    message
}

/// The skipped paths a message lists, and how many it skipped in all.
pub(crate) fn parse(message: &str) -> (Vec<Skipped>, usize) {
    let mut skipped: Vec<Skipped> = Vec::new();
    let mut more = 0;
    // The label is one line; everything after the first blank line is the list.
    for line in message.split('\n').skip_while(|line| !line.is_empty()) {
        if let Some(count) = line.strip_prefix(SKIPPED_MORE) {
            more = count.trim().parse().unwrap_or(0);
        } else if let Some(entry) = line.strip_prefix(SIGNATURE) {
            // A signature belongs to the skipped line just before it, naming the same path.
            let Some((signature, path)) = entry.split_once('\t') else { continue };
            if let Some(last) = skipped.last_mut().filter(|last| last.path == unescape(path)) {
                last.signature = Some(unescape(signature));
            }
        } else if let Some(entry) = line.strip_prefix(SKIPPED) {
            let Some((reason, path)) = entry.split_once('\t') else { continue };
            let reason = if reason == SPECIAL {
                SkipReason::Special
            } else if let Some(error) = reason.strip_prefix(UNREADABLE) {
                SkipReason::Unreadable { error: unescape(error) }
            } else if let Ok(bytes) = reason.parse() {
                SkipReason::TooLarge { bytes }
            } else {
                continue;
            };
            skipped.push(Skipped { path: unescape(path), reason, signature: None });
        }
    }
    let total = skipped.len() + more;
    (skipped, total)
}

/// Whether `path` is, or lies under, one of the `skipped` paths (a skipped folder covers its
/// files).
pub(crate) fn is_skipped<'a>(skipped: &'a [Skipped], path: &str) -> Option<&'a Skipped> {
    skipped.iter().find(|one| {
        !one.path.is_empty()
            && (one.path == path
                || path.strip_prefix(one.path.as_str()).is_some_and(|rest| rest.starts_with('/')))
    })
}

fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '\n' => escaped.push_str("\\n"),
            '\t' => escaped.push_str("\\t"),
            '\r' => escaped.push_str("\\r"),
            c => escaped.push(c),
        }
    }
    escaped
}

fn unescape(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            plain.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => plain.push('\n'),
            Some('t') => plain.push('\t'),
            Some('r') => plain.push('\r'),
            Some(other) => plain.push(other),
            None => plain.push('\\'),
        }
    }
    plain
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skipped(path: &str, reason: SkipReason) -> Skipped {
        Skipped {
            path: path.to_owned(),
            reason,
            signature: Some(format!("{}:1.0:2.0:3", path.len())),
        }
    }

    #[test]
    fn a_message_gives_back_what_it_lists() {
        let list = vec![
            skipped("big\tname\nwith lines\\", SkipReason::TooLarge { bytes: 6_000_000 }),
            skipped("fifo", SkipReason::Special),
            skipped(
                "secret",
                SkipReason::Unreadable { error: "Permission denied\t(os error 13)".into() },
            ),
        ];
        let message = format("frame f1\nstarted", &list);
        assert!(
            message
                .starts_with("frame f1 started\n\nskipped 6000000\tbig\\tname\\nwith lines\\\\\n")
        );
        assert_eq!(parse(&message), (list, 3));
    }

    #[test]
    fn past_the_listed_limit_only_a_count_is_kept() {
        let list: Vec<Skipped> = (0..MAX_SKIPPED_LISTED + 5)
            .map(|n| skipped(&format!("f{n:05}"), SkipReason::Special))
            .collect();
        let (listed, total) = parse(&format("label", &list));
        assert_eq!(listed.len(), MAX_SKIPPED_LISTED);
        assert_eq!(total, MAX_SKIPPED_LISTED + 5);
    }

    #[test]
    fn a_message_from_before_signatures_reads_without_them() {
        let message = "label\n\nskipped 6000000\tbig.bin\nsignature 1:2\tother.bin\n";
        let (listed, total) = parse(message);
        assert_eq!(total, 1);
        assert_eq!(listed[0].path, "big.bin");
        assert_eq!(listed[0].signature, None, "a signature naming another path is not taken");
    }

    #[test]
    fn a_label_cannot_forge_a_skipped_line() {
        let message = format("x\n\nskipped 5\tforged", &[]);
        assert_eq!(parse(&message), (Vec::new(), 0));
    }

    #[test]
    fn a_skipped_folder_covers_its_files_only() {
        let list = vec![skipped("data", SkipReason::Unreadable { error: "denied".into() })];
        assert!(is_skipped(&list, "data/x").is_some());
        assert!(is_skipped(&list, "data").is_some());
        assert!(is_skipped(&list, "database").is_none());
    }
}
