//! `@modelcontextprotocol/server-everything`, the protocol's own reference server.

use std::time::{Duration, Instant};

use flame_mcp_client::McpTransport;
use serde_json::json;

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn the_reference_server_over_stdio_lists_its_tools_and_answers() {
    let Some(script) = everything("the_reference_server_over_stdio_lists_its_tools_and_answers")
    else {
        return;
    };
    let script = script.display().to_string();
    let set = servers(vec![spec(
        "everything",
        stdio("node", &[&script, "stdio"], &[("GIVEN_TOKEN", "${FLAME_TEST_TOKEN}")]),
    )]);
    let listing = set.list_tools().await.remove(0);
    let list = listing.tools.expect("the reference server lists its tools");
    let names: Vec<&str> = list.tools.iter().map(|t| t.offered_name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "offered in the order of their names");
    for name in ["everything__echo", "everything__get-sum", "everything__get-env"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(list.tools.iter().all(|t| t.schema["type"] == "object"), "every input is an object");
    assert!(list.left_out.is_empty(), "{:?}", list.left_out);

    let echo =
        set.call("everything", "echo", arguments(json!({"message": "hello"}))).await.unwrap();
    assert_eq!((echo.text.as_str(), echo.is_error), ("Echo: hello", false));
    let sum = set.call("everything", "get-sum", arguments(json!({"a": 2, "b": 3}))).await.unwrap();
    assert_eq!(sum.text, "The sum of 2 and 3 is 5.");

    // The server starts from the variables it is given and its own, `${…}` expanded: a key
    // of Flame's environment that it does not name never reaches it.
    let env = set.call("everything", "get-env", Map::new()).await.unwrap().text;
    assert!(env.contains(r#""GIVEN_TOKEN": "token-for-this-server""#), "{env}");
    assert!(!env.contains("sk-ant-planted-sentinel"), "{env}");

    let image = set.call("everything", "get-tiny-image", Map::new()).await.unwrap();
    assert!(image.text.contains("[an image, image/png,"), "{}", image.text);

    // A call the server refuses is its error, and the server keeps working.
    let refused = set.call("everything", "no-such-tool", Map::new()).await;
    let refused_text = match refused {
        Ok(reply) => {
            assert!(reply.is_error, "{reply:?}");
            reply.text
        }
        Err(err) => err.to_string(),
    };
    assert!(refused_text.contains("no-such-tool"), "{refused_text}");
    assert!(set.call("everything", "echo", arguments(json!({"message": "again"}))).await.is_ok());
    set.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reference_server_over_streamable_http_lists_its_tools_and_answers() {
    let test = "the_reference_server_over_streamable_http_lists_its_tools_and_answers";
    let Some(script) = everything(test) else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = tokio::process::Command::new("node")
        .arg(&script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(Instant::now() < deadline, "the server did not listen on {port}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let set = servers(vec![spec(
        "everything",
        McpTransport::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: [("X-Flame-Test".to_owned(), "${FLAME_TEST_TOKEN}".to_owned())].into(),
        },
    )]);
    let list = set.list_tools().await.remove(0).tools.expect("listed over HTTP");
    assert!(list.tools.iter().any(|t| t.offered_name == "everything__echo"));
    let echo = set.call("everything", "echo", arguments(json!({"message": "over http"}))).await;
    assert_eq!(echo.unwrap().text, "Echo: over http");
    set.stop().await;
    let _ = server.kill().await;
}
