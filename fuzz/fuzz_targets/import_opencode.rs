//! Any bytes as OpenCode's storage, written as JSON Lines: one session, message or part object a
//! line, as the files under `storage/` (and the `data` columns of `opencode.db`) hold them. Each
//! line becomes a row the way `opencode::read_storage` reads its files — a part names its message
//! (`messageID`), a message its session (`sessionID`), anything else is a session — and the rows
//! go through `opencode::from_rows`, the step both storage layouts share. The import either
//! refuses them or returns a draft that makes a valid tree, for the newest top-level session and
//! for the first session named (which may be a child session, as when a person imports one
//! session's file), with and without segmenting.
#![no_main]

use flame_import::ImportOptions;
use flame_import::opencode::{MessageRow, PartRow, Rows, SessionRow, from_rows};
use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let rows = rows(data);
    if parents_loop(&rows) {
        // Found by this target and reported (fuzz/README.md): `from_rows` walks child sessions
        // without remembering which it has placed, so a session that is its own ancestor makes
        // it add frames until memory runs out. Such inputs are set aside until that is fixed, so
        // that the fuzzer can look for anything else; delete this check with the fix.
        return;
    }
    let first = rows.sessions.first().map(|s| s.id.clone());
    for session in [None, first.as_deref()] {
        for segment in [true, false] {
            let options = ImportOptions { segment, session: session.map(str::to_owned) };
            if let Ok(draft) = from_rows(rows.clone(), session, &options) {
                flame_fuzz::check_draft(&draft);
            }
        }
    }
});

/// Whether some session is its own ancestor, following `parentID` to every session row with that
/// id (ids may repeat).
fn parents_loop(rows: &Rows) -> bool {
    let mut parents: HashMap<&str, Vec<&str>> = HashMap::new();
    for s in &rows.sessions {
        parents.entry(s.id.as_str()).or_default().extend(s.parent_id.as_deref());
    }
    // Depth-first over the parent links: 1 = on the current path, 2 = done.
    fn visit<'a>(
        id: &'a str,
        parents: &HashMap<&'a str, Vec<&'a str>>,
        state: &mut HashMap<&'a str, u8>,
    ) -> bool {
        match state.get(id) {
            Some(1) => return true,
            Some(_) => return false,
            None => {}
        }
        state.insert(id, 1);
        for &parent in parents.get(id).into_iter().flatten() {
            if visit(parent, parents, state) {
                return true;
            }
        }
        state.insert(id, 2);
        false
    }
    let mut state = HashMap::new();
    parents.keys().any(|id| visit(id, &parents, &mut state))
}

fn rows(data: &[u8]) -> Rows {
    let mut rows = Rows::default();
    for (n, line) in data.split(|&b| b == b'\n').enumerate() {
        let object = match serde_json::from_slice::<Value>(line) {
            Ok(object @ Value::Object(_)) => object,
            Ok(_) => {
                rows.problems.push(format!("line {n}: not a JSON object; skipped"));
                continue;
            }
            Err(err) => {
                rows.problems.push(format!("line {n}: {err}; skipped"));
                continue;
            }
        };
        let text = |value: &Value| value.as_str().unwrap_or_default().to_owned();
        if let Some(message) = object["messageID"].as_str() {
            rows.parts.push(PartRow {
                id: text(&object["id"]),
                message_id: message.to_owned(),
                time_created: object["time"]["start"].as_i64().unwrap_or(0),
                data: object,
            });
        } else if let Some(session) = object["sessionID"].as_str() {
            rows.messages.push(MessageRow {
                id: text(&object["id"]),
                session_id: session.to_owned(),
                time_created: object["time"]["created"].as_i64().unwrap_or(0),
                data: object,
            });
        } else {
            rows.sessions.push(SessionRow {
                id: text(&object["id"]),
                parent_id: object["parentID"].as_str().map(str::to_owned),
                title: text(&object["title"]),
                directory: object["directory"].as_str().map(str::to_owned),
                time_created: object["time"]["created"].as_i64().unwrap_or(0),
            });
        }
    }
    rows
}
