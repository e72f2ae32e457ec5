//! The run claiming a libvirt domain, kept in the domain's own metadata (temper_core::claim):
//! one element in temper's namespace holding the claim as JSON text.
use quick_xml::escape::{escape, unescape};
use temper_core::claim::Claim;
use temper_core::ports::{PortError, PortResult};
use virt::domain::Domain;
use virt::error::ErrorNumber;
use virt::sys;

/// The namespace and prefix of temper's element in `<metadata>`.
const NS: &str = "https://github.com/temper/claim/1";
const KEY: &str = "temper";

/// The domain's claim, or none.
pub(crate) fn read(dom: &Domain) -> PortResult<Option<Claim>> {
    match dom.metadata(sys::VIR_DOMAIN_METADATA_ELEMENT as i32, Some(NS), 0) {
        Ok(xml) => decode(&xml).map(Some),
        Err(e) if e.code().is(ErrorNumber::NoDomainMetadata) => Ok(None),
        Err(e) => Err(PortError::Hypervisor(format!("read the domain's claim: {}", e.message()))),
    }
}

/// Writes (or, with `None`, removes) the claim, in the live domain and its persistent definition.
pub(crate) fn write(dom: &Domain, claim: Option<&Claim>) -> PortResult<()> {
    let live = dom.is_active().map_err(|e| PortError::Hypervisor(format!("is_active: {}", e.message())))?;
    let flags = sys::VIR_DOMAIN_AFFECT_CONFIG | if live { sys::VIR_DOMAIN_AFFECT_LIVE } else { 0 };
    let xml = claim.map(encode).transpose()?;
    dom.set_metadata(sys::VIR_DOMAIN_METADATA_ELEMENT as i32, xml.as_deref(), Some(KEY), Some(NS), flags)
        .map_err(|e| PortError::Hypervisor(format!("write the domain's claim: {}", e.message())))
}

fn encode(claim: &Claim) -> PortResult<String> {
    let json = serde_json::to_string(claim).map_err(|e| PortError::Other(format!("claim as JSON: {e}")))?;
    Ok(format!("<claim>{}</claim>", escape(&json)))
}

fn decode(xml: &str) -> PortResult<Claim> {
    let bad = |why: String| PortError::Hypervisor(format!("the domain's claim `{xml}`: {why}"));
    let open = xml.find("<claim").ok_or_else(|| bad("no <claim> element".into()))?;
    let body = xml[open..].split_once('>').map(|(_, b)| b).ok_or_else(|| bad("unterminated element".into()))?;
    let text = body.split_once("</").map(|(t, _)| t).ok_or_else(|| bad("no closing tag".into()))?;
    let json = unescape(text).map_err(|e| bad(e.to_string()))?;
    serde_json::from_str(&json).map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use temper_journal::RunId;

    #[test]
    fn a_claim_round_trips_through_its_element() {
        let c = Claim {
            store: "sqlite /tmp/a <b> & \"c\"".into(),
            store_id: "x".into(),
            run: RunId::new(7).unwrap(),
            driver: "h:1:2".into(),
            until_ms: 5,
        };
        let xml = encode(&c).unwrap();
        assert!(!xml.contains("<b>"), "{xml}");
        // libvirt gives it back with its namespace declared.
        let back = xml.replacen("<claim>", &format!("<claim xmlns=\"{NS}\">"), 1);
        assert_eq!(decode(&back).unwrap(), c);
        assert!(decode("<claim>{not json</claim>").is_err());
    }
}
