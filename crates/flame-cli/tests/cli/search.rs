//! `flame search`: hits with their frame's path in both forms, `--tree`, `--limit`, words that
//! look like search syntax, a search past the limit, and escape sequences in what is printed.

use super::{Home, frame_by_title};

#[test]
fn search_prints_each_hit_with_its_path_and_the_words_marked() {
    let home = Home::new();
    let ids = home.spec_tree();
    let crud = &ids["CRUD Endpoints"];
    home.ok(&["append", crud, "--role", "user", "Paginate with an opaque cursor, for pagination"]);

    let out = home.ok(&["search", "pagination"]);
    let lines: Vec<&str> = out.lines().collect();
    // Pagination's title comes first (a frame), then the message, with the path to each.
    assert_eq!(lines.len(), 4, "{out}");
    let pagination = frame_by_title(&home.json(&["status"]), "Pagination");
    assert_eq!(lines[0], format!("{pagination}  Build the application › API Routes › Pagination"));
    assert_eq!(lines[1], "  title or results: [Pagination]");
    assert_eq!(lines[2], format!("{crud}  Build the application › API Routes › CRUD Endpoints"));
    assert!(lines[3].starts_with("  message "), "{out}");
    assert!(
        lines[3].ends_with("(user): Paginate with an opaque cursor, for [pagination]"),
        "{out}"
    );
    // Results are searched, criteria are not: "Refresh tokens work" is the results of Tokens,
    // "Cursor-based pagination" Pagination's criteria.
    assert_eq!(home.ok(&["search", "refresh", "tokens"]).lines().count(), 2);
    assert_eq!(home.ok(&["search", "cursor", "based"]), "nothing found for \"cursor based\"\n");

    let json = home.json(&["search", "opaque", "cur"]);
    let hits = json.as_array().unwrap();
    assert_eq!(hits.len(), 1, "{json}");
    assert_eq!(hits[0]["frame"], crud.as_str());
    assert_eq!(hits[0]["tree_title"], "Build the application");
    assert_eq!(hits[0]["place"]["kind"], "message");
    assert_eq!(hits[0]["place"]["role"], "user");
    let path: Vec<&str> =
        hits[0]["path"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    assert_eq!(path, ["Build the application", "API Routes", "CRUD Endpoints"]);
    let matched: Vec<&str> = hits[0]["snippet"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["matched"] == true)
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    assert_eq!(matched, ["opaque", "cursor"]);
}

#[test]
fn search_within_a_tree_with_a_limit() {
    let home = Home::new();
    let first = home.json(&["tree", "new", "First", "--criteria", "c"]);
    let root = first["root"].as_str().unwrap().to_owned();
    for i in 0..5 {
        home.ok(&["append", &root, "--role", "note", &format!("lantern {i}")]);
    }
    home.ok(&["tree", "new", "Second lantern", "--criteria", "c"]);

    assert_eq!(home.json(&["search", "lantern"]).as_array().unwrap().len(), 6);
    let tree = first["tree"].as_str().unwrap();
    let mine = home.json(&["search", "lantern", "--tree", tree]);
    assert_eq!(mine.as_array().unwrap().len(), 5);
    // Newest first.
    let text = |hit: &serde_json::Value| -> String {
        hit["snippet"].as_array().unwrap().iter().map(|p| p["text"].as_str().unwrap()).collect()
    };
    assert_eq!((text(&mine[0]), text(&mine[4])), ("lantern 4".to_owned(), "lantern 0".to_owned()));
    let two = home.ok(&["search", "lantern", "--tree", tree, "--limit", "2"]);
    assert!(two.ends_with("(the first 2; --limit shows up to 200)\n"), "{two}");
    assert_eq!(home.run(&["search", "lantern", "--limit", "201"]).status.code(), Some(2));
    assert_eq!(home.run(&["search", "lantern", "--limit", "0"]).status.code(), Some(2));
    assert_eq!(home.run(&["search"]).status.code(), Some(2));
    assert_eq!(home.ok(&["search", "nowhere"]), "nothing found for \"nowhere\"\n");
    let err = home.refused(&["search", "lantern", "--tree", "t0000000000"]);
    assert!(err.contains("t0000000000"), "{err}");
}

#[test]
fn search_words_are_never_syntax_and_a_long_search_is_refused() {
    let home = Home::new();
    let tree = home.json(&["tree", "new", "Syntax", "--criteria", "c"]);
    let root = tree["root"].as_str().unwrap();
    home.ok(&["append", root, "--role", "user", "x AND y NEAR(z) \"quoted\" star*"]);
    for words in ["\"", "*", "NEAR(", "AND", "OR NOT", ":", "^", "{a}:b"] {
        home.ok(&["search", "--", words]);
    }
    assert_eq!(home.json(&["search", "NEAR("]).as_array().unwrap().len(), 1);
    assert_eq!(home.json(&["search", "\"quoted\""]).as_array().unwrap().len(), 1);
    let long = "w".repeat(10_000);
    let err = home.refused(&["search", &long]);
    assert!(err.contains("at most 500 characters"), "{err}");
    let out = home.run(&["--json", "search", &long]);
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(err["code"], "invalid");
}

#[test]
fn search_escapes_control_characters_it_prints() {
    let home = Home::new();
    let tree = home.json(&["tree", "new", "Escapes", "--criteria", "c"]);
    let root = tree["root"].as_str().unwrap();
    home.ok(&["append", root, "--role", "user", "beacon \x1b]0;pwned\x07 \x1b[31mred"]);
    let out = home.ok(&["search", "beacon"]);
    assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
    assert!(out.contains("\\x1b"), "{out}");
}
