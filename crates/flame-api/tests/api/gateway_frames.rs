//! What the gateway's calls in one frame cost and would have cost (`Flame::gateway_frame_savings`,
//! the window's frame header): the frame's own part of `Flame::gateway_report`.

use flame_api::{GatewayCall, PlanSpec};
use flame_model::{Actor, FrameId, TreeId, Usage};

use crate::Scratch;

fn call(session: &str, tree: &TreeId, frame: &FrameId, sent: u64, client: u64) -> GatewayCall {
    GatewayCall {
        session: session.to_owned(),
        tree: tree.clone(),
        frame: frame.clone(),
        at: 1_795_307_601_000,
        wire: "chat".to_owned(),
        context: true,
        model: Some("gpt-4.1".to_owned()),
        status: 200,
        refused: None,
        sent: Usage { input_tokens: sent, output_tokens: 100, ..Usage::default() },
        client: Usage { input_tokens: client, ..Usage::default() },
        rewrite: None,
    }
}

#[test]
fn a_frame_s_savings_are_its_own_calls_priced_as_the_session_report_prices_them() {
    let s = Scratch::new(37);
    let session = s.flame.open_gateway_session("opencode", "ses_a").unwrap().id;
    let tree = s.flame.create_tree(Actor::Agent, "Gateway work", "Done", None).unwrap();
    let spec = |title: &str| PlanSpec {
        title: title.to_owned(),
        success_criteria: "Done".to_owned(),
        budget: None,
        children: Vec::new(),
    };
    let planned =
        s.flame.plan(Actor::Agent, Some(&tree.root), None, &[spec("Sub"), spec("Quiet")]).unwrap();
    let (sub, quiet) = (planned[0].id.clone(), planned[1].id.clone());
    for recorded in [
        call(&session, &tree.id, &tree.root, 10_000, 40_000),
        call(&session, &tree.id, &sub, 2_000, 3_000),
        call(&session, &tree.id, &tree.root, 12_000, 52_000),
    ] {
        s.flame.record_gateway_call(&recorded).unwrap();
    }

    let root = s.flame.gateway_frame_savings(&tree.root).unwrap().expect("the root made calls");
    assert_eq!((root.calls, root.context_calls, root.refused), (2, 2, 0));
    assert!(root.billed.micro_usd > 0 && root.billed.micro_usd < root.client.micro_usd, "{root:?}");
    let report = s.flame.gateway_report(&tree.id).unwrap().unwrap();
    for (frame, savings) in &report.frames {
        assert_eq!(s.flame.gateway_frame_savings(frame).unwrap().as_ref(), Some(savings));
    }
    assert_eq!(report.frames.len(), 2, "the root and Sub");
    assert_eq!(s.flame.gateway_frame_savings(&quiet).unwrap(), None, "no call there");
    let unknown = FrameId::parse("f9999999999").unwrap();
    assert!(s.flame.gateway_frame_savings(&unknown).is_err());
}

/// A session the gateway recorded is in the sessions' listing (`flame sessions`, the window) with
/// what its calls cost and would have cost, and following it from its files does not read them
/// into a second tree.
#[test]
fn the_gateway_s_sessions_are_listed_with_their_savings_and_are_not_followed_twice() {
    let s = Scratch::new(38);
    use flame_import::wire::{SessionThread, WireFormat, WireItem, WireSession, WireThread};
    let opened = s.flame.open_gateway_session("claude-code", "c0ffee-1").unwrap();
    assert!(opened.writes_tree);
    let mut thread = WireThread::new(WireFormat::Anthropic, None);
    let ask = serde_json::json!({"role": "user", "content": "Through the gateway"});
    thread.update(&[WireItem { hash: 1, json: &ask }], 1_795_307_601_000).unwrap();
    let session = WireSession {
        agent: "Claude Code".into(),
        id: "c0ffee-1".into(),
        folder: None,
        threads: vec![SessionThread { thread, parent: None, key: "main".into(), started_at: 0 }],
    };
    let stored = s.flame.store_gateway_draft(&opened.id, &session.draft().draft).unwrap();
    let tree = s.flame.tree(&stored.tree).unwrap();
    s.flame.record_gateway_call(&call(&opened.id, &tree.id, &tree.root, 1_000, 9_000)).unwrap();
    let nowhere = s.dir.path().join("no agents here");
    let homes = flame_api::AgentHomes {
        claude_code: nowhere.clone(),
        codex: nowhere.clone(),
        opencode: nowhere,
    };
    let list = s.flame.sessions(&homes, &[]).unwrap();
    assert_eq!(list.gateway.len(), 1);
    assert_eq!(list.gateway[0].title.as_deref(), Some("Through the gateway"));
    let savings = list.gateway[0].savings.as_ref().unwrap();
    assert_eq!((savings.calls, savings.context_calls), (1, 1));
    assert!(savings.billed.micro_usd < savings.client.micro_usd);
    // The same session asked to be followed from its files stays the gateway's.
    let outcome = s.flame.sync_followed(Actor::Cli, &opened.id).unwrap();
    assert_eq!((outcome.frames, outcome.messages), (0, 0));
    assert!(s.flame.open_gateway_session("claude-code", "c0ffee-1").unwrap().writes_tree);
}
