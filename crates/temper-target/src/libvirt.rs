//! `Hypervisor` over libvirt (`virt` crate). libvirt calls block, so each runs on the blocking
//! pool with a connection of its own (opening one to a local libvirtd takes a few ms).
use async_trait::async_trait;
use quick_xml::escape::escape;
use std::time::{Duration, Instant};
use temper_journal::PowerOff;

use temper_core::claim::Claim;
use temper_core::ports::{Hypervisor, PortError, PortResult};
use temper_journal::target::Target;
use virt::connect::Connect;
use virt::domain::Domain;
use virt::error::{Error as VirtError, ErrorNumber};
use virt::sys;

/// Which libvirt and which domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibvirtConfig {
    pub uri: String,
    pub domain: String,
}

impl Default for LibvirtConfig {
    /// The default target's (`temper_core::target`).
    fn default() -> Self {
        Self::for_target(&Target::default())
    }
}

impl LibvirtConfig {
    pub fn for_target(t: &Target) -> Self {
        Self { uri: t.libvirt_uri.clone(), domain: t.domain.clone() }
    }

    /// Defaults overridden by `TEMPER_LIBVIRT_URI` and `TEMPER_DOMAIN` (as in `vm/lib.sh`).
    pub fn from_env() -> Self {
        let d = Self::default();
        Self { uri: std::env::var("TEMPER_LIBVIRT_URI").unwrap_or(d.uri), domain: std::env::var("TEMPER_DOMAIN").unwrap_or(d.domain) }
    }
}

/// The test domain's state and its internal snapshots (memory included).
#[derive(Debug, Clone)]
pub struct LibvirtHypervisor {
    cfg: LibvirtConfig,
}

impl LibvirtHypervisor {
    pub fn new(cfg: LibvirtConfig) -> Self {
        // libvirt prints every error to stderr by default; we return them instead.
        virt::error::clear_error_callback();
        Self { cfg }
    }

    pub fn config(&self) -> &LibvirtConfig {
        &self.cfg
    }

    /// Starts the domain when it is shut off.
    pub async fn start(&self) -> PortResult<()> {
        self.with_domain("start", |dom| {
            if !dom.is_active().map_err(|e| hv("is_active", e))? {
                dom.create().map_err(|e| hv("start", e))?;
            }
            Ok(())
        })
        .await
    }

    /// Powers the domain off at once (like pulling the plug); a no-op when it is off.
    pub async fn destroy(&self) -> PortResult<()> {
        self.with_domain("destroy", |dom| {
            if dom.is_active().map_err(|e| hv("is_active", e))? {
                dom.destroy().map_err(|e| hv("destroy", e))?;
            }
            Ok(())
        })
        .await
    }

    /// Runs `f` on the domain in the blocking pool.
    pub(crate) async fn with_domain<T, F>(&self, what: &'static str, f: F) -> PortResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Domain) -> PortResult<T> + Send + 'static,
    {
        let found = self.if_domain(what, f).await?;
        found.ok_or_else(|| PortError::Hypervisor(format!("domain `{}` is not defined on {}", self.cfg.domain, self.cfg.uri)))
    }

    /// Runs `f` on the domain in the blocking pool; `None` when no such domain is defined.
    async fn if_domain<T, F>(&self, what: &'static str, f: F) -> PortResult<Option<T>>
    where
        T: Send + 'static,
        F: FnOnce(&Domain) -> PortResult<T> + Send + 'static,
    {
        let cfg = self.cfg.clone();
        tokio::task::spawn_blocking(move || {
            let conn =
                Connect::open(Some(&cfg.uri)).map_err(|e| PortError::Hypervisor(format!("connect to {}: {}", cfg.uri, e.message())))?;
            match conn.lookup_domain_by_name(&cfg.domain) {
                Ok(dom) => f(&dom).map(Some),
                Err(e) if e.code().is(ErrorNumber::NoDomain) => Ok(None),
                Err(e) => Err(PortError::Hypervisor(format!("domain `{}`: {}", cfg.domain, e.message()))),
            }
        })
        .await
        .map_err(|e| PortError::Hypervisor(format!("{what}: task failed: {e}")))?
    }
}

fn hv(what: &str, e: VirtError) -> PortError {
    PortError::Hypervisor(format!("{what}: {}", e.message()))
}

/// A missing snapshot is its own error; the rest are hypervisor errors.
fn snap_err(what: &str, name: &str, e: VirtError) -> PortError {
    if e.code().is(ErrorNumber::NoDomainSnapshot) {
        PortError::NoSnapshot(name.to_string())
    } else {
        PortError::Hypervisor(format!("{what} `{name}`: {}", e.message()))
    }
}

/// The XML `virsh snapshot-create-as NAME --description D` sends.
fn snapshot_xml(name: &str, description: &str) -> String {
    format!("<domainsnapshot><name>{}</name><description>{}</description></domainsnapshot>", escape(name), escape(description))
}

#[async_trait]
impl Hypervisor for LibvirtHypervisor {
    async fn is_running(&self) -> PortResult<bool> {
        self.with_domain("is_running", |dom| dom.is_active().map_err(|e| hv("is_active", e))).await
    }

    async fn snapshot_list(&self) -> PortResult<Vec<String>> {
        self.with_domain("snapshot_list", |dom| {
            let snaps = dom.list_all_snapshots(sys::VIR_DOMAIN_SNAPSHOT_LIST_TOPOLOGICAL).map_err(|e| hv("list snapshots", e))?;
            snaps.iter().map(|s| s.name().map_err(|e| hv("snapshot name", e))).collect()
        })
        .await
    }

    async fn snapshot_create(&self, name: &str, description: &str) -> PortResult<()> {
        if name.is_empty() || name.contains('/') {
            return Err(PortError::Hypervisor(format!("bad snapshot name `{name}`")));
        }
        let (name, xml) = (name.to_string(), snapshot_xml(name, description));
        self.with_domain("snapshot_create", move |dom| {
            if !dom.is_active().map_err(|e| hv("is_active", e))? {
                return Err(PortError::Hypervisor(format!(
                    "snapshot `{name}`: domain is not running (a memory snapshot needs a running domain)"
                )));
            }
            // Internal snapshot of a running domain: disk and memory, all or nothing.
            dom.create_snapshot_xml(&xml, sys::VIR_DOMAIN_SNAPSHOT_CREATE_ATOMIC)
                .map_err(|e| hv(&format!("create snapshot `{name}`"), e))?;
            Ok(())
        })
        .await
    }

    async fn snapshot_revert(&self, name: &str) -> PortResult<()> {
        let name = name.to_string();
        self.with_domain("snapshot_revert", move |dom| {
            let snap = Domain::lookup_snapshot_by_name(dom, &name, 0).map_err(|e| snap_err("find snapshot", &name, e))?;
            snap.revert(sys::VIR_DOMAIN_SNAPSHOT_REVERT_RUNNING).map_err(|e| snap_err("revert to snapshot", &name, e))
        })
        .await
    }

    async fn snapshot_delete(&self, name: &str) -> PortResult<()> {
        let name = name.to_string();
        self.with_domain("snapshot_delete", move |dom| {
            let snap = Domain::lookup_snapshot_by_name(dom, &name, 0).map_err(|e| snap_err("find snapshot", &name, e))?;
            snap.delete(0).map_err(|e| snap_err("delete snapshot", &name, e))
        })
        .await
    }

    async fn power_cycle(&self, grace: Duration) -> PortResult<PowerOff> {
        let asked = self
            .with_domain("shutdown", |dom| {
                if dom.is_active().map_err(|e| hv("is_active", e))? {
                    dom.shutdown().map_err(|e| hv("shutdown", e))?;
                }
                Ok(())
            })
            .await;
        let end = Instant::now() + grace;
        let mut how = PowerOff::Forced;
        // A guest that cannot take the request (hung, or in emergency mode) is powered off.
        while asked.is_ok() && Instant::now() < end {
            if !self.is_running().await? {
                how = PowerOff::Clean;
                break;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        if how == PowerOff::Forced {
            self.destroy().await?;
        }
        self.start().await?;
        Ok(how)
    }

    /// A domain that is not defined holds no claim, and takes none: the restore says what is
    /// wrong with it, to a run that is recorded and can be resumed once it is there.
    async fn read_claim(&self) -> PortResult<Option<Claim>> {
        Ok(self.if_domain("read_claim", crate::claim::read).await?.flatten())
    }

    async fn write_claim(&self, claim: Option<&Claim>) -> PortResult<()> {
        let claim = claim.cloned();
        self.if_domain("write_claim", move |dom| crate::claim::write(dom, claim.as_ref())).await.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_xml_escapes() {
        assert_eq!(
            snapshot_xml("a", "x<y & \"z\""),
            "<domainsnapshot><name>a</name><description>x&lt;y &amp; &quot;z&quot;</description></domainsnapshot>"
        );
    }
}

/// Against libvirt's built-in test driver (no daemon, no VM): the real calls, fast.
#[cfg(test)]
mod test_driver {
    use super::*;
    use temper_journal::RunId;

    /// test:///default is one state per process: the tests take turns.
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

    /// test:///default keeps its state while one connection to it stays open.
    fn hyp() -> (Connect, LibvirtHypervisor) {
        let keep = Connect::open(Some("test:///default")).expect("test driver");
        let h = LibvirtHypervisor::new(LibvirtConfig { uri: "test:///default".into(), domain: "test".into() });
        (keep, h)
    }

    #[tokio::test]
    async fn snapshots_round_trip() {
        let _turn = LOCK.lock().await;
        let (_keep, h) = hyp();
        assert!(h.is_running().await.unwrap());
        h.snapshot_create("s1", "first <one>").await.unwrap();
        h.snapshot_create("s2", "second").await.unwrap();
        assert_eq!(h.snapshot_list().await.unwrap(), ["s1", "s2"]);
        assert!(h.snapshot_exists("s1").await.unwrap());
        h.snapshot_revert("s1").await.unwrap();
        h.snapshot_delete("s2").await.unwrap();
        h.snapshot_delete("s1").await.unwrap();
        assert!(h.snapshot_list().await.unwrap().is_empty());
    }

    /// A claim lives in the domain: a second run from another store is refused while it holds,
    /// the same run (a resume) is not, and none is after release or once it runs out (nor a run
    /// about to start).
    #[tokio::test]
    async fn the_domain_keeps_its_claim() {
        use std::sync::Arc;
        use temper_core::claim::{self, ClaimError, TargetClaim};
        use temper_core::lease::{LEASE_FOR, Term};
        use temper_journal::{driver_id, now_ms};
        let _turn = LOCK.lock().await;
        let (_keep, h) = hyp();
        let hv: Arc<dyn Hypervisor> = Arc::new(h);
        let mk = |store: &str, id: &str, run, driver: String| Claim {
            store: store.into(),
            store_id: id.into(),
            run,
            driver,
            until_ms: now_ms() + LEASE_FOR.as_millis() as i64,
        };
        // A driver on another host: its pid cannot be checked, so only its term frees the VM.
        let first = mk("sqlite /a/temper.db", "a", RunId::new(1).unwrap(), "elsewhere:1:0".into());
        let held = TargetClaim::take(hv.clone(), first.clone(), Term::new(first.until_ms)).await.unwrap();
        assert_eq!(hv.read_claim().await.unwrap().as_ref(), Some(&first));
        let second = mk("sqlite /b/temper.db", "b", RunId::new(9).unwrap(), driver_id());
        match claim::check(&*hv, &second.store_id, Some(second.run)).await {
            Err(e @ ClaimError::Held(_)) => {
                let msg = e.to_string();
                assert!(msg.contains("run 1 of store `sqlite /a/temper.db`") && msg.contains("elsewhere:1:0"), "{msg}");
            }
            r => panic!("want Held, got {r:?}"),
        }
        assert!(matches!(TargetClaim::take(hv.clone(), second.clone(), Term::new(second.until_ms)).await, Err(ClaimError::Held(_))));
        // The same run from another process (a resume), by another path to the same store.
        claim::check(&*hv, "a", RunId::new(1)).await.unwrap();
        held.release().await.unwrap();
        assert_eq!(hv.read_claim().await.unwrap(), None);
        claim::check(&*hv, &second.store_id, Some(second.run)).await.unwrap();
        hv.write_claim(Some(&Claim { until_ms: now_ms() - 1, ..first })).await.unwrap();
        claim::check(&*hv, &second.store_id, Some(second.run)).await.unwrap();
        hv.write_claim(None).await.unwrap();
    }

    #[tokio::test]
    async fn missing_snapshot_and_domain_are_clear_errors() {
        let _turn = LOCK.lock().await;
        let (_keep, h) = hyp();
        match h.snapshot_revert("nope").await {
            Err(PortError::NoSnapshot(n)) => assert_eq!(n, "nope"),
            other => panic!("want NoSnapshot, got {other:?}"),
        }
        assert!(matches!(h.snapshot_delete("nope").await, Err(PortError::NoSnapshot(_))));
        let other = LibvirtHypervisor::new(LibvirtConfig { uri: "test:///default".into(), domain: "absent".into() });
        match other.is_running().await {
            Err(PortError::Hypervisor(m)) => assert!(m.contains("absent"), "{m}"),
            r => panic!("want Hypervisor error, got {r:?}"),
        }
    }

    #[tokio::test]
    async fn memory_snapshot_needs_a_running_domain() {
        let _turn = LOCK.lock().await;
        let (_keep, h) = hyp();
        h.destroy().await.unwrap();
        assert!(!h.is_running().await.unwrap());
        assert!(matches!(h.snapshot_create("off", "").await, Err(PortError::Hypervisor(_))));
        h.start().await.unwrap();
        assert!(h.is_running().await.unwrap());
    }

    #[tokio::test]
    async fn a_power_cycle_shuts_down_cleanly_and_starts_again() {
        let _turn = LOCK.lock().await;
        let (_keep, h) = hyp();
        assert_eq!(h.power_cycle(Duration::from_secs(5)).await.unwrap(), PowerOff::Clean);
        assert!(h.is_running().await.unwrap(), "running again after the cycle");
        h.destroy().await.unwrap();
        assert_eq!(h.power_cycle(Duration::from_secs(5)).await.unwrap(), PowerOff::Clean, "an off domain is just started");
        assert!(h.is_running().await.unwrap());
    }
}
