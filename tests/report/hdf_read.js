#!/usr/bin/env node
// Reads an HDF file (InSpec exec JSON) as Heimdall does, with MITRE's inspecjs: the parser
// generated from HDF's published schema (exec-json) checks every field's type and each
// required field, then each control's status is computed as Heimdall shows it. Prints JSON:
//   node hdf_read.js IN.hdf.json
"use strict";
const fs = require("fs");
const { ExecJSON, contextualizeEvaluation } = require("inspecjs");

const [input] = process.argv.slice(2);
if (!input) {
  console.error("usage: node hdf_read.js IN.hdf.json");
  process.exit(2);
}
// Throws "Invalid value for key ..." where the file departs from the schema.
const exec = ExecJSON.Convert.toExecJSON(fs.readFileSync(input, "utf8"));
const evaluation = contextualizeEvaluation(exec);
const profile = evaluation.contains[0];
process.stdout.write(
  JSON.stringify({
    platform: exec.platform,
    version: exec.version,
    profile: { name: profile.data.name, title: profile.data.title, version: profile.data.version },
    controls: profile.contains.map((c) => ({
      id: c.data.id,
      status: c.root.hdf.status,
      severity: c.root.hdf.severity,
      waived: c.root.hdf.waived,
      message: c.root.hdf.message,
      code_desc: c.data.results.map((r) => r.code_desc).join("\n"),
    })),
  }),
);
