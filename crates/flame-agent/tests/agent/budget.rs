//! Budgets (issue 32) as the agent keeps them, against a scripted model over both wire formats
//! that would call tools for ever: a child pushed under a frame with a dollar budget works until
//! the budget on its path is spent, and the agent stops before the next call, says why, and has
//! spent at most one call more than the budget. On the way the model is told what is left, in
//! notes appended after the newest message, so that each request still starts with the one
//! before it.

use flame_agent::ApprovalPolicy;
use flame_model::budget::{BudgetUnit, FrameBudget};

use super::cache::{Wire, agent_on, scripted, unmarked};
use super::*;

/// One cent: some thirteen calls of the scripted replies on either wire.
const BUDGET_MICRO_USD: u64 = 10_000;

async fn a_looping_agent_stops_at_the_budget(wire: Wire) {
    let mut replies = vec![scripted(
        wire,
        "This needs a frame of its own.",
        Some((
            "call_push",
            "push_frame",
            json!({"title": "Look around", "success_criteria": "Everything is seen"}),
        )),
    )];
    replies.extend((0..40).map(|n| {
        scripted(wire, "Checking again.", Some((&*format!("call_{n}"), "frame_status", json!({}))))
    }));
    let mut s = setup(Autonomy::Auto, replies).await;
    let root = s.flame.status(None).unwrap().focus;
    let budget = FrameBudget { micro_usd: Some(BUDGET_MICRO_USD), ..FrameBudget::default() };
    s.flame.set_budget(Actor::Person, &root, Some(budget)).unwrap();
    let settings = Settings {
        approval: ApprovalPolicy::default(),
        turn_budget: FrameBudget::default(),
        ..s.agent.settings().clone()
    };
    s.agent = agent_on(&s, wire, settings);
    let outcome = s
        .agent
        .send(
            Actor::Person,
            None,
            "Look at everything",
            None,
            &CancellationToken::new(),
            &mut |_| {},
        )
        .await
        .unwrap();

    // Stopped in the child, by the root's budget, with the reason.
    let Stopped::BudgetSpent { frame, reason } = &outcome.stopped else {
        panic!("{wire:?}: {outcome:?}")
    };
    assert_eq!(frame, &root);
    assert_ne!(outcome.frame, root, "the child was working");
    assert!(reason.contains("Stopped before the next model call"), "{reason}");
    assert!(reason.contains("is spent: $0.01"), "{reason}");
    // The frame's history says so: a note, last, which the log and the export show.
    let stop = stopped_note(&s.flame, &outcome.frame);
    assert!(stop.contains("before the next model call, because the budget of frame"), "{stop}");
    assert!(stop.contains("is spent: $0.01"), "{stop}");

    // The root's spend is its subtree's, and at most one call past the budget.
    let calls = s.server.requests().len() as u64;
    assert_eq!(u64::from(outcome.rounds), calls);
    let view = s.flame.frame_budget(&root).unwrap();
    assert!(view.exceeded());
    let spent = view.spent.unwrap().micro_usd;
    let child = s.flame.frame_budget(&outcome.frame).unwrap();
    assert_eq!(child.budget, None, "the child draws on its parent's budget");
    assert_eq!(child.allowance.bound(BudgetUnit::Usd).unwrap().spent, spent);
    let per_call = spent / calls;
    assert!(spent >= BUDGET_MICRO_USD, "{wire:?}: spent {spent}");
    assert!(spent < BUDGET_MICRO_USD + per_call, "{wire:?}: spent {spent} in {calls} calls");
    assert!(calls >= 10, "{wire:?}: the scripted calls cost about a thirteenth of the budget");

    let bodies: Vec<String> = s.server.requests().into_iter().map(|r| r.body).collect();
    let told = |needle: &str| bodies.iter().position(|b| b.contains(needle));
    let first = told("[Flame] Budget: this frame has").expect("the model is told its budget");
    let half = told("[Flame] Budget: half of it is spent").expect("told at half");
    let low = told("Finish now, or pop this frame").expect("told at 80%");
    assert!(first < half && half < low, "{first} {half} {low}");
    assert!(low < bodies.len() - 1, "{wire:?}: told before the last call");
    // The note at 80% is appended: that request starts with the one before it.
    let (before, with_note) = (unmarked(&bodies[low - 1]), unmarked(&bodies[low]));
    let before = before.strip_suffix("]}").unwrap_or(&before);
    let kept = before.bytes().zip(with_note.bytes()).take_while(|(a, b)| a == b).count();
    assert!(
        kept as f64 >= 0.9 * before.len() as f64,
        "{wire:?}: the request with the note keeps {kept} of {} bytes of the one before",
        before.len()
    );

    // Raising the budget lets the agent go on, and it is told of the new one.
    let raised = FrameBudget { micro_usd: Some(2 * BUDGET_MICRO_USD), ..FrameBudget::default() };
    s.flame.set_budget(Actor::Person, &root, Some(raised)).unwrap();
    let outcome = s
        .agent
        .send(Actor::Person, None, "Go on", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert!(matches!(outcome.stopped, Stopped::BudgetSpent { .. }), "{outcome:?}");
    assert!(outcome.rounds >= 5, "{wire:?}: {} more calls", outcome.rounds);
    // The first request after the stop sends everything the last one before it sent, in the
    // same places, and then tells the model why the work stopped. (A batch of masking may mask
    // results that request sent whole, as it would have without the note: the agent's test of
    // the per-turn budget, which masks nothing there, checks the bytes.)
    let (before, after) = (&bodies[bodies.len() - 1], &s.server.requests()[bodies.len()].body);
    let (before, after): (Value, Value) = (
        serde_json::from_str(&unmarked(before)).unwrap(),
        serde_json::from_str(&unmarked(after)).unwrap(),
    );
    let sent = before["messages"].as_array().unwrap();
    let (again, new) = after["messages"].as_array().unwrap().split_at(sent.len());
    assert!(sent.iter().zip(again).all(|(b, a)| same_but_masked(b, a)), "{wire:?}");
    for (key, value) in before.as_object().unwrap().iter().filter(|(k, _)| *k != "messages") {
        assert_eq!(&after[key.as_str()], value, "{wire:?}: {key}");
    }
    let notes = new
        .iter()
        .filter(|m| m.to_string().contains("the work stopped here, before the next model call"))
        .count();
    assert_eq!(notes, 1, "{wire:?}: the stop is told once, after what was sent before");
    assert_ne!(stopped_note(&s.flame, &outcome.frame), stop, "the second stop is noted too");
}

#[tokio::test]
async fn an_anthropic_agent_stops_at_the_budget() {
    a_looping_agent_stops_at_the_budget(Wire::Anthropic).await;
}

#[tokio::test]
async fn an_openai_agent_stops_at_the_budget() {
    a_looping_agent_stops_at_the_budget(Wire::Openai).await;
}

/// A push whose budget is more than its frame has left is refused with a message to the model,
/// which goes on in its frame.
#[tokio::test]
async fn a_push_with_more_than_is_left_is_refused_to_the_model() {
    let push = |budget: Value| {
        turn(
            "A child.",
            Some((
                "push_frame",
                json!({"title": "Child", "success_criteria": "done", "budget": budget}),
            )),
        )
    };
    let replies = vec![push(json!({"tool_calls": 50})), turn("I stay here.", None)];
    let s = setup(Autonomy::Auto, replies).await;
    let root = s.flame.status(None).unwrap().focus;
    let budget = FrameBudget { tool_calls: Some(20), ..FrameBudget::default() };
    s.flame.set_budget(Actor::Person, &root, Some(budget)).unwrap();
    let outcome = s
        .agent
        .send(Actor::Person, None, "Split it", None, &CancellationToken::new(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!((outcome.frame.clone(), outcome.stopped), (root, Stopped::Finished));
    let second = s.server.requests()[1].body.clone();
    assert!(second.contains("No frame was pushed"), "{second}");
    assert!(second.contains("a budget of 50 tool calls is more than the parent has left"));
    // The push itself is one of the twenty calls.
    assert!(second.contains("give at most 19 tool calls"), "{second}");
}

/// Whether `after` is `before`, but for tool results masked since (a masked result is a stub
/// that names itself so).
fn same_but_masked(before: &Value, after: &Value) -> bool {
    match (before, after) {
        (Value::Array(b), Value::Array(a)) => {
            b.len() == a.len() && b.iter().zip(a).all(|(b, a)| same_but_masked(b, a))
        }
        (Value::Object(b), Value::Object(a)) => {
            b.len() == a.len()
                && b.iter().all(|(k, v)| a.get(k).is_some_and(|w| same_but_masked(v, w)))
        }
        (Value::String(b), Value::String(a)) => {
            b == a || (a.starts_with("[Flame] Result of ") && a.contains(" masked ("))
        }
        (b, a) => b == a,
    }
}
