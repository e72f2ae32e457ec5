use super::*;
use crate::tools::apply_fix;
use crate::wire::{WireFunction, WireToolCall};

fn content(s: &str) -> ResponseMessage {
    ResponseMessage { content: Some(s.into()), tool_calls: None }
}

const ARGS: &str = r#"{"fix_script":"touch /x","revert_script":"rm -f /x","description":"d"}"#;

#[test]
fn native_calls_win_over_content() {
    let msg = ResponseMessage {
        content: Some(format!("<tool_call>{{\"name\":\"other\",\"arguments\":{ARGS}}}</tool_call>")),
        tool_calls: Some(vec![WireToolCall { id: None, function: WireFunction { name: "apply_fix".into(), arguments: ARGS.into() } }]),
    };
    let e = extract(&msg, &apply_fix(), None);
    assert_eq!(e.mode, TurnMode::Native);
    assert_eq!(e.calls.len(), 1);
    assert_eq!(e.calls[0].name, "apply_fix");
}

#[test]
fn tagged_call_in_content() {
    let msg = content(&format!("Sure.\n<tool_call>\n{{\"name\": \"apply_fix\", \"arguments\": {ARGS}}}\n</tool_call>"));
    let e = extract(&msg, &apply_fix(), None);
    assert_eq!(e.mode, TurnMode::Text);
    assert_eq!(e.calls, vec![RawCall { name: "apply_fix".into(), arguments: serde_json::from_str::<Value>(ARGS).unwrap().to_string() }]);
}

#[test]
fn two_tagged_calls_are_both_seen_in_order() {
    let one = format!("<tool_call>{{\"name\":\"apply_fix\",\"arguments\":{ARGS}}}</tool_call>");
    let two = "<tool_call>{\"name\":\"second\",\"arguments\":{}}</tool_call>";
    let e = extract(&content(&format!("{one}\n{two}")), &apply_fix(), None);
    let names: Vec<&str> = e.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["apply_fix", "second"]);
}

#[test]
fn tagged_call_with_bad_json_keeps_its_name_and_raw_text() {
    let e = extract(&content("<tool_call>{\"name\": \"apply_fix\", \"arguments\": {\"fix_script\": </tool_call>"), &apply_fix(), None);
    assert_eq!(e.calls.len(), 1);
    assert_eq!(e.calls[0].name, "apply_fix");
    assert!(serde_json::from_str::<Value>(&e.calls[0].arguments).is_err());
}

#[test]
fn fenced_named_call_and_bare_object() {
    let named = format!("```json\n{{\"name\": \"apply_fix\", \"arguments\": {ARGS}}}\n```");
    let e = extract(&content(&named), &apply_fix(), None);
    assert_eq!((e.mode, e.calls.len()), (TurnMode::Text, 1));
    let bare = format!("Here:\n```json\n{ARGS}\n```\n");
    let e = extract(&content(&bare), &apply_fix(), None);
    assert_eq!(e.calls[0].name, "apply_fix");
}

#[test]
fn fenced_call_with_arguments_as_string_and_parameters_key() {
    let s = format!("```\n{{\"name\": \"apply_fix\", \"parameters\": {}}}\n```", serde_json::to_string(ARGS).unwrap());
    let e = extract(&content(&s), &apply_fix(), None);
    assert_eq!(e.calls[0].arguments, ARGS);
}

#[test]
fn a_bash_fence_is_not_a_call() {
    let e = extract(&content("```bash\necho apply_fix\n```"), &apply_fix(), None);
    assert_eq!(e.mode, TurnMode::None);
    assert!(e.calls.is_empty());
}

#[test]
fn broken_json_fence_naming_the_tool_is_a_bad_call() {
    let e = extract(&content("```json\n{\"name\": \"apply_fix\", \"arguments\": {\n```"), &apply_fix(), None);
    assert_eq!(e.calls.len(), 1);
    assert_eq!(e.calls[0].name, "apply_fix");
}

#[test]
fn whole_content_json() {
    let e = extract(&content(ARGS), &apply_fix(), None);
    assert_eq!((e.mode, e.calls.len()), (TurnMode::Text, 1));
}

#[test]
fn prose_is_no_call() {
    let e = extract(&content("I would run sed on the config file."), &apply_fix(), None);
    assert_eq!(e.mode, TurnMode::None);
}

#[test]
fn prefill_continuation_is_rebuilt() {
    let prefill = "<tool_call>\n{\"name\": \"apply_fix\", \"arguments\": {\"";
    let rest = "fix_script\": \"touch /x\", \"revert_script\": \"rm -f /x\", \"description\": \"d\"}}\n</tool_call>";
    let e = extract(&content(rest), &apply_fix(), Some(prefill));
    assert_eq!(e.mode, TurnMode::Text);
    assert_eq!(e.calls[0].name, "apply_fix");
    let v: Value = serde_json::from_str(&e.calls[0].arguments).unwrap();
    assert_eq!(v["fix_script"], "touch /x");
}
