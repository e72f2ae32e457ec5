// The run page's progress chart and its filter by status, in Debian's Chromium (puppeteer-core
// from tests/report/node_modules), for crates/temper-web/tests/browser_review.rs.
//
//   node tests/web/review.js BASE_URL RUN STATUS OUT_DIR
//
// It opens the run page (screenshot web-run-chart.png), follows the count link of STATUS
// (screenshot web-rules-STATUS.png), opens that filtered page again with JavaScript off, and
// prints one line of JSON: what each page showed, for the test to judge.
'use strict';
const path = require('path');
const { launch, watch } = require('./chromium');

// What the page shows: the chart, the rules table, the filter, and whether anything hostile ran.
function shown() {
  const svg = document.querySelector('#progress svg');
  return {
    url: location.pathname + location.search,
    chart: svg && {
      width: svg.getBoundingClientRect().width,
      fixed: [...svg.querySelectorAll('circle.fixed-point')].map((c) => Number(c.dataset.fixed)),
      scores: [...svg.querySelectorAll('circle.score-point')].map((c) => Number(c.dataset.score)),
      titles: [...svg.querySelectorAll('circle > title')].map((t) => t.textContent),
      elements: [...new Set([...svg.querySelectorAll('*')].map((e) => e.localName))].sort(),
    },
    rows: [...document.querySelectorAll('table.rules tbody tr[data-status]')].map((tr) => tr.dataset.status),
    filter: (document.getElementById('filter') || {}).textContent || null,
    current: [...document.querySelectorAll('#counts a[aria-current]')].map((a) => a.textContent),
    back: !!document.querySelector('#filter a[href$="#rules"]'),
    pwned: typeof window.__pwned,
    imgs: document.querySelectorAll('img').length,
    onerror: document.querySelectorAll('[onerror]').length,
    inline_scripts: [...document.scripts].filter((s) => !s.src).length,
    csp_violations: window.__csp || [],
  };
}

async function main() {
  const [base, run, status, out] = process.argv.slice(2);
  const browser = await launch();
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.evaluateOnNewDocument(watch);
    await page.setViewport({ width: 1280, height: 1000 });

    await page.goto(`${base}/runs/${run}`, { waitUntil: 'load' });
    await page.waitForSelector('#live[data-connected="yes"]', { timeout: 15000 });
    const all = await page.evaluate(shown);
    await page.screenshot({ path: path.join(out, 'web-run-chart.png'), fullPage: true });

    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click(`#counts a[href*="status=${status}"]`)]);
    const filtered = await page.evaluate(shown);
    await page.screenshot({ path: path.join(out, `web-rules-${status}.png`), fullPage: true });

    const plain = await browser.newPage();
    await plain.setJavaScriptEnabled(false);
    await plain.goto(`${base}/runs/${run}?status=${status}`, { waitUntil: 'load' });
    const noScript = await plain.evaluate(shown);

    console.log(JSON.stringify({ all, filtered, no_script: noScript, errors }));
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : String(e));
  process.exit(1);
});
