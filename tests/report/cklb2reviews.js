#!/usr/bin/env node
// Reads a STIG Viewer 3 checklist (CKLB) with STIG Manager's own parser, reviewsFromCklb from
// @nuwcdivnpt/stig-manager-client-modules (what STIG Manager's web app and STIGMan Watcher
// import CKLB files with), and prints what it parsed as JSON:
//   node cklb2reviews.js IN.cklb
// A file the parser refuses (it throws) exits 1 with its message on stderr.
"use strict";
const fs = require("fs");
const { reviewsFromCklb } = require("@nuwcdivnpt/stig-manager-client-modules");

const [input] = process.argv.slice(2);
if (!input) {
  console.error("usage: node cklb2reviews.js IN.cklb");
  process.exit(2);
}

// STIG Manager's defaults, except that unreviewed rules are always imported and stay
// `notchecked`, so every rule of the file comes back with its own result.
const parsed = reviewsFromCklb({
  data: fs.readFileSync(input, "utf8"),
  fieldSettings: {
    detail: { enabled: "always", required: "always" },
    comment: { enabled: "findings", required: "findings" },
  },
  allowAccept: false,
  importOptions: {
    autoStatus: "saved",
    unreviewed: "always",
    unreviewedCommented: "notchecked",
    emptyDetail: "replace",
    emptyComment: "ignore",
    allowCustom: true,
  },
  sourceRef: input,
});

process.stdout.write(
  JSON.stringify({
    target: parsed.target,
    errors: parsed.errors ?? [],
    checklists: parsed.checklists.map((c) => ({
      benchmarkId: c.benchmarkId,
      revisionStr: c.revisionStr,
      stats: c.stats,
      reviews: c.reviews.map((r) => ({
        ruleId: r.ruleId,
        result: r.result,
        status: r.status ?? null,
        detail: r.detail,
        comment: r.comment,
      })),
    })),
  }),
);
