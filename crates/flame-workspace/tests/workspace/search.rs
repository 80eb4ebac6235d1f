use flame_workspace::{
    ContextLine, MAX_CONTEXT_LINES, MAX_HIT_LINE_BYTES, MAX_SEARCH_HITS,
    MAX_SEARCH_LINE_BUFFER_BYTES, MAX_SEARCH_OUTPUT_BYTES, SearchHit, SearchQuery, Touched,
    WorkspaceError,
};

use crate::Fixture;

fn query(pattern: &str) -> SearchQuery {
    SearchQuery { pattern: pattern.into(), glob: None, context_lines: 0, case_insensitive: false }
}

#[test]
fn hits_carry_file_line_and_context() {
    let f = Fixture::new();
    f.put("src/a.rs", "one\ntwo\nfn target() {}\nfour\nfive\nsix\nseven\nfn target2() {}\n");
    let result = f
        .workspace
        .search(&SearchQuery { context_lines: 1, ..query(r"fn target\d?") })
        .expect("search");
    let line = |line_number, line: &str| ContextLine { line_number, line: line.into() };
    assert_eq!(
        result.hits,
        [
            SearchHit {
                path: "src/a.rs".into(),
                line_number: 3,
                line: "fn target() {}".into(),
                before: vec![line(2, "two")],
                after: vec![line(4, "four")],
            },
            SearchHit {
                path: "src/a.rs".into(),
                line_number: 8,
                line: "fn target2() {}".into(),
                before: vec![line(7, "seven")],
                after: vec![],
            },
        ]
    );
    assert_eq!((result.total_matches, result.files_with_matches), (2, 1));
    assert_eq!(
        result.render(),
        "src/a.rs\n2-two\n3:fn target() {}\n4-four\n--\n7-seven\n8:fn target2() {}\n"
    );
    assert_eq!(result.touched(), Touched::files(vec!["src/a.rs".into()], vec![]));
}

#[test]
fn ignored_hidden_and_binary_files_are_skipped() {
    let f = Fixture::new();
    f.git_init();
    f.put(".gitignore", "build/\n");
    f.put("build/out.txt", "needle\n");
    f.put(".cache/x.txt", "needle\n");
    f.put("data.bin", b"needle\0\x01\x02");
    f.put("src/b.txt", "needle\n");
    f.put("src/a.txt", "hay\nNeedle\n");
    let result = f.workspace.search(&query("needle")).expect("search");
    let paths: Vec<&str> = result.hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths, ["src/b.txt"]);
    assert_eq!(result.binary_files_skipped, 1);
    assert!(result.render().contains("[1 binary file(s) skipped]"), "{}", result.render());
    let insensitive = f
        .workspace
        .search(&SearchQuery { case_insensitive: true, ..query("needle") })
        .expect("search");
    let paths: Vec<&str> = insensitive.hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths, ["src/a.txt", "src/b.txt"]);
    let only_a = f
        .workspace
        .search(&SearchQuery {
            glob: Some("src/a*".into()),
            case_insensitive: true,
            ..query("needle")
        })
        .expect("search");
    assert_eq!(only_a.hits.len(), 1);
}

#[test]
fn past_the_hit_cap_the_first_hits_in_path_order_are_kept_every_time() {
    let f = Fixture::new();
    // 30 files of 10 matches: 300 in all, more than the cap.
    for file in 0..30 {
        f.put(&format!("f{file:02}.txt"), "match\n".repeat(10));
    }
    let first = f.workspace.search(&query("match")).expect("search");
    assert_eq!(first.hits.len(), MAX_SEARCH_HITS);
    assert_eq!(first.total_matches, 300);
    assert_eq!(first.files_with_matches, 30);
    let last = first.hits.last().expect("hits");
    assert_eq!((last.path.as_str(), last.line_number), ("f19.txt", 10));
    assert!(
        first
            .hits
            .windows(2)
            .all(|w| (&w[0].path, w[0].line_number) < (&w[1].path, w[1].line_number))
    );
    assert!(
        first
            .render()
            .contains(&format!("[{MAX_SEARCH_HITS} of 300 matching lines in 30 file(s) shown"))
    );
    for _ in 0..5 {
        assert_eq!(f.workspace.search(&query("match")).expect("search").hits, first.hits);
    }
}

#[test]
fn long_lines_are_cut_and_the_reply_is_capped_in_bytes() {
    let f = Fixture::new();
    let long = format!("{}needle\n", "a".repeat(400)).repeat(MAX_SEARCH_HITS);
    f.put("long.txt", &long);
    let result = f.workspace.search(&query("needle")).expect("search");
    assert_eq!(result.hits.len(), MAX_SEARCH_HITS);
    assert_eq!(result.hits[0].line.len(), 406);
    let rendered = result.render();
    assert!(rendered.len() <= MAX_SEARCH_OUTPUT_BYTES + 200, "{} bytes", rendered.len());
    assert!(rendered.contains("narrow the pattern"), "{}", &rendered[rendered.len() - 200..]);

    f.put("min.js", format!("{}needle{}\n", "b".repeat(1_000), "c".repeat(1_000)));
    let result = f
        .workspace
        .search(&SearchQuery { glob: Some("*.js".into()), ..query("needle") })
        .expect("search");
    let line = &result.hits[0].line;
    assert!(line.starts_with(&"b".repeat(MAX_HIT_LINE_BYTES)), "{line}");
    assert!(line.ends_with(&format!("[… {} more bytes]", 2_006 - MAX_HIT_LINE_BYTES)), "{line}");
}

#[test]
fn a_file_with_a_line_past_the_searcher_buffer_is_counted_unreadable() {
    let f = Fixture::new();
    f.put("huge-line.txt", format!("{}needle\n", "z".repeat(MAX_SEARCH_LINE_BUFFER_BYTES + 1_000)));
    f.put("small.txt", "needle\n");
    let result = f.workspace.search(&query("needle")).expect("search");
    assert_eq!(result.unreadable_files, 1);
    assert_eq!(result.hits.len(), 1);
    assert!(result.render().contains("[1 file(s) could not be read]"));
}

#[test]
fn an_invalid_regex_is_a_clear_error() {
    let f = Fixture::new();
    let error = f.workspace.search(&query("fn (")).expect_err("invalid");
    assert!(matches!(error, WorkspaceError::InvalidRegex { .. }), "{error:?}");
    assert!(error.to_string().contains("fn ("), "{error}");
}

#[test]
fn context_past_its_cap_is_cut_to_the_cap() {
    let f = Fixture::new();
    let lines: Vec<String> = (1..=40).map(|n| format!("line {n}")).collect();
    f.put("a.txt", lines.join("\n").replace("line 20", "needle"));
    let result = f
        .workspace
        .search(&SearchQuery { context_lines: MAX_CONTEXT_LINES + 5, ..query("needle") })
        .expect("search");
    assert_eq!(result.query.context_lines, MAX_CONTEXT_LINES);
    let hit = &result.hits[0];
    assert_eq!(hit.before.len(), MAX_CONTEXT_LINES);
    assert_eq!(hit.after.len(), MAX_CONTEXT_LINES);
    assert_eq!(hit.before[0].line_number, 20 - MAX_CONTEXT_LINES as u64);
}
