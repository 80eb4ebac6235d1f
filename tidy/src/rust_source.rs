//! Rust source as the compiler sees it in a normal build: comments, the insides of string and
//! character literals, and `#[cfg(test)]` items blanked out, so that a rule about code is not
//! broken by a doc comment that names what it forbids, nor by a unit test that uses it.

/// `text` with comments, the contents of string and character literals and every
/// `#[cfg(test)]` item replaced by spaces. Line breaks are kept, so line numbers still hold.
pub fn code_outside_tests(text: &str) -> String {
    let code = blank_comments_and_literals(text);
    blank_test_items(&code)
}

/// Whether `path` is only compiled for tests: a `tests/` or `benches/` folder, or a
/// `tests.rs` module (declared `#[cfg(test)] mod tests;` by its parent).
pub fn is_test_file(path: &std::path::Path) -> bool {
    path.components().any(|c| c.as_os_str() == "tests" || c.as_os_str() == "benches")
        || path.file_name().is_some_and(|name| name == "tests.rs")
}

fn blank_comments_and_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest in Rust.
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && !ident_before(&chars, i) {
            // A raw string: r"…", r#"…"#, and so on.
            let mut hashes = 0;
            let mut j = i + 1;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            for _ in i..=j {
                out.push(' ');
            }
            i = j + 1;
            while i < chars.len() {
                if chars[i] == '"' && (0..hashes).all(|h| chars.get(i + 1 + h) == Some(&'#')) {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    i += 1 + hashes;
                    break;
                }
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() {
                match chars[i] {
                    '\\' => {
                        out.push(' ');
                        if let Some(&escaped) = chars.get(i + 1) {
                            blank(&mut out, escaped);
                        }
                        i += 2;
                    }
                    '"' => {
                        out.push(' ');
                        i += 1;
                        break;
                    }
                    other => {
                        blank(&mut out, other);
                        i += 1;
                    }
                }
            }
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{7f}') or a lifetime ('a), which is kept.
            let end = if next == Some('\\') {
                (i + 2..chars.len()).find(|&j| chars[j] == '\'')
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    for _ in i..=end {
                        out.push(' ');
                    }
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// Blanks each item that follows a `#[cfg(test)]` attribute, up to its closing brace or its
/// semicolon. Expects comments and literals to be blanked already, so braces balance.
fn blank_test_items(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut bytes = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(found) = code[from..].find(MARK) {
        let start = from + found;
        let mut depth = 0usize;
        let mut end = code.len();
        let mut i = start + MARK.len();
        // Later attributes on the same item are skipped with it: their brackets are not braces.
        while i < code.len() {
            match code.as_bytes()[i] {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                b';' if depth == 0 => {
                    end = i + 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        for byte in &mut bytes[start..end] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
        from = end;
    }
    // Only ASCII bytes were replaced, and only whole characters (multi-byte characters were
    // already blanked inside comments and literals, and code outside them is ASCII).
    String::from_utf8(bytes).unwrap_or_else(|_| code.to_owned())
}

/// The names a `std::{…}` group imports at its top level (`std::{env, fs::File}` gives `env`
/// and `fs`), for each such group in `line`.
pub fn std_group_members(line: &str) -> Vec<String> {
    let mut members = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("std::{") {
        let group = &rest[at + "std::{".len()..];
        let mut depth = 0;
        let mut current = String::new();
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    members.push(std::mem::take(&mut current));
                    continue;
                }
                _ => {}
            }
            if depth == 0 {
                current.push(c);
            }
        }
        members.push(current);
        rest = group;
    }
    members
        .iter()
        .filter_map(|m| m.trim().split("::").next().map(|s| s.trim().to_owned()))
        .filter(|m| !m.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_literals_and_test_items_are_blanked() {
        let text = "use std::fs; // std::net\nlet s = \"std::env\";\nlet c = '{';\n\
                    #[cfg(test)]\nmod tests {\n    fn f() { std::process::exit(0) }\n}\nfn g() {}\n";
        let code = code_outside_tests(text);
        assert_eq!(code.lines().count(), text.lines().count());
        assert!(code.contains("use std::fs;"));
        assert!(!code.contains("std::net"));
        assert!(!code.contains("std::env"));
        assert!(!code.contains("std::process"));
        assert!(code.contains("fn g() {}"));
    }

    #[test]
    fn raw_strings_and_lifetimes() {
        let code = code_outside_tests("fn f<'a>(x: &'a str) -> &'a str { r#\"std::fs\"# ; x }");
        assert!(code.contains("fn f<'a>(x: &'a str)"));
        assert!(!code.contains("std::fs"));
    }

    #[test]
    fn std_groups_are_read() {
        assert_eq!(
            std_group_members("use std::{env, fs::File, io::{self, Read}};"),
            ["env", "fs", "io"]
        );
        assert!(std_group_members("use std::fs;").is_empty());
    }
}
