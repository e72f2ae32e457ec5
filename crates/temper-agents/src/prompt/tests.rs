use super::*;

fn fate(a: &Assembled, name: &str) -> Option<Fate> {
    a.fates.iter().find(|f| f.name == name).map(|f| f.fate)
}

#[test]
fn estimate_is_bytes_over_two_and_a_half() {
    assert_eq!(estimate_tokens(""), 0);
    assert_eq!(estimate_tokens("abcde"), 2);
    assert_eq!(estimate_tokens("abcdef"), 3);
    assert_eq!(estimate_tokens(&"x".repeat(1000)), 400);
}

#[test]
fn everything_fits_is_kept_in_original_order() {
    let a = assemble(
        vec![
            PromptSection::fixed("task", "do it".into()),
            PromptSection::optional("low", 5, "low".into()),
            PromptSection::optional("high", 1, "high".into()),
        ],
        100,
    )
    .unwrap();
    let names: Vec<&str> = a.parts.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["task", "low", "high"]);
    assert!(a.fates.iter().all(|f| f.fate == Fate::Kept));
    assert!(a.tokens <= 100);
}

#[test]
fn low_priority_is_dropped_first_and_high_priority_cut() {
    let big = "line of text\n".repeat(200); // 2600 bytes, ~1040 tokens
    let a = assemble(
        vec![
            PromptSection::fixed("task", "t".repeat(100)),
            PromptSection::optional("episodes", 1, big.clone()),
            PromptSection::optional("rationale", 4, big.clone()),
        ],
        300,
    )
    .unwrap();
    assert_eq!(fate(&a, "task"), Some(Fate::Kept));
    assert_eq!(fate(&a, "episodes"), Some(Fate::Cut));
    assert_eq!(fate(&a, "rationale"), Some(Fate::Dropped));
    assert!(a.part("episodes").unwrap().ends_with(CUT_MARK_HEAD));
    assert!(a.part("rationale").is_none());
    let total: u32 = a.parts.iter().map(|(_, t)| estimate_tokens(t) + SEP_TOKENS).sum();
    assert!(total <= 300, "assembled {total} tokens over a budget of 300");
    assert_eq!(a.tokens, total);
}

#[test]
fn tail_cut_keeps_the_end() {
    let text: String = (0..300).map(|i| format!("episode {i}\n")).collect();
    let a = assemble(vec![PromptSection::optional("episodes", 1, text).keep_tail()], 100).unwrap();
    let kept = a.part("episodes").unwrap();
    assert!(kept.starts_with(CUT_MARK_TAIL));
    assert!(kept.contains("episode 299"));
    assert!(!kept.contains("episode 0\n"));
    assert!(estimate_tokens(kept) + SEP_TOKENS <= 100);
}

#[test]
fn cut_respects_char_boundaries() {
    let text = "é".repeat(1000);
    let a = assemble(vec![PromptSection::optional("x", 1, text)], 50).unwrap();
    assert_eq!(fate(&a, "x"), Some(Fate::Cut));
    assert!(a.part("x").unwrap().starts_with('é'));
}

#[test]
fn required_section_that_cannot_fit_is_an_error() {
    let err = assemble(vec![PromptSection::fixed("system", "s".repeat(1000))], 50).unwrap_err();
    assert_eq!(err.name, "system");
    assert_eq!(err.budget, 50);
}

#[test]
fn fixed_optional_section_is_dropped_not_cut() {
    let mut s = PromptSection::optional("whole", 1, "w".repeat(1000));
    s.cuttable = false;
    let a = assemble(vec![PromptSection::fixed("task", "t".into()), s], 100).unwrap();
    assert_eq!(fate(&a, "whole"), Some(Fate::Dropped));
}

#[test]
fn tiny_leftover_drops_instead_of_cutting() {
    let a = assemble(vec![PromptSection::fixed("task", "t".repeat(200)), PromptSection::optional("x", 1, "x".repeat(500))], 90).unwrap();
    // task takes 81 tokens, 9 left: below MIN_CUT_TOKENS.
    assert_eq!(fate(&a, "x"), Some(Fate::Dropped));
}

#[test]
fn budget_zero_drops_optional_sections() {
    let a = assemble(vec![PromptSection::optional("x", 1, "abc".into())], 0).unwrap();
    assert!(a.parts.is_empty());
    assert_eq!(fate(&a, "x"), Some(Fate::Dropped));
}
