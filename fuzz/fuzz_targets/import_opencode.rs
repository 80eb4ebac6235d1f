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

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let rows = rows(data);
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
