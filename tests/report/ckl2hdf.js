#!/usr/bin/env node
// Reads a STIG Viewer checklist (CKL) with MITRE's hdf-converters, the library behind
// `saf convert ckl2hdf` and Heimdall, and prints what it understood as JSON:
//   node ckl2hdf.js IN.ckl [OUT.hdf.json]
"use strict";
const fs = require("fs");
const { ChecklistResults } = require("@mitre/hdf-converters");

const [input, output] = process.argv.slice(2);
if (!input) {
  console.error("usage: node ckl2hdf.js IN.ckl [OUT.hdf.json]");
  process.exit(2);
}
const hdf = new ChecklistResults(fs.readFileSync(input, "utf8")).toHdf();
if (output) fs.writeFileSync(output, JSON.stringify(hdf, null, 2));

const profile = hdf.profiles[0];
const vulns = hdf.passthrough.checklist.stigs[0].vulns;
const text = (c, label) => (c.descriptions || []).filter((d) => d.label === label).map((d) => d.data).join("\n");
process.stdout.write(
  JSON.stringify({
    profile: { name: profile.name, title: profile.title, version: profile.version },
    asset: hdf.passthrough.checklist.asset,
    controls: profile.controls.map((c) => ({
      id: c.id,
      title: c.title,
      stig_id: c.tags.stig_id,
      rid: c.tags.rid,
      gtitle: c.tags.gtitle,
      cci: c.tags.cci,
      severity: c.tags.severity,
      impact: c.impact,
      status: c.results.map((r) => r.status),
      finding_details: c.results.map((r) => r.code_desc).join("\n"),
      check: text(c, "check"),
      fix: text(c, "fix"),
      comments: text(c, "comments"),
    })),
    // The checklist's own four-valued status, as hdf-converters read it (Passed, Failed,
    // Not Applicable, Not Reviewed).
    checklist_status: Object.fromEntries(vulns.map((v) => [v.vulnNum, v.status])),
  }),
);
