//! A driver cut off from PostgreSQL: it reaches the real server through a TCP relay of its own,
//! which the test shuts (every connection closed, new ones refused), as a worker that loses its
//! network. Before its lease runs out it notices that it can no longer hold the run and stops
//! (`Lease::lost`, which every step of the loop checks before it touches the target); once the
//! lease has run out, another driver takes the run over.
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use temper_core::ports::Clock;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_driver_cut_off_from_postgres_gives_its_run_up_once_its_lease_runs_out() {
    let url = temper_store::testing::scratch_database(&temper_store::testing::server_url(), "temper_store_cut").await.unwrap();
    // Each run's events.jsonl goes to a folder of the test's, not the crate's `.temper`.
    let runs = tempfile::tempdir().unwrap();
    let direct = Store::open(&url).await.unwrap().with_runs_dir(runs.path());
    let run = direct.create_run(&new_run()).await.unwrap();
    let (relayed, wire) = temper_store::testing::relay(&url).await.unwrap();
    let cut_off: Arc<dyn Journal> = Arc::new(Store::open(&relayed).await.unwrap().with_runs_dir(runs.path()));
    let lease = Lease::take(cut_off, run, Arc::new(Clock::default())).await.unwrap();

    let cut = Instant::now();
    wire.abort();
    let other: Arc<dyn Journal> = Arc::new(direct.clone());
    assert!(
        matches!(Lease::take(other.clone(), run, Arc::new(Clock::default())).await, Err(LeaseError::Held { .. })),
        "held until it runs out"
    );
    while !lease.lost() {
        assert!(cut.elapsed() < LEASE_FOR * 2, "the cut-off driver never gave the run up");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let gave_up = cut.elapsed();
    assert!(gave_up < LEASE_FOR, "it gives the run up before its lease can be taken: {gave_up:?}");
    assert!(matches!(Lease::take(other.clone(), run, Arc::new(Clock::default())).await, Err(LeaseError::Held { .. })), "still held");
    let taken = loop {
        match Lease::take(other.clone(), run, Arc::new(Clock::default())).await {
            Ok(l) => break l,
            Err(LeaseError::Held { .. }) if cut.elapsed() < LEASE_FOR * 3 => tokio::time::sleep(Duration::from_millis(500)).await,
            Err(e) => panic!("the other driver could not take the run over: {e}"),
        }
    };
    println!(
        "cut off from postgres: gave its run up after {:.1} s, taken over after {:.1} s",
        gave_up.as_secs_f64(),
        cut.elapsed().as_secs_f64()
    );
    let row = direct.run(run).await.unwrap();
    assert_eq!(row.driver.as_deref(), Some(taken.driver.as_str()));
    taken.release().await.unwrap();
}
