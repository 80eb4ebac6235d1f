//! `flame budget` and budgets in `flame status` and `flame chat` (issue 32): a budget set, shown,
//! refused past what the parent has left, and cleared; and a chat whose model would call tools
//! for ever stops when the frame's budget is spent, with the reason and status 1, and the frame's
//! log and export say why.

use super::{Home, chat_in, frame_by_title, wire};

#[tokio::test(flavor = "multi_thread")]
async fn a_budget_is_set_shown_held_to_the_parent_and_stops_a_chat() {
    let home = Home::new();
    let ids = home.spec_tree();
    let (api, crud) = (ids["API Routes"].clone(), ids["CRUD Endpoints"].clone());

    let shown = home.ok(&["budget", &api, "--usd", "2.5", "--calls", "10"]);
    assert!(shown.contains("budget $2.50, 10 tool calls"), "{shown}");
    let refused = home.refused(&["budget", &crud, "--calls", "11"]);
    assert!(refused.contains("a budget of 11 tool calls is more than the parent has left"));
    assert!(refused.contains("give at most 10 tool calls"), "{refused}");
    home.ok(&["budget", &crud, "--calls", "2"]);
    let left = home.ok(&["budget", &crud]);
    assert!(left.contains("2 tool calls left of 2 tool calls (the budget of frame"), "{left}");
    assert!(left.contains("$2.50 left of $2.50"), "the parent's budget bounds it too: {left}");
    let invalid = home.run(&["budget", &crud, "--usd=-1"]);
    assert_eq!(invalid.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&invalid.stderr).contains("a budget in dollars is a number"));

    // Each reply calls a tool; the budget of two calls stops the third call before it is made.
    let tool = || flame_models::replay::Reply::stream(wire("anthropic-tool.sse"));
    let (out, server) = chat_in(&home, &crud, [tool(), tool(), tool()], &["Go"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("Stopped before the next model call"), "{err}");
    assert!(err.contains("is spent: 2 tool calls of 2 tool calls"), "{err}");
    assert_eq!(server.requests().len(), 2);
    // The frame's history says why the work stopped: `flame log` and the export show its note.
    let why = "the work stopped here, before the next model call, because the budget of frame";
    let log = home.ok(&["log", &crud]);
    assert!(log.contains(why) && log.contains("is spent: 2 tool calls of 2 tool calls"), "{log}");
    for format in ["json", "markdown"] {
        let export = home.ok(&["export", &crud, "--format", format, "--scope", "frame"]);
        assert!(export.contains(why), "{format}: {export}");
    }

    let status = home.ok(&["status"]);
    assert!(status.contains("[budget spent: 2 of 2 tool calls]"), "{status}");
    assert!(status.contains("[budget: "), "the parent's budget is shown: {status}");
    let json = home.json(&["status"]);
    let frames = json["frames"].as_array().unwrap();
    let crud_json = frames.iter().find(|f| f["id"] == crud.as_str()).unwrap();
    assert_eq!(crud_json["budget"]["spent"]["tool_calls"], 2);
    let api_json = frames.iter().find(|f| f["id"] == api.as_str()).unwrap();
    assert_eq!(api_json["budget"]["spent"]["tool_calls"], 2, "the child's calls count up the tree");

    home.ok(&["budget", &crud, "--clear"]);
    assert!(home.ok(&["budget", &crud]).contains("no budget of its own"));
    assert_eq!(frame_by_title(&home.json(&["status"]), "CRUD Endpoints"), crud);
}
