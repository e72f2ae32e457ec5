use super::*;
use crate::{
    AttemptId, AttemptNo, AttemptSpec, AttemptState, Cadence, EventId, Findings, FixSource, PlanBatched, PowerOff, RescanTimes, RunId,
    TurnId,
};

fn event(data: EventData) -> Event {
    Event {
        id: EventId::new(1).unwrap(),
        run_id: RunId::new(1).unwrap(),
        ts: "2026-12-01T10:00:00+00:00".into(),
        kind: data.kind(),
        rule_id: None,
        data,
    }
}

fn scan(kind: ScanKind, secs: f64) -> Event {
    event(EventData::Scan { kind, counts: Default::default(), score: None, secs, stalls: 0 })
}

fn attempt(apply: i64, evaluate: Option<i64>, revert: Option<i64>) -> Attempt {
    let spec = AttemptSpec {
        rule_id: "xccdf_org.ssgproject.content_rule_r".into(),
        plan: String::new(),
        source: FixSource::Stock,
        replayed: false,
        fix_script: String::new(),
        revert_script: String::new(),
        description: String::new(),
        checkpoint: "baseline".into(),
        evidence_before: None,
    };
    let findings = Findings { apply_ms: Some(apply), evaluate_ms: evaluate, revert_ms: revert, ..Findings::default() };
    Attempt {
        id: AttemptId::new(1).unwrap(),
        run_id: RunId::new(1).unwrap(),
        n: AttemptNo::FIRST,
        state: AttemptState::Done,
        spec,
        findings,
        verdict: None,
        verdict_reason: None,
        revert_method: None,
        started_at: String::new(),
        ended_at: None,
        snapshot: None,
        kept: None,
    }
}

/// A run of 1000 s: each part from its own events or attempts, the rest what none accounts for,
/// and the proof everything but the fix scripts.
#[test]
fn each_part_from_its_own_record_and_the_proof_is_the_rest_of_the_wall() {
    let events = vec![
        scan(ScanKind::Full, 100.0),
        event(EventData::RegressionEvery {
            every: 4,
            how: Cadence::Measured,
            secs: Some(RescanTimes { one_rule: 5.0, with_set: 15.0 }),
            final_scan_only: Vec::new(),
        }),
        event(EventData::RegressionCheck {
            fixes: 4,
            rules: 30,
            watched: 30,
            failed: Vec::new(),
            secs: 40.0,
            stalls: 0,
            every: 4,
            problem: None,
        }),
        event(EventData::RegressionCheck {
            fixes: 4,
            rules: 30,
            watched: 30,
            failed: Vec::new(),
            secs: 60.0,
            stalls: 0,
            every: 4,
            problem: None,
        }),
        // A failing batch's first check is charged to no step (they are set aside or bisected).
        event(EventData::PlanBatch(PlanBatched {
            steps: vec![1, 2],
            rules: 9,
            watched: 9,
            failed: vec!["xccdf_org.ssgproject.content_rule_r".into()],
            guard: None,
            secs: 30.0,
        })),
        event(EventData::Reboot {
            why: "proof".into(),
            fixes: 3,
            power_off: PowerOff::Clean,
            down_secs: 10.0,
            secs: 70.0,
            up: true,
            problem: None,
        }),
        scan(ScanKind::Before, 6.0),
        scan(ScanKind::Before, 4.0),
        scan(ScanKind::Final, 90.0),
    ];
    let attempts = [attempt(200_000, Some(50_000), None), attempt(100_000, Some(25_000), Some(5_000))];
    let s = TimeSplit::of(&events, &attempts, &[], 1000.0);
    let got: Vec<(Part, usize, f64)> = s.parts.iter().map(|p| (p.part, p.count, p.secs)).collect();
    assert_eq!(
        got,
        [
            (Part::FirstScan, 1, 100.0),
            (Part::ReadsBefore, 2, 10.0),
            (Part::Cadence, 1, 20.0),
            (Part::FixScripts, 2, 300.0),
            (Part::Evaluation, 2, 75.0),
            (Part::Reverts, 1, 5.0),
            (Part::RegressionChecks, 2, 100.0),
            (Part::PlanBatchChecks, 1, 30.0),
            (Part::Reboots, 1, 70.0),
            (Part::FinalScan, 1, 90.0),
        ]
    );
    assert_eq!(s.rest_secs, 1000.0 - 800.0);
    assert_eq!(s.proof_secs, 700.0);
    assert_eq!(s.proof_ratio, Some(700.0 / 300.0));
    assert_eq!(s.secs(Part::Reboots), 70.0);
}

#[test]
fn no_fix_script_no_ratio() {
    let s = TimeSplit::of(&[scan(ScanKind::Full, 100.0)], &[], &[], 120.0);
    assert_eq!((s.proof_secs, s.proof_ratio, s.rest_secs), (120.0, None, 20.0));
    assert!(s.secs(Part::Reboots) == 0.0 && s.secs(Part::Reboots).is_sign_positive(), "0, not -0: printed as `0 s`");
}

/// A clean plan batch's check is charged to its steps in shares, and counted once: as the batch's
/// check, not again as their evaluations (goal1-e's split once summed to 270 s over its wall).
#[test]
fn a_clean_plan_batch_check_is_counted_once() {
    let batch = PlanBatched { steps: vec![1, 2, 3], rules: 9, watched: 9, failed: Vec::new(), guard: None, secs: 30.0 };
    let events = vec![scan(ScanKind::Full, 100.0), event(EventData::PlanBatch(batch)), scan(ScanKind::Final, 90.0)];
    let mut attempts: Vec<Attempt> = (0..3).map(|_| attempt(100_000, Some(10_000), None)).collect();
    attempts.push(attempt(50_000, Some(4_000), None));
    let s = TimeSplit::of(&events, &attempts, &[], 700.0);
    let part = |p: Part| s.parts.iter().find(|x| x.part == p).map(|x| (x.count, x.secs)).unwrap();
    assert_eq!(part(Part::PlanBatchChecks), (1, 30.0));
    assert_eq!(part(Part::Evaluation), (1, 4.0), "the loop's own fix only");
    assert_eq!(s.rest_secs, 700.0 - (100.0 + 350.0 + 4.0 + 30.0 + 90.0));
    let known: f64 = s.parts.iter().map(|p| p.secs).sum();
    assert!(known <= s.wall_secs, "the parts ({known} s) fit in the wall time");
}

fn spent(parts: &[(Overhead, u32, f64)]) -> Event {
    let parts = parts.iter().map(|&(p, count, secs)| (p, Spend { count, secs })).collect();
    event(EventData::Spent(Spending { parts }))
}

fn turn(latency_ms: i64) -> StoredTurn {
    let record = crate::turn::TurnRecord::new(crate::TurnRole::Worker, "m");
    StoredTurn {
        id: TurnId::new(1).unwrap(),
        run_id: RunId::new(1).unwrap(),
        attempt_id: None,
        rule_id: None,
        role: record.role,
        model: record.model,
        prompt_chars: 0,
        prompt_tokens_est: 0,
        prompt_tokens: None,
        completion_tokens: None,
        latency_ms,
        retries: 0,
        tool_calls_seen: 0,
        tool_calls_dropped: "[]".into(),
        mode: crate::TurnMode::Native,
        finish_reason: None,
        sections: "[]".into(),
        error: None,
        created_at: String::new(),
    }
}

/// The rest in its parts: each `spent` event's sums added up (a resumed run has one set per
/// segment), the LLM's calls from the turns, and what none names left over.
#[test]
fn the_rest_is_named_in_its_parts() {
    let events = vec![
        scan(ScanKind::Full, 100.0),
        spent(&[(Overhead::SnapshotsTaken, 10, 17.0), (Overhead::Bookkeeping, 30, 1.5)]),
        spent(&[(Overhead::SnapshotsTaken, 5, 8.0), (Overhead::SnapshotsDropped, 9, 2.5), (Overhead::Restores, 1, 9.0)]),
        spent(&[(Overhead::Replays, 4, 6.0)]),
        scan(ScanKind::Final, 100.0),
    ];
    let s = TimeSplit::of(&events, &[attempt(200_000, Some(50_000), None)], &[turn(3_000), turn(1_500)], 500.0);
    assert_eq!(s.rest_secs, 50.0);
    let named: Vec<(Overhead, usize, f64)> = s.rest.iter().map(|r| (r.part, r.count, r.secs)).collect();
    assert_eq!(
        named,
        [
            (Overhead::SnapshotsTaken, 15, 25.0),
            (Overhead::SnapshotsDropped, 9, 2.5),
            (Overhead::Restores, 1, 9.0),
            (Overhead::Replays, 4, 6.0),
            (Overhead::Bookkeeping, 30, 1.5),
            (Overhead::Llm, 2, 4.5)
        ]
    );
    assert_eq!(s.unnamed_secs, 50.0 - 25.0 - 2.5 - 9.0 - 6.0 - 1.5 - 4.5);
    assert_eq!(s.rest_secs_of(Overhead::Restores), 9.0);
    let none = TimeSplit::of(&events[..1], &[], &[], 100.0);
    assert!(none.rest.iter().all(|r| r.count == 0 && r.secs == 0.0), "a run before `spent` events names nothing: {none:?}");
}
