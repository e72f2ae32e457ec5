//! The fleet queue on the test PostgreSQL server: concurrent workers never take one item; an
//! item whose worker died before its run existed is taken again as a start, and once its run
//! exists, as a resume when the run's lease runs out (never while it is held); a finished run
//! closes its item; an item taken too often fails; and SQLite refuses with a clear message.
mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::*;
use temper_journal::target::Target;

const HOLD: Duration = Duration::from_secs(60);

fn target(name: &str) -> Target {
    Target { name: name.into(), domain: format!("temper-{name}"), ..Target::default() }
}

async fn pg() -> Store {
    backends("queue").await.pop().filter(|b| b.name == "postgres").map(|b| b.store).unwrap()
}

fn item(c: QueueClaim) -> (bool, QueueItem) {
    match c {
        QueueClaim::Start(i) => (false, i),
        QueueClaim::Resume(i) => (true, i),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_workers_never_take_the_same_item() {
    let s = pg().await;
    let args = vec!["--agent".to_string(), "stock".into()];
    for n in 0..6 {
        s.enqueue("night", &target(&format!("t{n}")), &args).await.unwrap();
    }
    let mut tasks = Vec::new();
    for w in 0..8 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move { s.claim(&format!("worker-{w}"), HOLD, 3).await.unwrap() }));
    }
    let mut taken = Vec::new();
    for t in tasks {
        if let Some(c) = t.await.unwrap() {
            taken.push(item(c));
        }
    }
    assert_eq!(taken.len(), 6, "six items, eight workers: six take one, two find none");
    let ids: BTreeSet<i64> = taken.iter().map(|(_, i)| i.id).collect();
    assert_eq!(ids.len(), 6, "no item taken twice");
    assert!(taken.iter().all(|(resume, i)| !resume && i.tries == 1 && i.state == QueueState::Claimed && i.args == args));
    let names: BTreeSet<String> = taken.iter().map(|(_, i)| i.target.name.clone()).collect();
    assert_eq!(names.len(), 6, "each item keeps its own target");
    assert!(s.claim("late", HOLD, 3).await.unwrap().is_none(), "all are held");
}

#[tokio::test]
async fn a_dead_workers_item_is_taken_again_and_resumed_only_once_its_run_is_free() {
    let s = pg().await;
    let id = s.enqueue("night", &target("a"), &[]).await.unwrap();
    // The first worker takes it and dies before creating the run: its hold runs out.
    let (_, first) = item(s.claim("w1", Duration::ZERO, 5).await.unwrap().unwrap());
    assert_eq!(first.id, id);
    tokio::time::sleep(Duration::from_millis(5)).await;
    let (resume, again) = item(s.claim("w2", HOLD, 5).await.unwrap().expect("taken again"));
    assert!(!resume, "no run yet: a start");
    assert_eq!((again.worker.as_deref(), again.tries), (Some("w2"), 2));

    // w2 creates the run and drives it: while the run's lease holds, nobody takes the item.
    let run = s.create_run(&new_run()).await.unwrap();
    s.set_queue_run(id, run).await.unwrap();
    let t = now_ms();
    assert!(s.claim_run(run, "w2-driver", None, t, t + 60_000).await.unwrap());
    s.lease_guards_item(run).await.unwrap();
    assert!(s.claim("w3", HOLD, 5).await.unwrap().is_none(), "the run's lease is held, not w2's ten-minute hold");

    // w2 dies: the run's lease runs out, and the item is taken as a resume of that run.
    assert!(s.renew_lease(run, "w2-driver", now_ms() - 1, 0, 0).await.unwrap());
    let (resume, third) = item(s.claim("w3", HOLD, 5).await.unwrap().expect("taken over"));
    assert!(resume, "the run exists: a resume");
    assert_eq!((third.run_id, third.tries), (Some(run), 3));

    // The run finishes: its item closes with the run's exit code.
    s.finish_run(run, &RunSummary { run: Some(run), exit_code: 2, ..Default::default() }).await.unwrap();
    s.release_item(id, Duration::ZERO).await.unwrap();
    let q = s.queue(Some("night")).await.unwrap();
    assert_eq!((q[0].state, q[0].exit_code), (QueueState::Done, Some(2)));
    assert!(s.claim("w4", HOLD, 5).await.unwrap().is_none());
}

#[tokio::test]
async fn an_item_taken_too_often_fails_and_other_fleets_are_left_alone() {
    let s = pg().await;
    let bad = s.enqueue("night", &target("bad"), &[]).await.unwrap();
    for _ in 0..2 {
        assert!(s.claim("w", Duration::ZERO, 2).await.unwrap().is_some());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let other = s.enqueue("day", &target("ok"), &[]).await.unwrap();
    let (_, next) = item(s.claim("w", HOLD, 2).await.unwrap().expect("the next item"));
    assert_eq!(next.id, other, "the twice-taken item is skipped");
    let night = s.queue(Some("night")).await.unwrap();
    assert_eq!((night.len(), night[0].id, night[0].state), (1, bad, QueueState::Failed));
    assert_eq!(s.queue(None).await.unwrap().len(), 2);
}

#[tokio::test]
async fn sqlite_refuses_the_queue_with_a_clear_message() {
    let b = backends("queue_sqlite").await.into_iter().find(|b| b.name == "sqlite").unwrap();
    let e = b.store.enqueue("night", &target("a"), &[]).await.unwrap_err().to_string();
    assert!(e.contains("needs PostgreSQL") && e.contains("temper run --target"), "{e}");
    assert!(b.store.claim("w", HOLD, 3).await.is_err());
}
