//! Who drives a run: this process as `host:pid:nonce`, whether a driver is gone, and the clock
//! the leases and records read.

/// This process as a driver: `host:pid:nonce`.
pub fn driver_id() -> String {
    let nonce = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{}:{}:{nonce:08x}", hostname(), std::process::id())
}

/// True when `driver` ran on this host and its process is gone.
pub fn driver_is_dead(driver: &str) -> bool {
    let mut parts = driver.rsplitn(3, ':');
    let (_nonce, pid, host) = (parts.next(), parts.next(), parts.next());
    match (host, pid.and_then(|p| p.parse::<u32>().ok())) {
        (Some(h), Some(pid)) if h == hostname() => !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        _ => false,
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_else(|_| "localhost".into())
}

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_driver_on_this_host_is_dead_once_its_pid_is_gone() {
        let me = driver_id();
        assert!(!driver_is_dead(&me), "this process is alive: {me}");
        let gone = format!("{}:{}:0", hostname(), u32::MAX - 1);
        assert!(driver_is_dead(&gone));
        assert!(!driver_is_dead(&format!("other-host:{}:0", u32::MAX - 1)), "another host's driver is never judged from here");
        assert!(!driver_is_dead("garbage"));
    }
}
