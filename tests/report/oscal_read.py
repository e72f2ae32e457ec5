#!/usr/bin/env python3
"""Reads an OSCAL assessment results or POA&M file (JSON) with compliance-trestle's own models,
which check every field, type and pattern of OSCAL 1.1, then runs trestle's duplicate-UUID
validator, and prints what it read as JSON:
    .venv/bin/python oscal_read.py ar|poam FILE"""
import argparse
import json
import pathlib
import sys

from trestle.core.duplicates_validator import DuplicatesValidator
from trestle.oscal.assessment_results import AssessmentResults
from trestle.oscal.poam import PlanOfActionAndMilestones


def value(v):
    """An enum's value, a root model's root (through nested roots), or the value itself."""
    while hasattr(v, "__root__"):
        v = v.__root__
    return getattr(v, "value", v)


def props(item):
    return {p.name: p.value for p in (item.props or [])}


def observations(obs):
    return [{"uuid": o.uuid, "title": o.title, "props": props(o), "evidence": [e.description for e in (o.relevant_evidence or [])]} for o in obs or []]


def findings(found):
    return [{"uuid": f.uuid, "target": f.target.target_id, "state": value(f.target.status.state), "title": f.title} for f in found or []]


def risks(rs):
    return [
        {
            "uuid": r.uuid,
            "title": r.title,
            "status": value(r.status),
            "props": props(r),
            "deadline": r.deadline.isoformat() if r.deadline else None,
            "remediations": [{"lifecycle": value(m.lifecycle), "title": m.title, "description": m.description, "props": props(m), "remarks": m.remarks} for m in r.remediations or []],
        }
        for r in rs or []
    ]


def main():
    args = argparse.ArgumentParser()
    args.add_argument("kind", choices=["ar", "poam"])
    args.add_argument("file", type=pathlib.Path)
    a = args.parse_args()
    if a.kind == "ar":
        doc = AssessmentResults.oscal_read(a.file)
        r = doc.results[0]
        out = {"observations": observations(r.observations), "findings": findings(r.findings), "risks": risks(r.risks), "import_ap": doc.import_ap.href}
    else:
        doc = PlanOfActionAndMilestones.oscal_read(a.file)
        out = {
            "observations": observations(doc.observations),
            "findings": findings(doc.findings),
            "risks": risks(doc.risks),
            "items": [{"title": i.title, "props": props(i)} for i in doc.poam_items],
        }
    if not DuplicatesValidator().model_is_valid(doc, True, None):
        sys.exit(f"{a.file}: trestle's duplicates validator refuses it (a UUID used twice)")
    out.update({"uuid": doc.uuid, "title": doc.metadata.title, "oscal_version": value(doc.metadata.oscal_version), "last_modified": doc.metadata.last_modified.isoformat()})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
