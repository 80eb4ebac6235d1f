//! Servers that misbehave, each in one way: each gets a clear error on the operation that met
//! it, and the other servers, started beside them, keep working.

use flame_mcp_client::{MAX_LIST_PAGES, McpError, Problem, ServerListing, ToolList};
use serde_json::json;

use super::*;

fn scripted(name: &str, mode: &str) -> ServerSpec {
    spec(name, stdio("node", &[&scripted_server(), mode], &[]))
}

fn listed<'a>(listings: &'a [ServerListing], server: &str) -> &'a Result<ToolList, McpError> {
    &listings.iter().find(|l| l.server == server).unwrap().tools
}

#[tokio::test(flavor = "multi_thread")]
async fn each_hostile_server_fails_clearly_and_the_rest_keep_working() {
    if node("each_hostile_server_fails_clearly_and_the_rest_keep_working").is_none() {
        return;
    }
    let set = servers(vec![
        scripted("well", "well"),
        scripted("exits", "exit"),
        scripted("silent", "silent"),
        scripted("noisy", "noisy"),
        scripted("flood", "flood"),
        scripted("malformed", "malformed"),
        scripted("huge", "huge"),
        scripted("endless", "endless"),
        spec("missing", stdio("/nonexistent/mcp-server", &[], &[])),
        spec("needs-var", stdio("node", &["${NOT_SET_ANYWHERE}"], &[])),
    ]);
    let listings = set.list_tools().await;
    let names: Vec<&str> = listings.iter().map(|l| l.server.as_str()).collect();
    assert_eq!(
        names,
        [
            "endless",
            "exits",
            "flood",
            "huge",
            "malformed",
            "missing",
            "needs-var",
            "noisy",
            "silent",
            "well"
        ],
        "servers in the order of their names"
    );
    let well = listed(&listings, "well").as_ref().expect("the well-behaved server lists");
    let offered: Vec<&str> = well.tools.iter().map(|t| t.offered_name.as_str()).collect();
    assert_eq!(offered, ["well__echo", "well__fail", "well__odd", "well__slow"]);

    // A list in pages without end is read up to the limit, and the rest said to be left out.
    let endless = listed(&listings, "endless").as_ref().expect("the pages read are offered");
    assert_eq!(endless.tools.len(), MAX_LIST_PAGES);
    assert!(endless.left_out[0].contains("the rest of its list"), "{:?}", endless.left_out);

    let error = |server: &str| listed(&listings, server).as_ref().unwrap_err().clone();
    let exits = error("exits");
    assert!(
        matches!(&exits.problem, Problem::Exited { status, stderr } if status == "exit code 3" && stderr.contains("cannot be opened")),
        "{exits}"
    );
    assert!(exits.to_string().starts_with("the MCP server exits exited (exit code 3)"), "{exits}");
    let silent = error("silent");
    assert!(
        matches!(silent.problem, Problem::TimedOut { what: "the initialize request", .. }),
        "{silent}"
    );
    let noisy = error("noisy");
    assert!(
        matches!(&noisy.problem, Problem::TimedOut { noise: Some(noise), .. } if noise.contains("Server starting")),
        "{noisy}"
    );
    assert!(matches!(error("flood").problem, Problem::NotJsonRpc { .. }), "{}", error("flood"));
    let missing = error("missing");
    assert!(
        matches!(&missing.problem, Problem::CannotStart { reason } if reason.contains("/nonexistent/mcp-server")),
        "{missing}"
    );
    let needs_var = error("needs-var");
    assert!(needs_var.to_string().contains("NOT_SET_ANYWHERE is not set"), "{needs_var}");

    // Malformed JSON-RPC in answer to a call: a clear error at once, not a timeout.
    let malformed = set.call("malformed", "echo", arguments(json!({"message": "x"}))).await;
    let malformed = malformed.unwrap_err();
    assert!(
        matches!(&malformed.problem, Problem::Protocol { detail } if detail.contains("not JSON-RPC") && detail.contains("oops")),
        "{malformed}"
    );
    // A 50 MB result is not read.
    let huge = set.call("huge", "echo", arguments(json!({"message": "x"}))).await.unwrap_err();
    assert_eq!(huge.problem, Problem::TooLarge { limit: TEST_LIMITS.max_message_bytes }, "{huge}");

    // The well-behaved server answered through all of that.
    let echo = set.call("well", "echo", arguments(json!({"message": "still here"}))).await;
    assert_eq!(echo.unwrap().text, r#"echo: {"message":"still here"}"#);
    // A tool's own failure is a result the model reads, not an error of the server.
    let failed = set.call("well", "fail", Map::new()).await.unwrap();
    assert!(failed.is_error && failed.text == "the tool failed on purpose", "{failed:?}");
    let refused = set.call("well", "nope", Map::new()).await.unwrap_err();
    assert!(
        matches!(&refused.problem, Problem::Refused { message } if message == "no tool named nope"),
        "{refused}"
    );
    // A call that never ends times out; the server stays and answers the next one.
    let slow = set.call("well", "slow", Map::new()).await.unwrap_err();
    assert!(matches!(slow.problem, Problem::TimedOut { what: "the call", .. }), "{slow}");
    assert!(set.call("well", "echo", arguments(json!({"message": "after"}))).await.is_ok());
    let unknown = set.call("nobody", "echo", Map::new()).await.unwrap_err();
    assert_eq!(unknown.to_string(), "the MCP server nobody is not in Flame's settings");

    // A server that broke its connection is started again at its next use; one that could not
    // start is not tried again at once.
    let relisted = set.list_tools().await;
    assert!(listed(&relisted, "huge").is_ok(), "{:?}", listed(&relisted, "huge"));
    assert!(listed(&relisted, "malformed").is_ok());
    let again = set.call("exits", "echo", Map::new()).await.unwrap_err();
    assert!(matches!(again.problem, Problem::FailedRecently { .. }), "{again}");
    assert!(again.to_string().contains("it is tried again in"), "{again}");

    let states = set.states();
    assert_eq!(states.len(), 10);
    set.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stopping_or_dropping_the_servers_ends_their_whole_process_group() {
    if node("stopping_or_dropping_the_servers_ends_their_whole_process_group").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for stop in [true, false] {
        let pids_file = dir.path().join(format!("pids-{stop}"));
        let pids_path = pids_file.display().to_string();
        let set = servers(vec![spec(
            "well",
            stdio("node", &[&scripted_server(), "well"], &[("FLAME_TEST_PIDS", &pids_path)]),
        )]);
        assert!(set.list_tools().await[0].tools.is_ok());
        let pids: Vec<u32> = std::fs::read_to_string(&pids_file)
            .unwrap()
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(pids.len(), 2, "the server and the child it started");
        assert!(pids.iter().all(|&pid| running(pid)));
        if stop {
            set.stop().await;
        } else {
            drop(set);
        }
        assert!(
            all_end(&pids).await,
            "still running after {}: {pids:?}",
            if stop { "stop" } else { "drop" }
        );
    }
}
